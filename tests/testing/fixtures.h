#ifndef GPUADVISOR_TESTS_TESTING_FIXTURES_H_
#define GPUADVISOR_TESTS_TESTING_FIXTURES_H_

// Tests that read the real public files in ../shared/fixtures (beside the
// repository). A developer checkout may lack that folder, so the test is
// skipped there; CI (CI=true, a clean clone with ../shared beside it) must
// have it, so there the missing file is a failure, never a silent skip.
//
//   TEST(VastImport, RealOffers) {
//     GPUADVISOR_REQUIRE_FIXTURE(kVastFile);
//     ...
//   }

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace gpuadvisor::testing {

// True when CI=true (or 1) in the environment.
inline bool RunningInCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && (std::string(ci) == "true" || std::string(ci) == "1");
}

inline bool PathExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace gpuadvisor::testing

// Skips the test when `path` is missing, or fails it under CI=true.
#define GPUADVISOR_REQUIRE_FIXTURE(path)                                                        \
  do {                                                                                          \
    const std::string gpuadvisor_fixture_path_(path);                                           \
    if (!::gpuadvisor::testing::PathExists(gpuadvisor_fixture_path_)) {                         \
      if (::gpuadvisor::testing::RunningInCi()) {                                               \
        FAIL() << gpuadvisor_fixture_path_ << " is missing and CI=true: fixtures are required"; \
      }                                                                                         \
      GTEST_SKIP() << gpuadvisor_fixture_path_ << " not present";                               \
    }                                                                                           \
  } while (0)

#endif  // GPUADVISOR_TESTS_TESTING_FIXTURES_H_
