// SHA-256 (FIPS 180-4), for content-addressed caches: the kernel cache names compiled
// kernels by the digest of everything that went into them, where a collision would silently
// run the wrong kernel, so a cryptographic hash and not a fast one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace maxc::cuda {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t bytes);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // A length-prefixed field: ("ab", "c") and ("a", "bc") hash differently.
  void update_field(std::string_view s);
  std::array<uint8_t, 32> digest();  // ends the hash; the object is spent
  std::string hex_digest();           // 64 lower-case hex digits

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace maxc::cuda
