#include "services/gateway/recommender.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/gateway/full_scan_reference.h"
#include "services/gateway/quote_classes.h"
#include "services/pricing/price_loader.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::gateway {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

catalog::v1::Offer MakeOffer(const std::string& provider, const std::string& type,
                             const std::string& region, const std::string& gpu, int gpus,
                             double on_demand, double spot,
                             catalog::v1::LinkType link = catalog::v1::LINK_TYPE_NVLINK,
                             catalog::v1::FabricType fabric = catalog::v1::FABRIC_TYPE_NONE,
                             int max_nodes = 1) {
  catalog::v1::Offer o;
  o.set_id(provider + "/" + type + "/" + region);
  o.set_provider(provider);
  o.set_instance_type(type);
  o.set_region(region);
  o.set_gpu_model(gpu);
  o.set_gpus_per_node(gpus);
  o.set_nodes(1);
  o.set_link(gpus > 1 ? link : catalog::v1::LINK_TYPE_NONE);
  o.set_link_bytes_per_second(link == catalog::v1::LINK_TYPE_NVLINK ? 900e9 : 32e9);
  o.set_fabric(fabric);
  o.set_fabric_gbps(fabric == catalog::v1::FABRIC_TYPE_NONE ? 0 : 3200);
  o.set_max_nodes(max_nodes);
  o.set_availability(catalog::v1::AVAILABILITY_AVAILABLE);
  o.set_on_demand_usd_per_hour(on_demand);
  o.set_spot_usd_per_hour(spot);
  return o;
}

std::shared_ptr<const catalog::Catalog> TestCatalog() {
  catalog::v1::CatalogSnapshot s;
  s.set_version("v-test");
  auto add_gpu = [&](const std::string& name, double gb, bool hbm, bool bf16) {
    catalog::v1::Gpu* g = s.add_gpus();
    g->set_name(name);
    g->set_vendor("NVIDIA");
    g->set_memory_bytes(static_cast<int64_t>(gb * 1e9));
    g->set_memory_type(hbm ? catalog::v1::MEMORY_TYPE_HBM : catalog::v1::MEMORY_TYPE_GDDR);
    g->set_memory_bandwidth_bytes_per_second(hbm ? 3.35e12 : 0.3e12);
    g->set_bf16_flops(bf16 ? 100e12 : 0);
    g->set_fp16_flops(100e12);
    g->set_supports_bf16(bf16);
  };
  add_gpu("H100-SXM", 80, true, true);
  add_gpu("L4", 24, false, true);
  add_gpu("T4", 16, false, false);
  *s.add_offers() = MakeOffer("aws", "p5.48xlarge", "us-east-1", "H100-SXM", 8, 55.04, 20.0,
                              catalog::v1::LINK_TYPE_NVLINK, catalog::v1::FABRIC_TYPE_EFA, 4);
  *s.add_offers() = MakeOffer("aws", "p5.48xlarge", "us-west-2", "H100-SXM", 8, 55.04, 22.0,
                              catalog::v1::LINK_TYPE_NVLINK, catalog::v1::FABRIC_TYPE_EFA, 4);
  *s.add_offers() = MakeOffer("lambda", "gpu_1x_h100_sxm5", "us-east-1", "H100-SXM", 1, 4.29, 0);
  *s.add_offers() = MakeOffer("gcp", "g2-standard-4", "us-central1", "L4", 1, 0.71, 0.28);
  *s.add_offers() = MakeOffer("gcp", "g2-standard-4", "europe-west4", "L4", 1, 0.78, 0.30);
  *s.add_offers() = MakeOffer("aws", "g6.48xlarge", "us-east-1", "L4", 8, 13.35, 4.0,
                              catalog::v1::LINK_TYPE_PCIE);
  *s.add_offers() = MakeOffer("aws", "g4dn.xlarge", "us-east-1", "T4", 1, 0.526, 0.2);
  catalog::v1::Offer gone = MakeOffer("azure", "NC4as_T4_v3", "eastus", "T4", 1, 0.526, 0.06);
  gone.set_availability(catalog::v1::AVAILABILITY_UNAVAILABLE);
  *s.add_offers() = gone;
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog = catalog::Catalog::Create(s);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return *catalog;
}

v1::RecommendRequest Training() {
  v1::RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_FULL_FINETUNE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  request.mutable_workload()->set_train_tokens(1e9);
  return request;
}

v1::RecommendRequest Serving() {
  v1::RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_INFERENCE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  return request;
}

// A stand-in for the sizing service: fits when total GPU memory is at least
// `need_gb`; hours shrink with the number of GPUs. With `intervals`, each
// estimate has P10-P90 intervals, wider for more GPUs (as measured error is
// wider for larger runs).
sizing::v1::EstimateResponse Sized(const sizing::v1::EstimateRequest& request, double need_gb,
                                   const catalog::Catalog& catalog, bool intervals = false) {
  sizing::v1::EstimateResponse response;
  for (const sizing::v1::GpuConfiguration& c : request.configurations()) {
    const catalog::v1::Gpu* gpu = catalog.FindGpu(c.gpu_model());
    const int gpus = c.gpus_per_node() * c.nodes();
    const double capacity_gb = gpu->memory_bytes() / 1e9;
    sizing::v1::ConfigurationEstimate* e = response.add_estimates();
    *e->mutable_configuration() = c;
    e->set_fits(capacity_gb * gpus >= need_gb);
    e->set_gpu_memory_bytes(gpu->memory_bytes());
    e->mutable_memory()->set_total_bytes(static_cast<int64_t>(need_gb / gpus * 1e9));
    e->set_memory_margin(1 - need_gb / gpus / capacity_gb);
    e->set_tokens_per_second(1000.0 * gpus);
    e->set_prefill_tokens_per_second(10000.0 * gpus);
    e->mutable_plan()->set_replicas(gpus);
    e->set_estimated_hours(100.0 / gpus);
    e->mutable_plan()->set_description(gpus > 1 ? "DP" : "single GPU");
    if (intervals && e->fits()) {
      const double width = 0.15 + 0.02 * std::log2(gpus);
      sizing::v1::Interval* h = e->mutable_estimated_hours_interval();
      h->set_p10(e->estimated_hours() * (1 - width));
      h->set_p50(e->estimated_hours());
      h->set_p90(e->estimated_hours() * (1 + width));
      sizing::v1::Interval* t = e->mutable_tokens_per_second_interval();
      t->set_p10(e->tokens_per_second() / (1 + width));
      t->set_p50(e->tokens_per_second());
      t->set_p90(e->tokens_per_second() / (1 - width));
    }
    // Serving as sizing reports it: one replica per GPU, each decoding its
    // concurrent sequences at 1000 tokens/s in total and prefilling at 10000.
    const sizing::v1::Workload& w = request.workload();
    if (w.task() == sizing::v1::TASK_INFERENCE || w.task() == sizing::v1::TASK_BATCH_INFERENCE) {
      const int per_replica = std::max(1, w.concurrent_sequences());
      sizing::v1::ServingEstimate* s = e->mutable_serving();
      s->set_replicas(gpus);
      s->set_concurrency_per_replica(per_replica);
      s->set_inter_token_latency_seconds(per_replica / 1000.0);
      s->set_tokens_per_second_per_user(1000.0 / per_replica);
      s->set_time_to_first_token_seconds((w.context_length() - w.output_tokens()) / 10000.0);
      s->set_output_tokens_per_second_per_replica(1000.0);
      s->set_output_tokens_per_second(1000.0 * gpus);
      s->set_requests_per_second(1000.0 * gpus / std::max(1, w.output_tokens()));
    }
  }
  response.mutable_totals()->set_total_flops(1e18);
  return response;
}

// A stand-in for pricing: list price x nodes x hours.
pricing::v1::QuoteResponse Priced(const pricing::v1::QuoteRequest& request,
                                  const catalog::Catalog& catalog, double multiplier = 1.0) {
  pricing::v1::QuoteResponse response;
  response.set_price_book_version("p-test");
  for (const pricing::v1::QuoteItem& item : request.items()) {
    const catalog::v1::Offer* offer = catalog.FindOffer(item.offer_id());
    const double price = item.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT
                             ? offer->spot_usd_per_hour()
                             : offer->on_demand_usd_per_hour();
    pricing::v1::Quote* q = response.add_quotes();
    q->set_offer_id(item.offer_id());
    q->set_purchase_option(item.purchase_option());
    q->set_priced(true);
    q->mutable_cost()->set_usd_per_hour(price * item.nodes() * multiplier);
    q->mutable_cost()->set_total_usd(price * item.nodes() * item.hours() * multiplier);
    q->mutable_cost()->set_expected_hours(item.hours());
    if (item.purchase_option() == catalog::v1::PURCHASE_OPTION_RESERVED) {
      q->mutable_commitment()->set_name("test 1-year term");  // what pricing names
      q->set_terms_bought(1);
      q->set_committed_hours(8760);
    }
  }
  return response;
}

const RegionGroups& DataRegionGroups() {
  static const RegionGroups* const groups = [] {
    absl::StatusOr<RegionGroups> g =
        RegionGroups::FromFile(GPUADVISOR_SOURCE_DIR "/data/gateway/regions.textproto");
    EXPECT_TRUE(g.ok()) << g.status();
    return new RegionGroups(g.ok() ? *std::move(g) : RegionGroups());
  }();
  return *groups;
}

