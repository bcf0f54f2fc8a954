// Answers a platform can act on (issue 10, items 1-7), end to end: the four
// real services with the embedded data, called through the gateway's gRPC
// API. Each test names the problem it pins down; each failed before the fix.

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gpuadvisor/pricing/v1/pricing.pb.h"
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

  static std::map<gateway::v1::ExclusionReason, gateway::v1::Exclusion> Excluded(
      const RecommendResponse& r) {
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
  // Sizing owns the defaults and reports them; the fine-tune's default
  // global batch (tokens per optimizer step, from common recipes) is stated.
  EXPECT_EQ(Assumed(lora)["workload.global_batch_size"], "32 sequences (65536 tokens per step)");
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
                ::testing::AnyOf(::testing::StartsWith("eu-"), ::testing::StartsWith("europe-"),
                                 HasSubstr(", EU"), HasSubstr("-france-"), HasSubstr("-poland-")))
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
  EXPECT_THAT(status.error_message(),
              AllOf(HasSubstr("constraints.providers[0]"), HasSubstr("lambda")));

  request = Lora();
  request.mutable_constraints()->add_regions("eu-centrall-1");
  status = Recommend(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              AllOf(HasSubstr("constraints.regions[0]"), HasSubstr("eu-central-1")));

  request = Lora();
  request.mutable_constraints()->add_gpu_models("H100-SMX");
  status = Recommend(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              AllOf(HasSubstr("constraints.gpu_models[0]"), HasSubstr("H100")));
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
  EXPECT_THAT(excluded.at(gateway::v1::EXCLUSION_REASON_RUNS_TOO_LONG).detail(),
              HasSubstr("pricing quotes"));
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
  EXPECT_THAT(excluded.at(gateway::v1::EXCLUSION_REASON_MISSES_DEADLINE).detail(),
              HasSubstr("max_nodes = 16"));
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
    EXPECT_NEAR(s.inter_token_latency_seconds() * s.decode_tokens_per_second_per_user(), 1.0, 1e-9);
    EXPECT_LE(s.tokens_per_second_per_user(), s.decode_tokens_per_second_per_user() * (1 + 1e-9));
    // At full load the users' speeds add up to the total (each one's own
    // first-token wait aside), never to users x decode speed.
    EXPECT_GE(s.tokens_per_second_per_user() * s.concurrent_sequences(),
              0.999 * s.aggregate_tokens_per_second());
    EXPECT_LE(s.tokens_per_second_per_user() * s.concurrent_sequences(),
              1.1 * s.aggregate_tokens_per_second());
    EXPECT_NE(s.throughput_bound(), sizing::v1::SERVING_BOUND_UNSPECIFIED) << r.offer().id();
    // The bound in words is the reason after the "serving:" summary.
    EXPECT_THAT(s.throughput_bound_text(), HasSubstr("tokens/s")) << r.offer().id();
    EXPECT_THAT(r.reasons(), ::testing::Contains(s.throughput_bound_text()));
    // The KV cache holds at least the sequences each replica serves.
    EXPECT_GE(s.max_concurrency_per_replica() * s.replicas(), s.concurrent_sequences())
        << r.offer().id();
    EXPECT_GE(s.kv_cache_capacity_tokens_per_replica(),
              int64_t{s.max_concurrency_per_replica()} * 4096)
        << r.offer().id();
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
  EXPECT_THAT(none.nearest_misses(0).summary(),
              HasSubstr("short of your min_tokens_per_second_per_user"));
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
  // A provider that sells both spot and on demand: since spot is costed with
  // its exact expected runtime, the cheapest of all offers may be one sold
  // on demand only (no other option to compare).
  RecommendRequest lora = Lora();
  lora.mutable_constraints()->add_providers("aws");
  const RecommendResponse response = MustRecommend(lora);
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
  // Was: reserved "up to" discounts used as certain, with no term. Since
  // 2026-12-03 an "up to" statement is no price at all (data/pricing/
  // billing.textproto): no reserved what-if for the providers that publish
  // only one (Vast, Crusoe); a reserved what-if names its term.
  for (const auto& w : response.what_if()) {
    if (w.purchase_option() != catalog::v1::PURCHASE_OPTION_RESERVED) continue;
    EXPECT_THAT(w.summary(), AllOf(HasSubstr("commitment"), HasSubstr("term")));
    EXPECT_FALSE(absl::StartsWith(w.offer().id(), "vast/") ||
                 absl::StartsWith(w.offer().id(), "crusoe/"))
        << w.offer().id() << ": " << w.summary();
  }

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
    EXPECT_NEAR(
        o.total_hours(),
        o.startup_hours() + o.image_pull_hours() + o.download_hours() + o.checkpoint_hours(), 1e-9);
    EXPECT_NEAR(o.usd(), o.total_hours() * r.cost().usd_per_hour(), 1e-9);
    EXPECT_GT(r.estimated_hours(), o.total_hours());  // the run itself plus its overheads
    EXPECT_FALSE(o.source().empty());
  }
  // A long on-demand run writes checkpoints: their time is counted too.
  RecommendRequest longer;
  longer.mutable_workload()->set_task(sizing::v1::TASK_FULL_FINETUNE);
  longer.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  longer.mutable_workload()->set_train_tokens(1e9);
  longer.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  const RecommendResponse full = MustRecommend(longer);
  ASSERT_FALSE(full.recommendations().empty());
  for (const auto& r : full.recommendations()) {
    ASSERT_GT(r.estimated_hours(), 1) << r.offer().id();  // past the default hourly interval
    EXPECT_GT(r.overheads().checkpoint_hours(), 0) << r.offer().id();
  }
}

