#ifndef GPUADVISOR_SERVICES_GATEWAY_QUOTE_CLASSES_H_
#define GPUADVISOR_SERVICES_GATEWAY_QUOTE_CLASSES_H_

// Which offers of different providers quote alike, for the pre-rank's kind
// cut (recommend_prerank.cc, DropOutranked). An OfferIndex kind holds the
// offers of one provider's instance type, one per region, whose quotes
// differ only through their prices. Kinds of one instance type name, cell,
// availability and network speed share a quote class when the price book
// quotes their offers by the same rules (PriceBook::RulesOf: billing rule
// and spot risk) and the overhead model adds the same rule: then their
// quotes, too, differ only through their prices, whatever the provider
// (marketplace hosts priced by the book's default rule, say). A provider
// holds one kind per instance type, so a class's offers are each in a
// place (provider, region) of their own.
//
// Also the offers the book prices below the catalog's list price
// (cheaper_in_book): pricing's admin UpdatePrices changes the book's prices
// under the same catalog version, and the pre-rank orders by list prices.
//
// Made once per (catalog, book) pair and shared by every request quoted
// in process from that book (QuoteClassCache); immutable.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "services/gateway/offer_index.h"
#include "services/gateway/overheads.h"
#include "services/pricing/price_book.h"

namespace gpuadvisor::gateway {

class QuoteClasses {
 public:
  // The classes of `index`'s kinds under `book` (made from the same catalog
  // snapshot) and `overheads` (null: none). An offer the book does not
  // list is a class of its own.
  QuoteClasses(const OfferIndex& index, const pricing::PriceBook& book,
               const OverheadModel* overheads);

  // The class of a kind (OfferIndex::kind, >= 0): classes are numbered
  // from 0, and a kind alone in its class may share its number with no
  // other kind.
  int32_t of_kind(int32_t kind) const { return class_of_kind_[static_cast<size_t>(kind)]; }
  int classes() const { return classes_; }

  // An offer the book prices below its list price on demand or on spot
  // (where the index sells it so: a price the catalog flags stays unranked),
  // with the book's prices per instance-hour (0: as listed).
  struct Repriced {
    int32_t offer;
    double on_demand_usd_per_hour, spot_usd_per_hour;
  };
  // In offer order; empty when the book prices every offer as listed.
  const std::vector<Repriced>& cheaper_in_book() const { return cheaper_in_book_; }

 private:
  void FindCheaperInBook(const OfferIndex& index, const pricing::PriceBook& book);

  std::vector<int32_t> class_of_kind_;
  int classes_ = 0;
  std::vector<Repriced> cheaper_in_book_;
};

// The QuoteClasses of the latest (catalog version, book version) asked for,
// made on first use. Thread-safe.
class QuoteClassCache {
 public:
  // `overheads` (may be null) must be the model the runs use, and outlive
  // the cache.
  explicit QuoteClassCache(const OverheadModel* overheads) : overheads_(overheads) {}

  std::shared_ptr<const QuoteClasses> For(const OfferIndex& index, const pricing::PriceBook& book);

 private:
  const OverheadModel* const overheads_;
  absl::Mutex mu_;
  std::string catalog_version_ ABSL_GUARDED_BY(mu_);
  std::string book_version_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const QuoteClasses> classes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_QUOTE_CLASSES_H_
