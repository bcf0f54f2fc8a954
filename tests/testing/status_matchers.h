#ifndef GPUADVISOR_TESTS_TESTING_STATUS_MATCHERS_H_
#define GPUADVISOR_TESTS_TESTING_STATUS_MATCHERS_H_

// gmock matchers for absl::Status / absl::StatusOr (Debian's Abseil ships none).
//   EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("params")));
//   ASSERT_OK(status);

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace gpuadvisor::testing {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

MATCHER_P2(StatusIs, code, message_matcher, "has code " + absl::StatusCodeToString(code)) {
  const absl::Status& status = GetStatus(arg);
  if (status.code() != code) {
    *result_listener << "status is " << status;
    return false;
  }
  return ::testing::ExplainMatchResult(message_matcher, std::string(status.message()),
                                       result_listener);
}

MATCHER_P(StatusIs, code, "has code " + absl::StatusCodeToString(code)) {
  const absl::Status& status = GetStatus(arg);
  *result_listener << "status is " << status;
  return status.code() == code;
}

MATCHER(IsOk, "is OK") {
  const absl::Status& status = GetStatus(arg);
  *result_listener << "status is " << status;
  return status.ok();
}

#define ASSERT_OK(expr) ASSERT_THAT(expr, ::gpuadvisor::testing::IsOk())
#define EXPECT_OK(expr) EXPECT_THAT(expr, ::gpuadvisor::testing::IsOk())

}  // namespace gpuadvisor::testing

#endif  // GPUADVISOR_TESTS_TESTING_STATUS_MATCHERS_H_
