#include "services/gateway/quote_classes.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace gpuadvisor::gateway {
namespace {

// Everything a kind's quotes follow besides its prices.
struct Alike {
  int32_t instance_type, cell;
  int32_t alone;  // the kind, when the book does not list its offers; else -1
  uint8_t availability;
  double network_gbps;
  const void* billing;
  const void* risk;
  const void* overheads;
  bool operator==(const Alike&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const Alike& a) {
    return H::combine(std::move(h), a.instance_type, a.cell, a.alone, a.availability,
                      a.network_gbps, a.billing, a.risk, a.overheads);
  }
};

}  // namespace

QuoteClasses::QuoteClasses(const OfferIndex& index, const pricing::PriceBook& book,
                           const OverheadModel* overheads) {
  std::vector<const v1::OverheadRule*> overhead_rules(index.provider_names().size(), nullptr);
  if (overheads != nullptr) {
    for (size_t p = 0; p < overhead_rules.size(); ++p) {
      overhead_rules[p] = overheads->RuleFor(index.provider_names()[p]);
    }
  }
  const std::vector<OfferFacts>& offers = index.offers();
  int32_t kinds = 0;
  for (int offer = 0; offer < static_cast<int>(offers.size()); ++offer) {
    kinds = std::max(kinds, index.kind(offer) + 1);
  }
  class_of_kind_.assign(static_cast<size_t>(kinds), -1);
  absl::flat_hash_map<Alike, int32_t> classes;
  for (int offer = 0; offer < static_cast<int>(offers.size()); ++offer) {
    const int32_t kind = index.kind(offer);
    if (kind < 0 || class_of_kind_[kind] >= 0) continue;
    // Every offer of a kind is alike but for price and region: its first
    // offer stands for it.
    const OfferFacts& f = offers[offer];
    const pricing::PriceBook::Rules rules =
        book.RulesOf({.offer_id = index.id(offer), .book_index = offer});
    const Alike alike{index.instance_type(offer),
                      f.cell,
                      rules.billing == nullptr ? kind : -1,
                      f.availability,
                      f.network_gbps,
                      rules.billing,
                      rules.risk,
                      overhead_rules[f.provider]};
    class_of_kind_[kind] =
        classes.try_emplace(alike, static_cast<int32_t>(classes.size())).first->second;
  }
  classes_ = static_cast<int>(classes.size());
  FindCheaperInBook(index, book);
}

void QuoteClasses::FindCheaperInBook(const OfferIndex& index, const pricing::PriceBook& book) {
  const std::vector<OfferFacts>& offers = index.offers();
  auto cheaper = [](double listed, double booked) {
    return listed > 0 && booked > 0 && booked < listed ? booked : 0.0;
  };
  for (int offer = 0; offer < static_cast<int>(offers.size()); ++offer) {
    // A book made from this snapshot lists its offers in the same order.
    const pricing::v1::OfferPrice* price =
        book.PriceOf({.offer_id = index.id(offer), .book_index = offer});
    if (price == nullptr) continue;
    const OfferFacts& f = offers[offer];
    const Repriced repriced{offer,
                            cheaper(f.on_demand_usd_per_hour, price->on_demand_usd_per_hour()),
                            cheaper(f.spot_usd_per_hour, price->spot_usd_per_hour())};
    if (repriced.on_demand_usd_per_hour > 0 || repriced.spot_usd_per_hour > 0) {
      cheaper_in_book_.push_back(repriced);
    }
  }
}

std::shared_ptr<const QuoteClasses> QuoteClassCache::For(const OfferIndex& index,
                                                         const pricing::PriceBook& book) {
  const std::string& catalog_version = index.catalog().snapshot().version();
  absl::MutexLock lock(&mu_);
  if (classes_ == nullptr || catalog_version != catalog_version_ ||
      book.version() != book_version_) {
    // Made under the lock: requests of a new pair wait for one making, not
    // each make their own (11.5M instructions at 100,000 offers, about 4 ms).
    classes_ = std::make_shared<const QuoteClasses>(index, book, overheads_);
    catalog_version_ = catalog_version;
    book_version_ = book.version();
  }
  return classes_;
}

}  // namespace gpuadvisor::gateway
