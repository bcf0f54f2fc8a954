#include "services/catalog/watch_hub.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "services/catalog/fingerprint.h"

namespace gpuadvisor::catalog {
namespace {

using ::google::protobuf::io::CodedOutputStream;

// Wire-format tags (field number << 3 | length-delimited).
constexpr uint8_t kResponseSnapshotTag = (1 << 3) | 2;  // WatchCatalogResponse.snapshot
constexpr uint8_t kResponseChunkTag = (3 << 3) | 2;     // WatchCatalogResponse.chunk
constexpr uint8_t kChunkDataTag = (4 << 3) | 2;         // SnapshotChunk.data

void AppendVarint(uint64_t value, std::string* out) {
  uint8_t buffer[10];
  const uint8_t* end = CodedOutputStream::WriteVarint64ToArray(value, buffer);
  out->append(reinterpret_cast<const char*>(buffer), end - buffer);
}

// A message made of a small header we own and a slice of the shared body.
grpc::ByteBuffer Message(std::string header, const grpc::Slice& body) {
  grpc::Slice slices[2] = {grpc::Slice(header), body};
  return grpc::ByteBuffer(slices, body.size() > 0 ? 2 : 1);
}

}  // namespace

std::shared_ptr<const WatchHub::Encoded> EncodeSnapshot(const v1::CatalogSnapshot& snapshot,
                                                        const SnapshotEncoding& encoding) {
  std::shared_ptr<WatchHub::Encoded> encoded = WatchHub::NewEncoded();
  encoded->version = snapshot.version();
  std::string serialized;
  snapshot.SerializeToString(&serialized);
  const int64_t total = static_cast<int64_t>(serialized.size());
  const std::string checksum = FingerprintHex(serialized);
  const grpc::Slice body = WatchHub::OwningSlice(std::move(serialized));

  // The whole snapshot, for followers that did not ask for chunks: the bytes
  // of WatchCatalogResponse{snapshot} are its tag, its length, then the body.
  std::string whole_header(1, static_cast<char>(kResponseSnapshotTag));
  AppendVarint(static_cast<uint64_t>(total), &whole_header);
  if (static_cast<int64_t>(whole_header.size()) + total <= encoding.max_message_bytes) {
    encoded->bytes = Message(std::move(whole_header), body);
  } else {
    encoded->whole_refused = grpc::Status(
        grpc::StatusCode::FAILED_PRECONDITION,
        absl::StrCat("catalog snapshot ", snapshot.version(), " is ", total, " bytes (",
                     snapshot.offers_size(), " offers), over the ", encoding.max_message_bytes,
                     "-byte message limit; set WatchCatalogRequest.accept_chunks to receive it in chunks"));
  }

  // The chunks: WatchCatalogResponse{chunk: SnapshotChunk{version, total_bytes,
  // offset, fnv1a64, data}}, the data a sub-slice of the body.
  const int64_t step = std::max<int64_t>(1, encoding.chunk_bytes);
  int64_t offset = 0;
  do {
    const int64_t n = std::min(step, total - offset);
    v1::SnapshotChunk meta;
    meta.set_version(snapshot.version());
    meta.set_total_bytes(total);
    meta.set_offset(offset);
    meta.set_fnv1a64(checksum);
    std::string chunk = meta.SerializeAsString();
    chunk.push_back(static_cast<char>(kChunkDataTag));
    AppendVarint(static_cast<uint64_t>(n), &chunk);
    std::string header(1, static_cast<char>(kResponseChunkTag));
    AppendVarint(chunk.size() + static_cast<uint64_t>(n), &header);
    header += chunk;
    encoded->chunks.push_back(Message(std::move(header), body.sub(offset, offset + n)));
    offset += n;
  } while (offset < total);
  return encoded;
}

WatchHub::Source CatalogWatchSource(CatalogStore* store, SnapshotEncoding encoding) {
  WatchHub::Source source;
  source.wait_for_change = [store, encoding](const std::string& known,
                                             absl::Time deadline) -> std::shared_ptr<const WatchHub::Encoded> {
    std::shared_ptr<const Catalog> catalog = store->WaitForChange(known, deadline);
    if (catalog == nullptr || catalog->snapshot().version() == known) return nullptr;
    // Serialized once for every watcher and both forms; no copy of the
    // snapshot message is made.
    return EncodeSnapshot(catalog->snapshot(), encoding);
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
