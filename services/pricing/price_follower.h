#ifndef GPUADVISOR_SERVICES_PRICING_PRICE_FOLLOWER_H_
#define GPUADVISOR_SERVICES_PRICING_PRICE_FOLLOWER_H_

// A copy of the pricing writer's books, followed over WatchPrices (used by
// pricing's follower replicas and by the gateway, which quotes in process):
// every book the writer publishes (list prices of a catalog version with the
// live updates applied) is validated (PriceBook::Create, which recomputes the
// same content version) and Set into the local PriceBooks, so this copy
// quotes exactly what the writer quotes, for the same catalog versions.
//
// The watch itself (wait-for-ready, heartbeats and the watchdog, chunks
// reassembled and checked before a book is taken, backoff, age) is the one
// follower of common/grpc/watch_follower.h, the same as the catalog
// replica's: a stream that ends, breaks or sends a chunk out of order or
// corrupt mid-book leaves the book it has (reported through on_rejected,
// "...; keeping version V") and reconnects. Thread-safe.

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "common/grpc/watch_follower.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "services/pricing/price_books.h"

namespace gpuadvisor::pricing {

// Initial metadata of a WatchPrices stream: the book version when it opened,
// and the heartbeat interval accepted (ms).
inline constexpr char kPriceWatchVersionHeader[] = "x-price-book-version";
inline constexpr char kPriceWatchHeartbeatHeader[] = "x-watch-heartbeat-ms";

class PriceFollower {
 public:
  // name: the process in log lines ("gateway", "pricing follower").
  using Options = WatchFollowerOptions;

  // `store` must outlive the follower.
  PriceFollower(std::unique_ptr<v1::PricingService::StubInterface> writer, PriceBooks* store,
                Options options);
  ~PriceFollower();  // Stop()s

  void Start();  // follows in a background thread until Stop()
  void Stop();

  // Seconds since this replica was last known to be current with the
  // writer: 0 while the stream is up and heard from within two heartbeat
  // intervals; -1 before any book arrived.
  double AgeSeconds() const { return watch_.AgeSeconds(); }

  // Waits until the store's current book has `version`, at most until
  // `deadline`; false on timeout.
  bool WaitForVersion(const std::string& version, absl::Time deadline) const;

  // How long the follower will wait before its next re-dial (for metrics and
  // tests).
  absl::Duration retry_delay() const { return watch_.retry_delay(); }
  // The wait after `previous`: doubled, at most max_retry_interval.
  static absl::Duration NextRetryDelay(absl::Duration previous, const Options& options) {
    return WatchFollowerState::NextRetryDelay(previous, options);
  }

 private:
  using Watch = WatchFollower<v1::WatchPricesRequest, v1::WatchPricesResponse, v1::PriceBook>;
  static Watch::Protocol Protocol(v1::PricingService::StubInterface* writer, PriceBooks* store,
                                  const std::string& name);

  std::unique_ptr<v1::PricingService::StubInterface> writer_;
  PriceBooks* store_;
  Watch watch_;
};

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_PRICE_FOLLOWER_H_
