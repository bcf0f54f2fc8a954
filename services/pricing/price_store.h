#ifndef GPUADVISOR_SERVICES_PRICING_PRICE_STORE_H_
#define GPUADVISOR_SERVICES_PRICING_PRICE_STORE_H_

// The pricing writer's store: the books it serves (PriceBooks) plus the live
// price updates, durable before they are served and re-applied when a new
// catalog rebases the list prices. Writer-only: followers hold a PriceBooks.
// Thread-safe: every method may be called from any thread.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "gpuadvisor/pricing/v1/pricing.pb.h"
#include "services/pricing/price_books.h"

namespace gpuadvisor::pricing {

class PriceStore : public PriceBooks {
 public:
  PriceStore() = default;

  // Takes updates accepted before a restart (as Persist saw them) as if they
  // had been accepted here, before any book is Set: the next Rebase applies
  // them (dropping offers the catalog no longer has).
  void Restore(const gpuadvisor::pricing::v1::UpdatePricesRequest& saved);

  // Applies `update` to the current book (WithUpdates) and swaps the result
  // in, all or nothing: on error (kInvalidArgument naming the field) the
  // current book stays. kUnavailable before the first Set. Concurrent updates
  // are serialized, so none is lost. Returns the new book. `persist`, when
  // given, gets every update accepted so far including this one (newest per
  // offer) after validation and before the swap; if it fails nothing changes
  // and its error is returned (an update is live only once it is durable).
  using Persist =
      std::function<absl::Status(const gpuadvisor::pricing::v1::UpdatePricesRequest& all)>;
  absl::StatusOr<std::shared_ptr<const PriceBook>> Update(
      const gpuadvisor::pricing::v1::UpdatePricesRequest& update, const Persist& persist = nullptr);

  // Replaces the book with `base` (new list prices, e.g. from a new catalog
  // snapshot) and re-applies every update accepted so far, so live price
  // updates survive catalog reloads; updates of offers `base` no longer has
  // are forgotten. On error the current book stays.
  absl::Status Rebase(std::shared_ptr<const PriceBook> base);

 private:
  // Serializes Update's read-modify-write without blocking readers while the
  // new book is built.
  absl::Mutex update_mu_;
  // Every price accepted through Update, newest per offer, for Rebase.
  std::map<std::string, gpuadvisor::pricing::v1::OfferPrice> overrides_ ABSL_GUARDED_BY(update_mu_);
};

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_PRICE_STORE_H_
