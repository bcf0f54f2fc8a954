// The error-interval fit (error_interval_fit.h) on hand-made rows: weighted
// percentiles, equal weight per source, leave-one-source-out spread wider
// than in-sample when sources disagree, and the one-source fallback.

#include "services/sizing/error_interval_fit.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;

ErrorRow Row(const char* source, double ratio, const char* framework = "f") {
  ErrorRow r;
  r.quantity = v1::ERROR_QUANTITY_TRAINING_SPEED;
  r.framework = framework;
  r.source = source;
  r.ratio = ratio;
  r.tolerance = 0.3;
  return r;
}

TEST(ErrorIntervalFit, WeightedPercentile) {
  EXPECT_DOUBLE_EQ(WeightedPercentile({3, 1, 2}, {1, 1, 1}, 0.5), 2);
  EXPECT_DOUBLE_EQ(WeightedPercentile({1, 2}, {1, 1}, 0.5), 1.5);
  EXPECT_DOUBLE_EQ(WeightedPercentile({1, 2}, {1, 1}, 0.0), 1);
  EXPECT_DOUBLE_EQ(WeightedPercentile({1, 2}, {1, 1}, 1.0), 2);
  // A heavy value pulls the median to itself.
  EXPECT_GT(WeightedPercentile({1, 2, 3}, {1, 1, 10}, 0.5), 2.5);
}

TEST(ErrorIntervalFit, SourceKeyIsThePublication) {
  EXPECT_EQ(SourceKey("Llama 3 paper (Dubey et al., arXiv:2407.21783) Table 4"), "Llama 3 paper");
  EXPECT_EQ(SourceKey("meta-llama/llama-models MODEL_CARD.md; Llama 2 paper"),
            "meta-llama/llama-models MODEL_CARD.md");
  EXPECT_EQ(SourceKey("plain"), "plain");
}

TEST(ErrorIntervalFit, LeaveOneSourceOutIsWiderWhenSourcesDisagree) {
  // Source A: the engine is right; B: 20% slow; C: 20% fast. In-sample
  // every row sits on its own source's level; held out, each source is
  // measured against the others' centre.
  std::vector<ErrorRow> rows;
  for (int i = 0; i < 10; ++i) rows.push_back(Row("A", 1.0));
  rows.push_back(Row("B", 1.2));
  rows.push_back(Row("C", 1 / 1.2));
  const auto fit = FitErrorIntervals(rows, 3);
  ASSERT_EQ(fit.size(), 2u);  // framework "f" (3 sources) and the catch-all
  const v1::ErrorInterval& e = fit[0];
  EXPECT_EQ(e.frameworks(0), "f");
  EXPECT_EQ(e.rows(), 12);
  EXPECT_EQ(e.sources(), 3);
  EXPECT_EQ(e.method(), "leave-one-source-out");
  // Equal weight per source: A's ten rows count as one source.
  EXPECT_NEAR(e.p50_ratio(), 1.0, 1e-3);
  EXPECT_LT(e.p10_ratio(), e.in_sample_p10_ratio());
  EXPECT_GT(e.p90_ratio(), e.in_sample_p90_ratio());
  EXPECT_TRUE(fit[1].frameworks().empty());
}

TEST(ErrorIntervalFit, OneSourceIsInSampleWidenedToItsTolerance) {
  const auto fit = FitErrorIntervals({Row("A", 1.0), Row("A", 1.05)}, 3);
  ASSERT_EQ(fit.size(), 1u);  // too few sources for a framework entry
  EXPECT_NE(fit[0].method().find("in-sample, one source"), std::string::npos);
  EXPECT_NEAR(fit[0].p10_ratio(), std::round(1000 / 1.3) / 1000, 1e-9);
  EXPECT_NEAR(fit[0].p90_ratio(), 1.3, 1e-9);
}

}  // namespace
}  // namespace gpuadvisor::sizing
