// Answers a platform can act on (issue 10, items 1-7), end to end: the four
// real services with the embedded data, called through the gateway's gRPC
// API. Each test names the problem it pins down; each failed before the fix.

#include <map>
#include <string>

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

class Answers : public StackTest {
 protected:
  static grpc::Status Recommend(const RecommendRequest& request, RecommendResponse* response) {
    auto stub = stack_->GatewayStub();
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    return stub->Recommend(&context, request, response);
  }

  static RecommendResponse MustRecommend(const RecommendRequest& request) {
    RecommendResponse response;
    const grpc::Status status = Recommend(request, &response);
    EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
    return response;
  }

  static RecommendRequest Lora() {
    RecommendRequest request;
    request.mutable_workload()->set_task(sizing::v1::TASK_LORA);
    request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
    request.mutable_workload()->set_train_tokens(5e7);
    return request;
  }

  static std::map<std::string, std::string> Assumed(const RecommendResponse& response) {
    std::map<std::string, std::string> out;
    for (const auto& a : response.assumptions()) out[a.field()] = a.value();
    return out;
  }

  static std::map<gateway::v1::ExclusionReason, gateway::v1::Exclusion> Excluded(const RecommendResponse& r) {
    std::map<gateway::v1::ExclusionReason, gateway::v1::Exclusion> out;
    for (const auto& e : r.excluded()) out[e.reason()] = e;
    return out;
  }
};

// Was: ranked offers at 0.0 h and $0.00 with no warning.
TEST_F(Answers, FineTuneWithoutTokenCountIsRejectedNamingTheField) {
  RecommendRequest request = Lora();
  request.mutable_workload()->clear_train_tokens();
  RecommendResponse response;
  const grpc::Status status = Recommend(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("workload.train_tokens"));
}

// Was: "sequence_length must be > 0" for a LoRA run that did not say it, and
// an endpoint's context_length defaulted silently.
TEST_F(Answers, DefaultsAreAppliedAndStated) {
  const RecommendResponse lora = MustRecommend(Lora());
  ASSERT_FALSE(lora.recommendations().empty());
  EXPECT_EQ(Assumed(lora)["workload.sequence_length"], "2048");
  EXPECT_EQ(Assumed(lora)["workload.lora_rank"], "16");
  for (const auto& r : lora.recommendations()) EXPECT_GT(r.cost().total_usd(), 0) << r.offer().id();

  RecommendRequest endpoint;
  endpoint.mutable_workload()->set_task(sizing::v1::TASK_INFERENCE);
  endpoint.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  const RecommendResponse served = MustRecommend(endpoint);
  ASSERT_FALSE(served.recommendations().empty());
  EXPECT_EQ(Assumed(served)["workload.context_length"], "4096");
  EXPECT_EQ(Assumed(served)["workload.concurrent_sequences"], "1");
}

// Was: --providers=AWS, --regions=eu and --regions=EU-CENTRAL-1 filtered out
// everything and returned OK with an empty list.
TEST_F(Answers, ProviderAndRegionNamesMatchIgnoringCaseAndGroupsExpand) {
  RecommendRequest request = Lora();
  request.mutable_constraints()->add_providers("AWS");
  RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) EXPECT_EQ(r.offer().provider(), "aws");

  request = Lora();
  request.mutable_constraints()->add_regions("EU-CENTRAL-1");
  response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) EXPECT_EQ(r.offer().region(), "eu-central-1");

  request = Lora();
  request.mutable_constraints()->add_regions("eu");
  response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) {
    EXPECT_THAT(r.offer().region(),
                ::testing::AnyOf(::testing::StartsWith("eu-"), ::testing::StartsWith("europe-"), HasSubstr(", EU"),
                                 HasSubstr("-france-"), HasSubstr("-poland-")))
        << r.offer().id();
    EXPECT_NE(r.offer().region(), "eu-west-2") << "London is not in the EU";
  }
}

TEST_F(Answers, UnknownNamesAreInvalidArgumentWithTheClosestValidOnes) {
  RecommendRequest request = Lora();
  request.mutable_constraints()->add_providers("lamdba");
  RecommendResponse response;
  grpc::Status status = Recommend(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), AllOf(HasSubstr("constraints.providers[0]"), HasSubstr("lambda")));

  request = Lora();
  request.mutable_constraints()->add_regions("eu-centrall-1");
  status = Recommend(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), AllOf(HasSubstr("constraints.regions[0]"), HasSubstr("eu-central-1")));

  request = Lora();
  request.mutable_constraints()->add_gpu_models("H100-SMX");
  status = Recommend(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), AllOf(HasSubstr("constraints.gpu_models[0]"), HasSubstr("H100")));
}

