#ifndef GPUADVISOR_SERVICES_CATALOG_CATALOG_REPLICA_H_
#define GPUADVISOR_SERVICES_CATALOG_CATALOG_REPLICA_H_

// A local, versioned copy of the catalog, kept current by following
// CatalogService.WatchCatalog. The gateway answers Recommend from it without a
// catalog round trip; the pricing service takes each new snapshot's list
// prices from it. When the catalog service is down the replica keeps its last
// snapshot and reports how stale it is; with a cache file it also survives a
// restart while the catalog service is down.
//
// Following (wait-for-ready, heartbeats and the watchdog, chunks reassembled
// and checked before a snapshot is validated and swapped in, backoff, age) is
// the one watch follower of common/grpc/watch_follower.h, the same as the
// price follower's: a stream silent for `missed_heartbeats` intervals (a hung,
// SIGSTOPped or partitioned catalog) is cancelled and re-dialled, and
// AgeSeconds() counts from the last message heard; a stream that ends, breaks
// or sends a chunk out of order mid-snapshot leaves the serving snapshot as it
// was (reported through on_rejected) and the replica reconnects.
//
// Cache file: a one-line header ("gpuadvisor-catalog-cache 1 offers=N gpus=G
// bytes=B fnv1a64=H version=V") then B bytes of the binary CatalogSnapshot;
// written to a temp file, fsync'd, renamed over the old one and the directory
// fsync'd. A cache that is empty, cut short, fails its checksum or whose
// offer/GPU counts differ from the header is ignored (and reported through
// on_rejected), never served. Thread-safe.

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/grpc/watch_chunks.h"
#include "common/grpc/watch_follower.h"
#include "gpuadvisor/catalog/v1/catalog.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "services/catalog/background_priority.h"
#include "services/catalog/catalog.h"

namespace gpuadvisor::catalog {

// Reassembles a snapshot sent as SnapshotChunks (WatchCatalogResponse.chunk):
// the shared assembler of common/grpc/watch_chunks.h, parsing a CatalogSnapshot.
using SnapshotAssembler = ::gpuadvisor::SnapshotAssembler<v1::CatalogSnapshot>;

class CatalogReplica {
 public:
  struct Options {
    std::string cache_path = "";  // binary CatalogSnapshot; "" = no cache
    // The first wait before re-dialling, doubling up to max_retry_interval.
    absl::Duration retry_interval = absl::Seconds(1);
    absl::Duration max_retry_interval = absl::Seconds(30);
    // Heartbeats asked of the catalog (zero: none, the replica then counts an
    // open stream as current). Silence for missed_heartbeats intervals ends
    // the stream.
    absl::Duration heartbeat_interval = absl::Seconds(1);
    int missed_heartbeats = 3;
    // Called from the follower thread with each validated snapshot before
    // it is swapped in (Current() still returns the previous one): work every
    // reader of the new snapshot needs, done once off the serving threads
    // (the gateway indexes it, OfferIndexCache::Prepare). May be null.
    std::function<void(const std::shared_ptr<const Catalog>&)> prepare = nullptr;
    // Called from the follower thread with each accepted snapshot (also the
    // cached one at Start), and with the reason a snapshot was rejected.
    // Either may be null.
    std::function<void(const std::shared_ptr<const Catalog>&)> on_snapshot = nullptr;
    std::function<void(const absl::Status&)> on_rejected = nullptr;
    // Called when the cache file cannot be written (logged, and the replica
    // carries on); may be null. common/metrics/write_failures.h counts it.
    std::function<void(const absl::Status&)> on_cache_write_failed = nullptr;
    // What the replica's age is measured with (tests move a ManualClock).
    const Clock* clock = Clock::Real();
    // > 0: the follower thread (receiving, checking and indexing each
    // snapshot, on_snapshot included) runs at this nice value in
    // SCHED_BATCH, below the threads answering calls (background_priority.h);
    // 0 = unchanged (the default: measured on a busy 2-core machine, nice 10
    // delayed new prices without sparing the serving path, docs/performance.md).
    int follow_nice = 0;
  };

  CatalogReplica(std::unique_ptr<v1::CatalogService::StubInterface> stub, Options options);
  ~CatalogReplica();  // Stop()s

  // Loads the cache file if there is one, then follows the catalog service in
  // a background thread until Stop().
  void Start();
  void Stop();

  // The newest valid snapshot; nullptr until one arrived (or was cached).
  std::shared_ptr<const Catalog> Current() const;

  // Seconds since the replica was last known to be current: 0 while the watch
  // stream is up and heard from within two heartbeat intervals; -1 before any
  // snapshot.
  double AgeSeconds() const;

  // The cache file format (see the top of this file).
  static std::string EncodeCache(const v1::CatalogSnapshot& snapshot);
  // Its header line (with the newline) for `snapshot` serialized as `body`;
  // `fnv1a64`: the body's checksum when known already (else it is computed).
  static std::string CacheHeader(const v1::CatalogSnapshot& snapshot, absl::string_view body,
                                 absl::string_view fnv1a64 = "");
  // kDataLoss naming what is wrong for an empty, truncated or corrupt cache.
  static absl::StatusOr<v1::CatalogSnapshot> DecodeCache(absl::string_view bytes);

  // True once a snapshot is held, waiting at most `timeout`.
  bool WaitUntilLoaded(absl::Duration timeout) const;

 private:
  using Watch =
      WatchFollower<v1::WatchCatalogRequest, v1::WatchCatalogResponse, v1::CatalogSnapshot>;
  Watch::Protocol Protocol();
  static WatchFollowerOptions FollowerOptions(const Options& options);
  // Validates and swaps in a snapshot; `serialized`: its bytes when the
  // caller has them (chunks), written to the cache as they are, with their
  // checksum `fnv1a64`.
  absl::Status Apply(v1::CatalogSnapshot snapshot, bool from_cache,
                     std::string serialized = std::string(), const std::string& fnv1a64 = "");
  void LoadCache();
  std::string ServingVersion() const;

  std::unique_ptr<v1::CatalogService::StubInterface> stub_;
  const Options options_;

  mutable absl::Mutex mu_;
  std::shared_ptr<const Catalog> current_ ABSL_GUARDED_BY(mu_);

  Watch watch_;  // last: stopped (by ~CatalogReplica) before the rest goes
};

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_CATALOG_REPLICA_H_
