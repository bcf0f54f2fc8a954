// Google Benchmark: the catalog's index and filter at 10,000 offers and a
// 2,000-item price quote, on the shipped data (scaled up by copies of its
// offers). The speed targets the unit tests once timed live here:
//   build/bench/catalog_pricing_bench --benchmark_min_time=0.05
// Release on the 2-core machine: docs/performance.md.

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "services/catalog/catalog.h"
#include "services/catalog/catalog_loader.h"
#include "services/pricing/price_book.h"
#include "services/pricing/price_loader.h"

namespace gpuadvisor {
namespace {

const std::string kData = std::string(GPUADVISOR_SOURCE_DIR) + "/data";

catalog::v1::CatalogSnapshot Shipped() {
  absl::StatusOr<catalog::v1::CatalogSnapshot> snapshot =
      catalog::LoadCatalogSnapshot(catalog::CatalogSourcesFor(kData, "", ""));
  if (!snapshot.ok()) std::abort();
  return *std::move(snapshot);
}

// The shipped offers copied until there are `n`, each copy with its own id.
catalog::v1::CatalogSnapshot Scaled(int n) {
  catalog::v1::CatalogSnapshot shipped = Shipped();
  catalog::v1::CatalogSnapshot scaled = shipped;
  scaled.clear_offers();
  for (int i = 0; i < n; ++i) {
    catalog::v1::Offer* offer = scaled.add_offers();
    *offer = shipped.offers(i % shipped.offers_size());
    offer->set_id(absl::StrCat(offer->id(), "/copy-", i));
  }
  return scaled;
}

void BM_CatalogCreate(benchmark::State& state) {
  const catalog::v1::CatalogSnapshot snapshot = Scaled(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog =
        catalog::Catalog::Create(snapshot);
    if (!catalog.ok()) state.SkipWithError(std::string(catalog.status().message()).c_str());
    benchmark::DoNotOptimize(catalog);
  }
}
BENCHMARK(BM_CatalogCreate)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_ListOffers(benchmark::State& state) {
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog =
      catalog::Catalog::Create(Scaled(static_cast<int>(state.range(0))));
  if (!catalog.ok()) std::abort();
  catalog::v1::ListOffersRequest request;
  request.add_gpu_models("H100");
  request.set_max_usd_per_hour(20);
  for (auto _ : state) {
    absl::StatusOr<catalog::v1::ListOffersResponse> page = (*catalog)->ListOffers(request);
    if (!page.ok() || page->offers().empty()) state.SkipWithError("no H100 offers listed");
    benchmark::DoNotOptimize(page);
  }
}
BENCHMARK(BM_ListOffers)->Arg(10000)->Unit(benchmark::kMicrosecond);

void BM_Quote(benchmark::State& state) {
  absl::StatusOr<std::shared_ptr<const pricing::PriceBook>> book =
      pricing::LoadPriceBook(kData + "/pricing/billing.textproto", Shipped());
  if (!book.ok() || (*book)->size() == 0) std::abort();
  pricing::v1::QuoteRequest request;
  request.mutable_job()->set_restartable(true);
  request.mutable_job()->set_checkpoint_gb(140);
  request.mutable_job()->set_dataset_gb(500);
  request.mutable_job()->set_egress_gb(200);
  for (int i = 0; i < state.range(0); ++i) {
    pricing::v1::QuoteItem* item = request.add_items();
    item->set_offer_id((*book)->data().prices(i % (*book)->size()).offer_id());
    item->set_nodes(1 + i % 4);
    item->set_hours(10 + i % 100);
    item->set_purchase_option(i % 3 == 0 ? catalog::v1::PURCHASE_OPTION_SPOT
                                         : catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  }
  const absl::Time now = absl::Now();
  for (auto _ : state) {
    absl::StatusOr<pricing::v1::QuoteResponse> response = (*book)->Quote(request, now);
    if (!response.ok()) state.SkipWithError(std::string(response.status().message()).c_str());
    benchmark::DoNotOptimize(response);
  }
}
BENCHMARK(BM_Quote)->Arg(2000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpuadvisor

BENCHMARK_MAIN();