absl::StatusOr<v1::RecommendResponse> RunWith(
    const v1::RecommendRequest& request, double need_gb,
    pricing::v1::QuoteRequest* quoted = nullptr, double hours_scale = 1.0,
    std::shared_ptr<const catalog::Catalog> catalog = TestCatalog()) {
  absl::StatusOr<RecommendationRun> run =
      RecommendationRun::Start(catalog, request, &DataRegionGroups());
  if (!run.ok()) return run.status();
  sizing::v1::EstimateResponse sized = Sized(run->estimate_request(), need_gb, *catalog);
  for (auto& e : *sized.mutable_estimates())
    e.set_estimated_hours(e.estimated_hours() * hours_scale);
  absl::StatusOr<pricing::v1::QuoteRequest> quote = run->ApplyEstimates(std::move(sized));
  if (!quote.ok()) return quote.status();
  if (quoted != nullptr) *quoted = *quote;
  return run->Finish(Priced(*quote, *catalog));
}

TEST(Recommender, RejectsBadConstraintsNamingTheField) {
  v1::RecommendRequest request = Training();
  request.mutable_constraints()->set_max_total_usd(-1);
  EXPECT_THAT(RecommendationRun::Start(TestCatalog(), request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("constraints.max_total_usd")));
  request = Training();
  request.mutable_constraints()->set_objective(v1::OBJECTIVE_DEADLINE);
  EXPECT_THAT(
      RecommendationRun::Start(TestCatalog(), request),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("constraints.deadline_hours")));
  request = Training();
  request.mutable_constraints()->set_vram_margin(std::nan(""));
  EXPECT_THAT(RecommendationRun::Start(TestCatalog(), request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("constraints.vram_margin")));
  request = Training();
  request.mutable_workload()->clear_task();
  EXPECT_THAT(RecommendationRun::Start(TestCatalog(), request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("workload.task")));
  EXPECT_THAT(RecommendationRun::Start(std::shared_ptr<const OfferIndex>(), Training()),
              StatusIs(absl::StatusCode::kUnavailable));
}

TEST(Recommender, SizesEachDistinctConfigurationOnce) {
  absl::StatusOr<RecommendationRun> run = RecommendationRun::Start(TestCatalog(), Training());
  ASSERT_OK(run);
  // p5 in two regions share configurations: 8xH100 at 1, 2 and 4 nodes (EFA,
  // max 4); 1xH100; 1xL4 (two regions, one config); 8xL4; 1xT4. The
  // unavailable Azure T4 adds nothing.
  EXPECT_THAT(run->estimate_request().configurations(), SizeIs(7));
  EXPECT_EQ(run->estimate_request().vram_margin(), kDefaultVramMargin);
}

TEST(Recommender, SingleNodeConstraintDropsMultiNodeConfigurations) {
  v1::RecommendRequest request = Training();
  request.mutable_constraints()->set_single_node(true);
  absl::StatusOr<RecommendationRun> run = RecommendationRun::Start(TestCatalog(), request);
  ASSERT_OK(run);
  for (const auto& c : run->estimate_request().configurations()) EXPECT_EQ(c.nodes(), 1);
}

TEST(Recommender, RanksCheapestFirstAndExplainsExclusions) {
  // 40 GB: one H100, 8xH100, two L4s or more, never a T4 (16 GB).
  absl::StatusOr<v1::RecommendResponse> response = RunWith(Training(), 40);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  for (int i = 1; i < response->recommendations_size(); ++i) {
    EXPECT_LE(response->recommendations(i - 1).cost().total_usd(),
              response->recommendations(i).cost().total_usd());
    EXPECT_EQ(response->recommendations(i).rank(), i + 1);
  }
  for (const auto& r : response->recommendations()) EXPECT_NE(r.offer().gpu_model(), "T4");
  std::map<v1::ExclusionReason, int> excluded;
  for (const auto& e : response->excluded()) excluded[e.reason()] = e.count();
  EXPECT_EQ(excluded[v1::EXCLUSION_REASON_UNAVAILABLE], 1);  // the Azure T4
  // Too small however many there are: the T4 (16 GB) and the single-GPU L4s
  // (8xL4 in one node fits 40 GB, but the 1xL4 offers have no fabric and no
  // L4 offer can go multi-node, so they simply do not fit).
  EXPECT_EQ(excluded[v1::EXCLUSION_REASON_DOES_NOT_FIT], 3);
  EXPECT_EQ(excluded[v1::EXCLUSION_REASON_NO_FABRIC], 0);
  EXPECT_EQ(response->catalog_version(), "v-test");
  EXPECT_EQ(response->price_book_version(), "p-test");
}

TEST(Recommender, NoFabricIsTheReasonWhenMoreNodesOfTheSameGpuWouldFit) {
  // 700 GB: only 2+ nodes of 8xH100 fit; the single-node 1xH100 offer lacks
  // a fabric to get there.
  absl::StatusOr<v1::RecommendResponse> response = RunWith(Training(), 700);
  ASSERT_OK(response);
  std::map<v1::ExclusionReason, int> excluded;
  for (const auto& e : response->excluded()) excluded[e.reason()] = e.count();
  EXPECT_EQ(excluded[v1::EXCLUSION_REASON_NO_FABRIC], 1);
  for (const auto& r : response->recommendations()) EXPECT_GE(r.offer().nodes(), 2);
}

TEST(Recommender, SameRequestSameAnswer) {
  absl::StatusOr<v1::RecommendResponse> a = RunWith(Training(), 40);
  absl::StatusOr<v1::RecommendResponse> b = RunWith(Training(), 40);
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(a->SerializeAsString(), b->SerializeAsString());
}

// With an estimate cache, a workload sized once is not sized again: the
// second run asks sizing for nothing and answers exactly as the first.
TEST(Recommender, EstimateCacheSkipsSizingAndKeepsTheAnswer) {
  std::shared_ptr<const catalog::Catalog> catalog = TestCatalog();
  auto index = std::make_shared<const OfferIndex>(catalog);
  EstimateCache cache({});
  int sized_configurations = 0;
  auto run_once = [&](const v1::RecommendRequest& request,
                      EstimateCache* with) -> absl::StatusOr<v1::RecommendResponse> {
    absl::StatusOr<RecommendationRun> run =
        RecommendationRun::Start(index, request, &DataRegionGroups(), nullptr, with);
    if (!run.ok()) return run.status();
    sizing::v1::EstimateResponse sized;
    if (run->needs_sizing()) {
      sized_configurations += run->estimate_request().configurations_size();
      sized = Sized(run->estimate_request(), 40, *catalog);
    }
    absl::StatusOr<pricing::v1::QuoteRequest> quote = run->ApplyEstimates(std::move(sized));
    if (!quote.ok()) return quote.status();
    return run->Finish(Priced(*quote, *catalog));
  };
  absl::StatusOr<v1::RecommendResponse> uncached = run_once(Training(), nullptr);
  ASSERT_OK(uncached);
  ASSERT_THAT(uncached->recommendations(), ::testing::Not(IsEmpty()));
  const int all = sized_configurations;
  ASSERT_GT(all, 0);

  // Only some GPUs first: the cache learns part of the configurations.
  v1::RecommendRequest some = Training();
  some.mutable_constraints()->add_gpu_models("L4");
  sized_configurations = 0;
  ASSERT_OK(run_once(some, &cache));
  const int part = sized_configurations;
  EXPECT_GT(part, 0);
  EXPECT_LT(part, all);
  EXPECT_EQ(cache.estimates(), static_cast<size_t>(part));

  // Then all: only the rest is sized, and the answer is the uncached one.
  sized_configurations = 0;
  absl::StatusOr<v1::RecommendResponse> first = run_once(Training(), &cache);
  ASSERT_OK(first);
  EXPECT_EQ(sized_configurations, all - part);
  EXPECT_EQ(first->SerializeAsString(), uncached->SerializeAsString());

  // Again: no sizing call at all, same answer.
  absl::StatusOr<RecommendationRun> again =
      RecommendationRun::Start(index, Training(), &DataRegionGroups(), nullptr, &cache);
  ASSERT_OK(again);
  EXPECT_FALSE(again->needs_sizing());
  EXPECT_EQ(again->estimate_request().configurations_size(), 0);
  sized_configurations = 0;
  absl::StatusOr<v1::RecommendResponse> second = run_once(Training(), &cache);
  ASSERT_OK(second);
  EXPECT_EQ(sized_configurations, 0);
  EXPECT_EQ(second->SerializeAsString(), uncached->SerializeAsString());

  // Another workload is sized on its own.
  v1::RecommendRequest other = Training();
  other.mutable_workload()->set_train_tokens(2e9);
  absl::StatusOr<RecommendationRun> fresh =
      RecommendationRun::Start(index, other, &DataRegionGroups(), nullptr, &cache);
  ASSERT_OK(fresh);
  EXPECT_TRUE(fresh->needs_sizing());
  EXPECT_EQ(fresh->estimate_request().configurations_size(), all);
}

