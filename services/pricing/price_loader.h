#ifndef GPUADVISOR_SERVICES_PRICING_PRICE_LOADER_H_
#define GPUADVISOR_SERVICES_PRICING_PRICE_LOADER_H_

// The pricing writer's side of the price book: building it from the billing
// file and a catalog snapshot, and applying operator price updates. Followers
// (pricing replicas, the gateway) receive finished books over WatchPrices and
// never link this (tests/integration/follower_links_test.sh checks the
// gateway). Plain C++, no gRPC; every function is thread-safe.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gpuadvisor/pricing/v1/pricing.pb.h"
#include "services/pricing/price_book.h"

namespace gpuadvisor::pricing {

// One OfferPrice per catalog offer: offer_id (Offer.id, or
// "<provider>/<instance_type>/<region>" when the id is empty), provider
// (lower-cased), gpu_model and the three list prices, in catalog order. No
// validation here: PriceBook::Create validates.
std::vector<gpuadvisor::pricing::v1::OfferPrice> PricesFromOffers(
    const gpuadvisor::catalog::v1::CatalogSnapshot& catalog);

// Reads the billing file (text format PriceBook, see
// data/pricing/billing.textproto), appends PricesFromOffers(catalog) (an
// offer also listed under `prices` in the file keeps the file's entry),
// takes prices_as_of from the catalog when it has one, stamps
// quote_rules_version = kQuoteRulesVersion (the rules this build quotes by)
// and validates the whole. Errors name the file and line: kNotFound /
// kUnavailable when the file cannot be read, kInvalidArgument
// "<path>:<line>:<col>: ..." for syntax errors and "<path>:<line>:<col>:
// billing[2].granularity_seconds: must be >= 1" for invalid values (line of
// the nearest enclosing field present in the file), "catalog offer \"<id>\":
// ..." for bad catalog prices.
absl::StatusOr<std::shared_ptr<const PriceBook>> LoadPriceBook(
    const std::string& billing_path, const gpuadvisor::catalog::v1::CatalogSnapshot& catalog);

// A new book: `book` with the update's prices applied, all or nothing: each
// entry replaces the entry with its offer_id whole (an empty provider or
// gpu_model keeps the old one). An offer id the book does not hold is
// rejected ("prices[i].offer_id: unknown offer"), as is an hourly price that
// is negative, not finite or above kMaxUsdPerHour. A non-empty update source /
// prices_as_of replaces the book's. The result is validated like
// PriceBook::Create (errors name "prices[i]..." of the update when the entry
// itself is bad) and gets a new version; it keeps the book's
// quote_rules_version. kInvalidArgument for an empty update or an offer id
// repeated within it. `book` is unchanged either way.
absl::StatusOr<std::shared_ptr<const PriceBook>> WithUpdates(
    const PriceBook& book, const gpuadvisor::pricing::v1::UpdatePricesRequest& update);

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_PRICE_LOADER_H_
