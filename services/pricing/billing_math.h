#ifndef GPUADVISOR_SERVICES_PRICING_BILLING_MATH_H_
#define GPUADVISOR_SERVICES_PRICING_BILLING_MATH_H_

// Pure billing and spot-risk formulas used by PriceBook::Quote. They are
// exposed so that tests and docs/pricing.md can check them against
// hand-computed values. All functions are thread-safe and allocation-free.

namespace gpuadvisor::pricing {

// Seconds a provider bills for one node that runs `run_seconds`:
// run_seconds rounded up to a multiple of `granularity_seconds`, and at least
// `minimum_seconds`. A run of 0 seconds (or less) bills 0: nothing was
// launched. A value within 1e-6 s above a multiple counts as that multiple, so
// that hours * 3600 in floating point does not bill an extra unit.
// Preconditions (checked by PriceBook validation): granularity_seconds >= 1,
// minimum_seconds >= 0, run_seconds finite.
//   BilledSeconds(30, 1, 60)       == 60    // per second, 60 s minimum (AWS)
//   BilledSeconds(61, 60, 0)       == 120   // per minute (Lambda)
//   BilledSeconds(3601, 3600, 3600) == 7200 // per started hour
double BilledSeconds(double run_seconds, int granularity_seconds, int minimum_seconds);

// Young/Daly optimal checkpoint interval, sqrt(2 * C * MTBI), in hours, for a
// checkpoint that takes `checkpoint_cost_hours` to write and a mean time
// between interruptions of `mtbi_hours` (of the whole cluster). Returns 0 when
// either argument is <= 0 (free checkpoints: checkpoint continuously) and
// +infinity when mtbi_hours is +infinity (never interrupted: never checkpoint).
double YoungDalyIntervalHours(double checkpoint_cost_hours, double mtbi_hours);

// Probability of at least one interruption in `hours` at a Poisson rate of
// `interruptions_per_hour`: 1 - exp(-rate * hours). 0 for a rate or time <= 0.
double ProbabilityOfInterruption(double interruptions_per_hour, double hours);

// Converts a provider's interruption statistic into a per-node Poisson rate:
// `fraction` of the instances were interrupted before their owner ended them
// (AWS Spot Instance Advisor "frequency of interruption", e.g. 0.20 for the
// upper edge of the 15-20% band), and such instances live `lifetime_hours`:
//   rate = -ln(1 - fraction) / lifetime_hours.
// AWS aggregates the fraction over a month, but a spot instance does not live
// a month: spreading it over 730 h (lifetime_hours = 730) understates the
// hazard by 730 / lifetime_hours (61x at 12 h). See docs/pricing.md. Returns 0 for fraction <= 0 or
// lifetime_hours <= 0; requires fraction < 1.
//   InterruptionFractionToRatePerHour(0.20, 12) == 0.018595...  (MTBI 53.8 h)
double InterruptionFractionToRatePerHour(double fraction, double lifetime_hours);

// Time for one checkpoint write, hours: each of `nodes` nodes writes its
// share of a `checkpoint_gb` checkpoint (the whole job's state) in parallel,
// at `gb_per_second` per node (the storage path's bandwidth). 0 when any
// argument is <= 0 (nothing to write, or no bandwidth stated).
//   CheckpointWriteHours(720, 1, 2) == 0.1    // 720 GB at 2 GB/s
//   CheckpointWriteHours(720, 4, 2) == 0.025  // four nodes write 180 GB each
double CheckpointWriteHours(double checkpoint_gb, int nodes, double gb_per_second);

// Expected interruptions before `segment_hours` of work complete without
// one, when each interruption loses the segment and it starts over, at a
// Poisson rate of `rate` per hour: e^{rate x segment} - 1. 0 for a rate or
// segment <= 0.
double ExpectedRestarts(double rate, double segment_hours);

// Expected wall-clock hours until such a segment completes, when each
// interruption also costs `restart_hours` before the segment starts again:
//   (e^{rate x segment} - 1) x (1 / rate + restart_hours)
// and `segment_hours` at rate 0. A job that cannot restart from a checkpoint
// is one segment of its whole length H: (e^{lambda H} - 1) / lambda with no
// restart time.
//   ExpectedSegmentHours(0.02, 50, 0) == (e - 1) / 0.02 == 85.914...
double ExpectedSegmentHours(double rate, double segment_hours, double restart_hours);

// Both of the above for one segment, with one exponential (a spot quote
// needs both for every item).
struct SegmentExpectation {
  double restarts = 0;  // ExpectedRestarts
  double hours = 0;     // ExpectedSegmentHours
};
SegmentExpectation ExpectSegment(double rate, double segment_hours, double restart_hours);

// Seconds a provider bills for `run_seconds` of node time spread over
// `launches` launches of equal length (the first one plus one per
// interruption; a fraction of a launch counts pro rata): launches x
// BilledSeconds(run_seconds / launches), so every relaunch pays the
// granularity rounding and the minimum charge again. BilledSeconds for
// launches <= 1.
//   BilledSecondsOverLaunches(3600, 2, 60, 3600) == 7200  // two 30-min runs, 1 h minimum each
double BilledSecondsOverLaunches(double run_seconds, double launches, int granularity_seconds,
                                 int minimum_seconds);

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_BILLING_MATH_H_
