#include "services/catalog/catalog_replica.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/io/durable_file.h"
#include "common/io/text_proto.h"
#include "services/catalog/fingerprint.h"

namespace gpuadvisor::catalog {
namespace {

constexpr char kCacheMagic[] = "gpuadvisor-catalog-cache";

}  // namespace

std::string CatalogReplica::CacheHeader(const v1::CatalogSnapshot& snapshot,
                                        absl::string_view body) {
  return absl::StrCat(kCacheMagic, " 1 offers=", snapshot.offers_size(),
                      " gpus=", snapshot.gpus_size(), " bytes=", body.size(),
                      " fnv1a64=", FingerprintHex(body), " version=", snapshot.version(), "\n");
}

std::string CatalogReplica::EncodeCache(const v1::CatalogSnapshot& snapshot) {
  std::string body;
  snapshot.SerializeToString(&body);
  return absl::StrCat(CacheHeader(snapshot, body), body);
}

absl::StatusOr<v1::CatalogSnapshot> CatalogReplica::DecodeCache(absl::string_view bytes) {
  if (bytes.empty()) return absl::DataLossError("cache: empty file");
  const size_t newline = bytes.find('\n');
  if (newline == std::string::npos || newline > 4096)
    return absl::DataLossError("cache: no header line");
  const std::vector<std::string> fields = absl::StrSplit(bytes.substr(0, newline), ' ');
  if (fields.size() < 6 || fields[0] != kCacheMagic || fields[1] != "1") {
    return absl::DataLossError("cache: not a gpuadvisor catalog cache (version 1)");
  }
  int64_t offers = -1, gpus = -1, size = -1;
  std::string checksum;
  for (size_t i = 2; i < fields.size(); ++i) {
    std::pair<std::string, std::string> kv = absl::StrSplit(fields[i], absl::MaxSplits('=', 1));
    if (kv.first == "offers" && !absl::SimpleAtoi(kv.second, &offers)) offers = -1;
    if (kv.first == "gpus" && !absl::SimpleAtoi(kv.second, &gpus)) gpus = -1;
    if (kv.first == "bytes" && !absl::SimpleAtoi(kv.second, &size)) size = -1;
    if (kv.first == "fnv1a64") checksum = kv.second;
  }
  if (offers < 0 || gpus < 0 || size < 0 || checksum.empty()) {
    return absl::DataLossError("cache: header lacks offers, gpus, bytes or fnv1a64");
  }
  const absl::string_view body = bytes.substr(newline + 1);
  if (static_cast<int64_t>(body.size()) != size) {
    return absl::DataLossError(absl::StrCat("cache: ", body.size(),
                                            " bytes after the header, expected ", size,
                                            " (truncated or appended)"));
  }
  if (FingerprintHex(body) != checksum) return absl::DataLossError("cache: checksum mismatch");
  v1::CatalogSnapshot snapshot;
  if (!snapshot.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    return absl::DataLossError("cache: unparsable snapshot");
  }
  if (snapshot.offers_size() != offers || snapshot.gpus_size() != gpus) {
    return absl::DataLossError(absl::StrCat("cache: holds ", snapshot.offers_size(), " offers and ",
                                            snapshot.gpus_size(), " GPUs, header says ", offers,
                                            " and ", gpus));
  }
  if (offers == 0) return absl::DataLossError("cache: no offers");
  return snapshot;
}

CatalogReplica::CatalogReplica(std::unique_ptr<v1::CatalogService::StubInterface> stub,
                               Options options)
    : stub_(std::move(stub)), options_(std::move(options)) {}

CatalogReplica::~CatalogReplica() { Stop(); }

void CatalogReplica::Start() {
  if (!options_.cache_path.empty()) {
    absl::StatusOr<std::string> bytes = ReadFile(options_.cache_path);
    if (bytes.ok()) {
      absl::StatusOr<v1::CatalogSnapshot> cached = DecodeCache(*bytes);
      if (cached.ok()) {
        Apply(*std::move(cached), /*from_cache=*/true);
      } else {
        std::fprintf(stderr, "catalog replica: ignoring cache %s: %s\n",
                     options_.cache_path.c_str(), cached.status().ToString().c_str());
        if (options_.on_rejected) options_.on_rejected(cached.status());
      }
    }
  }
  follower_ = std::thread([this] { Follow(); });
  if (options_.heartbeat_interval > absl::ZeroDuration())
    watchdog_ = std::thread([this] { Watchdog(); });
}

void CatalogReplica::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    if (active_call_ != nullptr) active_call_->TryCancel();
  }
  if (follower_.joinable()) follower_.join();
  if (watchdog_.joinable()) watchdog_.join();
}