// Was: INTERNAL for the whole request, because one slow candidate's hours
// exceeded what pricing accepts.
TEST_F(Answers, VeryLongJobExcludesUnpriceableCandidatesInsteadOfFailing) {
  RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_PRETRAIN);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  request.mutable_workload()->set_train_tokens(15e12);
  request.mutable_workload()->set_sequence_length(8192);
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  const auto excluded = Excluded(response);
  ASSERT_TRUE(excluded.count(gateway::v1::EXCLUSION_REASON_RUNS_TOO_LONG));
  EXPECT_THAT(excluded.at(gateway::v1::EXCLUSION_REASON_RUNS_TOO_LONG).detail(), HasSubstr("pricing quotes"));
}

// Was: an unstated 16-node cap; a job that needs more nodes came back empty,
// "misses deadline".
TEST_F(Answers, NodeCapFollowsTheOffersLargestClusterAndIsStated) {
  RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_PRETRAIN);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-70b");
  request.mutable_workload()->set_train_tokens(1.4e12);
  request.mutable_workload()->set_sequence_length(4096);
  request.mutable_constraints()->set_deadline_hours(1000);  // B200 needs 1.36k h at 16 nodes
  const RecommendResponse response = MustRecommend(request);
  EXPECT_EQ(Assumed(response)["constraints.max_nodes"], "each offer's largest cluster");
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) {
    EXPECT_GT(r.offer().nodes(), 16) << r.offer().id();
    EXPECT_LE(r.offer().nodes(), r.offer().max_nodes()) << r.offer().id();
  }
  // A cap the caller sets is named in the reason.
  request.mutable_constraints()->set_max_nodes(16);
  const RecommendResponse capped = MustRecommend(request);
  EXPECT_TRUE(capped.recommendations().empty());
  const auto excluded = Excluded(capped);
  ASSERT_TRUE(excluded.count(gateway::v1::EXCLUSION_REASON_MISSES_DEADLINE));
  EXPECT_THAT(excluded.at(gateway::v1::EXCLUSION_REASON_MISSES_DEADLINE).detail(), HasSubstr("max_nodes = 16"));
}

// Was: an empty answer lost its price-book version.
TEST_F(Answers, EmptyAnswerCarriesBothVersions) {
  RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_FULL_FINETUNE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-70b");
  request.mutable_workload()->set_train_tokens(1e9);
  request.mutable_constraints()->add_gpu_models("T4");
  request.mutable_constraints()->set_single_node(true);
  const RecommendResponse response = MustRecommend(request);
  EXPECT_TRUE(response.recommendations().empty());
  EXPECT_FALSE(response.catalog_version().empty());
  EXPECT_FALSE(response.price_book_version().empty());
  EXPECT_FALSE(response.prices_as_of().empty());
}

RecommendRequest Endpoint() {
  RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_INFERENCE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  request.mutable_workload()->set_context_length(4096);
  request.mutable_workload()->set_output_tokens(256);
  request.mutable_workload()->set_concurrent_sequences(16);
  return request;
}

// Was: no time to first token, no per-user speed, no $/1M tokens.
TEST_F(Answers, ServingAnswersCarryLatencyPerUserSpeedAndTokenPrice) {
  const RecommendResponse response = MustRecommend(Endpoint());
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) {
    const gateway::v1::ServingEstimate& s = r.serving();
    EXPECT_GT(s.time_to_first_token_seconds(), 0) << r.offer().id();
    EXPECT_GT(s.tokens_per_second_per_user(), 0) << r.offer().id();
    EXPECT_NEAR(s.inter_token_latency_seconds() * s.tokens_per_second_per_user(), 1.0, 1e-9);
    EXPECT_GE(s.aggregate_tokens_per_second(), s.tokens_per_second_per_user());
    EXPECT_GE(s.replicas(), 1);
    EXPECT_GT(s.usd_per_million_output_tokens(), 0);
  }
  // An SLO no GPU meets: nothing qualifies, and the answer says how close
  // the nearest came.
  RecommendRequest strict = Endpoint();
  strict.mutable_constraints()->set_min_tokens_per_second_per_user(1e5);
  const RecommendResponse none = MustRecommend(strict);
  EXPECT_TRUE(none.recommendations().empty());
  ASSERT_EQ(none.nearest_misses_size(), 1);
  EXPECT_EQ(none.nearest_misses(0).reason(), gateway::v1::EXCLUSION_REASON_TOO_SLOW);
  EXPECT_THAT(none.nearest_misses(0).summary(), HasSubstr("short of your min_tokens_per_second_per_user"));
}