// A generated catalog with the diversity of an imported one: GPU models,
// 1-8 GPUs per node, clusters, providers, regions, unavailable offers,
// offers without spot or reserved prices, and repeated prices (ties).
std::shared_ptr<const catalog::Catalog> GeneratedCatalog(int offers) {
  catalog::v1::CatalogSnapshot s;
  s.set_version("v-generated");
  const char* gpus[] = {"H100-SXM", "L4", "T4"};
  const double memory_gb[] = {80, 24, 16};
  for (int g = 0; g < 3; ++g) {
    catalog::v1::Gpu* gpu = s.add_gpus();
    gpu->set_name(gpus[g]);
    gpu->set_memory_bytes(static_cast<int64_t>(memory_gb[g] * 1e9));
    gpu->set_memory_type(g == 0 ? catalog::v1::MEMORY_TYPE_HBM : catalog::v1::MEMORY_TYPE_GDDR);
    gpu->set_memory_bandwidth_bytes_per_second(1e12);
    gpu->set_bf16_flops(100e12);
    gpu->set_supports_bf16(g != 2);
  }
  uint64_t state = 12345;
  auto next = [&](int n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<uint64_t>(n));
  };
  const int per_node[] = {1, 2, 4, 8};
  const catalog::v1::FabricType fabrics[] = {catalog::v1::FABRIC_TYPE_NONE,
                                             catalog::v1::FABRIC_TYPE_EFA,
                                             catalog::v1::FABRIC_TYPE_INFINIBAND};
  for (int i = 0; i < offers; ++i) {
    const int g = next(3);
    const int n = per_node[next(4)];
    const catalog::v1::FabricType fabric =
        n == 8 ? fabrics[next(3)] : catalog::v1::FABRIC_TYPE_NONE;
    const std::string provider = absl::StrCat("provider-", next(9));
    catalog::v1::Offer o =
        MakeOffer(provider, absl::StrCat("type-", i), absl::StrCat("region-", next(17)), gpus[g], n,
                  n * (1.0 + next(40) / 10.0), next(3) == 0 ? 0 : n * (0.3 + next(20) / 10.0),
                  next(2) == 0 ? catalog::v1::LINK_TYPE_NVLINK : catalog::v1::LINK_TYPE_PCIE,
                  fabric, fabric == catalog::v1::FABRIC_TYPE_NONE ? 1 : 1 << next(6));
    if (next(4) == 0) o.set_reserved_usd_per_hour(o.on_demand_usd_per_hour() * 0.6);
    if (next(25) == 0) o.set_availability(catalog::v1::AVAILABILITY_UNAVAILABLE);
    *s.add_offers() = o;
  }
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog = catalog::Catalog::Create(s);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return *catalog;
}

// One answer through `scan`: sized at `need_gb` per GPU (with P10-P90
// intervals when `intervals`) and priced at 1.1x the list; `quoted` gets the
// number of items quoted.
absl::StatusOr<v1::RecommendResponse> AnswerByScan(Scan scan,
                                                   std::shared_ptr<const OfferIndex> index,
                                                   const catalog::Catalog& catalog,
                                                   const v1::RecommendRequest& request,
                                                   double need_gb, bool intervals, int* quoted) {
  absl::StatusOr<RecommendationRun> run =
      StartWithScan(scan, std::move(index), request, &DataRegionGroups(), nullptr);
  if (!run.ok()) return run.status();
  absl::StatusOr<pricing::v1::QuoteRequest> quote =
      run->ApplyEstimates(Sized(run->estimate_request(), need_gb, catalog, intervals));
  if (!quote.ok()) return quote.status();
  *quoted = quote->items_size();
  return run->Finish(Priced(*quote, catalog, 1.1));
}

// The streaming top-K over cells gives exactly the full scan's answer:
// the same ranked list, what-ifs, misses and exclusion counts and examples.
TEST(Recommender, TopKAnswersAsTheFullScanOnAGeneratedCatalog) {
  std::shared_ptr<const catalog::Catalog> catalog = GeneratedCatalog(3000);
  auto index = std::make_shared<const OfferIndex>(catalog);
  ASSERT_GT(index->cells().size(), 10u);
  ASSERT_LT(index->cells().size(), index->offers().size() / 4);
  auto answer = [&](const v1::RecommendRequest& request, double need_gb, Scan scan, int* quoted) {
    return AnswerByScan(scan, index, *catalog, request, need_gb, /*intervals=*/false, quoted);
  };
  std::vector<std::pair<v1::RecommendRequest, double>> cases;
  for (v1::Objective objective :
       {v1::OBJECTIVE_CHEAPEST, v1::OBJECTIVE_FASTEST, v1::OBJECTIVE_BEST_VALUE}) {
    for (double need_gb : {10.0, 40.0, 300.0, 5000.0}) {
      v1::RecommendRequest r = Training();
      r.mutable_constraints()->set_objective(objective);
      cases.emplace_back(r, need_gb);
    }
  }
  v1::RecommendRequest r = Training();
  r.mutable_constraints()->add_providers("provider-3");
  r.mutable_constraints()->add_providers("provider-5");
  cases.emplace_back(r, 40);
  r = Training();
  r.mutable_constraints()->add_regions("region-2");
  r.mutable_constraints()->add_gpu_models("L4");
  cases.emplace_back(r, 20);
  r = Training();
  r.mutable_constraints()->add_gpu_models("H100-SXM");
  r.mutable_constraints()->set_max_gpus(16);
  r.set_max_results(30);
  cases.emplace_back(r, 200);
  r = Training();
  r.mutable_constraints()->set_max_total_usd(120);
  r.mutable_constraints()->set_deadline_hours(20);
  cases.emplace_back(r, 40);
  r = Training();
  r.mutable_constraints()->set_max_usd_per_hour(0.5);  // nothing qualifies: nearest misses
  cases.emplace_back(r, 40);
  r = Training();
  r.mutable_constraints()->set_single_node(true);
  r.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_RESERVED);
  r.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_SPOT);
  cases.emplace_back(r, 60);
  r = Serving();
  r.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_SPOT);
  r.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  cases.emplace_back(r, 30);
  r = Training();
  r.set_max_results(1);
  r.mutable_constraints()->set_max_nodes(4);
  cases.emplace_back(r, 100);
  // Tie bands: the pre-rank quotes every candidate tied with the
  // max_results-th, the reference the same.
  for (v1::Objective objective :
       {v1::OBJECTIVE_CHEAPEST, v1::OBJECTIVE_FASTEST, v1::OBJECTIVE_BEST_VALUE}) {
    for (double band : {0.05, 0.3}) {
      r = Training();
      r.mutable_constraints()->set_objective(objective);
      r.mutable_constraints()->set_tie_band_fraction(band);
      cases.emplace_back(r, 40);
    }
  }

  int outranked_cases = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("case ", i, ": ", cases[i].first.ShortDebugString(), " need ",
                              cases[i].second, " GB"));
    int quoted_top_k = 0, quoted_full = 0;
    absl::StatusOr<v1::RecommendResponse> top_k =
        answer(cases[i].first, cases[i].second, Scan::kTopK, &quoted_top_k);
    absl::StatusOr<v1::RecommendResponse> full =
        answer(cases[i].first, cases[i].second, Scan::kFullScan, &quoted_full);
    ASSERT_OK(top_k);
    ASSERT_OK(full);
    EXPECT_EQ(quoted_top_k, quoted_full);
    EXPECT_THAT(full->excluded(), ::testing::Not(IsEmpty()));
    EXPECT_EQ(top_k->DebugString(), full->DebugString());
    int excluded = 0;
    for (const auto& e : full->excluded()) excluded += e.count();
    if (excluded < 3000 && quoted_full >= kMinQuotedCandidates) ++outranked_cases;
  }
  // The cap bit: some cases had more candidates than one quote takes.
  EXPECT_GT(outranked_cases, 3);
}

// The tie rule cannot bring back an answer the quote left out: against a
// reference that quotes every candidate (no pre-rank cut), the top pick, and
// the list in rank order up to max_results, are the same, with the default
// band (from the estimates' intervals) and with given ones.
TEST(Recommender, PreRankKeepsEveryCandidateTheTieRuleCouldRankFirst) {
  std::shared_ptr<const catalog::Catalog> catalog = GeneratedCatalog(3000);
  auto index = std::make_shared<const OfferIndex>(catalog);
  auto answer = [&](const v1::RecommendRequest& request, Scan scan, int* quoted) {
    return AnswerByScan(scan, index, *catalog, request, 40, /*intervals=*/true, quoted);
  };
  int cut = 0;
  for (v1::Objective objective :
       {v1::OBJECTIVE_CHEAPEST, v1::OBJECTIVE_FASTEST, v1::OBJECTIVE_BEST_VALUE}) {
    for (double band : {-1.0, 0.0, 0.1, 0.4}) {
      v1::RecommendRequest r = Training();
      r.mutable_constraints()->set_objective(objective);
      if (band >= 0) r.mutable_constraints()->set_tie_band_fraction(band);
      SCOPED_TRACE(r.constraints().ShortDebugString());
      int quoted_top_k = 0, quoted_all = 0;
      absl::StatusOr<v1::RecommendResponse> top_k = answer(r, Scan::kTopK, &quoted_top_k);
      absl::StatusOr<v1::RecommendResponse> all = answer(r, Scan::kFullScanUncapped, &quoted_all);
      ASSERT_OK(top_k);
      ASSERT_OK(all);
      ASSERT_THAT(top_k->recommendations(), Not(IsEmpty()));
      EXPECT_EQ(top_k->tie_band_fraction(), all->tie_band_fraction());
      if (band < 0) {
        EXPECT_GT(top_k->tie_band_fraction(), 0.1);
      }
      cut += quoted_all > quoted_top_k ? 1 : 0;
      const auto& a = top_k->recommendations(0);
      const auto& b = all->recommendations(0);
      EXPECT_EQ(a.offer().id(), b.offer().id());
      EXPECT_EQ(a.offer().nodes(), b.offer().nodes());
      EXPECT_EQ(a.purchase_option(), b.purchase_option());
      // The head names the options among those quoted: the objective's own
      // best is always among them.
      if (objective == v1::OBJECTIVE_CHEAPEST) {
        EXPECT_EQ(top_k->head().cheapest().offer_id(), all->head().cheapest().offer_id());
        EXPECT_EQ(top_k->head().cheapest().total_usd(), all->head().cheapest().total_usd());
      }
      if (objective == v1::OBJECTIVE_FASTEST) {
        EXPECT_EQ(top_k->head().fastest().hours(), all->head().fastest().hours());
      }
    }
  }
  EXPECT_GT(cut, 6) << "the reference quoted more than the pre-rank in most cases";
}

