#ifndef GPUADVISOR_SERVICES_CATALOG_CATALOG_STORE_H_
#define GPUADVISOR_SERVICES_CATALOG_CATALOG_STORE_H_

// Holds the catalog the service answers from and replaces it as a whole.
//
//   CatalogStore store(sources);
//   absl::Status s = store.Reload();              // at start and on ReloadCatalog
//   std::shared_ptr<const Catalog> c = store.Current();   // one consistent snapshot
//
// A reload reads and validates every file before anything changes; a bad file
// leaves the current catalog serving and returns the error (file, line,
// field). Readers hold a shared_ptr, so a swap never invalidates a catalog
// someone is still using. Versions look like "v3-1a2b3c4d5e6f7a8b": the load
// sequence (counting changes only) and the content fingerprint; reloading
// identical content keeps the current version and wakes nobody.
//
// Thread-safe: every method may be called from any thread.

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "services/catalog/catalog.h"
#include "services/catalog/catalog_loader.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/catalog/skypilot_import.h"

namespace gpuadvisor::catalog {

class CatalogStore {
 public:
  // `reload_nice` > 0: a reload reads, checks and indexes the files on a
  // thread of its own at that nice value in SCHED_BATCH
  // (background_priority.h), below the threads answering calls.
  explicit CatalogStore(CatalogSources sources, int reload_nice = 0);
  ~CatalogStore();  // calls Shutdown()

  CatalogStore(const CatalogStore&) = delete;
  CatalogStore& operator=(const CatalogStore&) = delete;

  // Loads and validates all sources, checks the load guards against the
  // serving catalog (shrink) and the ranges of sources.guards_path, then
  // swaps the new catalog in. On error keeps the old catalog and returns the
  // error. `force` accepts what only the guards reject (their findings become
  // warnings). Concurrent reloads run one after the other.
  absl::Status Reload(bool force = false);

  // The warnings of the last successful Reload(): kept outliers and forced
  // guard findings, with file:line.
  std::vector<std::string> last_warnings() const;

  // nullptr before the first successful Reload().
  std::shared_ptr<const Catalog> Current() const;

  // Serves `catalog` as it is, version included, and wakes waiters: what a
  // follower replica does with each snapshot of the catalog writer (it never
  // reads the files). A nullptr is ignored.
  void Install(std::shared_ptr<const Catalog> catalog);

  // The bytes of `catalog`'s snapshot as SerializeToString writes them, kept
  // from the Reload that made it current, handed out once (WatchCatalog's
  // encoding: the reload serialized it already to name its version). Empty
  // when `catalog` is no longer current, was installed, or they were taken.
  std::string TakeSerialized(const Catalog& catalog);

  // Waits until the current version is `version`, at most until `deadline`;
  // false on timeout.
  bool WaitForVersion(const std::string& version, absl::Time deadline) const;

  // Blocks until the current version differs from `known_version` (a catalog
  // exists and has another version), `deadline` passes or Shutdown() is
  // called; returns Current() (which may still have `known_version`, or be
  // nullptr). Returns at once if the condition already holds.
  std::shared_ptr<const Catalog> WaitForChange(const std::string& known_version,
                                               absl::Time deadline) const;

  // Wakes all waiters; later WaitForChange() calls return at once.
  void Shutdown();
  // Callers blocked in WaitForChange now (tests wait for a waiter to block
  // instead of sleeping).
  int waiters() const;

  // Status of the last Reload() (OK before the first one) and how many
  // reloads failed; for metrics and health reporting.
  absl::Status last_reload_status() const;
  int64_t failed_reloads() const;

 private:
  const CatalogSources sources_;
  const int reload_nice_;
  absl::Mutex reload_mu_;  // serialises Reload()
  mutable absl::Mutex mu_;
  mutable absl::CondVar changed_;
  std::shared_ptr<const Catalog> current_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<std::string> current_serialized_ ABSL_GUARDED_BY(mu_);
  std::string current_hash_ ABSL_GUARDED_BY(mu_);
  int64_t sequence_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  mutable int waiters_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status last_status_ ABSL_GUARDED_BY(mu_);
  int64_t failed_reloads_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> last_warnings_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_CATALOG_STORE_H_