// Was: no way to say what leaves the cloud; egress was a guess nobody saw.
// Now workload.egress_gb (presence: unset = derived and stated, 0 = none) is
// priced with each provider's rule from data/pricing/billing.textproto and
// shown in the cost breakdown.
TEST_F(Answers, EgressIsPricedWithEachProvidersRuleAndShown) {
  pricing::v1::PriceBook book;
  ASSERT_TRUE(LoadTextProtoFile(DataDir() + "/pricing/billing.textproto", &book).ok());
  std::map<std::string, pricing::v1::BillingRule> rules;
  for (const auto& rule : book.billing()) rules[rule.provider()] = rule;
  ASSERT_TRUE(rules.count("aws") && rules.count("lambda"));
  ASSERT_GT(rules["aws"].egress_usd_per_gb(), 0) << "the test needs a provider that charges egress";

  RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_FULL_FINETUNE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  request.mutable_workload()->set_train_tokens(2e8);
  request.mutable_workload()->set_egress_gb(2000);
  request.mutable_constraints()->add_providers("aws");
  request.mutable_constraints()->add_providers("lambda");
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  request.set_max_results(30);
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  EXPECT_EQ(Assumed(response).count("workload.egress_gb"), 0u) << "given, not assumed";
  std::set<std::string> providers;
  for (const auto& r : response.recommendations()) {
    const pricing::v1::BillingRule& rule = rules.at(r.offer().provider());
    const double expected = std::max(0.0, 2000 - rule.egress_free_gb()) * rule.egress_usd_per_gb();
    EXPECT_NEAR(r.cost().egress_usd(), expected, 1e-6) << r.offer().id();
    EXPECT_NEAR(r.cost().total_usd(),
                r.cost().compute_usd() + r.cost().storage_usd() + r.cost().egress_usd() +
                    r.cost().preemption_usd(),
                1e-6);
    EXPECT_THAT(r.reasons(), ::testing::Contains(
                                 HasSubstr(absl::StrFormat("egress $%.2f (2000 GB out", expected))))
        << r.offer().id();
    providers.insert(r.offer().provider());
  }
  EXPECT_EQ(providers, (std::set<std::string>{"aws", "lambda"})) << "both rules exercised";

  // Unset: derived from the trained weights, and stated.
  request.mutable_workload()->clear_egress_gb();
  const RecommendResponse derived = MustRecommend(request);
  ASSERT_FALSE(derived.recommendations().empty());
  EXPECT_EQ(Assumed(derived)["workload.egress_gb"], "16.1");  // 8.03B params x 2 bytes

  // Zero: nothing leaves, nothing is charged, nothing is assumed.
  request.mutable_workload()->set_egress_gb(0);
  const RecommendResponse none = MustRecommend(request);
  ASSERT_FALSE(none.recommendations().empty());
  EXPECT_EQ(Assumed(none).count("workload.egress_gb"), 0u);
  for (const auto& r : none.recommendations())
    EXPECT_EQ(r.cost().egress_usd(), 0) << r.offer().id();

  request.mutable_workload()->set_egress_gb(-1);
  RecommendResponse rejected;
  const grpc::Status status = Recommend(request, &rejected);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("workload.egress_gb"));
}

