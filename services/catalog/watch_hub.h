#ifndef GPUADVISOR_SERVICES_CATALOG_WATCH_HUB_H_
#define GPUADVISOR_SERVICES_CATALOG_WATCH_HUB_H_

// WatchCatalog on the shared watch design (common/grpc/watch_hub.h): one
// encoding per catalog version shared by every watcher, no thread per
// watcher, slow watchers dropped with RESOURCE_EXHAUSTED, a watcher cap and
// heartbeats (WatchCatalogRequest.heartbeat_interval_millis; the version at
// open in kWatchVersionHeader, the accepted interval in
// kWatchHeartbeatHeader).
//
// Chunks: each version is serialized once (the binary CatalogSnapshot). A
// follower that sets WatchCatalogRequest.accept_chunks gets it as
// SnapshotChunk messages of at most `chunk_bytes` of data each; one that does
// not gets one WatchCatalogResponse.snapshot while that fits
// `max_message_bytes`, else FAILED_PRECONDITION naming the size. Both forms
// are slices of the same serialized bytes: the snapshot is held once
// whatever the number of watchers or forms.

#include <cstdint>
#include <memory>
#include <string>

#include "common/grpc/channel.h"
#include "common/grpc/watch_chunks.h"
#include "common/grpc/watch_hub.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/catalog_store.h"

namespace gpuadvisor::catalog {

inline constexpr int kMinHeartbeatMillis = kMinWatchHeartbeatMillis;
inline constexpr int kMaxHeartbeatMillis = kMaxWatchHeartbeatMillis;
// Data per SnapshotChunk by default (common/grpc/watch_chunks.h).
inline constexpr int64_t kDefaultWatchChunkBytes = ::gpuadvisor::kDefaultWatchChunkBytes;

using WatchHub = ::gpuadvisor::WatchHub;

// Data per chunk and the largest whole message (the shared chunk design).
using SnapshotEncoding = ::gpuadvisor::ChunkEncoding;

// The watch encoding of `snapshot`: the whole WatchCatalogResponse (or
// whole_refused when it is larger than max_message_bytes) and its chunks.
// `serialized`: the snapshot's bytes when the caller has them already (else
// it is serialized here).
std::shared_ptr<const WatchHub::Encoded> EncodeSnapshot(const v1::CatalogSnapshot& snapshot,
                                                        const SnapshotEncoding& encoding,
                                                        std::string serialized = std::string());

// The WatchCatalog source over `store`, which must outlive the hub.
WatchHub::Source CatalogWatchSource(CatalogStore* store,
                                    SnapshotEncoding encoding = SnapshotEncoding());

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_WATCH_HUB_H_
