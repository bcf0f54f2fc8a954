#include "services/pricing/billing_math.h"

#include <cmath>
#include <iterator>
#include <limits>

#include "gtest/gtest.h"

namespace gpuadvisor::pricing {
namespace {

struct BilledCase {
  const char* name;
  double run_seconds;
  int granularity_seconds;
  int minimum_seconds;
  double billed_seconds;
};

TEST(BilledSeconds, HandComputedTable) {
  const BilledCase cases[] = {
      // Per second with a 60 s minimum (AWS, GCP, OCI VMs).
      {"aws 30 s hits the minimum", 30, 1, 60, 60},
      {"aws 90.5 s rounds up to 91", 90.5, 1, 60, 91},
      {"aws one hour exactly", 3600, 1, 60, 3600},
      // Per minute, no minimum (Lambda, CoreWeave).
      {"per minute 1 s bills a minute", 1, 60, 0, 60},
      {"per minute 60 s", 60, 60, 0, 60},
      {"per minute 61 s bills two", 61, 60, 0, 120},
      // Per started hour with a one-hour minimum.
      {"hourly 10 s", 10, 3600, 3600, 3600},
      {"hourly 3600 s", 3600, 3600, 3600, 3600},
      {"hourly 3601 s bills two hours", 3601, 3600, 3600, 7200},
      // Azure: per second with a 5-minute minimum.
      {"azure 61 s bills 300", 61, 1, 300, 300},
      {"azure 301 s", 301, 1, 300, 301},
      // OCI bare metal: per second with a one-hour minimum.
      {"oci bm 120 s bills an hour", 120, 1, 3600, 3600},
      {"oci bm 2 h", 7200, 1, 3600, 7200},
      // Nothing launched.
      {"zero run", 0, 60, 60, 0},
      {"negative run", -5, 1, 60, 0},
      // Floating point: 0.1 h * 3600 must not bill 361 s.
      {"0.1 h per second", 0.1 * 3600, 1, 0, 360},
      {"0.7 h per minute", 0.7 * 3600, 60, 0, 2520},
  };
  for (const BilledCase& c : cases) {
    EXPECT_DOUBLE_EQ(BilledSeconds(c.run_seconds, c.granularity_seconds, c.minimum_seconds),
                     c.billed_seconds)
        << c.name;
  }
}

TEST(YoungDaly, HandComputed) {
  // sqrt(2 * 0.25 h * 50 h) = sqrt(25) = 5 h.
  EXPECT_DOUBLE_EQ(YoungDalyIntervalHours(0.25, 50), 5.0);
  // sqrt(2 * 0.1 h * 20 h) = 2 h.
  EXPECT_DOUBLE_EQ(YoungDalyIntervalHours(0.1, 20), 2.0);
  // sqrt(2 * (1/60) h * 3271.44 h) = 10.443 h.
  EXPECT_NEAR(YoungDalyIntervalHours(1.0 / 60, 3271.4367), 10.4426, 1e-4);
}

TEST(YoungDaly, Edges) {
  EXPECT_EQ(YoungDalyIntervalHours(0, 50), 0);
  EXPECT_EQ(YoungDalyIntervalHours(0.25, 0), 0);
  EXPECT_TRUE(std::isinf(YoungDalyIntervalHours(0.25, std::numeric_limits<double>::infinity())));
}

TEST(ProbabilityOfInterruption, HandComputed) {
  // rate 0.02 /h over 50 h: 1 - e^-1.
  EXPECT_NEAR(ProbabilityOfInterruption(0.02, 50), 0.6321205588, 1e-10);
  EXPECT_EQ(ProbabilityOfInterruption(0, 50), 0);
  EXPECT_EQ(ProbabilityOfInterruption(0.02, 0), 0);
}

// The month-long reading of a Spot Advisor band (L = 730 h), the optimistic
// conversion the shipped data no longer uses, kept as a comparison.
double MonthlyInterruptionFractionToRatePerHour(double fraction) {
  return InterruptionFractionToRatePerHour(fraction, 730);
}

TEST(MonthlyInterruptionFraction, SpotAdvisorBands) {
  // -ln(1 - f) / 730, the values written in data/pricing/billing.textproto.
  EXPECT_NEAR(MonthlyInterruptionFractionToRatePerHour(0.10), 1.4433e-4, 1e-8);
  EXPECT_NEAR(MonthlyInterruptionFractionToRatePerHour(0.20), 3.0568e-4, 1e-8);
  EXPECT_NEAR(MonthlyInterruptionFractionToRatePerHour(0.05), 7.0265e-5, 1e-9);
  EXPECT_NEAR(MonthlyInterruptionFractionToRatePerHour(0.15), 2.2263e-4, 1e-8);
  EXPECT_EQ(MonthlyInterruptionFractionToRatePerHour(0), 0);
  // Round trip: over 730 h the chance of an interruption is f again.
  EXPECT_NEAR(ProbabilityOfInterruption(MonthlyInterruptionFractionToRatePerHour(0.2), 730), 0.2,
              1e-12);
}

TEST(InterruptionFraction, OverARealisticLifetime) {
  // -ln(1 - f) / L: the same Spot Advisor band over a 12 h instance life.
  EXPECT_NEAR(InterruptionFractionToRatePerHour(0.20, 12), 0.0185953, 1e-7);
  EXPECT_NEAR(InterruptionFractionToRatePerHour(0.10, 12), 0.0087800, 1e-7);
  EXPECT_NEAR(InterruptionFractionToRatePerHour(0.05, 12), 0.0042744, 1e-7);
  // 730 / 12 = 61x the month-long reading.
  EXPECT_NEAR(
      InterruptionFractionToRatePerHour(0.2, 12) / MonthlyInterruptionFractionToRatePerHour(0.2),
      730.0 / 12, 1e-9);
  // Round trip: over one life the chance of an interruption is f again.
  EXPECT_NEAR(ProbabilityOfInterruption(InterruptionFractionToRatePerHour(0.2, 12), 12), 0.2,
              1e-12);
  EXPECT_EQ(InterruptionFractionToRatePerHour(0.2, 0), 0);
  EXPECT_EQ(InterruptionFractionToRatePerHour(0, 12), 0);
}

// Issue 21 item 3: each spot and checkpoint formula against a value computed
// by hand (the comment shows the arithmetic).
TEST(SpotAndCheckpointFormulas, HandComputedTable) {
  struct Case {
    const char* formula;
    double got;
    double want;
  } cases[] = {
      // Checkpoint writes are per node, in parallel: 720 GB at 2 GB/s = 360 s.
      {"CheckpointWriteHours(720 GB, 1 node, 2 GB/s)", CheckpointWriteHours(720, 1, 2), 0.1},
      // Four nodes write 180 GB each at once: 90 s.
      {"CheckpointWriteHours(720 GB, 4 nodes, 2 GB/s)", CheckpointWriteHours(720, 4, 2), 0.025},
      // 2048 GB over 32 nodes at 2 GB/s: 32 s, not 1024 s through one pipe.
      {"CheckpointWriteHours(2048 GB, 32 nodes, 2 GB/s)", CheckpointWriteHours(2048, 32, 2),
       32.0 / 3600},
      {"CheckpointWriteHours(no bandwidth)", CheckpointWriteHours(720, 1, 0), 0},
      // e^{0.02 x 50} - 1 = e - 1.
      {"ExpectedRestarts(0.02/h, 50 h)", ExpectedRestarts(0.02, 50), 1.718281828459045},
      // Non-restartable: (e^{lambda H} - 1) / lambda = (e - 1) / 0.02.
      {"ExpectedSegmentHours(0.02/h, 50 h, R 0)", ExpectedSegmentHours(0.02, 50, 0),
       85.91409142295225},
      // With 30 min per restart: (e - 1) x (50 + 0.5).
      {"ExpectedSegmentHours(0.02/h, 50 h, R 0.5 h)", ExpectedSegmentHours(0.02, 50, 0.5),
       86.77323233718178},
      // 48 h on 4 nodes at 0.005/h per node: (e^{0.96} - 1) / 0.02, not 48 x (1 + P).
      {"ExpectedSegmentHours(0.02/h, 48 h, R 0)", ExpectedSegmentHours(0.02, 48, 0),
       80.58482367115589},
      {"ExpectedSegmentHours(rate 0)", ExpectedSegmentHours(0, 50, 1), 50},
      // Two 30-minute launches, each billed its one-hour minimum.
      {"BilledSecondsOverLaunches(3600 s, 2, 60 s, 3600 s)",
       BilledSecondsOverLaunches(3600, 2, 60, 3600), 7200},
      // 1.1 launches of 3305.5 s, each rounded to a started hour: 1.1 x 3600.
      {"BilledSecondsOverLaunches(3636 s, 1.1, 3600 s, 3600 s)",
       BilledSecondsOverLaunches(3636, 1.1, 3600, 3600), 3960},
      // Per-second billing without a minimum: the launches cost nothing extra.
      {"BilledSecondsOverLaunches(5400 s, 1.5, 1 s, 0)", BilledSecondsOverLaunches(5400, 1.5, 1, 0),
       5400},
      {"BilledSecondsOverLaunches(one launch)", BilledSecondsOverLaunches(3601, 1, 3600, 3600),
       7200},
  };
  ASSERT_GT(std::size(cases), 0u);
  for (const Case& c : cases) EXPECT_NEAR(c.got, c.want, 1e-9 * (1 + c.want)) << c.formula;
}

}  // namespace
}  // namespace gpuadvisor::pricing