// Was: QLoRA on an AMD GPU came back without a word about bitsandbytes'
// 4-bit kernels on ROCm. Sizing now reports the hazard (data) as a
// structured note and the gateway shows it as a warning, on AMD only.
TEST_F(Answers, QloraOnRocmIsAStructuredNoteAndAWarning) {
  RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_QLORA);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  request.mutable_workload()->set_train_tokens(5e7);
  request.mutable_constraints()->add_gpu_models("MI300X");
  const RecommendResponse amd = MustRecommend(request);
  ASSERT_FALSE(amd.recommendations().empty());
  for (const auto& r : amd.recommendations()) {
    EXPECT_THAT(r.warnings(), ::testing::Contains(HasSubstr("QLoRA on ROCm"))) << r.offer().id();
  }
  request.mutable_constraints()->set_gpu_models(0, "H100-SXM");
  const RecommendResponse nvidia = MustRecommend(request);
  ASSERT_FALSE(nvidia.recommendations().empty());
  for (const auto& r : nvidia.recommendations()) {
    EXPECT_THAT(r.warnings(), ::testing::Not(::testing::Contains(HasSubstr("ROCm"))))
        << r.offer().id();
  }

  // The note itself: a code, a severity and a source, through the gateway.
  gateway::v1::EstimateRequest estimate;
  *estimate.mutable_workload() = request.workload();
  for (const char* gpu : {"MI300X", "H100-SXM"}) {
    sizing::v1::GpuConfiguration* c = estimate.add_configurations();
    c->set_gpu_model(gpu);
    c->set_gpus_per_node(1);
    c->set_nodes(1);
  }
  gateway::v1::EstimateResponse sized;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  ASSERT_TRUE(stack_->GatewayStub()->Estimate(&context, estimate, &sized).ok());
  ASSERT_EQ(sized.estimates_size(), 2);
  // Every note is structured now; the hazard is the one with its code.
  auto hazards = [](const sizing::v1::ConfigurationEstimate& e) {
    std::vector<sizing::v1::Note> found;
    for (const sizing::v1::Note& n : e.structured_notes()) {
      if (n.code() == "qlora_rocm") found.push_back(n);
    }
    return found;
  };
  const std::vector<sizing::v1::Note> amd_notes = hazards(sized.estimates(0));
  ASSERT_EQ(amd_notes.size(), 1u);
  const sizing::v1::Note& note = amd_notes[0];
  EXPECT_EQ(note.severity(), sizing::v1::NOTE_SEVERITY_WARNING);
  EXPECT_THAT(note.source(), HasSubstr("bitsandbytes"));
  EXPECT_THAT(hazards(sized.estimates(1)), ::testing::IsEmpty());
}

