#include "services/refresher/source_metrics.h"

#include <string>
#include <utility>

#include "absl/time/clock.h"
#include "prometheus/metric_family.h"

namespace gpuadvisor::refresher {
namespace {

prometheus::MetricFamily Family(const char* name, const char* help, prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

void AddValue(prometheus::MetricFamily& f, std::vector<prometheus::ClientMetric::Label> labels,
              double value) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (f.type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
}

}  // namespace

std::vector<prometheus::MetricFamily> SourceMetrics::Collect() const {
  using prometheus::MetricType;
  auto age = Family("gpuadvisor_refresh_source_age_seconds",
                    "Seconds since the copy of this source now serving was fetched (since the "
                    "refresher started while none is).",
                    MetricType::Gauge);
  auto budget = Family("gpuadvisor_refresh_source_stale_after_seconds",
                       "Age past which this source's prices are stale.", MetricType::Gauge);
  auto attempt = Family("gpuadvisor_refresh_last_attempt_timestamp_seconds",
                        "Unix time of the last refresh attempt.", MetricType::Gauge);
  auto success =
      Family("gpuadvisor_refresh_last_success_timestamp_seconds",
             "Unix time the copy now serving was fetched; 0 = none yet.", MetricType::Gauge);
  auto up = Family("gpuadvisor_refresh_source_up",
                   "1 when the last attempt published, 0 when it failed or was held back.",
                   MetricType::Gauge);
  auto rows =
      Family("gpuadvisor_refresh_rows", "Rows of the last import, by kind.", MetricType::Gauge);
  auto rejected = Family("gpuadvisor_refresh_rows_rejected",
                         "Rows of the last import rejected, by reason.", MetricType::Gauge);
  auto offers =
      Family("gpuadvisor_refresh_offers", "Offers in the copy serving.", MetricType::Gauge);
  auto attempts =
      Family("gpuadvisor_refresh_attempts_total", "Refresh attempts.", MetricType::Counter);
  auto failures = Family("gpuadvisor_refresh_failures_total",
                         "Refresh attempts that did not publish.", MetricType::Counter);
  const absl::Time now = absl::Now();
  for (const SourceState& s : refresher_->States()) {
    const std::vector<prometheus::ClientMetric::Label> l = {{"source", s.name}};
    const absl::Time since =
        s.last_success_unix > 0 ? absl::FromUnixSeconds(s.last_success_unix) : started_;
    AddValue(age, l, absl::ToDoubleSeconds(now - since));
    AddValue(budget, l, static_cast<double>(s.stale_after_seconds));
    AddValue(attempt, l, static_cast<double>(s.last_attempt_unix));
    AddValue(success, l, static_cast<double>(s.last_success_unix));
    AddValue(up, l, s.attempts > 0 && s.reason.empty() ? 1 : 0);
    AddValue(rows, {{"source", s.name}, {"kind", "read"}}, s.rows.read);
    AddValue(rows, {{"source", s.name}, {"kind", "kept"}}, s.rows.kept);
    int rejected_rows = 0;
    for (const auto& [reason, n] : s.rows.rejected) {
      AddValue(rejected, {{"source", s.name}, {"reason", reason}}, n);
      rejected_rows += n;
    }
    AddValue(rows, {{"source", s.name}, {"kind", "rejected"}}, rejected_rows);
    AddValue(offers, l, s.offers);
    AddValue(attempts, l, s.attempts);
    AddValue(failures, l, s.failures);
  }
  return {std::move(age),      std::move(budget),  std::move(attempt),  std::move(success),
          std::move(up),       std::move(rows),    std::move(rejected), std::move(offers),
          std::move(attempts), std::move(failures)};
}

}  // namespace gpuadvisor::refresher
