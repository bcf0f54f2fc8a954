#ifndef GPUADVISOR_SERVICES_CATALOG_CATALOG_SERVICE_IMPL_H_
#define GPUADVISOR_SERVICES_CATALOG_CATALOG_SERVICE_IMPL_H_

// gRPC adapter for gpuadvisor.catalog.v1.CatalogService over a CatalogStore.
// Every RPC answers from one snapshot (a shared_ptr taken at the start), so no
// call ever sees half of a reload. WatchCatalog runs on gRPC's callback API
// through a WatchHub (one shared encoding per version, no thread per watcher,
// slow watchers dropped with RESOURCE_EXHAUSTED, heartbeats on request).
// ReloadCatalog checks the admin token before it reads the request. Thread-safe.

#include <atomic>
#include <functional>
#include <string>

#include "common/metrics/metrics.h"
#include "gpuadvisor/catalog/v1/catalog.grpc.pb.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "services/catalog/catalog_store.h"
#include "services/catalog/watch_hub.h"

namespace gpuadvisor::catalog {

class CatalogServiceImpl final : public v1::CatalogService::Service {
 public:
  struct Options {
    std::string admin_token;          // empty disables ReloadCatalog
    double watch_poll_seconds = 1.0;  // unused; kept for callers' designated initializers
    WatchHub::Options watch = WatchHub::Options();
    // On a follower replica (docs/reliability.md, single writer): sends an
    // authenticated ReloadCatalog on to the writer and answers with the
    // writer's answer (once this replica serves that version). Null on the
    // writer, which reloads its files itself.
    std::function<grpc::Status(grpc::ServerContext*, const v1::ReloadCatalogRequest&,
                               v1::ReloadCatalogResponse*)>
        forward_reload = nullptr;
    // WatchCatalog's chunk size (followers that set accept_chunks) and the
    // largest snapshot sent whole to those that did not.
    SnapshotEncoding snapshot_encoding = SnapshotEncoding();
  };

  // `store` and `metrics` must outlive the service.
  CatalogServiceImpl(CatalogStore* store, Metrics* metrics, Options options);

  // Reloads the store (as at start-up or on ReloadCatalog) and updates the
  // metrics: data loads by result and offers per provider. On error the old
  // snapshot keeps serving and the error (file/line/field) is returned.
  absl::Status Reload(bool force = false);

  // A follower's new snapshot (from the writer) is serving: updates the
  // offer metrics and counts a data load.
  void Followed();

  // Ends WatchCatalog streams (before server shutdown).
  void Shutdown();

  const WatchHub& watch_hub() const { return hub_; }

  grpc::Status ListGpus(grpc::ServerContext* context, const v1::ListGpusRequest* request,
                        v1::ListGpusResponse* response) override;
  grpc::Status ListOffers(grpc::ServerContext* context, const v1::ListOffersRequest* request,
                          v1::ListOffersResponse* response) override;
  // WatchCatalog is served by the WatchHub (callback API), not a sync handler.
  grpc::Status ReloadCatalog(grpc::ServerContext* context, const v1::ReloadCatalogRequest* request,
                             v1::ReloadCatalogResponse* response) override;

 private:
  void CountOffers();

  CatalogStore* store_;
  Metrics* metrics_;
  const Options options_;
  prometheus::Family<prometheus::Gauge>& offers_per_provider_;
  std::atomic<bool> shutting_down_{false};
  WatchHub hub_;
};

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_CATALOG_SERVICE_IMPL_H_
