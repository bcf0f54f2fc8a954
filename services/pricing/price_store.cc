#include "services/pricing/price_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "services/pricing/price_loader.h"

namespace gpuadvisor::pricing {

void PriceStore::Restore(const gpuadvisor::pricing::v1::UpdatePricesRequest& saved) {
  absl::MutexLock update_lock(&update_mu_);
  for (const auto& price : saved.prices()) overrides_[price.offer_id()] = price;
}

absl::StatusOr<std::shared_ptr<const PriceBook>> PriceStore::Update(
    const gpuadvisor::pricing::v1::UpdatePricesRequest& update, const Persist& persist) {
  absl::MutexLock update_lock(&update_mu_);
  std::shared_ptr<const PriceBook> current = Current();
  if (current == nullptr) return absl::UnavailableError("no price book loaded yet");
  absl::StatusOr<std::shared_ptr<const PriceBook>> next = WithUpdates(*current, update);
  if (!next.ok()) return next.status();
  if (persist) {
    std::map<std::string, gpuadvisor::pricing::v1::OfferPrice> all = overrides_;
    for (const auto& price : update.prices()) all[price.offer_id()] = price;
    gpuadvisor::pricing::v1::UpdatePricesRequest accepted;
    accepted.set_source(update.source());
    accepted.set_prices_as_of(update.prices_as_of());
    for (const auto& [offer_id, price] : all) *accepted.add_prices() = price;
    if (absl::Status persisted = persist(accepted); !persisted.ok()) {
      return absl::UnavailableError(
          absl::StrCat("update not applied: cannot persist it: ", persisted.message()));
    }
  }
  for (const auto& price : update.prices()) overrides_[price.offer_id()] = price;
  Set(*next);
  return next;
}

absl::Status PriceStore::Rebase(std::shared_ptr<const PriceBook> base) {
  if (base == nullptr) return absl::InvalidArgumentError("no price book");
  absl::MutexLock update_lock(&update_mu_);
  if (overrides_.empty()) {
    Set(std::move(base));
    return absl::OkStatus();
  }
  gpuadvisor::pricing::v1::UpdatePricesRequest replay;
  // An update for an offer the new catalog no longer has is dropped with it.
  for (auto it = overrides_.begin(); it != overrides_.end();) {
    if (base->HasOffer(it->first)) {
      *replay.add_prices() = it->second;
      ++it;
    } else {
      it = overrides_.erase(it);
    }
  }
  if (replay.prices_size() == 0) {
    Set(std::move(base));
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<const PriceBook>> next = WithUpdates(*base, replay);
  if (!next.ok()) return next.status();
  Set(*next);
  return absl::OkStatus();
}

}  // namespace gpuadvisor::pricing