// Was: the table's TOP WARNING (and Recommendation.warnings) was filled with
// informational notes such as "Framework not given: the estimate assumes
// vLLM" or the KV-cache capacity. Sizing now marks each note INFO or
// WARNING; INFO notes arrive as Recommendation.notes, never as warnings.
TEST_F(Answers, InformationalNotesAreNotWarnings) {
  RecommendRequest request = Endpoint();
  request.mutable_workload()->set_context_length(8192);
  request.mutable_workload()->set_concurrent_sequences(32);
  request.mutable_constraints()->set_min_user_tokens_per_second(0);
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) {
    EXPECT_THAT(r.notes(), ::testing::Contains(HasSubstr("Framework not given"))) << r.offer().id();
    EXPECT_THAT(r.notes(), ::testing::Contains(HasSubstr("KV cache: up to"))) << r.offer().id();
    for (const std::string& w : r.warnings()) {
      EXPECT_THAT(w, ::testing::Not(HasSubstr("Framework not given"))) << r.offer().id();
      EXPECT_THAT(w, ::testing::Not(HasSubstr("KV cache: up to"))) << r.offer().id();
      EXPECT_THAT(w, ::testing::Not(HasSubstr("GDDR"))) << r.offer().id();
    }
  }
  // A real warning stays one: tensor parallelism over PCIe, said once. RTX
  // 3090s are sold on marketplace hosts only, which an endpoint leaves out
  // unless asked for.
  request.mutable_constraints()->add_gpu_models("RTX-3090");
  request.mutable_constraints()->set_host_tier(gpuadvisor::gateway::v1::HOST_TIER_CHOICE_ANY);
  const RecommendResponse pcie = MustRecommend(request);
  ASSERT_FALSE(pcie.recommendations().empty());
  const auto& top = pcie.recommendations(0);
  ASSERT_GT(top.parallel_plan().tensor_parallel(), 1);
  ASSERT_FALSE(top.warnings().empty());
  EXPECT_THAT(top.warnings(0), HasSubstr("PCIe-only multi-GPU"));
  int pcie_warnings = 0;
  for (const std::string& w : top.warnings()) pcie_warnings += absl::StrContains(w, "PCIe");
  EXPECT_EQ(pcie_warnings, 1);
}

// Was: the gateway derived TTFT and per-user speed from older decode and
// prefill rates (aggregate / sequences), so "cheapest" showed 4x RTX 3090
// at 7.9 tokens/s per user while sizing's own serving model said otherwise.
// Now Recommendation.serving is sizing's ServingEstimate, and the SLO
// filters read the same numbers.
TEST_F(Answers, ServingNumbersAreSizingsAndSloFiltersUseThem) {
  RecommendRequest request = Endpoint();
  request.mutable_constraints()->set_single_node(true);
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  const auto& top = response.recommendations(0);

  // The same configuration, sized through the gateway's pass-through.
  gateway::v1::EstimateRequest estimate;
  *estimate.mutable_workload() = request.workload();
  sizing::v1::GpuConfiguration* c = estimate.add_configurations();
  c->set_gpu_model(top.offer().gpu_model());
  c->set_gpus_per_node(top.offer().gpus_per_node());
  c->set_nodes(1);
  c->set_link(top.offer().link());
  c->set_link_bytes_per_second(top.offer().link_bytes_per_second());
  if (top.offer().has_scale_up() || top.offer().has_scale_out()) {
    *c->mutable_scale_up() = top.offer().scale_up();
    *c->mutable_scale_out() = top.offer().scale_out();
  }
  gateway::v1::EstimateResponse sized;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  ASSERT_TRUE(stack_->GatewayStub()->Estimate(&context, estimate, &sized).ok());
  ASSERT_EQ(sized.estimates_size(), 1);
  const sizing::v1::ServingEstimate& want = sized.estimates(0).serving();
  ASSERT_GT(want.tokens_per_second_per_user(), 0);
  const gateway::v1::ServingEstimate& got = top.serving();
  EXPECT_NEAR(got.time_to_first_token_seconds(), want.time_to_first_token_seconds(), 1e-9);
  EXPECT_NEAR(got.inter_token_latency_seconds(), want.inter_token_latency_seconds(), 1e-12);
  EXPECT_NEAR(got.tokens_per_second_per_user(), want.tokens_per_second_per_user(), 1e-9);
  EXPECT_NEAR(got.aggregate_tokens_per_second(), want.output_tokens_per_second(), 1e-6);
  EXPECT_NEAR(got.requests_per_second(), want.requests_per_second(), 1e-9);
  EXPECT_EQ(got.replicas(), want.replicas());
  EXPECT_EQ(got.concurrent_sequences(), want.replicas() * want.concurrency_per_replica());

  // A floor just above the top answer's shown speed excludes it, and every
  // answer left shows at least the floor; same for a TTFT cap just below.
  RecommendRequest floor = request;
  floor.mutable_constraints()->set_min_user_tokens_per_second(got.tokens_per_second_per_user() *
                                                              1.001);
  const RecommendResponse faster = MustRecommend(floor);
  ASSERT_FALSE(faster.recommendations().empty()) << "a loop over no answers proves nothing";
  for (const auto& r : faster.recommendations()) {
    EXPECT_NE(r.offer().id(), top.offer().id());
    EXPECT_GE(r.serving().tokens_per_second_per_user(),
              floor.constraints().min_user_tokens_per_second());
  }
  RecommendRequest ttft = request;
  ttft.mutable_constraints()->set_max_time_to_first_token_seconds(
      got.time_to_first_token_seconds() * 0.999);
  const RecommendResponse quicker = MustRecommend(ttft);
  ASSERT_FALSE(quicker.recommendations().empty());
  for (const auto& r : quicker.recommendations()) {
    EXPECT_LE(r.serving().time_to_first_token_seconds(),
              ttft.constraints().max_time_to_first_token_seconds());
  }
}

