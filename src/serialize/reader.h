// Reads a MAXG graph file (schema and layout: graph.fbs).
//
// Every read checks the header, runs the FlatBuffers Verifier on the flatbuffer, checks every
// offset, size and index against the bytes really present (with checked arithmetic, and never
// allocating more than the file's size justifies), rebuilds the graph through Graph's public API
// so the op registry re-types every op, compares the recorded value types with the inferred
// ones and finally runs Graph::verify(). Errors:
//   DATA_LOSS         truncated or corrupt: bad magic, a header field, a Verifier failure, an
//                     offset/size/index out of range (with the byte offset where known);
//   INVALID_ARGUMENT  a well-formed file whose graph is invalid (unknown op or attribute kind,
//                     types that do not match what the ops infer, dangling value ids, ...).
// A hostile file never crashes, hangs or allocates far beyond its own size.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "graph/graph.h"
#include "serialize/format.h"

namespace maxc {

struct LoadedGraph {
  Graph graph;
  GraphMetadata metadata;
  uint32_t schema_version = 0;  // File.schema_version of the file
};

// Reads a file image from memory. When `keep_alive` is set it owns `bytes`, and the large
// constants (data segment blobs that are 16-byte aligned in memory) alias `bytes`, keeping
// `keep_alive` alive as long as any of them is referenced; without it every constant is copied.
Graph deserialize(std::span<const uint8_t> bytes, std::shared_ptr<const void> keep_alive = nullptr);
LoadedGraph deserialize_with_metadata(std::span<const uint8_t> bytes, std::shared_ptr<const void> keep_alive = nullptr);

// Maps the file read-only; the data segment's constants alias the mapping, which lives as
// long as any constant references it. I/O errors: NOT_FOUND, PERMISSION_DENIED, UNAVAILABLE;
// INVALID_ARGUMENT for something that is not a regular file. (As with any mmap, truncating the
// file while a graph still maps it makes later reads of its constants fault.)
Graph load(const std::string& path);
LoadedGraph load_with_metadata(const std::string& path);

}  // namespace maxc
