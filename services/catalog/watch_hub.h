#ifndef GPUADVISOR_SERVICES_CATALOG_WATCH_HUB_H_
#define GPUADVISOR_SERVICES_CATALOG_WATCH_HUB_H_

// WatchCatalog on the shared watch design (common/grpc/watch_hub.h): one
// encoding per catalog version shared by every watcher, no thread per
// watcher, slow watchers dropped with RESOURCE_EXHAUSTED, a watcher cap and
// heartbeats (WatchCatalogRequest.heartbeat_interval_millis; the version at
// open in kWatchVersionHeader, the accepted interval in
// kWatchHeartbeatHeader).

#include "common/grpc/watch_hub.h"
#include "services/catalog/catalog_store.h"

namespace gpuadvisor::catalog {

inline constexpr int kMinHeartbeatMillis = kMinWatchHeartbeatMillis;
inline constexpr int kMaxHeartbeatMillis = kMaxWatchHeartbeatMillis;

using WatchHub = ::gpuadvisor::WatchHub;

// The WatchCatalog source over `store`, which must outlive the hub.
WatchHub::Source CatalogWatchSource(CatalogStore* store);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_WATCH_HUB_H_
