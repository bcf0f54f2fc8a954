#ifndef GPUADVISOR_TESTS_TESTING_TEMP_DIR_H_
#define GPUADVISOR_TESTS_TESTING_TEMP_DIR_H_

// A directory of a test's own, removed with everything in it when the object
// goes away, so that a suite leaves nothing behind in /tmp. It is made under
// the test's temporary directory (::testing::TempDir(): TEST_TMPDIR when set,
// as ctest sets it to the build tree's test-tmp/, else /tmp).

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "gtest/gtest.h"

namespace gpuadvisor::testing {

class ScopedTempDir {
 public:
  ScopedTempDir() = default;  // no directory
  // Makes <TempDir>/<prefix>.XXXXXX; path() is empty if that failed.
  explicit ScopedTempDir(const std::string& prefix) {
    std::string pattern = ::testing::TempDir() + prefix + ".XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = std::move(pattern);
  }
  ~ScopedTempDir() { Remove(); }
  ScopedTempDir(ScopedTempDir&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  ScopedTempDir& operator=(ScopedTempDir&& other) noexcept {
    if (this != &other) {
      Remove();
      path_ = std::exchange(other.path_, "");
    }
    return *this;
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  void Remove() {
    if (path_.empty()) return;
    std::error_code ignored;  // best effort: a test's end is no place to fail
    std::filesystem::remove_all(path_, ignored);
    path_.clear();
  }

  std::string path_;
};

}  // namespace gpuadvisor::testing

#endif  // GPUADVISOR_TESTS_TESTING_TEMP_DIR_H_
