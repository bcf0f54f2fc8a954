#ifndef GPUADVISOR_COMMON_GRPC_WATCH_CHUNKS_H_
#define GPUADVISOR_COMMON_GRPC_WATCH_CHUNKS_H_

// Watched values larger than one gRPC message, sent as chunks: the one design
// WatchCatalog (CatalogSnapshot) and WatchPrices (PriceBook) share.
//
// Writer side (EncodeChunked): the value is serialized once; the whole
// response (for followers that did not ask for chunks, while it fits
// `max_message_bytes`; else Encoded::whole_refused, FAILED_PRECONDITION naming
// the size and the request field to set) and its chunks are slices of those
// same bytes. Each chunk is a response whose `chunk_field` holds a
// gpuadvisor.catalog.v1.SnapshotChunk {version, total_bytes, offset, fnv1a64,
// data}: at most `chunk_bytes` of data, at consecutive offsets, every chunk
// naming the version, the total size and the FNV-1a 64 checksum of the whole.
// The WatchHub writes a version's chunks back to back.
//
// Follower side (SnapshotAssembler<Value>): takes the chunks of one value in
// order and hands out the value only once the last byte arrived and the
// size, the checksum, the parse and the version inside all agree; anything
// else is kDataLoss and the partial value is dropped, so the follower keeps
// what it serves.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/grpc/channel.h"
#include "common/grpc/watch_hub.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"

namespace gpuadvisor {

// Data per chunk by default: well under the 64 MiB backend message limit,
// small enough that a chunk is written in well under the slow-watcher limit,
// large enough that a 1M-offer snapshot is ~100 messages.
inline constexpr int64_t kDefaultWatchChunkBytes = 4 << 20;

struct ChunkEncoding {
  int64_t chunk_bytes = kDefaultWatchChunkBytes;        // data per chunk (at least 1)
  int64_t max_message_bytes = kMaxBackendMessageBytes;  // largest whole message sent
};

// Where a watch response carries the value, and how the refusal of a value
// too large for one message is worded.
struct ChunkedResponse {
  int value_field =
      1;  // the whole value (WatchCatalogResponse.snapshot, WatchPricesResponse.price_book)
  int chunk_field = 3;  // the SnapshotChunk (WatchCatalogResponse.chunk, WatchPricesResponse.chunk)
  std::string what;     // names the value in the refusal: "catalog snapshot v1 (5 offers)"
  std::string
      accept_field;  // the request field that asks for chunks: "WatchCatalogRequest.accept_chunks"
};

// The watch encoding of a value serialized as `serialized` with `version`.
std::shared_ptr<const WatchHub::Encoded> EncodeChunked(std::string serialized, std::string version,
                                                       const ChunkedResponse& response,
                                                       const ChunkEncoding& encoding);

// Reassembles the bytes of one value from its chunks. Not thread-safe (one
// per watch stream).
class ChunkAssembler {
 public:
  // Takes the next chunk. kDataLoss (the partial value is dropped) when it
  // does not continue the value being assembled: another version, total or
  // checksum, an offset other than where the last chunk ended, data past the
  // total, or a total protobuf cannot parse (over 2 GiB).
  absl::Status Add(const catalog::v1::SnapshotChunk& chunk);
  bool in_progress() const { return !version_.empty(); }
  bool complete() const { return in_progress() && static_cast<int64_t>(data_.size()) == total_; }
  // Bytes received of the value in progress, and its size and version.
  int64_t received() const { return static_cast<int64_t>(data_.size()); }
  int64_t total() const { return total_; }
  const std::string& version() const { return version_; }
  // Once complete(): the bytes, after checking the checksum (kDataLoss when
  // incomplete or corrupt). Resets the assembler either way. `checksum` (if
  // not null) receives the checksum they were checked against.
  absl::StatusOr<std::string> TakeBytes(std::string* checksum = nullptr);
  void Reset();

 private:
  std::string version_;  // "" = nothing in progress
  int64_t total_ = 0;
  std::string checksum_;
  std::string data_;
};

// A ChunkAssembler that parses what it reassembled as `Value` (a message
// with a string `version` field: CatalogSnapshot, PriceBook).
template <typename Value>
class SnapshotAssembler : public ChunkAssembler {
 public:
  // Once complete(): the value, after checking the checksum, that it parses
  // and that it carries the chunks' version (kDataLoss otherwise).
  // `serialized` (if not null) receives its bytes and `checksum` (if not
  // null) their FNV-1a 64 checksum, checked: whoever writes the bytes on
  // (a cache file) need not hash them again. Resets the assembler either way.
  absl::StatusOr<Value> Take(std::string* serialized, std::string* checksum = nullptr) {
    const std::string version = this->version();
    absl::StatusOr<std::string> data = TakeBytes(checksum);
    if (!data.ok()) return data.status();
    Value value;
    if (!value.ParseFromString(*data)) {
      return absl::DataLossError(
          absl::StrCat("snapshot chunks: ", version, ": unparsable snapshot"));
    }
    if (value.version() != version) {
      return absl::DataLossError(absl::StrCat("snapshot chunks: announced as ", version,
                                              ", the snapshot is ", value.version()));
    }
    if (serialized != nullptr) *serialized = *std::move(data);
    return value;
  }
};

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_WATCH_CHUNKS_H_
