#ifndef GPUADVISOR_COMMON_METRICS_PROCESS_METRICS_H_
#define GPUADVISOR_COMMON_METRICS_PROCESS_METRICS_H_

// The metrics every Prometheus client library exports about its process, under
// the same names, so stock dashboards and alerts work on our binaries too:
//   process_cpu_seconds_total        user + system CPU time, seconds (counter)
//   process_resident_memory_bytes    resident set size
//   process_virtual_memory_bytes     virtual memory size
//   process_open_fds                 open file descriptors
//   process_max_fds                  the soft limit on file descriptors
//   process_start_time_seconds       start time, seconds since the Unix epoch
// plus one series naming the build:
//   gpuadvisor_build_info{service,version,commit} 1
// All read at scrape time from /proc/self (Linux); a value that cannot be read
// is left out of that scrape. Metrics registers one for every service.
// Thread-safe (Collect keeps no state between calls).

#include <string>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace gpuadvisor {

// The version of GPU Advisor this binary was built as (GPUADVISOR_VERSION at
// configure time) and the git commit it was built from: the generated
// common/build_info.cc linked into the server binaries and the CLI
// (gpuadvisor_build_info() in the top CMakeLists.txt), refreshed on every
// build; "unknown" in binaries without it (unit tests) or when the source had
// no git checkout and -DGPUADVISOR_COMMIT was not given (a container build).
std::string BuildVersion();
std::string BuildCommit();

class ProcessMetrics final : public prometheus::Collectable {
 public:
  // `service` labels gpuadvisor_build_info.
  explicit ProcessMetrics(std::string service);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const std::string service_;
};

// Parsed from /proc/self/stat and /proc/self/statm; exposed for tests.
struct ProcessStat {
  double cpu_seconds = -1;         // utime + stime
  double start_time_seconds = -1;  // since the epoch (boot time + starttime)
  double virtual_bytes = -1;
  double resident_bytes = -1;
};
// `stat` is the text of /proc/<pid>/stat, `statm` of /proc/<pid>/statm,
// `boot_time_seconds` the btime of /proc/stat. Fields that do not parse stay -1.
ProcessStat ParseProcessStat(const std::string& stat, const std::string& statm,
                             double boot_time_seconds, double ticks_per_second, double page_bytes);

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_METRICS_PROCESS_METRICS_H_
