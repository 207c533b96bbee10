// The MAXG container: the fixed header in front of the flatbuffer and the constants shared by
// the writer and the reader. The layout is described in graph.fbs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

namespace maxc {

// Free-form strings stored with a graph file (producer, model name, ...).
using GraphMetadata = std::map<std::string, std::string, std::less<>>;

}  // namespace maxc

namespace maxc::maxg {

inline constexpr char kMagic[4] = {'M', 'A', 'X', 'G'};
inline constexpr uint32_t kFormatVersion = 1;   // the container layout (this header)
inline constexpr uint32_t kSchemaVersion = 1;   // File.schema_version written by this build
inline constexpr size_t kHeaderSize = 32;
inline constexpr uint64_t kDataAlignment = 64;  // the data segment and every blob in it
// Constants of at least this many bytes go to the data segment; smaller ones are inline.
inline constexpr size_t kDefaultInlineLimit = 4096;
// A symbolic dim's canonical text is at most this long (the reader bounds parsing work).
inline constexpr size_t kMaxDimText = 4096;
// Subgraphs nest at most this deep (the reader and writer recurse per level).
inline constexpr int kMaxGraphDepth = 64;

struct Header {
  uint32_t format_version = kFormatVersion;
  uint64_t flatbuffer_size = 0;
  uint64_t data_offset = 0;
  uint64_t data_size = 0;
};

// Little-endian, byte by byte: no alignment or host-endianness assumptions.
inline void store_le(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint64_t load_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

inline void encode_header(const Header& h, uint8_t out[kHeaderSize]) {
  std::memcpy(out, kMagic, 4);
  store_le(out + 4, h.format_version, 4);
  store_le(out + 8, h.flatbuffer_size, 8);
  store_le(out + 16, h.data_offset, 8);
  store_le(out + 24, h.data_size, 8);
}

// The fields as stored; the reader checks them (see reader.cc).
inline Header decode_header(const uint8_t in[kHeaderSize]) {
  return Header{static_cast<uint32_t>(load_le(in + 4, 4)), load_le(in + 8, 8), load_le(in + 16, 8),
                load_le(in + 24, 8)};
}

inline constexpr uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace maxc::maxg
