// Choice controls of Recommend (Constraints.host_tier, min_host_reliability,
// group_regions; recommend_choice.cc): what passes, what is counted as
// filtered and why, the endpoint default, and one row per offer sold alike
// in several regions.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/gateway/full_scan_reference.h"
#include "services/gateway/recommender.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::gateway {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

catalog::v1::Offer Offer(const std::string& provider, const std::string& type,
                         const std::string& region, double usd_per_hour,
                         catalog::v1::HostTier tier = catalog::v1::HOST_TIER_UNSPECIFIED,
                         double reliability = -1) {
  catalog::v1::Offer o;
  o.set_id(provider + "/" + type + "/" + region);
  o.set_provider(provider);
  o.set_instance_type(type);
  o.set_region(region);
  o.set_gpu_model("L40S");
  o.set_gpus_per_node(1);
  o.set_nodes(1);
  o.set_max_nodes(1);
  o.set_fabric(catalog::v1::FABRIC_TYPE_NONE);
  o.set_availability(catalog::v1::AVAILABILITY_AVAILABLE);
  o.set_on_demand_usd_per_hour(usd_per_hour);
  o.set_host_tier(tier);
  if (reliability >= 0) o.set_host_reliability(reliability);
  return o;
}

// Two clouds (one sold alike in three regions, one of them dearer), Vast
// hosts of both tiers with and without a reliability figure.
std::shared_ptr<const catalog::Catalog> ChoiceCatalog() {
  catalog::v1::CatalogSnapshot s;
  s.set_version("v-choice");
  catalog::v1::Gpu* gpu = s.add_gpus();
  gpu->set_name("L40S");
  gpu->set_memory_bytes(48'000'000'000);
  gpu->set_memory_bandwidth_bytes_per_second(0.86e12);
  gpu->set_bf16_flops(362e12);
  gpu->set_supports_bf16(true);
  *s.add_offers() = Offer("aws", "g6e.xlarge", "us-east-1", 1.86);
  *s.add_offers() = Offer("aws", "g6e.xlarge", "us-east-2", 1.86);
  *s.add_offers() = Offer("aws", "g6e.xlarge", "us-west-2", 1.86);
  *s.add_offers() = Offer("aws", "g6e.xlarge", "eu-west-1", 2.10);
  *s.add_offers() = Offer("lambda", "gpu_1x_l40s", "us-east-1", 1.50);
  *s.add_offers() =
      Offer("vast", "1x-L40S-m1", "Texas, US, NA", 0.50, catalog::v1::HOST_TIER_COMMUNITY, 0.95);
  *s.add_offers() =
      Offer("vast", "1x-L40S-m2", "Oregon, US, NA", 0.60, catalog::v1::HOST_TIER_COMMUNITY, 0.999);
  *s.add_offers() =
      Offer("vast", "1x-L40S-m3", "Czechia, CZ, EU", 0.70, catalog::v1::HOST_TIER_DATACENTER, 0.97);
  *s.add_offers() =
      Offer("vast", "1x-L40S-m4", "France, FR, EU", 0.80, catalog::v1::HOST_TIER_COMMUNITY);
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog = catalog::Catalog::Create(s);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return *catalog;
}

v1::RecommendRequest Request(sizing::v1::Task task) {
  v1::RecommendRequest request;
  request.mutable_workload()->set_task(task);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  if (task != sizing::v1::TASK_INFERENCE) request.mutable_workload()->set_train_tokens(1e8);
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  return request;
}

// Everything fits, in 10 hours; pricing is list price x hours.
absl::StatusOr<v1::RecommendResponse> Answer(const v1::RecommendRequest& request,
                                             Scan scan = Scan::kTopK) {
  std::shared_ptr<const catalog::Catalog> catalog = ChoiceCatalog();
  auto index = std::make_shared<const OfferIndex>(catalog);
  absl::StatusOr<RecommendationRun> run = StartWithScan(scan, index, request, nullptr, nullptr);
  if (!run.ok()) return run.status();
  sizing::v1::EstimateResponse sized;
  for (const sizing::v1::GpuConfiguration& c : run->estimate_request().configurations()) {
    sizing::v1::ConfigurationEstimate* e = sized.add_estimates();
    *e->mutable_configuration() = c;
    e->set_fits(true);
    e->set_gpu_memory_bytes(48'000'000'000);
    e->set_memory_margin(0.5);
    e->set_tokens_per_second(1000);
    e->set_estimated_hours(10);
    e->mutable_serving()->set_replicas(1);
    e->mutable_serving()->set_tokens_per_second_per_user(50);
    e->mutable_serving()->set_output_tokens_per_second(1000);
  }
  absl::StatusOr<pricing::v1::QuoteRequest> quote = run->ApplyEstimates(std::move(sized));
  if (!quote.ok()) return quote.status();
  pricing::v1::QuoteResponse priced;
  for (const pricing::v1::QuoteItem& item : quote->items()) {
    const double price = catalog->FindOffer(item.offer_id())->on_demand_usd_per_hour();
    pricing::v1::Quote* q = priced.add_quotes();
    q->set_offer_id(item.offer_id());
    q->set_purchase_option(item.purchase_option());
    q->set_priced(true);
    q->mutable_cost()->set_usd_per_hour(price * item.nodes());
    q->mutable_cost()->set_total_usd(price * item.nodes() * item.hours());
    q->mutable_cost()->set_expected_hours(item.hours());
  }
  return run->Finish(priced);
}

std::vector<std::string> Ids(const v1::RecommendResponse& response) {
  std::vector<std::string> ids;
  for (const v1::Recommendation& r : response.recommendations()) ids.push_back(r.offer().id());
  return ids;
}

const v1::Exclusion* Filtered(const v1::RecommendResponse& response) {
  for (const v1::Exclusion& e : response.excluded()) {
    if (e.reason() == v1::EXCLUSION_REASON_FILTERED) return &e;
  }
  return nullptr;
}

const v1::Assumption* Assumed(const v1::RecommendResponse& response, const std::string& field) {
  for (const v1::Assumption& a : response.assumptions()) {
    if (a.field() == field) return &a;
  }
  return nullptr;
}

TEST(HostTier, AnEndpointKeepsToDatacenterHostsByDefaultAndSaysSo) {
  absl::StatusOr<v1::RecommendResponse> r = Answer(Request(sizing::v1::TASK_INFERENCE));
  ASSERT_OK(r);
  ASSERT_THAT(r->recommendations(), Not(IsEmpty()));
  EXPECT_THAT(Ids(*r), Contains("vast/1x-L40S-m3/Czechia, CZ, EU"));  // a Vast datacenter host
  for (const std::string& id : Ids(*r)) {
    EXPECT_THAT(id, Not(HasSubstr("-m1/"))) << "community host";
    EXPECT_THAT(id, Not(HasSubstr("-m2/")));
    EXPECT_THAT(id, Not(HasSubstr("-m4/")));
  }
  const v1::Assumption* assumed = Assumed(*r, "constraints.host_tier");
  ASSERT_NE(assumed, nullptr);
  EXPECT_EQ(assumed->value(), "datacenter");
  EXPECT_THAT(assumed->note(), HasSubstr("--host_tier=any"));
  const v1::Exclusion* filtered = Filtered(*r);
  ASSERT_NE(filtered, nullptr);
  EXPECT_EQ(filtered->count(), 3);
  EXPECT_EQ(filtered->example(), "vast/1x-L40S-m1/Texas, US, NA");
  EXPECT_THAT(filtered->detail(),
              HasSubstr("community (marketplace) host, and constraints.host_tier is datacenter "
                        "(the default for an always-on endpoint)"));
}

TEST(HostTier, AnyOverridesTheEndpointDefaultAndTrainingUsesEveryHost) {
  v1::RecommendRequest any = Request(sizing::v1::TASK_INFERENCE);
  any.mutable_constraints()->set_host_tier(v1::HOST_TIER_CHOICE_ANY);
  absl::StatusOr<v1::RecommendResponse> r = Answer(any);
  ASSERT_OK(r);
  ASSERT_THAT(r->recommendations(), Not(IsEmpty()));
  EXPECT_EQ(r->recommendations(0).offer().id(), "vast/1x-L40S-m1/Texas, US, NA");
  EXPECT_EQ(Assumed(*r, "constraints.host_tier"), nullptr);
  EXPECT_EQ(Filtered(*r), nullptr);

  absl::StatusOr<v1::RecommendResponse> training = Answer(Request(sizing::v1::TASK_LORA));
  ASSERT_OK(training);
  ASSERT_THAT(training->recommendations(), Not(IsEmpty()));
  EXPECT_EQ(training->recommendations(0).offer().id(), "vast/1x-L40S-m1/Texas, US, NA");
  EXPECT_EQ(Assumed(*training, "constraints.host_tier"), nullptr);
}

TEST(HostTier, CommunityKeepsOnlyMarketplaceHosts) {
  v1::RecommendRequest request = Request(sizing::v1::TASK_LORA);
  request.mutable_constraints()->set_host_tier(v1::HOST_TIER_CHOICE_COMMUNITY);
  absl::StatusOr<v1::RecommendResponse> r = Answer(request);
  ASSERT_OK(r);
  EXPECT_THAT(Ids(*r),
              ElementsAre("vast/1x-L40S-m1/Texas, US, NA", "vast/1x-L40S-m2/Oregon, US, NA",
                          "vast/1x-L40S-m4/France, FR, EU"));
  const v1::Exclusion* filtered = Filtered(*r);
  ASSERT_NE(filtered, nullptr);
  EXPECT_EQ(filtered->count(), 6);
  EXPECT_THAT(filtered->detail(), HasSubstr("a datacenter host, and constraints.host_tier is "
                                            "community"));
  EXPECT_THAT(filtered->detail(), Not(HasSubstr("left out")));  // the example says it all
}

TEST(HostReliability, BelowTheFloorIsFilteredAndUnknownIsKeptWithANote) {
  v1::RecommendRequest request = Request(sizing::v1::TASK_LORA);
  request.mutable_constraints()->set_min_host_reliability(0.96);
  request.set_max_results(20);
  absl::StatusOr<v1::RecommendResponse> r = Answer(request);
  ASSERT_OK(r);
  ASSERT_THAT(r->recommendations(), Not(IsEmpty()));
  EXPECT_THAT(Ids(*r), Not(Contains("vast/1x-L40S-m1/Texas, US, NA")));  // 0.95
  EXPECT_THAT(Ids(*r), Contains("vast/1x-L40S-m2/Oregon, US, NA"));      // 0.999
  EXPECT_THAT(Ids(*r), Contains("vast/1x-L40S-m4/France, FR, EU"));      // no figure
  const v1::Exclusion* filtered = Filtered(*r);
  ASSERT_NE(filtered, nullptr);
  EXPECT_EQ(filtered->count(), 1);
  EXPECT_THAT(filtered->detail(),
              HasSubstr("host reliability 0.95, under constraints.min_host_reliability 0.96"));

  // An example filtered for another reason: the count says what the host
  // filters left out.
  request.mutable_constraints()->add_exclude_providers("aws");
  r = Answer(request);
  ASSERT_OK(r);
  filtered = Filtered(*r);
  ASSERT_NE(filtered, nullptr);
  EXPECT_EQ(filtered->count(), 5);
  EXPECT_EQ(filtered->example(), "aws/g6e.xlarge/us-east-1");
  EXPECT_THAT(filtered->detail(),
              HasSubstr("constraints.exclude_providers; 1 hosts left out with a reliability under "
                        "constraints.min_host_reliability 0.96"));
  int unknown_notes = 0;
  for (const v1::Recommendation& rec : r->recommendations()) {
    const bool has_figure = rec.offer().has_host_reliability();
    bool noted = false;
    for (const std::string& note : rec.notes())
      noted |= absl::StrContains(note, "reliability unknown");
    EXPECT_EQ(noted, !has_figure) << rec.offer().id();
    unknown_notes += noted;
  }
  EXPECT_GT(unknown_notes, 0);
}

TEST(HostReliability, OutsideZeroToOneIsRejectedNamingTheField) {
  for (double bad : {-0.1, 1.5, std::nan("")}) {
    v1::RecommendRequest request = Request(sizing::v1::TASK_LORA);
    request.mutable_constraints()->set_min_host_reliability(bad);
    EXPECT_THAT(Answer(request), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("constraints.min_host_reliability")));
  }
}

TEST(GroupRegions, OneRowPerOfferSoldAlikeUnlessAskedForEveryRegion) {
  v1::RecommendRequest request = Request(sizing::v1::TASK_LORA);
  request.mutable_constraints()->add_providers("aws");
  absl::StatusOr<v1::RecommendResponse> grouped = Answer(request);
  ASSERT_OK(grouped);
  // us-east-1 ranks first (the id breaks the price tie); us-east-2 and
  // us-west-2 are the same offer at the same price; eu-west-1 is dearer.
  ASSERT_THAT(Ids(*grouped), ElementsAre("aws/g6e.xlarge/us-east-1", "aws/g6e.xlarge/eu-west-1"));
  EXPECT_THAT(grouped->recommendations(0).also_in_regions(), ElementsAre("us-east-2", "us-west-2"));
  EXPECT_THAT(grouped->recommendations(0).notes(),
              Contains(HasSubstr("in 2 other regions: us-east-2; us-west-2")));
  EXPECT_THAT(grouped->recommendations(1).also_in_regions(), IsEmpty());
  ASSERT_NE(Assumed(*grouped, "constraints.group_regions"), nullptr);
  EXPECT_EQ(Filtered(*grouped)->count(), 5);  // the other providers; grouped rows are not excluded

  request.mutable_constraints()->set_group_regions(false);
  absl::StatusOr<v1::RecommendResponse> every = Answer(request);
  ASSERT_OK(every);
  EXPECT_EQ(every->recommendations_size(), 4);
  for (const v1::Recommendation& r : every->recommendations()) {
    EXPECT_THAT(r.also_in_regions(), IsEmpty());
  }
  EXPECT_EQ(Assumed(*every, "constraints.group_regions"), nullptr);
}

// The streamed top-K and the full scan agree with every control.
TEST(ChoiceControls, TopKAnswersAsTheFullScan) {
  std::vector<v1::RecommendRequest> cases;
  cases.push_back(Request(sizing::v1::TASK_INFERENCE));
  v1::RecommendRequest r = Request(sizing::v1::TASK_LORA);
  r.mutable_constraints()->set_host_tier(v1::HOST_TIER_CHOICE_COMMUNITY);
  r.mutable_constraints()->set_min_host_reliability(0.99);
  cases.push_back(r);
  r = Request(sizing::v1::TASK_LORA);
  r.mutable_constraints()->add_providers("vast");
  r.mutable_constraints()->set_host_tier(v1::HOST_TIER_CHOICE_DATACENTER);
  cases.push_back(r);
  r = Request(sizing::v1::TASK_LORA);
  r.mutable_constraints()->add_regions("us-east-1");
  r.mutable_constraints()->set_min_host_reliability(0.5);
  cases.push_back(r);
  for (const v1::RecommendRequest& request : cases) {
    SCOPED_TRACE(request.ShortDebugString());
    absl::StatusOr<v1::RecommendResponse> top_k = Answer(request, Scan::kTopK);
    absl::StatusOr<v1::RecommendResponse> full = Answer(request, Scan::kFullScan);
    ASSERT_OK(top_k);
    ASSERT_OK(full);
    EXPECT_THAT(top_k->recommendations(), Not(IsEmpty()));
    EXPECT_EQ(top_k->DebugString(), full->DebugString());
  }
}

}  // namespace
}  // namespace gpuadvisor::gateway
