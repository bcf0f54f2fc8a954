#ifndef GPUADVISOR_COMMON_METRICS_WRITE_FAILURES_H_
#define GPUADVISOR_COMMON_METRICS_WRITE_FAILURES_H_

// gpuadvisor_write_failures_total{service,what}: writes a service depends on
// that failed (the catalog cache a restart starts from, durable price
// updates). The service logs the failure and carries on, which is right; the
// counter lets an alert (GpuAdvisorWriteFailing) see it.
//
//   options.on_cache_write_failed = WriteFailureCounter(registry, "gateway", "catalog_cache");
//
// The series is created at zero, so increase() sees the first failure.
// Thread-safe; the returned function lives as long as `registry`.

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"

namespace gpuadvisor {

inline std::function<void(const absl::Status&)> WriteFailureCounter(prometheus::Registry& registry,
                                                                    const std::string& service,
                                                                    const std::string& what) {
  prometheus::Counter& counter =
      prometheus::BuildCounter()
          .Name("gpuadvisor_write_failures_total")
          .Help(
              "Writes the service depends on that failed (catalog_cache: the replica a restart "
              "starts from; price_updates: durable UpdatePrices), by service and what.")
          .Register(registry)
          .Add({{"service", service}, {"what", what}});
  return [&counter](const absl::Status&) { counter.Increment(); };
}

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_METRICS_WRITE_FAILURES_H_
