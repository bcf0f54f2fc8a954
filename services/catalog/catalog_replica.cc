#include "services/catalog/catalog_replica.h"

#include <cstdio>
#include <utility>

#include "absl/time/clock.h"
#include "common/io/text_proto.h"

namespace gpuadvisor::catalog {

CatalogReplica::CatalogReplica(std::unique_ptr<v1::CatalogService::StubInterface> stub,
                               Options options)
    : stub_(std::move(stub)), options_(std::move(options)) {}

CatalogReplica::~CatalogReplica() { Stop(); }

void CatalogReplica::Start() {
  if (!options_.cache_path.empty()) {
    absl::StatusOr<std::string> bytes = ReadFile(options_.cache_path);
    v1::CatalogSnapshot cached;
    if (bytes.ok() && cached.ParseFromString(*bytes)) {
      Apply(std::move(cached), /*from_cache=*/true);
    } else if (bytes.ok()) {
      std::fprintf(stderr, "catalog replica: ignoring unreadable cache %s\n", options_.cache_path.c_str());
    }
  }
  follower_ = std::thread([this] { Follow(); });
}

void CatalogReplica::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    if (active_call_ != nullptr) active_call_->TryCancel();
  }
  if (follower_.joinable()) follower_.join();
}

std::shared_ptr<const Catalog> CatalogReplica::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

double CatalogReplica::AgeSeconds() const {
  absl::MutexLock lock(&mu_);
  if (current_ == nullptr) return -1;
  if (connected_) return 0;
  return absl::ToDoubleSeconds(absl::Now() - synced_at_);
}

bool CatalogReplica::WaitUntilLoaded(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(
                                  +[](const std::shared_ptr<const Catalog>* c) { return *c != nullptr; },
                                  &current_),
                              timeout);
}

void CatalogReplica::Apply(v1::CatalogSnapshot snapshot, bool from_cache) {
  std::string bytes;
  if (!from_cache && !options_.cache_path.empty()) snapshot.SerializeToString(&bytes);
  const absl::Time loaded_at = absl::FromUnixSeconds(snapshot.loaded_at_unix_seconds());
  absl::StatusOr<std::shared_ptr<const Catalog>> catalog =
      Catalog::Create(std::move(snapshot));
  if (!catalog.ok()) {
    // The catalog service validated it; a failure here means skew between
    // versions. Keep serving what we have.
    std::fprintf(stderr, "catalog replica: rejected snapshot: %s\n", catalog.status().ToString().c_str());
    if (options_.on_rejected) options_.on_rejected(catalog.status());
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    current_ = *catalog;
    synced_at_ = from_cache ? loaded_at : absl::Now();
  }
  if (options_.on_snapshot) options_.on_snapshot(*catalog);
  if (!bytes.empty()) {
    if (absl::Status s = WriteFileAtomically(options_.cache_path, bytes); !s.ok()) {
      std::fprintf(stderr, "catalog replica: cannot write cache: %s\n", s.ToString().c_str());
    }
  }
}

void CatalogReplica::Follow() {
  while (true) {
    grpc::ClientContext context;
    v1::WatchCatalogRequest request;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      active_call_ = &context;
      if (current_ != nullptr) request.set_known_version(current_->snapshot().version());
    }
    std::unique_ptr<grpc::ClientReaderInterface<v1::WatchCatalogResponse>> reader =
        stub_->WatchCatalog(&context, request);
    // The catalog service accepts a watch by sending initial metadata that
    // names its current version; a failed call returns without it.
    reader->WaitForInitialMetadata();
    const bool accepted = context.GetServerInitialMetadata().count(kWatchVersionHeader) > 0;
    {
      absl::MutexLock lock(&mu_);
      connected_ = accepted;
    }
    v1::WatchCatalogResponse update;
    while (accepted && reader->Read(&update)) {
      Apply(std::move(*update.mutable_snapshot()), /*from_cache=*/false);
    }
    reader->Finish();
    absl::MutexLock lock(&mu_);
    if (connected_) synced_at_ = absl::Now();
    connected_ = false;
    active_call_ = nullptr;
    if (stopping_) return;
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.retry_interval);
    if (stopping_) return;
  }
}

}  // namespace gpuadvisor::catalog