// Instance types sold in many regions at prices a few percent apart, as
// catalogs imported from every region are (bench/make_catalog.py): a tie
// band past the cap holds many of each type. One type has a region at
// limited availability and one a region whose availability is dated: no
// kind for those (OfferIndex::kind).
std::shared_ptr<const catalog::Catalog> RegionalCatalog() {
  catalog::v1::CatalogSnapshot s = GeneratedCatalog(1)->snapshot();
  s.clear_offers();
  s.set_version("v-regional");
  for (int type = 0; type < 12; ++type) {
    const int n = 1 + type % 2;
    const double base = n * (1.0 + (type % 6) * 0.03);
    for (int region = 0; region < 100; ++region) {
      const double factor = 1.0 + 0.002 * ((region * 37 + type) % 100);
      catalog::v1::Offer o =
          MakeOffer(absl::StrCat("provider-", type % 5), absl::StrCat("type-", type),
                    absl::StrCat("region-", region), "H100-SXM", n, base * factor,
                    type % 3 == 0 ? base * factor * 0.4 : 0);
      if (type == 5 && region == 3) o.set_availability(catalog::v1::AVAILABILITY_LIMITED);
      if (type == 6 && region == 4) {
        o.set_last_seen_available_unix_seconds(1);
        o.set_stale_after_seconds(1);
      }
      *s.add_offers() = o;
    }
  }
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog = catalog::Catalog::Create(s);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return *catalog;
}

// Past the cap the pre-rank leaves out the candidates that max_results
// cheaper ones of their kind (the same instance type in other regions)
// outrank: the answer is, byte for byte, the one that quotes the whole tie
// band, with fewer quote items. With one limit checked after the quote (an
// hourly or a total budget, a deadline) only offers with a candidate outside
// the band are left out (the exclusions would count the others); with two,
// nothing is.
TEST(Recommender, PreRankLeavesOutOnlyWhatItsKindOutranks) {
  std::shared_ptr<const catalog::Catalog> catalog = RegionalCatalog();
  auto index = std::make_shared<const OfferIndex>(catalog);
  ASSERT_GE(index->kind(0), 0);
  auto answer = [&](const v1::RecommendRequest& request, Scan scan, int* quoted) {
    return AnswerByScan(scan, index, *catalog, request, 40, /*intervals=*/true, quoted);
  };
  // Limits checked after the quote (constraints, and how many): none; each
  // alone, loose and tight; two.
  struct Limits {
    std::string constraints;
    int count;
  };
  const std::vector<Limits> cases = {
      {"", 0},
      {"max_usd_per_hour: 1000", 1},
      {"max_usd_per_hour: 1.6", 1},
      {"max_total_usd: 1e6", 1},
      {"max_total_usd: 60", 1},
      {"deadline_hours: 1e5", 1},
      {"deadline_hours: 10", 1},
      {"max_usd_per_hour: 1000 deadline_hours: 1e5", 2},
  };
  std::map<std::string, int> fewer;  // by constraints
  for (v1::Objective objective :
       {v1::OBJECTIVE_CHEAPEST, v1::OBJECTIVE_FASTEST, v1::OBJECTIVE_BEST_VALUE}) {
    for (double band : {-1.0, 0.3}) {
      for (int max_results : {10, 3}) {
        for (const Limits& limits : cases) {
          v1::RecommendRequest r = Training();
          ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(limits.constraints,
                                                                    r.mutable_constraints()));
          r.mutable_constraints()->set_objective(objective);
          if (band >= 0) r.mutable_constraints()->set_tie_band_fraction(band);
          r.set_max_results(max_results);
          SCOPED_TRACE(r.ShortDebugString());
          int quoted = 0, whole_band = 0;
          absl::StatusOr<v1::RecommendResponse> top_k = answer(r, Scan::kTopK, &quoted);
          absl::StatusOr<v1::RecommendResponse> all =
              answer(r, Scan::kFullScanWholeBand, &whole_band);
          ASSERT_OK(top_k);
          ASSERT_OK(all);
          if (limits.count == 0) {
            ASSERT_THAT(top_k->recommendations(), Not(IsEmpty()));
          }
          EXPECT_EQ(top_k->DebugString(), all->DebugString());
          EXPECT_LE(quoted, whole_band);
          if (limits.count > 1) {
            EXPECT_EQ(quoted, whole_band);
          }
          fewer[limits.constraints] += quoted < whole_band ? 1 : 0;
        }
      }
    }
  }
  EXPECT_GT(fewer[""], 6) << "the cut left candidates out in most cases without a limit";
  for (const char* limit : {"max_usd_per_hour: 1000", "max_total_usd: 1e6"}) {
    EXPECT_GT(fewer[limit], 0) << limit << ": nothing left out";
  }
}

// Marketplace hosts: providers the price book bills by its default rule,
// each selling the same instance types in five regions (fewer than
// max_results a kind), beside a provider with billing rules of its own
// (aws) selling types of the same names: more candidates than one quote
// takes.
std::shared_ptr<const catalog::Catalog> MarketCatalog() {
  catalog::v1::CatalogSnapshot s = GeneratedCatalog(1)->snapshot();
  s.clear_offers();
  s.set_version("v-market");
  for (int type = 0; type < 12; ++type) {
    const int n = 1 + type % 2;
    const double base = n * (1.0 + type * 0.02);
    for (int host = 0; host < 10; ++host) {
      const std::string provider = host < 9 ? absl::StrCat("market-", host) : "aws";
      for (int region = 0; region < 5; ++region) {
        const double factor = 1.0 + 0.003 * ((host * 29 + region * 7 + type) % 60);
        *s.add_offers() =
            MakeOffer(provider, absl::StrCat("type-", type), absl::StrCat("region-", region),
                      "H100-SXM", n, base * factor, type % 4 == 0 ? base * factor * 0.9 : 0);
      }
    }
  }
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog = catalog::Catalog::Create(s);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return *catalog;
}

// With the book that quotes in process, kinds of different providers whose
// offers the book quotes by the same rules count as one in the kind cut:
// fewer quote items, and the answer, byte for byte, of the reference that
// quotes the whole band with that book.
TEST(Recommender, PreRankCountsProvidersThatQuoteAlikeAsOneKind) {
  std::shared_ptr<const catalog::Catalog> catalog = MarketCatalog();
  auto index = std::make_shared<const OfferIndex>(catalog);
  absl::StatusOr<std::shared_ptr<const pricing::PriceBook>> book = pricing::LoadPriceBook(
      GPUADVISOR_SOURCE_DIR "/data/pricing/billing.textproto", catalog->snapshot());
  ASSERT_OK(book);
  const QuoteClasses classes(*index, **book, nullptr);
  std::map<std::string, int> offer_of;  // by id
  for (int i = 0; i < static_cast<int>(index->offers().size()); ++i) {
    offer_of[std::string(index->id(i))] = i;
  }
  auto class_of = [&](const std::string& id) {
    const int kind = index->kind(offer_of.at(id));
    EXPECT_GE(kind, 0) << id;
    return kind < 0 ? -1 : classes.of_kind(kind);
  };
  EXPECT_EQ(class_of("market-0/type-0/region-0"), class_of("market-5/type-0/region-2"));
  EXPECT_NE(class_of("market-0/type-0/region-0"), class_of("aws/type-0/region-0"));
  EXPECT_NE(class_of("market-0/type-0/region-0"), class_of("market-0/type-2/region-0"));
  EXPECT_LT(classes.classes(), 12 * 10);

  const absl::Time now = absl::FromUnixSeconds(1800000000);
  auto answer = [&](const v1::RecommendRequest& request, Scan scan, const QuoteClasses* by,
                    int* quoted) -> absl::StatusOr<v1::RecommendResponse> {
    absl::StatusOr<RecommendationRun> run =
        StartWithScan(scan, index, request, &DataRegionGroups(), nullptr);
    if (!run.ok()) return run.status();
    absl::StatusOr<pricing::v1::QuoteRequest> quote =
        run->ApplyEstimates(Sized(run->estimate_request(), 40, *catalog, true), by);
    if (!quote.ok()) return quote.status();
    *quoted = quote->items_size();
    absl::StatusOr<pricing::v1::QuoteResponse> priced = (*book)->Quote(*quote, now);
    if (!priced.ok()) return priced.status();
    return run->Finish(*priced);
  };
  int fewer = 0;
  for (v1::Objective objective :
       {v1::OBJECTIVE_CHEAPEST, v1::OBJECTIVE_FASTEST, v1::OBJECTIVE_BEST_VALUE}) {
    for (const char* constraints :
         {"", "max_usd_per_hour: 1000", "deadline_hours: 1e5", "tie_band_fraction: 0.3"}) {
      for (int max_results : {10, 3}) {
        v1::RecommendRequest r = Training();
        ASSERT_TRUE(
            google::protobuf::TextFormat::ParseFromString(constraints, r.mutable_constraints()));
        r.mutable_constraints()->set_objective(objective);
        r.set_max_results(max_results);
        SCOPED_TRACE(r.ShortDebugString());
        int by_class = 0, by_kind = 0, whole_band = 0;
        absl::StatusOr<v1::RecommendResponse> cut = answer(r, Scan::kTopK, &classes, &by_class);
        absl::StatusOr<v1::RecommendResponse> kinds = answer(r, Scan::kTopK, nullptr, &by_kind);
        absl::StatusOr<v1::RecommendResponse> all =
            answer(r, Scan::kFullScanWholeBand, nullptr, &whole_band);
        ASSERT_OK(cut);
        ASSERT_OK(kinds);
        ASSERT_OK(all);
        ASSERT_THAT(cut->recommendations(), Not(IsEmpty()));
        EXPECT_EQ(cut->DebugString(), all->DebugString());
        EXPECT_EQ(kinds->DebugString(), all->DebugString());
        EXPECT_LE(by_class, by_kind);
        fewer += by_class < by_kind ? 1 : 0;
      }
    }
  }
  // Where the band reaches past the quote's cap (a wide band's), counting
  // by class leaves out more.
  EXPECT_GT(fewer, 1) << "counting by class left out no more than counting by kind";
}

