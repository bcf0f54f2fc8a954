#include <utility>

#include "absl/strings/str_cat.h"
#include "services/pricing/price_book.h"

namespace gpuadvisor::pricing {

void PriceStore::Set(std::shared_ptr<const PriceBook> book) {
  if (book == nullptr) return;
  std::shared_ptr<const PriceBook> old;  // released outside the lock
  std::vector<std::shared_ptr<const PriceBook>> dropped;
  absl::MutexLock lock(&mu_);
  const std::string& catalog_version = book->data().catalog_version();
  for (auto it = by_catalog_.begin(); it != by_catalog_.end();) {
    if ((*it)->data().catalog_version() == catalog_version) {
      dropped.push_back(std::move(*it));
      it = by_catalog_.erase(it);
    } else {
      ++it;
    }
  }
  by_catalog_.push_back(book);
  while (static_cast<int>(by_catalog_.size()) > kKeptCatalogVersions) {
    dropped.push_back(std::move(by_catalog_.front()));
    by_catalog_.erase(by_catalog_.begin());
  }
  old = std::exchange(book_, std::move(book));
}

std::shared_ptr<const PriceBook> PriceStore::Current() const {
  absl::MutexLock lock(&mu_);
  return book_;
}

std::shared_ptr<const PriceBook> PriceStore::ForCatalog(const std::string& catalog_version) const {
  absl::MutexLock lock(&mu_);
  if (catalog_version.empty()) return book_;
  for (auto it = by_catalog_.rbegin(); it != by_catalog_.rend(); ++it) {
    if ((*it)->data().catalog_version() == catalog_version) return *it;
  }
  return nullptr;
}

void PriceStore::Restore(const gpuadvisor::pricing::v1::UpdatePricesRequest& saved) {
  absl::MutexLock update_lock(&update_mu_);
  for (const auto& price : saved.prices()) overrides_[price.offer_id()] = price;
}

absl::StatusOr<std::shared_ptr<const PriceBook>> PriceStore::Update(
    const gpuadvisor::pricing::v1::UpdatePricesRequest& update, const Persist& persist) {
  absl::MutexLock update_lock(&update_mu_);
  std::shared_ptr<const PriceBook> current = Current();
  if (current == nullptr) return absl::UnavailableError("no price book loaded yet");
  absl::StatusOr<std::shared_ptr<const PriceBook>> next = current->WithUpdates(update);
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
  absl::StatusOr<std::shared_ptr<const PriceBook>> next = base->WithUpdates(replay);
  if (!next.ok()) return next.status();
  Set(*next);
  return absl::OkStatus();
}

std::shared_ptr<const PriceBook> PriceStore::WaitForChange(const std::string& known_version,
                                                           absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  auto changed = [this, &known_version]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return shutdown_ ||
           (book_ != nullptr && (known_version.empty() || book_->version() != known_version));
  };
  mu_.AwaitWithDeadline(absl::Condition(&changed), deadline);
  return book_;
}

void PriceStore::Shutdown() {
  absl::MutexLock lock(&mu_);
  shutdown_ = true;
}

}  // namespace gpuadvisor::pricing
