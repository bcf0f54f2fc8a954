#include "common/metrics/process_metrics.h"

#include <fcntl.h>
#include <unistd.h>

#include <ctime>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/metrics/metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuadvisor {
namespace {

using ::testing::HasSubstr;

// The value of the first series of `name` in an exposition, or -1.
double Value(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  const size_t start = at + name.size() + 2;
  double v = -1;
  if (!absl::SimpleAtod(text.substr(start, text.find('\n', start) - start), &v)) return -1;
  return v;
}

TEST(ProcessMetrics, ParsesProcStatWithSpacesInTheCommandName) {
  // pid (comm) state ppid ... field 14 utime=250, 15 stime=150, 22 starttime=1000,
  // 23 vsize=123456789.
  std::string stat =
      "42 (my server) S 1 42 42 0 -1 4194560 100 0 0 0 250 150 0 0 20 0 9 0 1000 "
      "123456789 5000 18446744073709551615";
  const ProcessStat s = ParseProcessStat(stat, "30000 2500 100 10 0 200 0\n", 1.7e9, 100, 4096);
  EXPECT_DOUBLE_EQ(s.cpu_seconds, 4.0);
  EXPECT_DOUBLE_EQ(s.start_time_seconds, 1.7e9 + 10);
  EXPECT_DOUBLE_EQ(s.virtual_bytes, 123456789);
  EXPECT_DOUBLE_EQ(s.resident_bytes, 2500.0 * 4096);
}

TEST(ProcessMetrics, TruncatedTextLeavesValuesUnknown) {
  const ProcessStat s = ParseProcessStat("42 (x) S 1 2", "", 1.7e9, 100, 4096);
  EXPECT_LT(s.cpu_seconds, 0);
  EXPECT_LT(s.start_time_seconds, 0);
  EXPECT_LT(s.resident_bytes, 0);
}

TEST(ProcessMetrics, EveryServiceExportsItsProcessAndBuild) {
  Metrics metrics("catalog");
  const std::string before = metrics.Serialize();
  EXPECT_THAT(before, HasSubstr("# TYPE process_cpu_seconds_total counter"));
  EXPECT_THAT(before, HasSubstr("gpuadvisor_build_info{commit=\""));
  EXPECT_THAT(before, HasSubstr("service=\"catalog\",version=\""));
  // This test binary links no build info: it says so instead of guessing.
  EXPECT_THAT(before, HasSubstr("commit=\"unknown\""));

  const double rss = Value(before, "process_resident_memory_bytes");
  EXPECT_GT(rss, 1e6);  // a gRPC + protobuf binary holds megabytes
  const double start = Value(before, "process_start_time_seconds");
  EXPECT_GT(start, static_cast<double>(std::time(nullptr)) - 3600);
  EXPECT_LE(start, static_cast<double>(std::time(nullptr)) + 1);
  EXPECT_GT(Value(before, "process_max_fds"), 0);

  // Open descriptors follow the process: five more files, five more fds.
  const double fds = Value(before, "process_open_fds");
  ASSERT_GT(fds, 0);
  int opened[5];
  for (int& fd : opened) fd = open("/dev/null", O_RDONLY);
  EXPECT_EQ(Value(metrics.Serialize(), "process_open_fds"), fds + 5);
  for (int fd : opened) close(fd);

  // CPU time grows with work done.
  const double cpu = Value(before, "process_cpu_seconds_total");
  volatile double sink = 0;
  const clock_t until = clock() + CLOCKS_PER_SEC / 5;
  while (clock() < until) sink = sink + 1;
  EXPECT_GT(Value(metrics.Serialize(), "process_cpu_seconds_total"), cpu + 0.1);
}

}  // namespace
}  // namespace gpuadvisor