// Region filters without a region group visit only the offers of those
// regions (OfferIndex::OffersOfRegion); with one, every offer. Both answer as
// the full scan does, and with the overheads of data/ as well.
TEST(Recommender, TopKAnswersAsTheFullScanWithRegionFiltersAndOverheads) {
  std::shared_ptr<const catalog::Catalog> catalog = GeneratedCatalog(3000);
  auto index = std::make_shared<const OfferIndex>(catalog);
  absl::StatusOr<OverheadModel> overheads =
      OverheadModel::FromFile(GPUADVISOR_SOURCE_DIR "/data/gateway/overheads.textproto");
  ASSERT_OK(overheads);
  auto answer = [&](const v1::RecommendRequest& request, Scan scan,
                    pricing::v1::QuoteRequest* quoted) -> absl::StatusOr<v1::RecommendResponse> {
    absl::StatusOr<RecommendationRun> run =
        StartWithScan(scan, index, request, &DataRegionGroups(), &*overheads);
    if (!run.ok()) return run.status();
    absl::StatusOr<pricing::v1::QuoteRequest> quote =
        run->ApplyEstimates(Sized(run->estimate_request(), 40, *catalog));
    if (!quote.ok()) return quote.status();
    *quoted = *quote;
    return run->Finish(Priced(*quote, *catalog, 1.1));
  };
  std::vector<v1::RecommendRequest> cases;
  v1::RecommendRequest r = Training();
  r.mutable_constraints()->add_regions("region-2");
  r.mutable_constraints()->add_regions("REGION-5");
  cases.push_back(r);
  r.mutable_constraints()->set_objective(v1::OBJECTIVE_FASTEST);
  cases.push_back(r);
  r = Training();
  r.mutable_constraints()->add_regions("region-3");
  r.mutable_constraints()->add_regions(DataRegionGroups().names().front());
  cases.push_back(r);
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("case ", i, ": ", cases[i].ShortDebugString()));
    pricing::v1::QuoteRequest quoted_top_k, quoted_full;
    absl::StatusOr<v1::RecommendResponse> top_k = answer(cases[i], Scan::kTopK, &quoted_top_k);
    absl::StatusOr<v1::RecommendResponse> full = answer(cases[i], Scan::kFullScan, &quoted_full);
    ASSERT_OK(top_k);
    ASSERT_OK(full);
    ASSERT_THAT(top_k->recommendations(), ::testing::Not(IsEmpty()));
    EXPECT_EQ(quoted_top_k.SerializeAsString(), quoted_full.SerializeAsString());
    EXPECT_EQ(top_k->DebugString(), full->DebugString());
    for (const v1::Recommendation& rec : top_k->recommendations()) {
      EXPECT_GT(rec.overheads().total_hours(), 0);
      if (i < 2) {
        EXPECT_THAT(rec.offer().region(), ::testing::AnyOf("region-2", "region-5"));
      }
    }
  }
}

TEST(Recommender, FastestObjectivePrefersMoreGpus) {
  v1::RecommendRequest request = Training();
  request.mutable_constraints()->set_objective(v1::OBJECTIVE_FASTEST);
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 40);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  const auto& best = response->recommendations(0);
  EXPECT_EQ(best.offer().gpus_per_node() * best.offer().nodes(), 32);  // 4 nodes of 8
  for (int i = 1; i < response->recommendations_size(); ++i) {
    EXPECT_LE(response->recommendations(i - 1).estimated_hours(),
              response->recommendations(i).estimated_hours());
  }
}

TEST(Recommender, BudgetExcludingEverythingGivesEmptyListWithSummary) {
  v1::RecommendRequest request = Training();
  request.mutable_constraints()->set_max_usd_per_hour(0.05);
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 40);
  ASSERT_OK(response);
  EXPECT_THAT(response->recommendations(), IsEmpty());
  bool over_budget = false;
  for (const auto& e : response->excluded())
    over_budget |= e.reason() == v1::EXCLUSION_REASON_OVER_BUDGET;
  EXPECT_TRUE(over_budget);
}

TEST(Recommender, DeadlineDropsSlowConfigurations) {
  v1::RecommendRequest request = Training();
  request.mutable_constraints()->set_objective(v1::OBJECTIVE_DEADLINE);
  request.mutable_constraints()->set_deadline_hours(10);  // needs >= 10 GPUs
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 40);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  for (const auto& r : response->recommendations()) EXPECT_LE(r.estimated_hours(), 10);
}

TEST(Recommender, ThroughputFloorExcludesSlowConfigurations) {
  v1::RecommendRequest request = Serving();
  request.mutable_constraints()->set_min_tokens_per_second(4000);  // 1000 per GPU in the fake
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 20);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  for (const auto& r : response->recommendations()) EXPECT_GE(r.tokens_per_second(), 4000);
  std::map<v1::ExclusionReason, int> excluded;
  for (const auto& e : response->excluded()) excluded[e.reason()] = e.count();
  EXPECT_GT(excluded[v1::EXCLUSION_REASON_TOO_SLOW], 0);
  request.mutable_constraints()->set_min_tokens_per_second(-1);
  EXPECT_THAT(RunWith(request, 20), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("constraints.min_tokens_per_second")));
}

TEST(Recommender, AlwaysOnEndpointIsNotOfferedSpotByDefault) {
  pricing::v1::QuoteRequest quoted;
  ASSERT_OK(RunWith(Serving(), 20, &quoted));
  ASSERT_THAT(quoted.items(), ::testing::Not(IsEmpty()));
  for (const auto& item : quoted.items()) {
    EXPECT_NE(item.purchase_option(), catalog::v1::PURCHASE_OPTION_SPOT) << item.offer_id();
  }
}

TEST(Recommender, TrainingConsidersSpotForRestartableJobs) {
  pricing::v1::QuoteRequest quoted;
  ASSERT_OK(RunWith(Training(), 40, &quoted));
  bool spot = false;
  for (const auto& item : quoted.items())
    spot |= item.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT;
  EXPECT_TRUE(spot);
}

TEST(Recommender, WarnsAboutPcieTrainingFp16OnlyGpusAndGddrServing) {
  v1::RecommendRequest request = Training();
  request.mutable_constraints()->add_gpu_models("L4");
  request.mutable_constraints()->set_single_node(true);
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 100);  // needs 8 L4s
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  EXPECT_THAT(response->recommendations(0).warnings(), Contains(HasSubstr("PCIe-only multi-GPU")));

  request = Training();
  request.mutable_constraints()->add_gpu_models("T4");
  response = RunWith(request, 10);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  EXPECT_THAT(response->recommendations(0).warnings(), Contains(HasSubstr("FP16-only GPU")));

  request = Serving();
  request.mutable_constraints()->add_gpu_models("L4");
  response = RunWith(request, 21);  // 12.5% free: tight against a 10% margin
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  // GDDR bandwidth is context for speeds that already include it: a note.
  EXPECT_THAT(response->recommendations(0).notes(), Contains(HasSubstr("GDDR")));
  EXPECT_THAT(response->recommendations(0).warnings(), Not(Contains(HasSubstr("GDDR"))));
  EXPECT_THAT(response->recommendations(0).warnings(), Contains(HasSubstr("VRAM margin tight")));
}

