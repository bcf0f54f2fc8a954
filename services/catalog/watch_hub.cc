#include "services/catalog/watch_hub.h"

#include <utility>

#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace gpuadvisor::catalog {

WatchHub::Source CatalogWatchSource(CatalogStore* store) {
  WatchHub::Source source;
  source.wait_for_change = [store](const std::string& known,
                                   absl::Time deadline) -> std::shared_ptr<const WatchHub::Encoded> {
    std::shared_ptr<const Catalog> catalog = store->WaitForChange(known, deadline);
    if (catalog == nullptr || catalog->snapshot().version() == known) return nullptr;
    v1::WatchCatalogResponse update;
    // The one copy of the snapshot made for all watchers, released as soon
    // as it is serialized.
    *update.mutable_snapshot() = catalog->snapshot();
    return WatchHub::Encode(update, catalog->snapshot().version());
  };
  source.current_version = [store] {
    std::shared_ptr<const Catalog> catalog = store->Current();
    return catalog != nullptr ? catalog->snapshot().version() : std::string();
  };
  source.heartbeat = [](absl::Time now) {
    v1::WatchCatalogResponse heartbeat;
    heartbeat.set_heartbeat_unix_millis(absl::ToUnixMillis(now));
    return heartbeat.SerializeAsString();
  };
  source.parse_request = [](const grpc::ByteBuffer& bytes, std::string* known, int64_t* heartbeat_millis) {
    v1::WatchCatalogRequest request;
    grpc::ProtoBufferReader reader(const_cast<grpc::ByteBuffer*>(&bytes));
    if (!request.ParseFromZeroCopyStream(&reader)) return false;
    *known = request.known_version();
    *heartbeat_millis = request.heartbeat_interval_millis();
    return true;
  };
  source.version_header = kWatchVersionHeader;
  source.heartbeat_header = kWatchHeartbeatHeader;
  return source;
}

}  // namespace gpuadvisor::catalog
