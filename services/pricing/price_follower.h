#ifndef GPUADVISOR_SERVICES_PRICING_PRICE_FOLLOWER_H_
#define GPUADVISOR_SERVICES_PRICING_PRICE_FOLLOWER_H_

// A pricing replica that follows the pricing writer: every book the writer
// publishes on WatchPrices (list prices of a catalog version with the live
// updates applied) is validated (PriceBook::Create, which recomputes the same
// content version) and Set into the local PriceStore, so this replica quotes
// exactly what the writer quotes, for the same catalog versions. Heartbeats
// are asked for; a stream silent for `missed_heartbeats` intervals is
// cancelled and re-dialled with the known version. Thread-safe.

#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "services/pricing/price_book.h"

namespace gpuadvisor::pricing {

class PriceFollower {
 public:
  struct Options {
    absl::Duration retry_interval = absl::Seconds(1);  // between reconnects
    absl::Duration heartbeat_interval = absl::Seconds(1);
    int missed_heartbeats = 3;
  };

  // `store` must outlive the follower.
  PriceFollower(std::unique_ptr<v1::PricingService::StubInterface> writer, PriceStore* store, Options options);
  ~PriceFollower();  // Stop()s

  void Start();  // follows in a background thread until Stop()
  void Stop();

  // Seconds since this replica was last known to be current with the
  // writer: 0 while the stream is up and heard from within two heartbeat
  // intervals; -1 before any book arrived.
  double AgeSeconds() const;

  // Waits until the store's current book has `version`, at most until
  // `deadline`; false on timeout.
  bool WaitForVersion(const std::string& version, absl::Time deadline) const;

 private:
  void Follow();

  std::unique_ptr<v1::PricingService::StubInterface> writer_;
  PriceStore* store_;
  const Options options_;
  std::thread follower_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* active_call_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::Time last_heard_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();  // reset by the watchdog
  absl::Time last_message_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();  // any message from the writer
  bool has_book_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_PRICE_FOLLOWER_H_