// Was: an endpoint on spot priced as a non-restartable run, with two
// contradictory warnings.
TEST_F(Answers, SpotEndpointHasASpareNodeAndOneWarning) {
  RecommendResponse response = MustRecommend(Endpoint());
  for (const auto& r : response.recommendations()) {
    EXPECT_NE(r.purchase_option(), catalog::v1::PURCHASE_OPTION_SPOT) << "spot only when asked for";
  }
  RecommendRequest request = Endpoint();
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_SPOT);
  response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) {
    EXPECT_EQ(r.serving().spare_replicas() > 0, true) << r.offer().id();
    int spare = 0;
    for (const std::string& w : r.warnings()) {
      EXPECT_THAT(w, ::testing::Not(HasSubstr("non-restartable"))) << r.offer().id();
      EXPECT_THAT(w, ::testing::Not(HasSubstr("loses the whole run"))) << r.offer().id();
      spare += w.find("spare node") != std::string::npos;
    }
    EXPECT_EQ(spare, 1) << r.offer().id();
  }
}

// Was: FP8 weights on a GPU without FP8 got no warning, although sizing knew.
TEST_F(Answers, SizingNotesBecomeWarnings) {
  RecommendRequest request = Endpoint();
  request.mutable_workload()->set_precision(sizing::v1::PRECISION_FP8);
  request.mutable_constraints()->add_gpu_models("A100-80GB");
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) {
    EXPECT_THAT(r.warnings(), ::testing::Contains(HasSubstr("no FP8"))) << r.offer().id();
  }
}

// Was: no "spot saves X, expected loss Y"; no distance to the cap when
// nothing qualified.
TEST_F(Answers, WhatIfForTheTopAnswerAndNearestMissWhenNothingQualifies) {
  const RecommendResponse response = MustRecommend(Lora());
  ASSERT_FALSE(response.recommendations().empty());
  ASSERT_GT(response.what_if_size(), 0);
  const auto& top = response.recommendations(0);
  bool other_option = false;
  for (const auto& w : response.what_if()) {
    EXPECT_NEAR(w.delta_usd(), w.total_usd() - top.cost().total_usd(), 1e-6) << w.axis();
    EXPECT_FALSE(w.summary().empty());
    if (w.offer().id() == top.offer().id() && w.offer().nodes() == top.offer().nodes() &&
        w.purchase_option() != top.purchase_option()) {
      other_option = true;
      if (w.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT) {
        EXPECT_THAT(w.summary(), HasSubstr("expected preemption loss"));
      }
    }
  }
  EXPECT_TRUE(other_option) << "spot vs on-demand of the same offer";

  RecommendRequest capped = Lora();
  capped.mutable_constraints()->set_max_total_usd(0.01);
  const RecommendResponse none = MustRecommend(capped);
  EXPECT_TRUE(none.recommendations().empty());
  ASSERT_EQ(none.nearest_misses_size(), 1);
  EXPECT_EQ(none.nearest_misses(0).reason(), gateway::v1::EXCLUSION_REASON_OVER_BUDGET);
  EXPECT_GT(none.nearest_misses(0).value(), 0.01);
  EXPECT_THAT(none.nearest_misses(0).summary(), HasSubstr("over your max_total_usd of $0.01"));
}

// Was: short jobs ignored start-up, image pull and model download; long
// ones ignored checkpoint writes.
TEST_F(Answers, OverheadsAreIncludedAndShownInHoursAndDollars) {
  RecommendRequest request = Lora();
  request.mutable_workload()->set_dataset_gb(20);
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) {
    const gateway::v1::Overheads& o = r.overheads();
    EXPECT_GT(o.startup_hours(), 0) << r.offer().id();
    EXPECT_GT(o.image_pull_hours(), 0) << r.offer().id();
    EXPECT_GT(o.download_hours(), 0) << r.offer().id();
    EXPECT_NEAR(o.total_hours(), o.startup_hours() + o.image_pull_hours() + o.download_hours() + o.checkpoint_hours(),
                1e-9);
    EXPECT_NEAR(o.usd(), o.total_hours() * r.cost().usd_per_hour(), 1e-9);
    EXPECT_GT(r.estimated_hours(), o.total_hours());  // the run itself plus its overheads
    EXPECT_FALSE(o.source().empty());
  }
}

}  // namespace
}  // namespace gpuadvisor::testing
