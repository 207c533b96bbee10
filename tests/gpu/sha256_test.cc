// SHA-256 against the test vectors of FIPS 180-4's examples.
#include "driver/cuda/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace maxc::testing {
namespace {

std::string sha(const std::string& s) {
  cuda::Sha256 h;
  h.update(s);
  return h.hex_digest();
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecewiseUpdatesEqualOne) {
  const std::string text(1000, 'x');
  cuda::Sha256 h;
  for (size_t i = 0; i < text.size(); i += 7) h.update(text.substr(i, 7));
  EXPECT_EQ(h.hex_digest(), sha(text));
}

TEST(Sha256, FieldsAreLengthPrefixed) {
  cuda::Sha256 a, b;
  a.update_field("ab");
  a.update_field("c");
  b.update_field("a");
  b.update_field("bc");
  EXPECT_NE(a.hex_digest(), b.hex_digest());
}

}  // namespace
}  // namespace maxc::testing
