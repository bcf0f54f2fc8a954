#ifndef GPUADVISOR_SERVICES_PRICING_PRICE_FOLLOWER_H_
#define GPUADVISOR_SERVICES_PRICING_PRICE_FOLLOWER_H_

// A copy of the pricing writer's books, followed over WatchPrices (used by
// pricing's follower replicas and by the gateway, which quotes in process):
// every book the writer publishes (list prices of a catalog version with the
// live updates applied) is validated (PriceBook::Create, which recomputes the
// same content version) and Set into the local PriceBooks, so this copy
// quotes exactly what the writer quotes, for the same catalog versions.
//
// Chunks: the follower asks for them (WatchPricesRequest.accept_chunks), so a
// book larger than one gRPC message (a million offers: ~80 MB) arrives as
// SnapshotChunks; it reassembles and checks them (common/grpc/watch_chunks.h:
// consecutive offsets, one version, size, checksum, parse, the version
// inside) before PriceBook::Create and Set. A stream that ends, breaks or
// sends a chunk out of order or corrupt mid-book leaves the book it has (the
// partial one is dropped, reported through on_rejected) and reconnects. A
// writer that sends whole books is followed as before.
//
// Heartbeats are asked for; a stream silent for `missed_heartbeats`
// intervals is cancelled and re-dialled with the known version (the seconds
// spent checking and validating a large book are not silence). A call waits
// (gRPC wait_for_ready) while the writer is unreachable or not SERVING, and
// starts as soon as it is. After a failed or ended stream the follower waits
// retry_interval before it re-dials, doubling each time up to
// max_retry_interval, and back to retry_interval once it holds the writer's
// current book (a book arrived, or the writer's heartbeat says it has nothing
// newer). Thread-safe.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "services/pricing/price_books.h"

namespace gpuadvisor::pricing {

class PriceFollower {
 public:
  struct Options {
    // Names the process in the follower's log lines ("gateway", "pricing
    // follower").
    std::string name = "pricing follower";
    absl::Duration retry_interval = absl::Seconds(1);       // first wait before re-dialling
    absl::Duration max_retry_interval = absl::Seconds(30);  // the wait doubles up to this
    absl::Duration heartbeat_interval = absl::Seconds(1);
    int missed_heartbeats = 3;
    // Called from the follower thread with the reason a book (or its
    // chunks) will not be served; may be null.
    std::function<void(const absl::Status&)> on_rejected = nullptr;
  };

  // `store` must outlive the follower.
  PriceFollower(std::unique_ptr<v1::PricingService::StubInterface> writer, PriceBooks* store,
                Options options);
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

  // How long the follower will wait before its next re-dial (for metrics and
  // tests).
  absl::Duration retry_delay() const;
  // The wait after `previous`: doubled, at most max_retry_interval.
  static absl::Duration NextRetryDelay(absl::Duration previous, const Options& options);

 private:
  void Follow();
  void Watchdog();
  // Marks the follower thread busy with a book (or done), restarting the
  // watchdog's count of silence either way.
  void SetApplying(bool applying);
  // A book or chunks that will not be served (logged, and on_rejected).
  void Reject(const absl::Status& status);
  // Takes the writer's book: validated, then Set. False when rejected.
  bool Apply(v1::PriceBook data);

  std::unique_ptr<v1::PricingService::StubInterface> writer_;
  PriceBooks* store_;
  const Options options_;
  std::thread follower_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* active_call_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::Time last_heard_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();  // reset by the watchdog
  absl::Time last_message_ ABSL_GUARDED_BY(mu_) =
      absl::InfinitePast();  // any message from the writer
  bool has_book_ ABSL_GUARDED_BY(mu_) = false;
  // The writer accepted the current call (its initial metadata arrived, or
  // the call ended); before that the call is waiting for the writer to be
  // ready and the watchdog does not time it.
  bool accepted_ ABSL_GUARDED_BY(mu_) = false;
  // Validating and swapping in a book (seconds at a million offers), not
  // reading: the watchdog does not time it.
  bool applying_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration retry_delay_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_PRICE_FOLLOWER_H_
