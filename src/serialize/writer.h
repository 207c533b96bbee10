// Writes a Graph as a MAXG file (schema and layout: graph.fbs). The output is deterministic:
// the same graph (and options) always gives the same bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "serialize/format.h"

namespace maxc {

struct SerializeOptions {
  GraphMetadata metadata;
  // Constants of at least this many bytes go to the 64-byte-aligned data segment (and are
  // mmap-able on load); smaller ones are stored inline in the flatbuffer.
  size_t inline_limit = maxg::kDefaultInlineLimit;
};

// The whole file in memory. INVALID_ARGUMENT when the graph cannot be stored (subgraphs
// nested deeper than maxg::kMaxGraphDepth, a structure past FlatBuffers' 2 GiB).
std::vector<uint8_t> serialize(const Graph& graph, const SerializeOptions& options = {});

// Writes the file at `path`, streaming the constants' bytes into the data segment rather than
// assembling them in memory (weights can be GBs). Writes `path`.tmp then renames it over
// `path`, so a failure never leaves a half-written file at `path`. I/O errors: NOT_FOUND,
// PERMISSION_DENIED, RESOURCE_EXHAUSTED (disk full) or UNAVAILABLE, naming the path.
void save(const Graph& graph, const std::string& path, const SerializeOptions& options = {});

}  // namespace maxc