// Was: sizing chose an endpoint's layout without the request's SLOs. On
// 8x L40S, Llama 3.1 8B at 8k context for 32 users, the layout fastest per
// user (4 replicas of TP2) has a longer first token than TP8, so a
// max_time_to_first_token_seconds between the two excluded the offer although
// another layout of it meets the cap; and the estimate cache, keyed on the
// workload alone, served the SLO-blind plan to the capped request. Now the
// gateway passes its SLOs to sizing (EstimateRequest.serving_slo) and keys its
// estimate cache on them.
// The configuration of an 8x L40S offer, with its topology, for Estimate.
sizing::v1::GpuConfiguration EightL40S(const catalog::v1::Offer& offer) {
  sizing::v1::GpuConfiguration c;
  c.set_gpu_model("L40S");
  c.set_gpus_per_node(8);
  c.set_nodes(1);
  c.set_link(offer.link());
  c.set_link_bytes_per_second(offer.link_bytes_per_second());
  if (offer.has_scale_up() || offer.has_scale_out()) {
    *c.mutable_scale_up() = offer.scale_up();
    *c.mutable_scale_out() = offer.scale_out();
  }
  return c;
}

TEST_F(Answers, EndpointSlosChooseTheLayoutSoAnOfferThatCanMeetThemIsKept) {
  RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_INFERENCE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  request.mutable_workload()->set_context_length(8192);
  request.mutable_workload()->set_concurrent_sequences(32);
  request.mutable_constraints()->add_gpu_models("L40S");
  request.mutable_constraints()->set_single_node(true);
  request.set_max_results(50);
  auto eight = [](const RecommendResponse& r) -> const gateway::v1::Recommendation* {
    for (const auto& rec : r.recommendations()) {
      if (rec.offer().gpus_per_node() == 8 && rec.offer().nodes() == 1) return &rec;
    }
    return nullptr;
  };
  // Uncapped first, so that the gateway's estimate cache holds the uncapped plan.
  const RecommendResponse free = MustRecommend(request);
  const gateway::v1::Recommendation* top = eight(free);
  ASSERT_NE(top, nullptr) << "no 8x L40S answer among " << free.recommendations_size();
  const double slow = top->serving().time_to_first_token_seconds();

  // The same configuration with every layout, through the pass-through.
  double quickest = slow;
  int layouts = 0;
  for (int tp = 1; tp <= 8; tp *= 2) {
    gateway::v1::EstimateRequest estimate;
    *estimate.mutable_workload() = request.workload();
    estimate.mutable_workload()->mutable_parallelism()->set_tensor_parallel(tp);
    *estimate.add_configurations() = EightL40S(top->offer());
    gateway::v1::EstimateResponse sized;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    ASSERT_TRUE(stack_->GatewayStub()->Estimate(&context, estimate, &sized).ok());
    ASSERT_EQ(sized.estimates_size(), 1);
    if (!sized.estimates(0).fits()) continue;
    ++layouts;
    quickest = std::min(quickest, sized.estimates(0).serving().time_to_first_token_seconds());
  }
  ASSERT_GE(layouts, 2);
  ASSERT_LT(quickest, 0.95 * slow)
      << "needs a layout with a quicker first token than " << top->parallel_plan().description();

  RecommendRequest capped = request;
  const double cap = (quickest + slow) / 2;
  capped.mutable_constraints()->set_max_time_to_first_token_seconds(cap);
  const RecommendResponse kept = MustRecommend(capped);
  const gateway::v1::Recommendation* met = eight(kept);
  ASSERT_NE(met, nullptr) << "8x L40S excluded with a " << cap
                          << " s first-token cap; excluded: " << kept.excluded_size();
  EXPECT_LE(met->serving().time_to_first_token_seconds(), cap);
  // The first token is the P90 under load (sizing's prefill queue): the quicker
  // layout is a different one, more replicas with fewer prompts queued on each
  // as often as more tensor parallelism.
  EXPECT_NE(met->parallel_plan().description(), top->parallel_plan().description());
  EXPECT_THAT(met->notes(),
              ::testing::Contains(HasSubstr("Serving SLOs: layout chosen to meet them")));
  for (const auto& r : kept.recommendations()) {
    EXPECT_LE(r.serving().time_to_first_token_seconds(), cap) << r.offer().id();
  }

  // The Estimate pass-through takes the same SLOs and sizes the same layout.
  gateway::v1::EstimateRequest estimate;
  *estimate.mutable_workload() = request.workload();
  *estimate.add_configurations() = EightL40S(met->offer());
  estimate.mutable_serving_slo()->set_max_time_to_first_token_seconds(cap);
  gateway::v1::EstimateResponse sized;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  ASSERT_TRUE(stack_->GatewayStub()->Estimate(&context, estimate, &sized).ok());
  ASSERT_EQ(sized.estimates_size(), 1);
  EXPECT_LE(sized.estimates(0).serving().time_to_first_token_seconds(), cap);
  EXPECT_EQ(sized.estimates(0).plan().tensor_parallel(), met->parallel_plan().tensor_parallel());
}

