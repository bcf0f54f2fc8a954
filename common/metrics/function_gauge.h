#ifndef GPUADVISOR_COMMON_METRICS_FUNCTION_GAUGE_H_
#define GPUADVISOR_COMMON_METRICS_FUNCTION_GAUGE_H_

// A gauge read at scrape time from a function, for values that change with
// time and not only with events (an age). Register it with
// Metrics::AddCollectable. The function returns a negative value while the
// value is unknown; the series is then absent.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace gpuadvisor {

class FunctionGauge final : public prometheus::Collectable {
 public:
  FunctionGauge(std::string name, std::string help, std::function<double()> value)
      : name_(std::move(name)), help_(std::move(help)), value_(std::move(value)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    prometheus::MetricFamily family;
    family.name = name_;
    family.help = help_;
    family.type = prometheus::MetricType::Gauge;
    if (const double v = value_(); v >= 0) {
      prometheus::ClientMetric metric;
      metric.gauge.value = v;
      family.metric.push_back(std::move(metric));
    }
    return {std::move(family)};
  }

 private:
  const std::string name_, help_;
  const std::function<double()> value_;
};

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_METRICS_FUNCTION_GAUGE_H_
