#ifndef GPUADVISOR_COMMON_METRICS_FUNCTION_METRIC_H_
#define GPUADVISOR_COMMON_METRICS_FUNCTION_METRIC_H_

// A metric read at scrape time from a function: a gauge for values that change
// with time and not only with events (an age, open streams), or a counter kept
// elsewhere (an atomic the hot path increments). Register it with
// Metrics::AddCollectable. The function returns a negative value while the
// value is unknown; the series is then absent.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "prometheus/metric_type.h"

namespace gpuadvisor {

class FunctionMetric final : public prometheus::Collectable {
 public:
  FunctionMetric(std::string name, std::string help, std::function<double()> value,
                 prometheus::MetricType type = prometheus::MetricType::Gauge)
      : name_(std::move(name)), help_(std::move(help)), value_(std::move(value)), type_(type) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    prometheus::MetricFamily family;
    family.name = name_;
    family.help = help_;
    family.type = type_;
    if (const double v = value_(); v >= 0) {
      prometheus::ClientMetric metric;
      if (type_ == prometheus::MetricType::Counter) {
        metric.counter.value = v;
      } else {
        metric.gauge.value = v;
      }
      family.metric.push_back(std::move(metric));
    }
    return {std::move(family)};
  }

 private:
  const std::string name_, help_;
  const std::function<double()> value_;
  const prometheus::MetricType type_;
};

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_METRICS_FUNCTION_METRIC_H_