std::shared_ptr<const Catalog> CatalogReplica::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

double CatalogReplica::AgeSeconds() const {
  absl::MutexLock lock(&mu_);
  if (current_ == nullptr) return -1;
  const absl::Time now = absl::Now();
  if (connected_) {
    if (call_heartbeat_ <= absl::ZeroDuration())
      return 0;  // no heartbeats: an open stream is current
    const absl::Duration silent = now - last_heard_;
    return silent <= 2 * call_heartbeat_ ? 0 : absl::ToDoubleSeconds(silent);
  }
  return absl::ToDoubleSeconds(now - synced_at_);
}

bool CatalogReplica::WaitUntilLoaded(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(
          +[](const std::shared_ptr<const Catalog>* c) { return *c != nullptr; }, &current_),
      timeout);
}

void CatalogReplica::Apply(v1::CatalogSnapshot snapshot, bool from_cache, std::string serialized) {
  const absl::Time start = absl::Now();
  std::string header;
  if (!from_cache && !options_.cache_path.empty()) {
    if (serialized.empty()) snapshot.SerializeToString(&serialized);
    header = CacheHeader(snapshot, serialized);
  } else {
    std::string().swap(serialized);
  }
  const absl::Time loaded_at = absl::FromUnixSeconds(snapshot.loaded_at_unix_seconds());
  absl::StatusOr<std::shared_ptr<const Catalog>> catalog = Catalog::Create(std::move(snapshot));
  if (!catalog.ok()) {
    // The catalog service validated it; a failure here means skew between
    // versions. Keep serving what we have.
    std::fprintf(stderr, "catalog replica: rejected snapshot: %s\n",
                 catalog.status().ToString().c_str());
    if (options_.on_rejected) options_.on_rejected(catalog.status());
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    current_ = *catalog;
    synced_at_ = from_cache ? loaded_at : absl::Now();
  }
  if (options_.on_snapshot) options_.on_snapshot(*catalog);
  std::fprintf(
      stderr, "catalog replica: serving %s (%d offers%s), validated and swapped in in %.1f s\n",
      (*catalog)->snapshot().version().c_str(), (*catalog)->snapshot().offers_size(),
      from_cache ? ", from the cache file" : "", absl::ToDoubleSeconds(absl::Now() - start));
  if (!header.empty()) {
    // Header and body written as they are: no concatenated copy of a
    // snapshot that may be hundreds of MB.
    if (absl::Status s = WriteFileDurably(options_.cache_path, {header, serialized}); !s.ok()) {
      std::fprintf(stderr, "catalog replica: cannot write cache: %s\n", s.ToString().c_str());
      if (options_.on_cache_write_failed) options_.on_cache_write_failed(s);
    }
  }
}

void CatalogReplica::SetApplying(bool applying) {
  absl::MutexLock lock(&mu_);
  applying_ = applying;
  last_heard_ = absl::Now();  // the silence the watchdog measures starts again
}

void CatalogReplica::Reject(const std::string& reason) {
  std::fprintf(stderr, "catalog replica: %s\n", reason.c_str());
  if (options_.on_rejected) options_.on_rejected(absl::DataLossError(reason));
}

std::string CatalogReplica::ServingVersion() const {
  absl::MutexLock lock(&mu_);
  return current_ != nullptr ? absl::StrCat("version ", current_->snapshot().version())
                             : "no snapshot";
}

void CatalogReplica::Watchdog() {
  absl::MutexLock lock(&mu_);
  const absl::Duration tick = std::min(absl::Milliseconds(100), options_.heartbeat_interval);
  while (!stopping_) {
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), tick);
    if (stopping_ || active_call_ == nullptr || applying_) continue;
    // Before the server accepted the call, allow the requested interval; after,
    // the interval it accepted. A server that sends no heartbeats is not timed.
    const absl::Duration interval = connected_ ? call_heartbeat_ : options_.heartbeat_interval;
    if (interval <= absl::ZeroDuration()) continue;
    const absl::Duration silent = absl::Now() - last_heard_;
    if (silent > options_.missed_heartbeats * interval + absl::Seconds(connected_ ? 0 : 2) &&
        cancelled_call_ != active_call_) {  // once per call
      std::fprintf(stderr, "catalog replica: nothing heard from the catalog for %s; reconnecting\n",
                   absl::FormatDuration(silent).c_str());
      active_call_->TryCancel();
      cancelled_call_ = active_call_;
    }
  }
}