// Sizing marks each note with a severity: WARNING notes become warnings, INFO
// notes become notes (never the table's top warning); a warning the gateway
// already gives is not repeated; a plain note from an older sizing service
// (no severity) stays a warning.
TEST(Recommender, OnlyWarningNotesBecomeWarnings) {
  std::shared_ptr<const catalog::Catalog> catalog = TestCatalog();
  v1::RecommendRequest request = Training();
  request.mutable_constraints()->add_gpu_models("L4");
  request.mutable_constraints()->set_single_node(true);
  absl::StatusOr<RecommendationRun> run =
      RecommendationRun::Start(catalog, request, &DataRegionGroups());
  ASSERT_OK(run);
  sizing::v1::EstimateResponse sized =
      Sized(run->estimate_request(), 100, *catalog);  // needs 8 L4s
  ASSERT_THAT(sized.estimates(), Not(IsEmpty()));
  auto note = [](sizing::v1::ConfigurationEstimate& e, const char* code,
                 sizing::v1::NoteSeverity severity, const std::string& text) {
    e.add_notes(text);
    sizing::v1::Note* n = e.add_structured_notes();
    n->set_code(code);
    n->set_severity(severity);
    n->set_text(text);
  };
  for (sizing::v1::ConfigurationEstimate& e : *sized.mutable_estimates()) {
    note(e, "framework_assumed", sizing::v1::NOTE_SEVERITY_INFO,
         "Framework not given: the estimate assumes X.");
    note(e, "pcie_allreduce", sizing::v1::NOTE_SEVERITY_WARNING,
         "PCIe-only multi-GPU: the gradient all-reduce is bound by PCIe bandwidth.");
    note(e, "qlora_rocm", sizing::v1::NOTE_SEVERITY_WARNING,
         "QLoRA on ROCm: bitsandbytes 4-bit is experimental.");
    e.add_notes("An older sizing's note without a severity.");
  }
  absl::StatusOr<pricing::v1::QuoteRequest> quote = run->ApplyEstimates(std::move(sized));
  ASSERT_OK(quote);
  absl::StatusOr<v1::RecommendResponse> response = run->Finish(Priced(*quote, *catalog));
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), Not(IsEmpty()));
  const v1::Recommendation& top = response->recommendations(0);
  ASSERT_THAT(top.warnings(), Not(IsEmpty()));
  EXPECT_THAT(top.warnings(0),
              HasSubstr("PCIe-only multi-GPU: all-reduce bound"));  // the gateway's own
  EXPECT_THAT(top.warnings(), Contains(HasSubstr("QLoRA on ROCm")));
  EXPECT_THAT(top.warnings(), Contains(HasSubstr("older sizing")));
  EXPECT_THAT(top.warnings(), Not(Contains(HasSubstr("Framework not given"))));
  EXPECT_THAT(top.notes(), Contains(HasSubstr("Framework not given")));
  // Sizing's PCIe note repeats the gateway's warning: its detail is a note.
  int pcie = 0;
  for (const std::string& w : top.warnings()) pcie += absl::StrContains(w, "PCIe");
  EXPECT_EQ(pcie, 1);
  EXPECT_THAT(top.notes(), Contains(HasSubstr("gradient all-reduce is bound by PCIe")));
}

TEST(Recommender, FallbackListSpreadsAcrossPlacesAndStaysSorted) {
  v1::RecommendRequest request = Serving();
  request.mutable_constraints()->add_gpu_models("L4");
  request.set_max_results(2);
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 10);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), SizeIs(2));
  EXPECT_NE(response->recommendations(0).offer().region(),
            response->recommendations(1).offer().region());
  EXPECT_LE(response->recommendations(0).cost().total_usd(),
            response->recommendations(1).cost().total_usd());
}

TEST(Recommender, MismatchedBackendAnswersAreInternal) {
  std::shared_ptr<const catalog::Catalog> catalog = TestCatalog();
  absl::StatusOr<RecommendationRun> run = RecommendationRun::Start(catalog, Training());
  ASSERT_OK(run);
  EXPECT_THAT(run->ApplyEstimates(sizing::v1::EstimateResponse()),
              StatusIs(absl::StatusCode::kInternal));
  absl::StatusOr<pricing::v1::QuoteRequest> quote =
      run->ApplyEstimates(Sized(run->estimate_request(), 40, *catalog));
  ASSERT_OK(quote);
  EXPECT_THAT(run->Finish(pricing::v1::QuoteResponse()), StatusIs(absl::StatusCode::kInternal));
}

std::map<v1::ExclusionReason, v1::Exclusion> ByReason(const v1::RecommendResponse& response) {
  std::map<v1::ExclusionReason, v1::Exclusion> out;
  for (const auto& e : response.excluded()) out[e.reason()] = e;
  return out;
}

std::map<std::string, std::string> Assumed(const v1::RecommendResponse& response) {
  std::map<std::string, std::string> out;
  for (const auto& a : response.assumptions()) out[a.field()] = a.value();
  return out;
}

TEST(Recommender, FineTuneWithoutATokenCountIsRejectedNotPricedAtZero) {
  v1::RecommendRequest request = Training();
  request.mutable_workload()->clear_train_tokens();
  EXPECT_THAT(RunWith(request, 40),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("workload.train_tokens")));
  request.mutable_workload()->set_dataset_tokens(1e8);  // with epochs defaulted to 1
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 40);
  ASSERT_OK(response);
  EXPECT_EQ(Assumed(*response)["workload.epochs"], "1");
}

TEST(Recommender, EveryDefaultIsStatedInTheAnswer) {
  absl::StatusOr<v1::RecommendResponse> training = RunWith(Training(), 40);
  ASSERT_OK(training);
  std::map<std::string, std::string> assumed = Assumed(*training);
  EXPECT_EQ(assumed["workload.sequence_length"], "2048");
  EXPECT_EQ(assumed["workload.precision"], "PRECISION_BF16");
  EXPECT_EQ(assumed["workload.optimizer"], "OPTIMIZER_ADAMW");
  EXPECT_EQ(assumed["constraints.vram_margin"], "0.10");
  EXPECT_EQ(assumed["constraints.max_nodes"], "each offer's largest cluster");
  EXPECT_EQ(assumed["constraints.purchase_options"], "on-demand, spot");

  pricing::v1::QuoteRequest quoted;
  absl::StatusOr<v1::RecommendResponse> serving = RunWith(Serving(), 20, &quoted);
  ASSERT_OK(serving);
  assumed = Assumed(*serving);
  EXPECT_EQ(assumed["workload.context_length"], "4096");
  EXPECT_EQ(assumed["workload.output_tokens"], "256");
  EXPECT_EQ(assumed["workload.concurrent_sequences"], "1");
  EXPECT_EQ(assumed["workload.serving_hours"], "720");
  EXPECT_EQ(assumed["constraints.purchase_options"], "on-demand");
  // The defaults are sent to sizing explicitly, not left for it to guess.
  absl::StatusOr<RecommendationRun> run = RecommendationRun::Start(TestCatalog(), Serving());
  ASSERT_OK(run);
  EXPECT_EQ(run->estimate_request().workload().context_length(), 4096);

  v1::RecommendRequest batch = Serving();
  batch.mutable_workload()->set_task(sizing::v1::TASK_BATCH_INFERENCE);
  EXPECT_THAT(RunWith(batch, 20),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("workload.requests")));
}

TEST(Recommender, NamesMatchIgnoringCaseAndRegionGroupsExpand) {
  v1::RecommendRequest request = Serving();
  request.mutable_constraints()->add_providers("GCP");
  request.mutable_constraints()->add_regions("EU");
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 10);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  for (const auto& r : response->recommendations()) EXPECT_EQ(r.offer().region(), "europe-west4");

  request = Serving();
  request.mutable_constraints()->add_regions("US-EAST-1");
  response = RunWith(request, 10);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  for (const auto& r : response->recommendations()) EXPECT_EQ(r.offer().region(), "us-east-1");
}

TEST(Recommender, UnknownNamesAreRejectedWithTheClosestValidOnes) {
  v1::RecommendRequest request = Serving();
  request.mutable_constraints()->add_providers("lamda");
  EXPECT_THAT(RunWith(request, 10),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("constraints.providers[0]"), HasSubstr("lambda"))));
  request = Serving();
  request.mutable_constraints()->add_regions("us-east-1");
  request.mutable_constraints()->add_regions("europe-west9x");
  EXPECT_THAT(RunWith(request, 10),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("constraints.regions[1]"), HasSubstr("europe-west4"))));
  request = Serving();
  request.mutable_constraints()->add_gpu_models("H100-SXMM");
  EXPECT_THAT(RunWith(request, 10),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("constraints.gpu_models[0]"), HasSubstr("H100-SXM"))));
  request = Serving();
  request.mutable_constraints()->add_regions("");
  EXPECT_THAT(RunWith(request, 10),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must not be empty")));
}

TEST(Recommender, CandidatesBeyondWhatPricingQuotesAreExcludedNotFatal) {
  // The fake's 100 h / GPU scaled so that small clusters exceed 1e6 h and
  // the 32-GPU cluster does not (100 x 2e5 / 32 = 6.25e5 h).
  v1::RecommendRequest request = Training();
  request.mutable_constraints()->set_objective(v1::OBJECTIVE_FASTEST);
  pricing::v1::QuoteRequest quoted;
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 40, &quoted, 2e5);
  ASSERT_OK(response);
  for (const auto& item : quoted.items())
    EXPECT_LE(item.hours(), kMaxQuotableHours) << item.offer_id();
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  const auto excluded = ByReason(*response);
  ASSERT_TRUE(excluded.count(v1::EXCLUSION_REASON_RUNS_TOO_LONG));
  EXPECT_THAT(excluded.at(v1::EXCLUSION_REASON_RUNS_TOO_LONG).detail(),
              HasSubstr("h pricing quotes"));
}