// Was: "cheapest" serving could pick a box that streams each user a few
// tokens/s. An interactive endpoint now has a default per-user floor
// (10 tokens/s, stated); --min_user_tps=0 lifts it; a batch job has none.
TEST_F(Answers, InteractiveEndpointsHaveAStatedPerUserFloorThatCanBeLifted) {
  RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_INFERENCE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-70b");
  request.mutable_workload()->set_concurrent_sequences(128);
  request.mutable_constraints()->set_single_node(true);
  const RecommendResponse floored = MustRecommend(request);
  ASSERT_FALSE(floored.recommendations().empty());
  EXPECT_EQ(Assumed(floored)["constraints.min_user_tokens_per_second"], "10");
  for (const auto& r : floored.recommendations()) {
    EXPECT_GE(r.serving().tokens_per_second_per_user(), 10) << r.offer().id();
  }

  request.mutable_constraints()->set_min_user_tokens_per_second(0);
  const RecommendResponse lifted = MustRecommend(request);
  ASSERT_FALSE(lifted.recommendations().empty());
  EXPECT_EQ(Assumed(lifted).count("constraints.min_user_tokens_per_second"), 0u);
  EXPECT_LE(lifted.recommendations(0).cost().total_usd(),
            floored.recommendations(0).cost().total_usd());

  // The older field still sets a floor; the default does not apply then.
  request.mutable_constraints()->clear_min_user_tokens_per_second();
  request.mutable_constraints()->set_min_tokens_per_second_per_user(30);
  const RecommendResponse older = MustRecommend(request);
  EXPECT_EQ(Assumed(older).count("constraints.min_user_tokens_per_second"), 0u);
  for (const auto& r : older.recommendations())
    EXPECT_GE(r.serving().tokens_per_second_per_user(), 30);

  RecommendRequest batch;
  batch.mutable_workload()->set_task(sizing::v1::TASK_BATCH_INFERENCE);
  batch.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  batch.mutable_workload()->set_requests(1e5);
  const RecommendResponse offline = MustRecommend(batch);
  ASSERT_FALSE(offline.recommendations().empty());
  EXPECT_EQ(Assumed(offline).count("constraints.min_user_tokens_per_second"), 0u)
      << "no user waits on a batch job";
}

