// The gateway's own share of a Recommend over a 10,000-offer catalog:
// enumerate candidates, apply a sizing answer, pre-rank, apply a pricing
// answer, rank and explain. The two backend calls are replaced by in-process
// answers of the right shape, so this measures the gateway's CPU alone.
//
//   build/bench/gateway_bench --benchmark_min_time=0.2

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "common/io/text_proto.h"
#include "common/status/status_macros.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/text_format.h"
#include "services/catalog/catalog_loader.h"
#include "services/gateway/full_scan_reference.h"
#include "services/gateway/recommender.h"
#include "services/pricing/price_loader.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::gateway {
namespace {

std::shared_ptr<const catalog::Catalog> BigCatalog(int offers) {
  catalog::v1::CatalogSnapshot s;
  s.set_version("bench");
  const char* gpus[] = {"H100-SXM", "A100-80GB", "L40S", "L4", "RTX-4090", "H200", "A10G", "T4"};
  const double memory_gb[] = {80, 80, 48, 24, 24, 141, 24, 16};
  for (int g = 0; g < 8; ++g) {
    catalog::v1::Gpu* gpu = s.add_gpus();
    gpu->set_name(gpus[g]);
    gpu->set_memory_bytes(static_cast<int64_t>(memory_gb[g] * 1e9));
    gpu->set_memory_type(catalog::v1::MEMORY_TYPE_HBM);
    gpu->set_memory_bandwidth_bytes_per_second(2e12);
    gpu->set_bf16_flops(300e12);
    gpu->set_supports_bf16(true);
  }
  // Like a real catalog: instance types (one GPU model and shape each) sold
  // in 25 regions, ids sorted so a type's regions sit side by side.
  for (int i = 0; i < offers; ++i) {
    catalog::v1::Offer* o = s.add_offers();
    const int type = i / 25;
    const int gpu = type % 8;
    const int per_node = (type / 8) % 2 == 0 ? 1 : 8;
    const std::string provider = absl::StrCat("provider", type % 40);
    const std::string region = absl::StrCat("region", i % 25);
    o->set_provider(provider);
    o->set_instance_type(absl::StrCat("type", type, "-", gpu, "-", per_node));
    o->set_region(region);
    o->set_id(absl::StrCat(provider, "/", o->instance_type(), "/", region));
    o->set_gpu_model(gpus[gpu]);
    o->set_gpus_per_node(per_node);
    o->set_nodes(1);
    o->set_link(per_node > 1 ? catalog::v1::LINK_TYPE_NVLINK : catalog::v1::LINK_TYPE_NONE);
    o->set_link_bytes_per_second(per_node > 1 ? 600e9 : 0);
    o->set_fabric(per_node > 1 ? catalog::v1::FABRIC_TYPE_INFINIBAND
                               : catalog::v1::FABRIC_TYPE_NONE);
    o->set_fabric_gbps(per_node > 1 ? 3200 : 0);
    o->set_max_nodes(per_node > 1 ? 16 : 1);
    o->set_availability(catalog::v1::AVAILABILITY_AVAILABLE);
    o->set_on_demand_usd_per_hour(per_node * (1.0 + (i % 97) / 50.0));
    o->set_spot_usd_per_hour(i % 3 == 0 ? 0 : per_node * 0.5);
  }
  return *catalog::Catalog::Create(std::move(s));
}

void RunRecommendations(benchmark::State& state, std::shared_ptr<const catalog::Catalog> catalog,
                        Scan scan) {
  v1::RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_FULL_FINETUNE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  request.mutable_workload()->set_train_tokens(1e9);
  int64_t configurations = 0;
  // Built once per catalog snapshot in the server (OfferIndexCache).
  const auto index = std::make_shared<const OfferIndex>(catalog);
  for (auto _ : state) {
    absl::StatusOr<RecommendationRun> run = StartWithScan(scan, index, request, nullptr, nullptr);
    if (!run.ok()) {
      state.SkipWithError(std::string(run.status().message()).c_str());
      return;
    }
    state.PauseTiming();  // building the backends' answers is not the gateway's work
    sizing::v1::EstimateResponse sized;
    for (const auto& config : run->estimate_request().configurations()) {
      auto* e = sized.add_estimates();
      e->set_fits(config.gpus_per_node() * config.nodes() * 24 >= 60);
      e->set_gpu_memory_bytes(80'000'000'000);
      e->set_memory_margin(0.3);
      e->set_tokens_per_second(1000.0 * config.gpus_per_node() * config.nodes());
      e->set_estimated_hours(100.0 / (config.gpus_per_node() * config.nodes()));
    }
    configurations = sized.estimates_size();
    state.ResumeTiming();
    absl::StatusOr<pricing::v1::QuoteRequest> quote = run->ApplyEstimates(std::move(sized));
    state.PauseTiming();
    pricing::v1::QuoteResponse priced;
    for (const auto& item : quote->items()) {
      auto* q = priced.add_quotes();
      q->set_priced(true);
      q->mutable_cost()->set_usd_per_hour(10);
      q->mutable_cost()->set_total_usd(item.hours() * 10 * item.nodes());
      q->mutable_cost()->set_expected_hours(item.hours());
    }
    state.ResumeTiming();
    absl::StatusOr<v1::RecommendResponse> response = run->Finish(priced);
    benchmark::DoNotOptimize(response);
  }
  state.counters["configurations"] = static_cast<double>(configurations);
  state.counters["offers"] = static_cast<double>(catalog->snapshot().offers_size());
}

// Second argument: 0 = the streaming top-K over offer cells (what the
// gateway runs), 1 = the full scan over every offer (the reference).
Scan ScanArg(const benchmark::State& state) {
  return state.range(1) == 0 ? Scan::kTopK : Scan::kFullScan;
}

void BM_RecommendGatewaySide(benchmark::State& state) {
  RunRecommendations(state, BigCatalog(static_cast<int>(state.range(0))), ScanArg(state));
}
BENCHMARK(BM_RecommendGatewaySide)
    ->ArgsProduct({{1000, 10000, 100000}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

// The same over a real offers file, e.g. the embedded offers copied to 10,000
// by bench/make_catalog.py:
//   GATEWAY_BENCH_OFFERS=/tmp/offers-10k.textproto build/bench/gateway_bench
void BM_RecommendOverOffersFile(benchmark::State& state) {
  const char* offers = std::getenv("GATEWAY_BENCH_OFFERS");
  if (offers == nullptr) {
    state.SkipWithError("set GATEWAY_BENCH_OFFERS to an offers file");
    return;
  }
  catalog::CatalogSources sources;
  sources.gpus_path = std::string(GPUADVISOR_SOURCE_DIR) + "/data/catalog/gpus.textproto";
  sources.offer_paths = {offers};
  absl::StatusOr<catalog::v1::CatalogSnapshot> snapshot = catalog::LoadCatalogSnapshot(sources);
  if (!snapshot.ok()) {
    state.SkipWithError(std::string(snapshot.status().message()).c_str());
    return;
  }
  RunRecommendations(state, *catalog::Catalog::Create(*std::move(snapshot)), ScanArg(state));
}
BENCHMARK(BM_RecommendOverOffersFile)->Args({0, 0})->Args({0, 1})->Unit(benchmark::kMicrosecond);

// A cold Recommend as the live stack computes it, minus the transport: the
// request mix of bench/requests.txtpb in turn over an offers file (default
// the embedded offers; GATEWAY_BENCH_OFFERS for a generated catalog), with
// the real region groups, overheads, sizing model (behind the estimate
// cache, as in the gateway: sized once per request and configuration, so
// the loop never sizes) and price book of data/. Per Recommend:
// RecommendRequest parsed, Start, ApplyEstimates, QuoteRequest serialized,
// [pricing: parsed, PriceBook::Quote, QuoteResponse serialized], parsed,
// Finish, RecommendResponse serialized. Argument 0: the gateway's share only
// (pricing's part paused); 1: gateway and pricing; 2: the gateway's live path
// while its copy of the price book is current: Start, PlanQuote,
// PriceBook::Quote of the items into an arena message, Finish, serialized.
struct MixWorld {
  std::shared_ptr<const catalog::Catalog> catalog;
  std::shared_ptr<const OfferIndex> index;
  RegionGroups groups;
  OverheadModel overheads;
  std::shared_ptr<const pricing::PriceBook> book;
  std::vector<std::string> requests;  // serialized RecommendRequests
  EstimateCache estimate_cache{EstimateCache::Options{}};
  sizing::SizingModel sizing;
  QuoteClassCache quote_classes{&overheads};  // as the gateway's in-process quotes
};

absl::StatusOr<std::unique_ptr<MixWorld>> LoadMixWorld() {
  const std::string data = std::string(GPUADVISOR_SOURCE_DIR) + "/data";
  const char* offers = std::getenv("GATEWAY_BENCH_OFFERS");
  catalog::CatalogSources sources;
  sources.gpus_path = data + "/catalog/gpus.textproto";
  sources.offer_paths = {offers != nullptr && *offers != 0 ? std::string(offers)
                                                           : data + "/catalog/offers.textproto"};
  ASSIGN_OR_RETURN(catalog::v1::CatalogSnapshot snapshot, catalog::LoadCatalogSnapshot(sources));
  snapshot.set_version("bench");
  ASSIGN_OR_RETURN(std::shared_ptr<const pricing::PriceBook> book,
                   pricing::LoadPriceBook(data + "/pricing/billing.textproto", snapshot));
  ASSIGN_OR_RETURN(RegionGroups groups,
                   RegionGroups::FromFile(data + "/gateway/regions.textproto"));
  ASSIGN_OR_RETURN(OverheadModel overheads,
                   OverheadModel::FromFile(data + "/gateway/overheads.textproto"));
  ASSIGN_OR_RETURN(sizing::SizingModel sizing, sizing::SizingModel::FromDataDir(data));
  // GATEWAY_BENCH_REQUESTS: another mix (e.g. more objectives, to compare answers).
  const char* requests = std::getenv("GATEWAY_BENCH_REQUESTS");
  ASSIGN_OR_RETURN(std::string mix,
                   ReadFile(requests != nullptr && *requests != 0
                                ? std::string(requests)
                                : std::string(GPUADVISOR_SOURCE_DIR) + "/bench/requests.txtpb"));
  auto world = std::unique_ptr<MixWorld>(new MixWorld{nullptr,
                                                      nullptr,
                                                      std::move(groups),
                                                      std::move(overheads),
                                                      std::move(book),
                                                      {},
                                                      EstimateCache(EstimateCache::Options{}),
                                                      std::move(sizing)});
  ASSIGN_OR_RETURN(world->catalog, catalog::Catalog::Create(std::move(snapshot)));
  world->index = std::make_shared<const OfferIndex>(world->catalog);
  for (absl::string_view part : absl::StrSplit(mix, "\n---\n")) {
    v1::RecommendRequest request;
    if (!google::protobuf::TextFormat::ParseFromString(std::string(part), &request)) {
      return absl::InvalidArgumentError(absl::StrCat("bench/requests.txtpb: cannot parse ", part));
    }
    world->requests.push_back(request.SerializeAsString());
  }
  return world;
}

enum class Mix { kGatewayShare = 0, kWithPricing = 1, kInProcess = 2 };

// One Recommend of the mix (see BM_RecommendMix's argument).
absl::Status RecommendOnce(MixWorld& world, const std::string& request_bytes, Mix mix,
                           benchmark::State& state, size_t& quote_bytes,
                           std::string* dump = nullptr) {
  v1::RecommendRequest request;
  if (!request.ParseFromString(request_bytes)) return absl::InternalError("request does not parse");
  ASSIGN_OR_RETURN(RecommendationRun run,
                   RecommendationRun::Start(world.index, request, &world.groups, &world.overheads,
                                            &world.estimate_cache));
  sizing::v1::EstimateResponse sized;
  if (run.needs_sizing()) {  // the first pass over the mix only
    ASSIGN_OR_RETURN(sized, world.sizing.Estimate(run.estimate_request()));
  }
  if (mix == Mix::kInProcess) {
    ASSIGN_OR_RETURN(
        RecommendationRun::QuotePlan plan,
        run.PlanQuote(std::move(sized), world.quote_classes.For(*world.index, *world.book).get()));
    google::protobuf::Arena arena;
    auto* priced = google::protobuf::Arena::CreateMessage<pricing::v1::QuoteResponse>(&arena);
    RETURN_IF_ERROR(world.book->Quote(plan.items, plan.job, absl::Now(), priced));
    // The answer on the same arena, as the gateway's pipeline builds it.
    auto* answer = google::protobuf::Arena::CreateMessage<v1::RecommendResponse>(&arena);
    RETURN_IF_ERROR(run.Finish(*priced, answer));
    benchmark::DoNotOptimize(answer->SerializeAsString());
    if (dump != nullptr) {
      answer->clear_price_book_age_seconds();  // the clock's, not the answer's
      absl::StrAppend(dump, "---\n", plan.items.size(), " quote items\n", answer->DebugString());
    }
    return absl::OkStatus();
  }
  const bool with_pricing = mix == Mix::kWithPricing;
  ASSIGN_OR_RETURN(pricing::v1::QuoteRequest quote, run.ApplyEstimates(std::move(sized)));
  quote.set_catalog_version("bench");
  std::string wire = quote.SerializeAsString();
  if (!with_pricing) state.PauseTiming();
  {
    pricing::v1::QuoteRequest received;
    if (!received.ParseFromString(wire)) return absl::InternalError("quote request does not parse");
    ASSIGN_OR_RETURN(pricing::v1::QuoteResponse priced, world.book->Quote(received, absl::Now()));
    wire = priced.SerializeAsString();
  }
  if (!with_pricing) state.ResumeTiming();
  quote_bytes += wire.size();
  pricing::v1::QuoteResponse priced;
  if (!priced.ParseFromString(wire)) return absl::InternalError("quote response does not parse");
  ASSIGN_OR_RETURN(v1::RecommendResponse answer, run.Finish(priced));
  benchmark::DoNotOptimize(answer.SerializeAsString());
  return absl::OkStatus();
}

// One pass of the mix on the live path, each answer appended to `dump`
// when given (the clock's price_book_age_seconds cleared). Not inlined:
// callgrind --toggle-collect='*CountedPass*' counts exactly one pass.
ABSL_ATTRIBUTE_NOINLINE absl::Status CountedPass(MixWorld& world, benchmark::State& state,
                                                 std::string* dump) {
  size_t quote_bytes = 0;
  for (const std::string& request : world.requests) {
    RETURN_IF_ERROR(RecommendOnce(world, request, Mix::kInProcess, state, quote_bytes, dump));
  }
  return absl::OkStatus();
}

// GATEWAY_BENCH_DUMP=<file>: the mix's answers, to compare a change's
// answers byte for byte; "-": no file (the counted pass alone). Two passes
// before the timed loop: the counted one finds every cache as the loop does.
absl::Status DumpPass(MixWorld& world, benchmark::State& state, const std::string& path) {
  size_t quote_bytes = 0;
  for (const std::string& request : world.requests) {
    RETURN_IF_ERROR(RecommendOnce(world, request, Mix::kInProcess, state, quote_bytes));
  }
  std::string dump;
  RETURN_IF_ERROR(CountedPass(world, state, path == "-" ? nullptr : &dump));
  return path == "-" ? absl::OkStatus() : WriteFileAtomically(path, dump);
}

void BM_RecommendMix(benchmark::State& state) {
  static MixWorld* world = [] {
    absl::StatusOr<std::unique_ptr<MixWorld>> w = LoadMixWorld();
    if (!w.ok()) {
      std::fprintf(stderr, "%s\n", std::string(w.status().message()).c_str());
      return static_cast<MixWorld*>(nullptr);
    }
    return w->release();
  }();
  if (world == nullptr) {
    state.SkipWithError("data does not load");
    return;
  }
  size_t quote_bytes = 0;
  for (const std::string& request : world->requests) {  // fills the estimate cache
    if (absl::Status s = RecommendOnce(*world, request, Mix::kWithPricing, state, quote_bytes);
        !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  static bool dumped = false;  // benchmark calls this function once per trial run
  if (const char* path = std::getenv("GATEWAY_BENCH_DUMP");
      path != nullptr && *path != 0 && !std::exchange(dumped, true)) {
    if (absl::Status s = DumpPass(*world, state, path); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  quote_bytes = 0;
  size_t next = 0;
  int64_t calls = 0;
  for (auto _ : state) {
    if (absl::Status s = RecommendOnce(*world, world->requests[next],
                                       static_cast<Mix>(state.range(0)), state, quote_bytes);
        !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    next = (next + 1) % world->requests.size();
    ++calls;
  }
  state.counters["offers"] = static_cast<double>(world->catalog->snapshot().offers_size());
  state.counters["requests"] = static_cast<double>(world->requests.size());
  state.counters["quote_response_bytes"] = calls > 0 ? static_cast<double>(quote_bytes) / calls : 0;
}
BENCHMARK(BM_RecommendMix)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpuadvisor::gateway

BENCHMARK_MAIN();