TEST(Recommender, DefaultNodeCapIsTheOffersLargestClusterAndTheReasonNamesIt) {
  // p5 sells up to 4 nodes: a deadline that needs 8 nodes is missed, and
  // the reason says why the search stopped at 4.
  v1::RecommendRequest request = Training();
  request.mutable_constraints()->add_gpu_models("H100-SXM");
  request.mutable_constraints()->set_deadline_hours(0.2);
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 40);
  ASSERT_OK(response);
  EXPECT_THAT(response->recommendations(), IsEmpty());
  const auto excluded = ByReason(*response);
  ASSERT_TRUE(excluded.count(v1::EXCLUSION_REASON_MISSES_DEADLINE));
  const std::string detail = excluded.at(v1::EXCLUSION_REASON_MISSES_DEADLINE).detail();
  EXPECT_THAT(detail, AllOf(HasSubstr("4 nodes"), HasSubstr("largest cluster sold")));
  // An explicit cap is named as such.
  request.mutable_constraints()->set_max_nodes(2);
  response = RunWith(request, 40);
  ASSERT_OK(response);
  EXPECT_THAT(ByReason(*response).at(v1::EXCLUSION_REASON_MISSES_DEADLINE).detail(),
              HasSubstr("constraints.max_nodes = 2"));
}

TEST(Recommender, SpotEndpointOnlyWhenAskedAndThenWithASpareNode) {
  v1::RecommendRequest request = Serving();
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_SPOT);
  request.mutable_constraints()->add_gpu_models("L4");
  pricing::v1::QuoteRequest quoted;
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 10, &quoted);
  ASSERT_OK(response);
  ASSERT_THAT(quoted.items(), ::testing::Not(IsEmpty()));
  // Priced always-on for the serving hours, one node more than it serves on.
  EXPECT_TRUE(quoted.job().restartable());
  EXPECT_FALSE(quoted.job().always_on());
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  const v1::Recommendation& top = response->recommendations(0);
  EXPECT_EQ(top.serving().spare_replicas(), 1);
  int spot_warnings = 0;
  for (const std::string& w : top.warnings()) spot_warnings += absl::StrContains(w, "spot");
  EXPECT_EQ(spot_warnings, 1);
  EXPECT_THAT(top.warnings(), Contains(HasSubstr("spare node")));
}

TEST(Recommender, ServingOutputsAndSloConstraints) {
  v1::RecommendRequest request = Serving();
  request.mutable_workload()->set_concurrent_sequences(4);
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 10);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  const v1::ServingEstimate& s = response->recommendations(0).serving();
  // The fake: 1000 tokens/s and 10000 prefill tokens/s per GPU, one replica per GPU.
  EXPECT_DOUBLE_EQ(s.tokens_per_second_per_user(), 250);
  EXPECT_DOUBLE_EQ(s.inter_token_latency_seconds(), 1.0 / 250);
  EXPECT_DOUBLE_EQ(s.time_to_first_token_seconds(), (4096 - 256) / 10000.0);
  EXPECT_GT(s.usd_per_million_output_tokens(), 0);
  EXPECT_EQ(s.concurrent_sequences(), 4 * s.replicas());

  request.mutable_constraints()->set_min_tokens_per_second_per_user(300);
  response = RunWith(request, 10);
  ASSERT_OK(response);
  EXPECT_THAT(response->recommendations(), IsEmpty());
  EXPECT_THAT(ByReason(*response)[v1::EXCLUSION_REASON_TOO_SLOW].detail(), HasSubstr("per user"));
  ASSERT_THAT(response->nearest_misses(), SizeIs(1));
  EXPECT_THAT(response->nearest_misses(0).summary(), HasSubstr("250.0 tokens/s, 50.0 short"));

  request.clear_constraints();
  request.mutable_constraints()->set_max_time_to_first_token_seconds(0.1);
  response = RunWith(request, 10);
  ASSERT_OK(response);
  EXPECT_THAT(response->recommendations(), IsEmpty());
  EXPECT_THAT(ByReason(*response)[v1::EXCLUSION_REASON_TOO_SLOW].detail(),
              HasSubstr("first token"));
}

// Overheads with an endpoint's default per-user floor of `floor` tokens/s.
absl::StatusOr<OverheadModel> OverheadsWithUserFloor(double floor) {
  v1::OverheadRules rules;
  if (!google::protobuf::TextFormat::ParseFromString(
          absl::StrCat(R"(as_of: "2026-12-01"
             rules { download_gbps: 10 }
             serving_defaults { min_user_tokens_per_second: )",
                       floor, R"( source: "a test SLO" })"),
          &rules)) {
    return absl::InternalError("bad test overheads");
  }
  return OverheadModel::FromProto(rules);
}

// Was: sizing chose each configuration's layout without the request's SLOs,
// and the estimate cache keyed on the workload alone. Now the SLOs the
// gateway checks (the per-user floor as resolved) travel in the sizing
// request, and a request with other SLOs is sized again.
TEST(Recommender, ServingSlosReachSizingAndKeyTheEstimateCache) {
  absl::StatusOr<OverheadModel> overheads = OverheadsWithUserFloor(10);
  ASSERT_OK(overheads);
  std::shared_ptr<const catalog::Catalog> catalog = TestCatalog();
  auto index = std::make_shared<const OfferIndex>(catalog);
  EstimateCache cache({});
  v1::RecommendRequest request = Serving();
  request.mutable_constraints()->set_max_time_to_first_token_seconds(0.6);
  request.mutable_constraints()->set_min_tokens_per_second(100);
  auto start = [&](const v1::RecommendRequest& r) {
    return RecommendationRun::Start(index, r, &DataRegionGroups(), &*overheads, &cache);
  };
  absl::StatusOr<RecommendationRun> run = start(request);
  ASSERT_OK(run);
  const sizing::v1::ServingSlo& slo = run->estimate_request().serving_slo();
  EXPECT_EQ(slo.max_time_to_first_token_seconds(), 0.6);
  EXPECT_EQ(slo.min_tokens_per_second_per_user(), 10);  // the stated default floor
  EXPECT_EQ(slo.min_tokens_per_second(), 100);
  ASSERT_TRUE(run->needs_sizing());
  ASSERT_GT(run->estimate_request().configurations_size(), 0);
  ASSERT_OK(run->ApplyEstimates(Sized(run->estimate_request(), 10, *catalog)));

  // The same SLOs: answered from the cache. Another cap or floor: sized again.
  absl::StatusOr<RecommendationRun> same = start(request);
  ASSERT_OK(same);
  EXPECT_FALSE(same->needs_sizing());
  v1::RecommendRequest tighter = request;
  tighter.mutable_constraints()->set_max_time_to_first_token_seconds(0.5);
  absl::StatusOr<RecommendationRun> other = start(tighter);
  ASSERT_OK(other);
  EXPECT_TRUE(other->needs_sizing());
  EXPECT_EQ(other->estimate_request().serving_slo().max_time_to_first_token_seconds(), 0.5);
  v1::RecommendRequest lifted = request;
  lifted.mutable_constraints()->set_min_user_tokens_per_second(0);
  absl::StatusOr<RecommendationRun> no_floor = start(lifted);
  ASSERT_OK(no_floor);
  EXPECT_TRUE(no_floor->needs_sizing());
  EXPECT_EQ(no_floor->estimate_request().serving_slo().min_tokens_per_second_per_user(), 0);

  // Training carries no serving SLOs.
  v1::RecommendRequest train = Training();
  train.mutable_constraints()->set_max_time_to_first_token_seconds(0.6);
  absl::StatusOr<RecommendationRun> trained = start(train);
  ASSERT_OK(trained);
  EXPECT_FALSE(trained->estimate_request().has_serving_slo());
}

// The default per-user floor of an endpoint is the data file's value, stated
// with its source; a file without one (or no overheads at all) sets none.
TEST(Recommender, DefaultUserSpeedFloorComesFromDataAndIsStated) {
  absl::StatusOr<OverheadModel> overheads = OverheadsWithUserFloor(300);
  ASSERT_OK(overheads);
  std::shared_ptr<const catalog::Catalog> catalog = TestCatalog();
  v1::RecommendRequest request = Serving();
  request.mutable_workload()->set_concurrent_sequences(4);
  auto run_with = [&](const OverheadModel* model) -> absl::StatusOr<v1::RecommendResponse> {
    absl::StatusOr<RecommendationRun> run =
        RecommendationRun::Start(catalog, request, &DataRegionGroups(), model);
    if (!run.ok()) return run.status();
    absl::StatusOr<pricing::v1::QuoteRequest> quote =
        run->ApplyEstimates(Sized(run->estimate_request(), 10, *catalog));
    if (!quote.ok()) return quote.status();
    return run->Finish(Priced(*quote, *catalog));
  };
  // The fake serves 250 tokens/s per user at 4 sequences: under a 300 floor.
  absl::StatusOr<v1::RecommendResponse> floored = run_with(&*overheads);
  ASSERT_OK(floored);
  EXPECT_THAT(floored->recommendations(), IsEmpty());
  EXPECT_THAT(ByReason(*floored)[v1::EXCLUSION_REASON_TOO_SLOW].detail(), HasSubstr("per user"));
  const std::string stated = Assumed(*floored)["constraints.min_user_tokens_per_second"];
  EXPECT_EQ(stated, "300");
  bool sourced = false;
  for (const v1::Assumption& a : floored->assumptions()) {
    if (a.field() == "constraints.min_user_tokens_per_second") {
      sourced =
          absl::StrContains(a.note(), "a test SLO") && absl::StrContains(a.note(), "2026-12-01");
    }
  }
  EXPECT_TRUE(sourced);

  absl::StatusOr<v1::RecommendResponse> none = run_with(nullptr);
  ASSERT_OK(none);
  EXPECT_THAT(none->recommendations(), ::testing::Not(IsEmpty()));
  EXPECT_EQ(Assumed(*none).count("constraints.min_user_tokens_per_second"), 0u);
}

