#include "services/catalog/watch_hub.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace gpuadvisor::catalog {

std::shared_ptr<const WatchHub::Encoded> EncodeSnapshot(const v1::CatalogSnapshot& snapshot,
                                                        const SnapshotEncoding& encoding,
                                                        std::string serialized) {
  // Serialized once for every watcher and both forms.
  if (serialized.empty()) snapshot.SerializeToString(&serialized);
  ChunkedResponse response;
  response.value_field = v1::WatchCatalogResponse::kSnapshotFieldNumber;
  response.chunk_field = v1::WatchCatalogResponse::kChunkFieldNumber;
  response.what = absl::StrCat("catalog snapshot ", snapshot.version(), " (",
                               snapshot.offers_size(), " offers)");
  response.accept_field = "WatchCatalogRequest.accept_chunks";
  return EncodeChunked(std::move(serialized), snapshot.version(), response, encoding);
}

WatchHub::Source CatalogWatchSource(CatalogStore* store, SnapshotEncoding encoding) {
  WatchHub::Source source;
  source.wait_for_change = [store, encoding](
                               const std::string& known,
                               absl::Time deadline) -> std::shared_ptr<const WatchHub::Encoded> {
    std::shared_ptr<const Catalog> catalog = store->WaitForChange(known, deadline);
    if (catalog == nullptr || catalog->snapshot().version() == known) return nullptr;
    // Serialized once for every watcher and both forms, by the reload that
    // named the version when it can; no copy of the snapshot message is made.
    return EncodeSnapshot(catalog->snapshot(), encoding, store->TakeSerialized(*catalog));
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
  source.parse_request = [](const grpc::ByteBuffer& bytes, std::string* known,
                            int64_t* heartbeat_millis) {
    v1::WatchCatalogRequest request;
    grpc::ProtoBufferReader reader(const_cast<grpc::ByteBuffer*>(&bytes));
    if (!request.ParseFromZeroCopyStream(&reader)) return false;
    *known = request.known_version();
    *heartbeat_millis = request.heartbeat_interval_millis();
    return true;
  };
  source.accepts_chunks = [](const grpc::ByteBuffer& bytes) {
    v1::WatchCatalogRequest request;
    grpc::ProtoBufferReader reader(const_cast<grpc::ByteBuffer*>(&bytes));
    return request.ParseFromZeroCopyStream(&reader) && request.accept_chunks();
  };
  source.version_header = kWatchVersionHeader;
  source.heartbeat_header = kWatchHeartbeatHeader;
  return source;
}

}  // namespace gpuadvisor::catalog
