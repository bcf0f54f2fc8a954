// Google Benchmark: what a catalog follower (the gateway's replica, pricing's
// writer) spends per refreshed snapshot, step by step, on a real snapshot: a
// catalog replica's cache file (CatalogReplica::EncodeCache), e.g. the
// gateway's after `REFRESH_KEEP=1 bench/refresh_bench.sh` (its logs/
// catalog.cache, 100,404 offers):
//   FOLLOWER_BENCH_CACHE=/tmp/gpu-advisor-refresh-bench.X/logs/catalog.cache
//     build/bench/follower_bench --benchmark_min_time=0.5
// Without the variable: the shipped catalog's offers copied to 100,000.

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "common/io/deterministic.h"
#include "common/io/durable_file.h"
#include "common/io/fingerprint.h"
#include "common/io/text_proto.h"
#include "services/catalog/catalog.h"
#include "services/catalog/catalog_loader.h"
#include "services/catalog/catalog_replica.h"
#include "services/gateway/offer_index.h"
#include "services/pricing/price_book.h"
#include "services/pricing/price_loader.h"

namespace gpuadvisor {
namespace {

const std::string kData = std::string(GPUADVISOR_SOURCE_DIR) + "/data";
const std::string kBilling = kData + "/pricing/billing.textproto";

catalog::v1::CatalogSnapshot Generated(int n) {
  absl::StatusOr<catalog::v1::CatalogSnapshot> shipped =
      catalog::LoadCatalogSnapshot(catalog::CatalogSourcesFor(kData, "", ""));
  if (!shipped.ok()) std::abort();
  catalog::v1::CatalogSnapshot scaled = *shipped;
  scaled.clear_offers();
  for (int i = 0; i < n; ++i) {
    catalog::v1::Offer* offer = scaled.add_offers();
    *offer = shipped->offers(i % shipped->offers_size());
    offer->set_id(absl::StrCat(offer->id(), "/copy-", i));
  }
  return scaled;
}

// The snapshot's bytes, as a follower receives them.
const std::string& Serialized() {
  static const std::string* bytes = [] {
    const char* path = std::getenv("FOLLOWER_BENCH_CACHE");
    catalog::v1::CatalogSnapshot snapshot;
    if (path != nullptr && *path != '\0') {
      absl::StatusOr<std::string> cache = ReadFile(path);
      if (!cache.ok()) std::abort();
      absl::StatusOr<catalog::v1::CatalogSnapshot> decoded =
          catalog::CatalogReplica::DecodeCache(*cache);
      if (!decoded.ok()) std::abort();
      snapshot = *std::move(decoded);
    } else {
      snapshot = Generated(100000);
    }
    return new std::string(snapshot.SerializeAsString());
  }();
  return *bytes;
}

catalog::v1::CatalogSnapshot Parsed() {
  catalog::v1::CatalogSnapshot snapshot;
  if (!snapshot.ParseFromString(Serialized())) std::abort();
  return snapshot;
}

std::shared_ptr<const catalog::Catalog> Created() {
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog =
      catalog::Catalog::Create(Parsed());
  if (!catalog.ok()) std::abort();
  return *std::move(catalog);
}

void BM_ChecksumSnapshot(benchmark::State& state) {  // the chunks' FNV-1a (and the cache's)
  Serialized();                                      // read (and decoded) outside the timing
  for (auto _ : state) benchmark::DoNotOptimize(FingerprintHex(Serialized()));
  state.counters["bytes"] = static_cast<double>(Serialized().size());
}
BENCHMARK(BM_ChecksumSnapshot)->Unit(benchmark::kMillisecond);

void BM_ParseSnapshot(benchmark::State& state) {
  for (auto _ : state) {
    catalog::v1::CatalogSnapshot snapshot;
    benchmark::DoNotOptimize(snapshot.ParseFromString(Serialized()));
  }
}
BENCHMARK(BM_ParseSnapshot)->Unit(benchmark::kMillisecond);

void BM_CatalogCreate(benchmark::State& state) {  // validation and indexes, parse excluded
  for (auto _ : state) {
    state.PauseTiming();
    catalog::v1::CatalogSnapshot snapshot = Parsed();
    state.ResumeTiming();
    benchmark::DoNotOptimize(catalog::Catalog::Create(std::move(snapshot)));
  }
}
BENCHMARK(BM_CatalogCreate)->Unit(benchmark::kMillisecond);

void BM_FreeCatalog(benchmark::State& state) {  // dropping the previous snapshot
  for (auto _ : state) {
    state.PauseTiming();
    std::shared_ptr<const catalog::Catalog> catalog = Created();
    state.ResumeTiming();
    catalog.reset();
  }
}
BENCHMARK(BM_FreeCatalog)->Unit(benchmark::kMillisecond);

void BM_OfferIndex(benchmark::State& state) {  // the gateway's index of a new catalog
  std::shared_ptr<const catalog::Catalog> catalog = Created();
  for (auto _ : state) benchmark::DoNotOptimize(gateway::OfferIndex(catalog));
}
BENCHMARK(BM_OfferIndex)->Unit(benchmark::kMillisecond);

void BM_LoadPriceBook(benchmark::State& state) {  // pricing's writer: the book of a snapshot
  std::shared_ptr<const catalog::Catalog> catalog = Created();
  for (auto _ : state)
    benchmark::DoNotOptimize(pricing::LoadPriceBook(kBilling, catalog->snapshot()));
}
BENCHMARK(BM_LoadPriceBook)->Unit(benchmark::kMillisecond);

void BM_PriceBookCreate(benchmark::State& state) {  // a book follower: validate, hash, index
  absl::StatusOr<std::shared_ptr<const pricing::PriceBook>> book =
      pricing::LoadPriceBook(kBilling, Created()->snapshot());
  if (!book.ok()) std::abort();
  const std::string bytes = (*book)->data().SerializeAsString();
  state.counters["bytes"] = static_cast<double>(bytes.size());
  for (auto _ : state) {
    pricing::v1::PriceBook data;
    if (!data.ParseFromString(bytes)) std::abort();
    benchmark::DoNotOptimize(pricing::PriceBook::Create(std::move(data)));
  }
}
BENCHMARK(BM_PriceBookCreate)->Unit(benchmark::kMillisecond);

void BM_SerializeSnapshot(benchmark::State& state) {  // the writer's encoding, the cache's
  std::shared_ptr<const catalog::Catalog> catalog = Created();
  for (auto _ : state) benchmark::DoNotOptimize(DeterministicBytes(catalog->snapshot()));
}
BENCHMARK(BM_SerializeSnapshot)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuadvisor

BENCHMARK_MAIN();
