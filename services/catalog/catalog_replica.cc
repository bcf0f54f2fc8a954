#include "services/catalog/catalog_replica.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
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

std::string CatalogReplica::CacheHeader(const v1::CatalogSnapshot& snapshot, absl::string_view body,
                                        absl::string_view fnv1a64) {
  return absl::StrCat(kCacheMagic, " 1 offers=", snapshot.offers_size(),
                      " gpus=", snapshot.gpus_size(), " bytes=", body.size(),
                      " fnv1a64=", fnv1a64.empty() ? FingerprintHex(body) : std::string(fnv1a64),
                      " version=", snapshot.version(), "\n");
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

WatchFollowerOptions CatalogReplica::FollowerOptions(const Options& options) {
  return {.name = "catalog replica",
          .retry_interval = options.retry_interval,
          .max_retry_interval = options.max_retry_interval,
          .heartbeat_interval = options.heartbeat_interval,
          .missed_heartbeats = options.missed_heartbeats,
          .on_rejected = options.on_rejected,
          .clock = options.clock};
}

CatalogReplica::Watch::Protocol CatalogReplica::Protocol() {
  Watch::Protocol protocol;
  protocol.peer = "the catalog";
  protocol.value_name = "snapshot";
  protocol.version_header = kWatchVersionHeader;
  protocol.heartbeat_header = kWatchHeartbeatHeader;
  protocol.open = [this](grpc::ClientContext* context, const v1::WatchCatalogRequest& request) {
    // On the follower thread, before it reads anything: all it does from now
    // on is background work.
    LowerThisThreadPriority(options_.follow_nice);
    return stub_->WatchCatalog(context, request);
  };
  protocol.value_of = [](v1::WatchCatalogResponse* response) -> v1::CatalogSnapshot* {
    return response->has_snapshot() ? response->mutable_snapshot() : nullptr;
  };
  protocol.apply = [this](v1::CatalogSnapshot snapshot, std::string serialized,
                          const std::string& fnv1a64) {
    return Apply(std::move(snapshot), /*from_cache=*/false, std::move(serialized), fnv1a64);
  };
  protocol.serving_version = [this] { return ServingVersion(); };
  return protocol;
}

CatalogReplica::CatalogReplica(std::unique_ptr<v1::CatalogService::StubInterface> stub,
                               Options options)
    : stub_(std::move(stub)),
      options_(std::move(options)),
      watch_(Protocol(), FollowerOptions(options_)) {}

CatalogReplica::~CatalogReplica() { Stop(); }

void CatalogReplica::Start() {
  LoadCache();
  watch_.Start();
}

void CatalogReplica::Stop() { watch_.Stop(); }

void CatalogReplica::LoadCache() {
  if (options_.cache_path.empty()) return;
  absl::StatusOr<std::string> bytes = ReadFile(options_.cache_path);
  if (!bytes.ok()) return;
  absl::StatusOr<v1::CatalogSnapshot> cached = DecodeCache(*bytes);
  if (!cached.ok()) {
    std::fprintf(stderr, "catalog replica: ignoring cache %s: %s\n", options_.cache_path.c_str(),
                 cached.status().ToString().c_str());
    if (options_.on_rejected) options_.on_rejected(cached.status());
    return;
  }
  const std::string version = cached->version();
  const absl::Time loaded_at = absl::FromUnixSeconds(cached->loaded_at_unix_seconds());
  if (Apply(*std::move(cached), /*from_cache=*/true).ok()) watch_.Took(version, loaded_at);
}

std::shared_ptr<const Catalog> CatalogReplica::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

double CatalogReplica::AgeSeconds() const { return watch_.AgeSeconds(); }

bool CatalogReplica::WaitUntilLoaded(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(
          +[](const std::shared_ptr<const Catalog>* c) { return *c != nullptr; }, &current_),
      timeout);
}

std::string CatalogReplica::ServingVersion() const {
  absl::MutexLock lock(&mu_);
  return current_ != nullptr ? current_->snapshot().version() : std::string();
}

absl::Status CatalogReplica::Apply(v1::CatalogSnapshot snapshot, bool from_cache,
                                   std::string serialized, const std::string& fnv1a64) {
  const absl::Time start = absl::Now();
  std::string header;
  if (!from_cache && !options_.cache_path.empty()) {
    // The chunks' checksum is the body's (checked on arrival): not hashed again.
    const bool arrived_whole = serialized.empty();
    if (arrived_whole) snapshot.SerializeToString(&serialized);
    header = CacheHeader(snapshot, serialized, arrived_whole ? "" : fnv1a64);
  } else {
    std::string().swap(serialized);
  }
  absl::StatusOr<std::shared_ptr<const Catalog>> catalog = Catalog::Create(std::move(snapshot));
  if (!catalog.ok()) {
    // The catalog service validated it; a failure here means skew between
    // versions. Keep serving what we have.
    return absl::Status(catalog.status().code(),
                        absl::StrCat("rejected snapshot: ", catalog.status().message()));
  }
  if (options_.prepare) options_.prepare(*catalog);
  {
    absl::MutexLock lock(&mu_);
    current_ = *catalog;
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
  return absl::OkStatus();
}

}  // namespace gpuadvisor::catalog
