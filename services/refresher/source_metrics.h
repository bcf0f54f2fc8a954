#ifndef GPUADVISOR_SERVICES_REFRESHER_SOURCE_METRICS_H_
#define GPUADVISOR_SERVICES_REFRESHER_SOURCE_METRICS_H_

// The refresher's per-source series, read from its states at scrape time:
//   gpuadvisor_refresh_source_age_seconds{source}         since the copy serving was fetched
//                                                         (since the start while none is)
//   gpuadvisor_refresh_source_stale_after_seconds{source} the source's budget
//   gpuadvisor_refresh_last_attempt_timestamp_seconds{source}
//   gpuadvisor_refresh_last_success_timestamp_seconds{source}
//   gpuadvisor_refresh_source_up{source}                  1 = the last attempt published
//   gpuadvisor_refresh_rows{source,kind="read|kept|rejected"}   of the last import
//   gpuadvisor_refresh_rows_rejected{source,reason}
//   gpuadvisor_refresh_offers{source}                     offers in the copy serving
//   gpuadvisor_refresh_attempts_total{source}, gpuadvisor_refresh_failures_total{source}
// The alert GpuAdvisorSourceStale (deploy/prometheus/rules.yml) compares the
// first two.

#include <functional>
#include <vector>

#include "absl/time/time.h"
#include "prometheus/collectable.h"
#include "services/refresher/refresher.h"

namespace gpuadvisor::refresher {

class SourceMetrics final : public prometheus::Collectable {
 public:
  SourceMetrics(const Refresher* refresher, absl::Time started)
      : refresher_(refresher), started_(started) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const Refresher* const refresher_;
  const absl::Time started_;
};

}  // namespace gpuadvisor::refresher

#endif  // GPUADVISOR_SERVICES_REFRESHER_SOURCE_METRICS_H_