// Issue 19 item 2. Was: one "prices as of 2026-11-29" for every answer, even
// for rows priced in 2024; nothing said where a price came from.
TEST_F(Answers, EveryPriceNamesItsSourceAndAgeAndTheFooterItsSpan) {
  RecommendRequest request = Lora();
  request.set_max_results(10);
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) {
    SCOPED_TRACE(r.offer().id());
    EXPECT_FALSE(r.price().source().empty());
    EXPECT_THAT(r.price().as_of(), ::testing::StartsWith("20"));
    EXPECT_GT(r.price().age_seconds(), 0);
    EXPECT_EQ(r.price().stale_after_seconds(), 90 * 86400);  // offers.textproto's budget
    EXPECT_EQ(r.price().stale(), r.price().age_seconds() > 90 * 86400);
    EXPECT_TRUE(std::any_of(r.notes().begin(), r.notes().end(), [&](const std::string& n) {
      return absl::StartsWith(n, "price: " + r.price().source() + ", as of " + r.price().as_of());
    })) << r.DebugString();
  }
  EXPECT_FALSE(response.oldest_price_as_of().empty());
  EXPECT_LE(response.oldest_price_as_of(), response.newest_price_as_of());
  EXPECT_GE(response.oldest_price_age_seconds(), response.newest_price_age_seconds());
}

// A price older than its source's budget is a warning: GCP A3 High in
// europe-west4 is priced from the 2024-09-16 billing SKUs (C-GCPB).
TEST_F(Answers, APriceOlderThanItsBudgetIsAWarning) {
  RecommendRequest request = Lora();
  request.mutable_constraints()->add_providers("gcp");
  request.mutable_constraints()->add_regions("europe-west4");
  request.mutable_constraints()->add_gpu_models("H100");
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) {
    SCOPED_TRACE(r.offer().id());
    EXPECT_EQ(r.price().source(), "C-GCPB");
    EXPECT_EQ(r.price().as_of(), "2024-09-16");
    EXPECT_TRUE(r.price().stale());
    EXPECT_TRUE(std::any_of(r.warnings().begin(), r.warnings().end(), [](const std::string& w) {
      return absl::StartsWith(w, "stale price: C-GCPB priced this offer ") &&
             absl::StrContains(w, "over its 90 days budget");
    })) << r.DebugString();
  }
  EXPECT_EQ(response.oldest_price_as_of(), "2024-09-16");
}

// Issue 19 item 2, per-price dates. GCP A3 High in us-east4 is priced on
// demand from the SkyPilot catalog (2026-11-29) and on spot from the billing
// SKUs (2024-09-16). Was: the spot answer said "C-GCP, as of 2026-11-29".
// Now it names the spot price's own source and date and warns it is stale;
// on demand keeps the row's.
TEST_F(Answers, ASpotPriceFromAnotherSourceCarriesItsOwnDate) {
  constexpr char kId[] = "gcp/a3-highgpu-8g/us-east4";
  RecommendRequest request = Lora();
  request.mutable_constraints()->add_providers("gcp");
  request.mutable_constraints()->add_regions("us-east4");
  request.mutable_constraints()->add_gpu_models("H100");
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_SPOT);
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  request.set_max_results(20);
  const RecommendResponse response = MustRecommend(request);
  const gateway::v1::Recommendation* spot = nullptr;
  const gateway::v1::Recommendation* on_demand = nullptr;
  for (const auto& r : response.recommendations()) {
    if (r.offer().id() != kId) continue;
    (r.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT ? spot : on_demand) = &r;
  }
  ASSERT_NE(spot, nullptr) << response.DebugString();
  ASSERT_NE(on_demand, nullptr) << response.DebugString();
  EXPECT_EQ(spot->price().source(), "C-GCPB");
  EXPECT_EQ(spot->price().as_of(), "2024-09-16");
  EXPECT_GT(spot->price().age_seconds(), 800 * 86400);
  EXPECT_TRUE(spot->price().stale());
  EXPECT_TRUE(std::any_of(spot->notes().begin(), spot->notes().end(), [](const std::string& n) {
    return absl::StartsWith(n, "price: C-GCPB, as of 2024-09-16 (");
  })) << spot->DebugString();
  EXPECT_TRUE(std::any_of(spot->warnings().begin(), spot->warnings().end(),
                          [](const std::string& w) {
                            return absl::StartsWith(w, "stale price: C-GCPB priced this offer ");
                          }))
      << spot->DebugString();
  EXPECT_EQ(on_demand->price().source(), "C-GCP");
  EXPECT_EQ(on_demand->price().as_of(), "2026-11-29");
  EXPECT_EQ(response.oldest_price_as_of(), "2024-09-16");
}