void CatalogReplica::Follow() {
  while (true) {
    grpc::ClientContext context;
    v1::WatchCatalogRequest request;
    if (options_.heartbeat_interval > absl::ZeroDuration()) {
      request.set_heartbeat_interval_millis(
          static_cast<int32_t>(absl::ToInt64Milliseconds(options_.heartbeat_interval)));
    }
    absl::Time previous_heard;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      active_call_ = &context;
      cancelled_call_ = nullptr;
      previous_heard = last_heard_;
      last_heard_ = absl::Now();
      call_heartbeat_ = absl::ZeroDuration();
      if (current_ != nullptr) request.set_known_version(current_->snapshot().version());
    }
    request.set_accept_chunks(true);
    std::unique_ptr<grpc::ClientReaderInterface<v1::WatchCatalogResponse>> reader =
        stub_->WatchCatalog(&context, request);
    // The catalog service accepts a watch by sending initial metadata that
    // names its current version; a failed call returns without it.
    reader->WaitForInitialMetadata();
    const auto& metadata = context.GetServerInitialMetadata();
    const bool accepted = metadata.count(kWatchVersionHeader) > 0;
    absl::Duration heartbeat = absl::ZeroDuration();
    if (auto it = metadata.find(kWatchHeartbeatHeader); it != metadata.end()) {
      int64_t millis = 0;
      if (absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()), &millis) &&
          millis > 0) {
        heartbeat = absl::Milliseconds(millis);
      }
    }
    {
      absl::MutexLock lock(&mu_);
      connected_ = accepted;
      call_heartbeat_ = heartbeat;
      if (accepted) {
        last_heard_ = absl::Now();
      } else {
        last_heard_ = previous_heard;
      }
    }
    v1::WatchCatalogResponse update;
    SnapshotAssembler assembler;
    while (accepted && reader->Read(&update)) {
      {
        absl::MutexLock lock(&mu_);
        last_heard_ = absl::Now();
      }
      absl::StatusOr<v1::CatalogSnapshot> snapshot = absl::UnavailableError("no snapshot");
      std::string serialized;
      if (update.has_chunk()) {
        if (absl::Status added = assembler.Add(std::move(*update.mutable_chunk())); !added.ok()) {
          snapshot = added;
        } else if (assembler.complete()) {
          // Checking and parsing a large snapshot takes seconds without
          // reading the stream: not silence for the watchdog.
          SetApplying(true);
          snapshot = assembler.Take(&serialized);
        }
      } else if (update.has_snapshot()) {
        assembler.Reset();
        snapshot = std::move(*update.mutable_snapshot());
      }
      update.Clear();
      if (absl::IsDataLoss(snapshot.status())) {
        // Out of order, corrupt or mislabelled chunks: drop them, keep
        // serving, and reconnect so the catalog sends its snapshot again.
        SetApplying(false);
        Reject(absl::StrCat(snapshot.status().message(), "; keeping ", ServingVersion()));
        context.TryCancel();
        break;
      }
      if (!snapshot.ok()) continue;  // a heartbeat, or a chunk of a snapshot still arriving
      SetApplying(true);
      Apply(*std::move(snapshot), /*from_cache=*/false, std::move(serialized));
      SetApplying(false);
    }
    if (assembler.in_progress()) {
      Reject(absl::StrCat("watch stream ended after ", assembler.received(), " of ",
                          assembler.total(), " bytes of snapshot ", assembler.version(),
                          "; keeping ", ServingVersion()));
      assembler.Reset();
    }
    reader->Finish();
    absl::MutexLock lock(&mu_);
    if (connected_) {
      // Current until the last message heard (with heartbeats), else until
      // the stream ended.
      synced_at_ = call_heartbeat_ > absl::ZeroDuration() ? last_heard_ : absl::Now();
    }
    connected_ = false;
    call_heartbeat_ = absl::ZeroDuration();
    active_call_ = nullptr;
    if (stopping_) return;
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.retry_interval);
    if (stopping_) return;
  }
}

}  // namespace gpuadvisor::catalog