TEST(Recommender, NearestMissSaysHowFarOverTheCap) {
  v1::RecommendRequest request = Training();
  request.mutable_constraints()->set_max_total_usd(10);
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 40);
  ASSERT_OK(response);
  EXPECT_THAT(response->recommendations(), IsEmpty());
  ASSERT_THAT(response->nearest_misses(), SizeIs(1));
  const v1::NearestMiss& miss = response->nearest_misses(0);
  EXPECT_EQ(miss.reason(), v1::EXCLUSION_REASON_OVER_BUDGET);
  EXPECT_GT(miss.value(), 10);
  EXPECT_THAT(miss.summary(), HasSubstr("over your max_total_usd of $10.00"));
}

TEST(Recommender, WhatIfForTheTopAnswer) {
  absl::StatusOr<v1::RecommendResponse> response = RunWith(Training(), 40);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  std::map<std::string, v1::WhatIf> by_axis;
  for (const auto& w : response->what_if()) by_axis[w.axis()] = w;
  ASSERT_FALSE(by_axis.empty());
  const v1::Recommendation& top = response->recommendations(0);
  // The other purchase option of the same offer, and reserved with its caveat.
  const std::string other =
      top.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT ? "on-demand" : "spot";
  ASSERT_TRUE(by_axis.count(other));
  EXPECT_EQ(by_axis[other].offer().id(), top.offer().id());
  EXPECT_DOUBLE_EQ(by_axis[other].delta_usd(), by_axis[other].total_usd() - top.cost().total_usd());
  ASSERT_TRUE(by_axis.count("reserved"));
  EXPECT_THAT(by_axis["reserved"].summary(), HasSubstr("term"));
  ASSERT_TRUE(by_axis.count("next GPU class"));
  EXPECT_NE(by_axis["next GPU class"].offer().gpu_model(), top.offer().gpu_model());
  // Reserved was only a what-if: never ranked.
  for (const auto& r : response->recommendations()) {
    EXPECT_NE(r.purchase_option(), catalog::v1::PURCHASE_OPTION_RESERVED);
  }
}

}  // namespace
}  // namespace gpuadvisor::gateway

namespace gpuadvisor::gateway {
namespace {

// A NaN total used to reach std::sort and leave the ranking unsorted; now a
// quote with any non-finite figure is excluded as not priced before the sort.
TEST(Recommender, NonFiniteQuotesNeverReachTheRanking) {
  std::shared_ptr<const catalog::Catalog> catalog = TestCatalog();
  absl::StatusOr<RecommendationRun> run = RecommendationRun::Start(catalog, Training());
  ASSERT_OK(run);
  absl::StatusOr<pricing::v1::QuoteRequest> quote =
      run->ApplyEstimates(Sized(run->estimate_request(), 40, *catalog));
  ASSERT_OK(quote);
  pricing::v1::QuoteResponse priced = Priced(*quote, *catalog);
  ASSERT_GE(priced.quotes_size(), 3);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int i = 0; i < priced.quotes_size(); i += 2) {
    priced.mutable_quotes(i)->mutable_cost()->set_total_usd(
        i % 4 == 0 ? nan : std::numeric_limits<double>::infinity());
  }
  absl::StatusOr<v1::RecommendResponse> response = run->Finish(priced);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), ::testing::Not(IsEmpty()));
  for (int i = 0; i < response->recommendations_size(); ++i) {
    EXPECT_TRUE(std::isfinite(response->recommendations(i).cost().total_usd())) << i;
    if (i > 0) {
      EXPECT_LE(response->recommendations(i - 1).cost().total_usd(),
                response->recommendations(i).cost().total_usd());
    }
  }
  int not_priced = 0;
  for (const auto& e : response->excluded()) {
    if (e.reason() == v1::EXCLUSION_REASON_NOT_PRICED) not_priced += e.count();
  }
  EXPECT_GT(not_priced, 0);
}

}  // namespace
}  // namespace gpuadvisor::gateway

namespace gpuadvisor::gateway {
namespace {

// TestCatalog with every offer priced by one live source ("market", a 1 h
// budget) that saw each offer available `seen_ago(id)` seconds ago.
std::shared_ptr<const catalog::Catalog> SeenCatalog(
    const std::function<int64_t(const std::string&)>& seen_ago) {
  catalog::v1::CatalogSnapshot s = TestCatalog()->snapshot();
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  for (catalog::v1::Offer& o : *s.mutable_offers()) {
    o.set_price_source("market");
    o.set_priced_at_unix_seconds(now - 60);
    o.set_stale_after_seconds(3600);
    o.set_last_seen_available_unix_seconds(now - seen_ago(o.id()));
  }
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> c = catalog::Catalog::Create(s);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : nullptr;
}

// Issue 19 item 4: an offer not seen available for longer than its source's
// budget is never rank 1, and says when it was last seen.
TEST(Recommender, AnOfferNotSeenWithinItsBudgetIsNeverRankOne) {
  absl::StatusOr<v1::RecommendResponse> base = RunWith(Training(), 40);
  ASSERT_OK(base);
  ASSERT_GE(base->recommendations_size(), 2);
  const std::string top = base->recommendations(0).offer().id();
  v1::RecommendRequest all = Training();
  all.set_max_results(100);
  absl::StatusOr<v1::RecommendResponse> response =
      RunWith(all, 40, nullptr, 1.0,
              SeenCatalog([&](const std::string& id) { return id == top ? 7200 : 60; }));
  ASSERT_OK(response);
  ASSERT_GE(response->recommendations_size(), 2);
  EXPECT_NE(response->recommendations(0).offer().id(), top);
  bool found = false;
  for (const v1::Recommendation& r : response->recommendations()) {
    ASSERT_TRUE(r.price().has_last_seen_available_seconds());
    EXPECT_EQ(r.price().source(), "market");
    if (r.offer().id() != top) {
      EXPECT_LT(r.price().last_seen_available_seconds(), 3600);
      EXPECT_THAT(r.warnings(), Not(Contains(HasSubstr("availability:"))));
      continue;
    }
    found = true;
    EXPECT_GE(r.price().last_seen_available_seconds(), 7200);
    EXPECT_THAT(
        r.warnings(),
        Contains(HasSubstr("availability: not seen available for 2 h, over the 60 min budget "
                           "of its source market")));
  }
  EXPECT_TRUE(found) << "the offer still ranks, after those seen recently";

  // Nothing seen recently: left out as unavailable, with the reason.
  response =
      RunWith(Training(), 40, nullptr, 1.0, SeenCatalog([](const std::string&) { return 7200; }));
  ASSERT_OK(response);
  EXPECT_THAT(response->recommendations(), IsEmpty());
  int unavailable = 0;
  for (const v1::Exclusion& e : response->excluded()) {
    if (e.reason() == v1::EXCLUSION_REASON_UNAVAILABLE) unavailable = e.count();
  }
  EXPECT_GT(unavailable, 1) << "the catalog's unavailable Azure T4, and the offers not seen";
}

// Issue 19 item 5: a flagged price is never ranked on; its own exclusion.
TEST(Recommender, AFlaggedSpotPriceIsLeftOutWithItsOwnReason) {
  catalog::v1::CatalogSnapshot s = TestCatalog()->snapshot();
  int flagged = 0;
  for (catalog::v1::Offer& o : *s.mutable_offers()) {
    if (o.spot_usd_per_hour() <= 0 || flagged++ > 0) continue;
    catalog::v1::PriceFlag* f = o.add_price_flags();
    f->set_purchase_option(catalog::v1::PURCHASE_OPTION_SPOT);
    f->set_listed_usd_per_hour(o.spot_usd_per_hour());
    f->set_reason("spot price 91% below on-demand: likely stale");
  }
  ASSERT_EQ(flagged > 0, true);
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> c = catalog::Catalog::Create(s);
  ASSERT_OK(c);
  v1::RecommendRequest request = Training();
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_SPOT);
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  request.set_max_results(50);
  absl::StatusOr<v1::RecommendResponse> response = RunWith(request, 40, nullptr, 1.0, *c);
  ASSERT_OK(response);
  ASSERT_THAT(response->recommendations(), Not(IsEmpty()));
  for (const v1::Recommendation& r : response->recommendations()) {
    if (r.offer().price_flags().empty()) continue;
    EXPECT_NE(r.purchase_option(), catalog::v1::PURCHASE_OPTION_SPOT) << r.offer().id();
    EXPECT_THAT(r.price().flags(), Contains(HasSubstr("likely stale")));
  }
  bool suspect = false;
  for (const v1::Exclusion& e : response->excluded()) {
    if (e.reason() != v1::EXCLUSION_REASON_SUSPECT_PRICE) continue;
    suspect = true;
    EXPECT_EQ(e.count(), 1);
    EXPECT_THAT(e.detail(), HasSubstr("likely stale): never ranked on it"));
  }
  EXPECT_TRUE(suspect);
}

}  // namespace
}  // namespace gpuadvisor::gateway
