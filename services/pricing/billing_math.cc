#include "services/pricing/billing_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuadvisor::pricing {
namespace {

// hours * 3600 can land a few ulps above a whole number of seconds
// (0.1 h * 3600); a microsecond of slack keeps that from billing another unit.
constexpr double kRoundingSlackSeconds = 1e-6;

}  // namespace

double BilledSeconds(double run_seconds, int granularity_seconds, int minimum_seconds) {
  if (!(run_seconds > 0)) return 0.0;
  const double granularity = std::max(1, granularity_seconds);
  const double units = std::ceil((run_seconds - kRoundingSlackSeconds) / granularity);
  const double billed = std::max(units, 1.0) * granularity;
  return std::max(billed, static_cast<double>(std::max(0, minimum_seconds)));
}

double YoungDalyIntervalHours(double checkpoint_cost_hours, double mtbi_hours) {
  if (!(checkpoint_cost_hours > 0) || !(mtbi_hours > 0)) return 0.0;
  if (std::isinf(mtbi_hours)) return std::numeric_limits<double>::infinity();
  return std::sqrt(2.0 * checkpoint_cost_hours * mtbi_hours);
}

double ProbabilityOfInterruption(double interruptions_per_hour, double hours) {
  if (!(interruptions_per_hour > 0) || !(hours > 0)) return 0.0;
  // expm1 keeps precision for the small rates typical of spot.
  return -std::expm1(-interruptions_per_hour * hours);
}

double InterruptionFractionToRatePerHour(double fraction, double lifetime_hours) {
  if (!(fraction > 0) || !(lifetime_hours > 0)) return 0.0;
  return -std::log1p(-fraction) / lifetime_hours;
}

double CheckpointWriteHours(double checkpoint_gb, int nodes, double gb_per_second) {
  if (!(checkpoint_gb > 0) || nodes < 1 || !(gb_per_second > 0)) return 0.0;
  return checkpoint_gb / nodes / gb_per_second / 3600.0;
}

double ExpectedRestarts(double rate, double segment_hours) {
  return ExpectSegment(rate, segment_hours, 0).restarts;
}

double ExpectedSegmentHours(double rate, double segment_hours, double restart_hours) {
  return ExpectSegment(rate, segment_hours, restart_hours).hours;
}

SegmentExpectation ExpectSegment(double rate, double segment_hours, double restart_hours) {
  if (!(segment_hours > 0)) return {0.0, 0.0};
  if (!(rate > 0)) return {0.0, segment_hours};
  const double restarts = std::expm1(rate * segment_hours);
  return {restarts, restarts * (1.0 / rate + std::max(0.0, restart_hours))};
}

double BilledSecondsOverLaunches(double run_seconds, double launches, int granularity_seconds,
                                 int minimum_seconds) {
  if (!(launches > 1)) return BilledSeconds(run_seconds, granularity_seconds, minimum_seconds);
  return launches * BilledSeconds(run_seconds / launches, granularity_seconds, minimum_seconds);
}

}  // namespace gpuadvisor::pricing
