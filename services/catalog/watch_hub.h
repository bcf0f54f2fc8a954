#ifndef GPUADVISOR_SERVICES_CATALOG_WATCH_HUB_H_
#define GPUADVISOR_SERVICES_CATALOG_WATCH_HUB_H_

// Fans catalog snapshots out to WatchCatalog streams with memory that does not
// grow with the number of watchers:
//
// - Each version is serialized once into a grpc::ByteBuffer. Every watcher
//   writes that same buffer (a ByteBuffer copy shares its slices), so N
//   watchers of a V-version history hold at most one encoding per distinct
//   version still in flight, not N copies of the snapshot.
// - A watcher keeps at most one write in flight and one pending version (the
//   newest; older pending versions are dropped, a follower only needs the
//   latest). Watchers run on gRPC's callback API: no thread per watcher. One
//   hub thread waits for store changes and ticks heartbeats.
// - A watcher whose write has been in flight longer than `slow_watcher` (it
//   stopped reading) is finished with RESOURCE_EXHAUSTED and, if it still
//   does not drain, cancelled, releasing what it held.
// - At most `max_watchers` streams; the next gets RESOURCE_EXHAUSTED.
// - Heartbeats: a watcher that asks for them (heartbeat_interval_millis > 0)
//   gets a snapshot-less response with heartbeat_unix_millis at that interval
//   (clamped to [kMinHeartbeatMillis, kMaxHeartbeatMillis]) whenever nothing
//   else is being written, so a follower notices a hung or partitioned
//   catalog within a few intervals. The accepted interval is announced in the
//   initial metadata header kWatchHeartbeatHeader.
//
// Thread-safe.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "services/catalog/catalog_store.h"

namespace gpuadvisor::catalog {

inline constexpr int kMinHeartbeatMillis = 100;
inline constexpr int kMaxHeartbeatMillis = 60'000;

class WatchHub {
 public:
  struct Options {
    int max_watchers = 1000;
    absl::Duration slow_watcher = absl::Seconds(30);
    absl::Duration tick = absl::Milliseconds(100);  // heartbeat and slow-watcher check resolution
  };

  // One serialized WatchCatalogResponse, shared by every watcher writing it.
  struct Encoded {
    std::string version;  // "" for a heartbeat
    grpc::ByteBuffer bytes;
  };

  class Watcher;

  // `store` must outlive the hub.
  WatchHub(CatalogStore* store, Options options);
  ~WatchHub();  // Shutdown()

  // The reactor for one WatchCatalog call (request as raw bytes).
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Open(grpc::CallbackServerContext* context,
                                                   const grpc::ByteBuffer* request);

  // Finishes every stream (OK) and stops the hub thread; later Opens are refused.
  void Shutdown();

  // Counters shared with metric collectors (they may outlive the hub).
  struct Stats {
    std::atomic<int64_t> watchers{0};
    std::atomic<int64_t> dropped_slow{0};
    std::atomic<int64_t> refused{0};
  };
  std::shared_ptr<const Stats> stats() const { return stats_; }

  // For metrics and tests.
  int watchers() const;
  int64_t dropped_slow_watchers() const { return stats_->dropped_slow.load(); }
  // Distinct encoded versions alive (held by watchers or the hub).
  static int64_t live_encodings();

 private:
  void Run();
  std::shared_ptr<const Encoded> Latest() const;
  void Remove(Watcher* watcher);

  CatalogStore* store_;
  const Options options_;
  mutable absl::Mutex mu_;
  std::vector<Watcher*> watchers_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const Encoded> latest_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<Stats> stats_ = std::make_shared<Stats>();
  std::thread thread_;
};

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_WATCH_HUB_H_
