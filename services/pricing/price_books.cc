#include "services/pricing/price_books.h"

#include <utility>

namespace gpuadvisor::pricing {

void PriceBooks::Set(std::shared_ptr<const PriceBook> book) {
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

std::shared_ptr<const PriceBook> PriceBooks::Current() const {
  absl::MutexLock lock(&mu_);
  return book_;
}

std::shared_ptr<const PriceBook> PriceBooks::ForCatalog(const std::string& catalog_version) const {
  absl::MutexLock lock(&mu_);
  if (catalog_version.empty()) return book_;
  for (auto it = by_catalog_.rbegin(); it != by_catalog_.rend(); ++it) {
    if ((*it)->data().catalog_version() == catalog_version) return *it;
  }
  return nullptr;
}

std::shared_ptr<const PriceBook> PriceBooks::WaitForChange(const std::string& known_version,
                                                           absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  auto changed = [this, &known_version]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return shutdown_ ||
           (book_ != nullptr && (known_version.empty() || book_->version() != known_version));
  };
  ++waiters_;
  mu_.AwaitWithDeadline(absl::Condition(&changed), deadline);
  --waiters_;
  return book_;
}

int PriceBooks::waiters() const {
  absl::MutexLock lock(&mu_);
  return waiters_;
}

void PriceBooks::Shutdown() {
  absl::MutexLock lock(&mu_);
  shutdown_ = true;
}

std::shared_ptr<const PriceBook> BookForLocalQuotes(const PriceBooks& books,
                                                    const std::string& catalog_version) {
  std::shared_ptr<const PriceBook> book = books.ForCatalog(catalog_version);
  if (book == nullptr || !book->QuotesLikeThisBuild()) return nullptr;
  return book;
}

}  // namespace gpuadvisor::pricing