// Issue 19 item 5. Was: AWS p3's spot price (88% below on-demand, flagged
// "likely stale" at load) ranked first for V100 spot answers.
TEST_F(Answers, AFlaggedPriceIsNeverRankedAndHasAnExclusionOfItsOwn) {
  RecommendRequest request = Lora();
  request.mutable_constraints()->add_providers("aws");
  request.mutable_constraints()->add_gpu_models("V100");
  request.mutable_constraints()->add_regions("us-east-1");
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_SPOT);
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  const RecommendResponse response = MustRecommend(request);
  ASSERT_FALSE(response.recommendations().empty());
  for (const auto& r : response.recommendations()) {
    SCOPED_TRACE(r.offer().id());
    ASSERT_FALSE(r.offer().price_flags().empty()) << "every AWS V100 spot price is flagged";
    EXPECT_EQ(r.purchase_option(), catalog::v1::PURCHASE_OPTION_ON_DEMAND);
    ASSERT_FALSE(r.price().flags().empty());
    EXPECT_THAT(r.price().flags(0), HasSubstr("likely stale"));
  }
  const auto excluded = Excluded(response);
  ASSERT_TRUE(excluded.count(gateway::v1::EXCLUSION_REASON_SUSPECT_PRICE));
  const auto& e = excluded.at(gateway::v1::EXCLUSION_REASON_SUSPECT_PRICE);
  EXPECT_EQ(e.count(), 2);  // p3.2xlarge and p3.16xlarge, at spot
  EXPECT_THAT(e.detail(), AllOf(HasSubstr("spot price $"), HasSubstr("likely stale"),
                                HasSubstr("never ranked on it")));
}

// `gpu-advisor sources` and GET /v1/sources read this: every price source of
// the catalog with its offers, dates, age and budget.
TEST_F(Answers, ListSourcesGivesEverySourceWithItsAge) {
  auto stub = stack_->GatewayStub();
  grpc::ClientContext context;
  catalog::v1::ListSourcesResponse response;
  ASSERT_TRUE(stub->ListSources(&context, catalog::v1::ListSourcesRequest(), &response).ok());
  ASSERT_FALSE(response.sources().empty());
  std::map<std::string, catalog::v1::SourceState> by_name;
  int offers = 0;
  for (const auto& s : response.sources()) {
    by_name[s.name()] = s;
    offers += s.offers();
    EXPECT_EQ(s.kind(), "file") << s.name();
    EXPECT_GT(s.last_attempt_unix_seconds(), 0) << s.name();
  }
  ASSERT_TRUE(by_name.count("C-AWS"));
  EXPECT_EQ(by_name["C-AWS"].newest_as_of(), "2026-11-29");
  EXPECT_FALSE(by_name["C-AWS"].stale());
  ASSERT_TRUE(by_name.count("C-TPU"));
  EXPECT_EQ(by_name["C-TPU"].oldest_as_of(), "2024-12-23");
  EXPECT_TRUE(by_name["C-TPU"].stale());
  EXPECT_GT(by_name["C-TPU"].age_seconds(), by_name["C-TPU"].stale_after_seconds());
  EXPECT_GE(offers, 390);  // every offer of the embedded catalog names its source
}

}  // namespace
}  // namespace gpuadvisor::testing
