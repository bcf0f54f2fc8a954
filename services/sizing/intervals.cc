#include "services/sizing/intervals.h"

#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "services/sizing/profiles.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;

std::string Basis(const v1::ErrorInterval& e, const char* what) {
  const std::string cls =
      e.frameworks().empty() ? std::string("all frameworks") : absl::StrJoin(e.frameworks(), ", ");
  return absl::StrFormat("%s error of %s (%s): %d calibration rows from %d sources, %s", what,
                         v1::ErrorQuantity_Name(e.quantity()), cls, e.rows(), e.sources(),
                         e.method());
}

// value x the ratios (a rate, a latency); `inverse` for a time that is a
// work amount over the rate (hours = tokens / tokens per second).
void Set(double value, const v1::ErrorInterval& e, bool inverse, const char* what,
         v1::Interval* out) {
  if (inverse) {
    out->set_p10(value / e.p90_ratio());
    out->set_p50(value / e.p50_ratio());
    out->set_p90(value / e.p10_ratio());
  } else {
    out->set_p10(value * e.p10_ratio());
    out->set_p50(value * e.p50_ratio());
    out->set_p90(value * e.p90_ratio());
  }
  out->set_basis(Basis(e, what));
}

}  // namespace

void FillIntervals(const Job& job, v1::ConfigurationEstimate* out) {
  if (job.profiles == nullptr || !out->fits()) return;
  const std::string& framework = job.framework->name();
  const v1::ErrorQuantity rate =
      job.training ? v1::ERROR_QUANTITY_TRAINING_SPEED : v1::ERROR_QUANTITY_SERVING_THROUGHPUT;
  if (const v1::ErrorInterval* e = job.profiles->ErrorIntervalFor(rate, framework)) {
    if (out->tokens_per_second() > 0) {
      Set(out->tokens_per_second(), *e, false, "tokens/s from the",
          out->mutable_tokens_per_second_interval());
    }
    const bool hours_estimated = job.training || job.batch;
    if (hours_estimated && out->estimated_hours() > 0) {
      Set(out->estimated_hours(), *e, true, "hours from the inverse",
          out->mutable_estimated_hours_interval());
    }
  }
  if (job.training) return;
  const double ttft = out->serving().time_to_first_token_seconds();
  if (ttft <= 0) return;
  if (const v1::ErrorInterval* e =
          job.profiles->ErrorIntervalFor(v1::ERROR_QUANTITY_TIME_TO_FIRST_TOKEN, framework)) {
    Set(ttft, *e, false, "time to first token from the",
        out->mutable_time_to_first_token_interval());
  }
}

}  // namespace gpuadvisor::sizing
