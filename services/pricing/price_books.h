#ifndef GPUADVISOR_SERVICES_PRICING_PRICE_BOOKS_H_
#define GPUADVISOR_SERVICES_PRICING_PRICE_BOOKS_H_

// The price books a process quotes from: the current one and the newest of
// each of the last few catalog versions, with atomic replacement and change
// notification. A follower's copy (PriceFollower Sets what the writer
// publishes) and the base of the writer's PriceStore. Thread-safe: every
// method may be called from any thread.

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "services/pricing/price_book.h"

namespace gpuadvisor::pricing {

class PriceBooks {
 public:
  PriceBooks() = default;
  PriceBooks(const PriceBooks&) = delete;
  PriceBooks& operator=(const PriceBooks&) = delete;
  virtual ~PriceBooks() = default;

  // Replaces the current book (e.g. after a file reload) and wakes waiters.
  // A nullptr is ignored.
  void Set(std::shared_ptr<const PriceBook> book);

  // The current book; nullptr before the first Set. Readers keep the book
  // they got alive for as long as they hold it, even across a swap.
  std::shared_ptr<const PriceBook> Current() const;

  // The newest book built from catalog version `catalog_version` (its
  // data().catalog_version()), among the books of the last
  // kKeptCatalogVersions catalog versions Set; nullptr when none is held (a
  // version not seen yet, or older than those). An empty version gives
  // Current(). Lets a quote use the catalog version its caller used, while a
  // reload moves the current book on. A book of an older catalog version keeps
  // the prices it had when a newer version arrived (later updates go to the
  // current book).
  static constexpr int kKeptCatalogVersions = 4;
  std::shared_ptr<const PriceBook> ForCatalog(const std::string& catalog_version) const;

  // Blocks until the current book's version differs from `known_version`,
  // `deadline` passes or Shutdown() is called, then returns the current book
  // (which may still have `known_version`, or be nullptr if nothing was Set;
  // callers compare versions). Returns at once if the version already
  // differs. An empty known_version matches any book.
  std::shared_ptr<const PriceBook> WaitForChange(const std::string& known_version,
                                                 absl::Time deadline) const;

  // Wakes every WaitForChange, now and later, so streams can end.
  void Shutdown();
  // Callers blocked in WaitForChange now (tests wait for a waiter to block
  // instead of sleeping).
  int waiters() const;

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const PriceBook> book_ ABSL_GUARDED_BY(mu_);
  // Newest last: the latest book of each of the last kKeptCatalogVersions
  // catalog versions.
  std::vector<std::shared_ptr<const PriceBook>> by_catalog_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  mutable int waiters_ ABSL_GUARDED_BY(mu_) = 0;
};

// The book of `books` for `catalog_version` (ForCatalog) when this build may
// quote it in process: its quote rules are this build's
// (PriceBook::QuotesLikeThisBuild). nullptr otherwise: the caller asks the
// writer's Quote, which prices by the book's own rules.
std::shared_ptr<const PriceBook> BookForLocalQuotes(const PriceBooks& books,
                                                    const std::string& catalog_version);

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_PRICE_BOOKS_H_
