#ifndef GPUADVISOR_TESTS_TESTING_FIXTURES_H_
#define GPUADVISOR_TESTS_TESTING_FIXTURES_H_

// Tests that read real public files vendored under tests/data/<folder>/
// (each folder's SOURCE.md says where from, when and under which licence).
// They are part of the repository, so a missing file is a broken checkout:
// the test fails, it never skips.
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

// Fails the test (never skips) when `path` is missing.
#define GPUADVISOR_REQUIRE_FIXTURE(path)                                \
  do {                                                                  \
    const std::string gpuadvisor_fixture_path_(path);                   \
    if (!::gpuadvisor::testing::PathExists(gpuadvisor_fixture_path_)) { \
      FAIL() << gpuadvisor_fixture_path_                                \
             << " is missing: tests/data is part of the "               \
                "repository (see its SOURCE.md files)";                 \
    }                                                                   \
  } while (0)

#endif  // GPUADVISOR_TESTS_TESTING_FIXTURES_H_
