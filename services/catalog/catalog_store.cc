#include "services/catalog/catalog_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "services/catalog/background_priority.h"

namespace gpuadvisor::catalog {

CatalogStore::CatalogStore(CatalogSources sources, int reload_nice)
    : sources_(std::move(sources)), reload_nice_(reload_nice) {}

CatalogStore::~CatalogStore() { Shutdown(); }

absl::Status CatalogStore::Reload(bool force) {
  absl::MutexLock reload_lock(&reload_mu_);
  auto fail = [this](absl::Status status) {
    absl::MutexLock lock(&mu_);
    last_status_ = status;
    ++failed_reloads_;
    return status;
  };
  // All I/O and validation happen outside mu_: readers keep being served.
  const std::shared_ptr<const Catalog> serving = Current();
  LoadOptions options;
  options.force = force;
  options.current = serving == nullptr ? nullptr : &serving->snapshot();
  options.check_whole = false;   // Catalog::Create below runs the same rules, once
  options.content_hash = false;  // named below from the normalized snapshot
  absl::StatusOr<LoadedCatalog> loaded;
  RunAtLowerPriority(reload_nice_, [&] { loaded = LoadCatalog(sources_, options); });
  if (!loaded.ok()) return fail(loaded.status());
  int64_t sequence = 0;
  {
    absl::MutexLock lock(&mu_);
    last_warnings_ = loaded->warnings;
    sequence = sequence_ + 1;  // reload_mu_ keeps it until the swap below
  }
  // One serialization names the version (the content hash) and is the
  // WatchCatalog encoding (TakeSerialized).
  VersionedBytes bytes;
  absl::StatusOr<std::shared_ptr<const Catalog>> catalog;
  RunAtLowerPriority(reload_nice_, [&] {
    catalog = Catalog::Create(std::move(loaded->snapshot), [&](v1::CatalogSnapshot& snapshot) {
      bytes = SerializeWithVersion(snapshot, sequence);
    });
  });
  if (!catalog.ok()) return fail(WholeCatalogError(sources_, catalog.status()));
  std::shared_ptr<const Catalog> old;
  {
    absl::MutexLock lock(&mu_);
    last_status_ = absl::OkStatus();
    if (current_ != nullptr && bytes.content_hash == current_hash_) {
      return absl::OkStatus();  // same content: keep the version, wake nobody
    }
    old = std::move(current_);
    current_ = *std::move(catalog);
    current_serialized_ = std::make_shared<std::string>(std::move(bytes.serialized));
    current_hash_ = bytes.content_hash;
    sequence_ = sequence;
    changed_.SignalAll();
  }
  // `old` is released here, outside the lock, if nobody else holds it.
  return absl::OkStatus();
}

std::string CatalogStore::TakeSerialized(const Catalog& catalog) {
  std::shared_ptr<std::string> bytes;
  {
    absl::MutexLock lock(&mu_);
    if (current_.get() != &catalog || current_serialized_ == nullptr) return std::string();
    bytes = std::move(current_serialized_);
  }
  return std::move(*bytes);
}

void CatalogStore::Install(std::shared_ptr<const Catalog> catalog) {
  if (catalog == nullptr) return;
  std::shared_ptr<const Catalog> old;  // released outside the lock
  absl::MutexLock lock(&mu_);
  old = std::exchange(current_, std::move(catalog));
  current_serialized_.reset();
  current_hash_.clear();
  last_status_ = absl::OkStatus();
  changed_.SignalAll();
}

bool CatalogStore::WaitForVersion(const std::string& version, absl::Time deadline) const {
  std::shared_ptr<const Catalog> catalog = Current();
  while (catalog == nullptr || catalog->snapshot().version() != version) {
    if (absl::Now() >= deadline) return false;
    catalog = WaitForChange(catalog == nullptr ? "" : catalog->snapshot().version(),
                            std::min(deadline, absl::Now() + absl::Milliseconds(100)));
  }
  return true;
}

std::vector<std::string> CatalogStore::last_warnings() const {
  absl::MutexLock lock(&mu_);
  return last_warnings_;
}

std::shared_ptr<const Catalog> CatalogStore::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

std::shared_ptr<const Catalog> CatalogStore::WaitForChange(const std::string& known_version,
                                                           absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  ++waiters_;
  while (!shutdown_ && (current_ == nullptr || current_->snapshot().version() == known_version)) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) break;  // timed out
  }
  --waiters_;
  return current_;
}

int CatalogStore::waiters() const {
  absl::MutexLock lock(&mu_);
  return waiters_;
}

void CatalogStore::Shutdown() {
  absl::MutexLock lock(&mu_);
  shutdown_ = true;
  changed_.SignalAll();
}

absl::Status CatalogStore::last_reload_status() const {
  absl::MutexLock lock(&mu_);
  return last_status_;
}

int64_t CatalogStore::failed_reloads() const {
  absl::MutexLock lock(&mu_);
  return failed_reloads_;
}

}  // namespace gpuadvisor::catalog
