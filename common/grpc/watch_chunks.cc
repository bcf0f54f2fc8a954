#include "common/grpc/watch_chunks.h"

#include <algorithm>
#include <limits>

#include "common/io/fingerprint.h"
#include "google/protobuf/io/coded_stream.h"

namespace gpuadvisor {
namespace {

using ::google::protobuf::io::CodedOutputStream;

constexpr int kChunkDataField = 4;  // SnapshotChunk.data

void AppendVarint(uint64_t value, std::string* out) {
  uint8_t buffer[10];
  const uint8_t* end = CodedOutputStream::WriteVarint64ToArray(value, buffer);
  out->append(reinterpret_cast<const char*>(buffer), end - buffer);
}

// The tag and length of a length-delimited field of `length` bytes.
std::string FieldHeader(int field, uint64_t length) {
  std::string header;
  AppendVarint(static_cast<uint64_t>(field) << 3 | 2, &header);
  AppendVarint(length, &header);
  return header;
}

// A message made of a small header we own and a slice of the shared body.
grpc::ByteBuffer Message(std::string header, const grpc::Slice& body) {
  grpc::Slice slices[2] = {grpc::Slice(header), body};
  return grpc::ByteBuffer(slices, body.size() > 0 ? 2 : 1);
}

}  // namespace

std::shared_ptr<const WatchHub::Encoded> EncodeChunked(std::string serialized, std::string version,
                                                       const ChunkedResponse& response,
                                                       const ChunkEncoding& encoding) {
  std::shared_ptr<WatchHub::Encoded> encoded = WatchHub::NewEncoded();
  encoded->version = std::move(version);
  const int64_t total = static_cast<int64_t>(serialized.size());
  const std::string checksum = FingerprintHex(serialized);
  const grpc::Slice body = WatchHub::OwningSlice(std::move(serialized));

  // The whole value, for followers that did not ask for chunks: the bytes of
  // the response with only the value set are its tag, its length, then the body.
  std::string whole_header = FieldHeader(response.value_field, static_cast<uint64_t>(total));
  if (static_cast<int64_t>(whole_header.size()) + total <= encoding.max_message_bytes) {
    encoded->bytes = Message(std::move(whole_header), body);
  } else {
    encoded->whole_refused =
        grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                     absl::StrCat(response.what, " is ", total, " bytes, over the ",
                                  encoding.max_message_bytes, "-byte message limit; set ",
                                  response.accept_field, " to receive it in chunks"));
  }

  // The chunks: response{chunk: SnapshotChunk{version, total_bytes, offset,
  // fnv1a64, data}}, the data a sub-slice of the body.
  const int64_t step = std::max<int64_t>(1, encoding.chunk_bytes);
  int64_t offset = 0;
  do {
    const int64_t n = std::min(step, total - offset);
    catalog::v1::SnapshotChunk meta;
    meta.set_version(encoded->version);
    meta.set_total_bytes(total);
    meta.set_offset(offset);
    meta.set_fnv1a64(checksum);
    std::string chunk = meta.SerializeAsString();
    chunk += FieldHeader(kChunkDataField, static_cast<uint64_t>(n));
    std::string header = FieldHeader(response.chunk_field, chunk.size() + static_cast<uint64_t>(n));
    header += chunk;
    encoded->chunks.push_back(Message(std::move(header), body.sub(offset, offset + n)));
    offset += n;
  } while (offset < total);
  return encoded;
}

absl::Status ChunkAssembler::Add(const catalog::v1::SnapshotChunk& chunk) {
  const int64_t received = static_cast<int64_t>(data_.size());
  std::string problem;
  if (chunk.offset() == 0 && in_progress()) {
    problem = absl::StrCat("a new snapshot (", chunk.version(), ") began after ", received, " of ",
                           total_, " bytes of ", version_);
  } else if (chunk.offset() == 0) {
    if (chunk.version().empty()) return absl::DataLossError("snapshot chunk: no version");
    if (chunk.total_bytes() < 0 || chunk.total_bytes() > std::numeric_limits<int32_t>::max()) {
      return absl::DataLossError(absl::StrCat("snapshot chunk: ", chunk.version(), " is ",
                                              chunk.total_bytes(),
                                              " bytes, more than a protobuf message can hold"));
    }
    version_ = chunk.version();
    total_ = chunk.total_bytes();
    checksum_ = chunk.fnv1a64();
    data_.clear();
    data_.reserve(static_cast<size_t>(total_));
  } else if (!in_progress()) {
    problem = absl::StrCat("a chunk of ", chunk.version(), " at offset ", chunk.offset(),
                           " without the start of its snapshot");
  } else if (chunk.version() != version_ || chunk.total_bytes() != total_ ||
             chunk.fnv1a64() != checksum_) {
    problem = absl::StrCat("a chunk of ", chunk.version(), " (", chunk.total_bytes(),
                           " bytes) inside ", version_, " (", total_, " bytes)");
  } else if (chunk.offset() != received) {
    problem = absl::StrCat("a chunk at offset ", chunk.offset(), " of ", version_, " after ",
                           received, " bytes (a chunk lost or repeated)");
  }
  if (problem.empty() && static_cast<int64_t>(chunk.data().size()) > total_ - received) {
    problem = absl::StrCat("chunks of ", version_, " run past its ", total_, " bytes");
  }
  if (!problem.empty()) {
    Reset();
    return absl::DataLossError(absl::StrCat("snapshot chunks: ", problem));
  }
  data_.append(chunk.data());
  return absl::OkStatus();
}

absl::StatusOr<std::string> ChunkAssembler::TakeBytes(std::string* checksum_out) {
  if (!complete()) {
    const std::string status =
        absl::StrCat("snapshot chunks: ", received(), " of ", total_, " bytes of ",
                     version_.empty() ? "(none)" : version_, " received");
    Reset();
    return absl::DataLossError(status);
  }
  const std::string version = std::move(version_);
  std::string data = std::move(data_);
  const std::string checksum = std::move(checksum_);
  Reset();
  if (FingerprintHex(data) != checksum) {
    return absl::DataLossError(absl::StrCat("snapshot chunks: ", version, ": checksum mismatch"));
  }
  if (checksum_out != nullptr) *checksum_out = checksum;
  return data;
}

void ChunkAssembler::Reset() {
  version_.clear();
  total_ = 0;
  checksum_.clear();
  std::string().swap(data_);  // release the buffer, not just its contents
}

}  // namespace gpuadvisor
