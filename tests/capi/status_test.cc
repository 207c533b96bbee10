// How the ABI's guard turns exceptions into statuses: a request too large for memory or for a
// container is RESOURCE_EXHAUSTED, not an internal error of the library.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "capi/capi.h"

namespace maxc::capi {
namespace {

struct Outcome {
  max_status_code_t code;
  std::string message;
};

template <typename Body>
Outcome run(Body&& body) {
  max_status_t* status = guard("max_test_call", body);
  EXPECT_NE(status, nullptr);
  Outcome out{max_status_code(status), max_status_message(status)};
  max_status_release(status);
  return out;
}

TEST(CapiGuard, TooLargeRequestsAreResourceExhausted) {
  Outcome length = run([] { std::vector<double>().reserve(std::vector<double>().max_size() + 1); });
  EXPECT_EQ(length.code, MAX_STATUS_RESOURCE_EXHAUSTED) << length.message;
  EXPECT_NE(length.message.find("max_test_call: too large"), std::string::npos) << length.message;

  Outcome alloc = run([] { throw std::bad_alloc(); });
  EXPECT_EQ(alloc.code, MAX_STATUS_RESOURCE_EXHAUSTED) << alloc.message;

  Outcome array = run([] { throw std::bad_array_new_length(); });
  EXPECT_EQ(array.code, MAX_STATUS_RESOURCE_EXHAUSTED) << array.message;
}

TEST(CapiGuard, OtherExceptionsKeepTheirCodes) {
  Outcome error = run([] { fail(Code::kNotFound, "weight 'w'"); });
  EXPECT_EQ(error.code, MAX_STATUS_NOT_FOUND);
  EXPECT_EQ(error.message, "max_test_call: weight 'w'");

  Outcome logic = run([] { throw std::logic_error("a bug"); });
  EXPECT_EQ(logic.code, MAX_STATUS_INTERNAL) << logic.message;
}

}  // namespace
}  // namespace maxc::capi
