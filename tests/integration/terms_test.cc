// Issue 19 item 6: reserved and committed terms as purchase options, end to
// end through the gateway's Recommend on the four real services with the
// embedded data. A reserved answer names its term and upfront rule, pays the
// whole term whatever the job's hours and says so, carries its price's own
// date; the caller limits the terms and upfront rules.

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/integration/stack.h"

namespace gpuadvisor::testing {
namespace {

using gateway::v1::RecommendRequest;
using gateway::v1::RecommendResponse;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace cv1 = ::gpuadvisor::catalog::v1;

class Terms : public StackTest {
 protected:
  static RecommendRequest Lora(const std::string& provider) {
    RecommendRequest request;
    request.mutable_workload()->set_task(sizing::v1::TASK_LORA);
    request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
    request.mutable_workload()->set_train_tokens(5e7);
    request.mutable_constraints()->add_providers(provider);
    request.mutable_constraints()->add_gpu_models("H100");
    return request;
  }

  static std::map<std::string, std::string> Assumed(const RecommendResponse& response) {
    std::map<std::string, std::string> out;
    for (const auto& a : response.assumptions()) out[a.field()] = a.value();
    return out;
  }

  static bool AnyContains(const google::protobuf::RepeatedPtrField<std::string>& texts,
                          const std::string& part) {
    return std::any_of(texts.begin(), texts.end(),
                       [&](const std::string& t) { return absl::StrContains(t, part); });
  }
};

// An always-on endpoint for about three months asks for commitment terms of
// up to 3 years: the 1-year committed use is cheaper for it than the 3-year
// one, and it still pays the whole year.
TEST_F(Terms, AnEndpointOnATermPaysTheWholeTermAndSaysSo) {
  RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_INFERENCE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  request.mutable_workload()->set_context_length(4096);
  request.mutable_workload()->set_concurrent_sequences(16);
  request.mutable_workload()->set_serving_hours(2000);
  request.mutable_constraints()->add_providers("gcp");
  request.mutable_constraints()->add_gpu_models("H100");
  request.mutable_constraints()->add_purchase_options(cv1::PURCHASE_OPTION_RESERVED);
  request.mutable_constraints()->set_max_commitment_years(3);
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  EXPECT_EQ(Assumed(response).count("constraints.max_commitment_years"), 0u) << "it was asked";
  for (const auto& r : response.recommendations()) {
    SCOPED_TRACE(r.offer().id());
    EXPECT_EQ(r.purchase_option(), cv1::PURCHASE_OPTION_RESERVED);
    EXPECT_EQ(r.commitment().name(), "1-year committed use");
    EXPECT_EQ(r.commitment().term_hours(), 8760);
    EXPECT_EQ(r.commitment().upfront(), cv1::UPFRONT_PAYMENT_NONE);
    EXPECT_EQ(r.commitment_terms_bought(), 1);
    EXPECT_DOUBLE_EQ(r.committed_hours(), 8760);
    // The whole term, not the 2000 serving hours.
    EXPECT_NEAR(r.cost().compute_usd(), r.cost().usd_per_hour() * 8760,
                1e-6 * r.cost().compute_usd());
    EXPECT_TRUE(AnyContains(r.warnings(), "1-year committed use (1 year, no upfront"))
        << r.DebugString();
    EXPECT_TRUE(AnyContains(r.warnings(), "paid whole whether used or not"));
    EXPECT_TRUE(AnyContains(r.warnings(), "1 term = 8760 h per node"));
    // The price's own date: the billing SKUs the terms come from.
    EXPECT_EQ(r.price().as_of(), "2024-09-16");
  }
}

// Reserved asked for without a term limit: 1 year, stated; a short job pays
// the whole year.
TEST_F(Terms, ReservedWithoutATermLimitAssumesOneYearAndStatesIt) {
  RecommendRequest request = Lora("gcp");
  request.mutable_constraints()->add_purchase_options(cv1::PURCHASE_OPTION_RESERVED);
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  EXPECT_EQ(Assumed(response)["constraints.max_commitment_years"], "1");
  for (const auto& r : response.recommendations()) {
    SCOPED_TRACE(r.offer().id());
    EXPECT_EQ(r.commitment().term_hours(), 8760);
    EXPECT_LT(r.estimated_hours(), 100);
    EXPECT_GE(r.cost().compute_usd(), r.cost().usd_per_hour() * 8760 * (1 - 1e-9));
  }
}

// A term is paid whatever the hours: a job well inside its year has a wide
// hours interval but the same compute at P10 and P90 (not scaled with the
// hours as an hourly price is).
TEST_F(Terms, AReservedCostIntervalKeepsTheWholeTerm) {
  RecommendRequest request = Lora("gcp");
  request.mutable_workload()->set_train_tokens(2e10);
  request.mutable_constraints()->add_purchase_options(cv1::PURCHASE_OPTION_RESERVED);
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) {
    SCOPED_TRACE(r.offer().id());
    ASSERT_EQ(r.commitment_terms_bought(), 1);
    ASSERT_GT(r.estimated_hours_interval().p90(), 1.2 * r.estimated_hours_interval().p10());
    EXPECT_GE(r.total_usd_interval().p10(), r.cost().compute_usd() * (1 - 1e-9));
    EXPECT_LT(r.total_usd_interval().p90() - r.total_usd_interval().p10(),
              0.01 * r.cost().total_usd());
  }
  // So the default tie band is (almost) nil, and #1 says its order is strict.
  EXPECT_TRUE(
      AnyContains(response.recommendations(0).reasons(),
                  "in a strict order (the estimate's spread of this measure is under 0.5%)"))
      << response.recommendations(0).DebugString();
}

// Allowing a term adds reserved to the default purchase options.
TEST_F(Terms, AllowingATermAddsReservedToTheDefaults) {
  RecommendRequest request = Lora("gcp");
  request.mutable_constraints()->set_max_commitment_years(1);
  request.set_max_results(50);
  const RecommendResponse response = MustRecommend(request);
  EXPECT_EQ(Assumed(response)["constraints.purchase_options"], "on-demand, spot, reserved");
  EXPECT_FALSE(response.recommendations().empty());
}

// No term allowed, or no upfront rule the offers have: nothing reserved is
// priced, and the exclusion says why.
TEST_F(Terms, LimitsThatLeaveNoTermExcludeWithTheReason) {
  RecommendRequest request = Lora("gcp");
  request.mutable_constraints()->add_purchase_options(cv1::PURCHASE_OPTION_RESERVED);
  request.mutable_constraints()->set_max_commitment_years(0);
  RecommendResponse response = MustRecommend(request);
  EXPECT_TRUE(response.recommendations().empty());
  bool said = false;
  for (const auto& e : response.excluded()) {
    if (e.reason() != gateway::v1::EXCLUSION_REASON_NOT_PRICED) continue;
    said = absl::StrContains(e.detail(), "no commitment term within the limits asked");
  }
  EXPECT_TRUE(said) << response.DebugString();

  request = Lora("aws");
  request.mutable_constraints()->add_purchase_options(cv1::PURCHASE_OPTION_RESERVED);
  request.mutable_constraints()->add_upfront_payments(cv1::UPFRONT_PAYMENT_NONE);
  response = MustRecommend(request);
  EXPECT_TRUE(response.recommendations().empty()) << "AWS Capacity Blocks are paid up front";

  request.mutable_constraints()->set_upfront_payments(0, cv1::UPFRONT_PAYMENT_UNSPECIFIED);
  grpc::Status status = Recommend(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("constraints.upfront_payments[0]"));
  request.mutable_constraints()->clear_upfront_payments();
  request.mutable_constraints()->set_max_commitment_years(-1);
  status = Recommend(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("constraints.max_commitment_years"));
}

// Issue 19: price age per price. AWS p5's reserved price is the Capacity
// Block rate from before the June 2025 cut (U2, valid until 2025-01-01): a
// reserved answer dates it so and warns it is stale, while the same offer on
// demand keeps its own, recent date.
TEST_F(Terms, AReservedPriceCarriesItsOwnDate) {
  RecommendRequest request = Lora("aws");
  request.mutable_constraints()->add_regions("us-east-1");
  request.mutable_constraints()->add_purchase_options(cv1::PURCHASE_OPTION_RESERVED);
  RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  const auto& r = response.recommendations(0);
  EXPECT_EQ(r.offer().id(), "aws/p5.48xlarge/us-east-1");
  EXPECT_EQ(r.commitment().kind(), cv1::COMMITMENT_KIND_CAPACITY_BLOCK);
  EXPECT_EQ(r.commitment().upfront(), cv1::UPFRONT_PAYMENT_ALL);
  EXPECT_NEAR(r.commitment().upfront_usd(), 943.92, 1e-9);
  EXPECT_EQ(r.price().as_of(), "2024-12-31");
  EXPECT_TRUE(r.price().stale());
  EXPECT_GT(r.price().age_seconds(), 300 * 86400);
  EXPECT_TRUE(AnyContains(r.warnings(), "stale price: "));
  EXPECT_TRUE(AnyContains(r.warnings(), "1 day, all upfront ($943.92)"));
  EXPECT_EQ(response.oldest_price_as_of(), "2024-12-31");

  request.mutable_constraints()->set_purchase_options(0, cv1::PURCHASE_OPTION_ON_DEMAND);
  response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& od : response.recommendations()) {
    SCOPED_TRACE(od.offer().id());
    EXPECT_FALSE(od.has_commitment());
    EXPECT_EQ(od.price().as_of(), od.offer().as_of());
    EXPECT_NE(od.price().as_of(), "2024-12-31");
  }
}

}  // namespace
}  // namespace gpuadvisor::testing
