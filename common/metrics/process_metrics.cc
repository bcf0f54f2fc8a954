#include "common/metrics/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "prometheus/metric_type.h"

// Defined by the generated build_info.cc when the binary links it; weak, so a
// binary without it (a unit test) still links and reports "unknown".
extern "C" const char* gpuadvisor_build_version() __attribute__((weak));
extern "C" const char* gpuadvisor_build_commit() __attribute__((weak));

namespace gpuadvisor {
namespace {

std::string ReadAll(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("btime ", 0) == 0) {
      double btime = 0;
      if (absl::SimpleAtod(absl::string_view(line).substr(6), &btime)) return btime;
    }
  }
  return -1;
}

double OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  double count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the directory stream's own descriptor
}

double MaxFds() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
  return static_cast<double>(limit.rlim_cur);
}

void AddGauge(std::vector<prometheus::MetricFamily>* out, const char* name, const char* help,
              double value, prometheus::MetricType type = prometheus::MetricType::Gauge) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  if (value >= 0) {
    prometheus::ClientMetric metric;
    if (type == prometheus::MetricType::Counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
    family.metric.push_back(std::move(metric));
  }
  out->push_back(std::move(family));
}

}  // namespace

std::string BuildVersion() {
  const char* v = gpuadvisor_build_version != nullptr ? gpuadvisor_build_version() : nullptr;
  return v != nullptr && *v != '\0' ? v : "unknown";
}

std::string BuildCommit() {
  const char* c = gpuadvisor_build_commit != nullptr ? gpuadvisor_build_commit() : nullptr;
  return c != nullptr && *c != '\0' ? c : "unknown";
}

ProcessStat ParseProcessStat(const std::string& stat, const std::string& statm,
                             double boot_time_seconds, double ticks_per_second, double page_bytes) {
  ProcessStat out;
  // The command name (field 2) is in parentheses and may hold spaces; the
  // fields after its closing parenthesis start at field 3 (state).
  const size_t close = stat.rfind(')');
  if (close != std::string::npos && ticks_per_second > 0) {
    const std::vector<absl::string_view> f =
        absl::StrSplit(absl::string_view(stat).substr(close + 1), ' ', absl::SkipEmpty());
    // f[0] is field 3; field N is f[N - 3].
    double utime = 0, stime = 0, start = 0, vsize = 0;
    if (f.size() > 20 && absl::SimpleAtod(f[11], &utime) && absl::SimpleAtod(f[12], &stime)) {
      out.cpu_seconds = (utime + stime) / ticks_per_second;
    }
    if (f.size() > 20 && boot_time_seconds >= 0 && absl::SimpleAtod(f[19], &start)) {
      out.start_time_seconds = boot_time_seconds + start / ticks_per_second;
    }
    if (f.size() > 20 && absl::SimpleAtod(f[20], &vsize)) out.virtual_bytes = vsize;
  }
  const std::vector<absl::string_view> m = absl::StrSplit(statm, ' ', absl::SkipEmpty());
  double pages = 0;
  if (m.size() > 1 && absl::SimpleAtod(m[1], &pages)) out.resident_bytes = pages * page_bytes;
  return out;
}

ProcessMetrics::ProcessMetrics(std::string service) : service_(std::move(service)) {}

std::vector<prometheus::MetricFamily> ProcessMetrics::Collect() const {
  const ProcessStat s = ParseProcessStat(
      ReadAll("/proc/self/stat"), ReadAll("/proc/self/statm"), BootTimeSeconds(),
      static_cast<double>(sysconf(_SC_CLK_TCK)), static_cast<double>(sysconf(_SC_PAGESIZE)));
  std::vector<prometheus::MetricFamily> out;
  AddGauge(&out, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
           s.cpu_seconds, prometheus::MetricType::Counter);
  AddGauge(&out, "process_resident_memory_bytes", "Resident memory size in bytes.",
           s.resident_bytes);
  AddGauge(&out, "process_virtual_memory_bytes", "Virtual memory size in bytes.", s.virtual_bytes);
  AddGauge(&out, "process_open_fds", "Number of open file descriptors.", OpenFds());
  AddGauge(&out, "process_max_fds", "Maximum number of open file descriptors.", MaxFds());
  AddGauge(&out, "process_start_time_seconds",
           "Start time of the process since unix epoch in seconds.", s.start_time_seconds);

  prometheus::MetricFamily build;
  build.name = "gpuadvisor_build_info";
  build.help = "Always 1; the labels name the build: version and git commit.";
  build.type = prometheus::MetricType::Gauge;
  prometheus::ClientMetric metric;
  metric.label = {{"commit", BuildCommit()}, {"service", service_}, {"version", BuildVersion()}};
  metric.gauge.value = 1;
  build.metric.push_back(std::move(metric));
  out.push_back(std::move(build));
  return out;
}

}  // namespace gpuadvisor
