#ifndef GPUADVISOR_SERVICES_GATEWAY_CATALOG_REPLICA_H_
#define GPUADVISOR_SERVICES_GATEWAY_CATALOG_REPLICA_H_

// The gateway's local, versioned copy of the catalog, kept current by
// following CatalogService.WatchCatalog, so Recommend needs no catalog round
// trip. When the catalog service is down the replica keeps serving its last
// snapshot and reports how stale it is; with a cache file it also survives a
// gateway restart while the catalog service is down. Thread-safe.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuadvisor/catalog/v1/catalog.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "services/catalog/catalog.h"

namespace gpuadvisor::gateway {

class CatalogReplica {
 public:
  struct Options {
    std::string cache_path;  // binary CatalogSnapshot; "" = no cache
    absl::Duration retry_interval = absl::Seconds(1);  // between reconnects
    // Called with each snapshot's outcome (accepted or rejected); may be null.
    std::function<void(bool accepted)> on_snapshot;
  };

  CatalogReplica(std::unique_ptr<catalog::v1::CatalogService::StubInterface> stub, Options options);
  ~CatalogReplica();  // Stop()s

  // Loads the cache file if there is one, then follows the catalog service in
  // a background thread until Stop().
  void Start();
  void Stop();

  // The newest valid snapshot; nullptr until one arrived (or was cached).
  std::shared_ptr<const catalog::Catalog> Current() const;

  // Seconds since the replica was last known to be current: 0 while the watch
  // stream is up; -1 before any snapshot.
  double AgeSeconds() const;

  // True once a snapshot is held, waiting at most `timeout`.
  bool WaitUntilLoaded(absl::Duration timeout) const;

 private:
  void Follow();
  void Apply(catalog::v1::CatalogSnapshot snapshot, bool from_cache);

  std::unique_ptr<catalog::v1::CatalogService::StubInterface> stub_;
  const Options options_;
  std::thread follower_;

  mutable absl::Mutex mu_;
  std::shared_ptr<const catalog::Catalog> current_ ABSL_GUARDED_BY(mu_);
  bool connected_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time synced_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* active_call_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_CATALOG_REPLICA_H_
