#ifndef GPUADVISOR_SERVICES_REFRESHER_REFRESHER_H_
#define GPUADVISOR_SERVICES_REFRESHER_REFRESHER_H_

// The refresher: fetches each source of data/refresher/sources.textproto on
// its own interval, imports it with the catalog's importers, checks it
// against the source's previous good copy (source_import.h, GuardCopy) and
// publishes the good copies of every source as one OfferList file that the
// catalog writer reads (catalog_server --refreshed_offers), then asks the
// writer to reload. A copy that fails to fetch, to import or a guard is not
// published: the previous good copy keeps serving and its age grows; the
// reason is kept in the source's state. A reload the catalog rejects puts
// the previous file back, so nothing partial stays published.
//
//   Refresher r(config, options, fetch, publish);
//   r.RefreshDue(absl::Now());          // every source whose interval passed
//   std::string json = r.StatesJson(absl::Now());

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/refresher/http_fetch.h"
#include "services/refresher/refresher_config.pb.h"
#include "services/refresher/source_import.h"

namespace gpuadvisor::refresher {

// Each published offer's `source` starts with this, then the source's name
// and the fetch time ("refresh vast at 2026-12-04T00:15:00Z, stale after
// 3600 s (vast search.json: ...)"); its as_of is the fetch date.
inline constexpr char kRefreshSourcePrefix[] = "refresh ";

// The next page of a paged source, "" at the last one: GCP's nextPageToken
// (as pageToken on `first_url`) or Azure's NextPageLink, which must stay on
// `first_url`'s origin (kFailedPrecondition otherwise).
absl::StatusOr<std::string> NextPage(const std::string& first_url, const std::string& page_url,
                                     const std::string& body);

// What people see of a source (metrics, `gpu-advisor sources`, JSON).
struct SourceState {
  std::string name;
  int64_t stale_after_seconds = 0;
  int64_t last_attempt_unix = 0;
  int64_t last_success_unix = 0;  // when the copy now serving was fetched; 0 = never
  std::string result;             // "ok", "not modified", "fetch failed", "held back", ...
  std::string reason;             // why the last attempt did not publish; empty when it did
  SourceRows rows;                // of the last attempt that read a body
  int offers = 0;                 // in the copy serving
  int attempts = 0;
  int failures = 0;
  // Where the last attempt's time went (seconds): downloads, import and
  // guards, and writing the file plus the catalog's reload.
  double fetch_seconds = 0;
  double import_seconds = 0;
  double publish_seconds = 0;
};

using FetchFn =
    std::function<absl::StatusOr<FetchResult>(const std::string& url, const FetchOptions& options)>;
// Publishes the refreshed file: the writer reloads it. An error = rejected.
using PublishFn = std::function<absl::Status()>;

struct RefresherOptions {
  std::string output_path;  // the OfferList the catalog reads
  // Called when the output file cannot be written (the publish fails and is
  // retried on the next refresh); may be null. common/metrics/write_failures.h
  // counts it.
  std::function<void(const absl::Status&)> on_write_failed = nullptr;
  std::string ca_file;   // extra CA bundle for every fetch (tests)
  ImportContext import;  // gpus, known offers, data tables
  PriceBounds bounds;    // the config's min/max_usd_per_gpu_hour override these
};

class Refresher {
 public:
  Refresher(RefresherConfig config, RefresherOptions options, FetchFn fetch, PublishFn publish);

  // Refreshes every source whose next time has come; returns how many ran.
  int RefreshDue(absl::Time now);
  // Refreshes source `name` now (tests, --once). kNotFound for an unknown name.
  absl::Status RefreshNow(const std::string& name, absl::Time now);

  std::vector<SourceState> States() const;
  // {"sources":[{"name":..,"age_seconds":..,"stale":..,...}]}
  std::string StatesJson(absl::Time now) const;
  // The earliest time a source is due.
  absl::Time NextDue() const;

 private:
  struct Source {
    RefreshSource config;
    SourceState state;
    std::vector<catalog::v1::Offer> good;  // the copy serving
    // url -> the 200 (etag, body) of the copy serving: a 304 against these
    // means the source still publishes the copy serving.
    std::map<std::string, FetchResult> validators;
    std::map<std::string, FetchResult> pending;  // this refresh's 200s, kept once published
    int modified_pages = 0;                      // this refresh's pages that were not a 304
    absl::Time next_due = absl::InfinitePast();
  };
  void RunRefresh(Source& source, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::vector<std::string>> FetchAll(Source& source)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::vector<std::string>> FetchPages(Source& source, const std::string& url,
                                                      const FetchOptions& options)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Publish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The published list: every good copy's offers; the frame is the rest of
  // it (source, the sources' states).
  catalog::v1::OfferList OutputFrame() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string OutputBody() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteOutput() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void PublishStates() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const RefresherOptions options_;
  PriceBounds bounds_;  // options_.bounds, or the config's when set
  const FetchFn fetch_;
  const PublishFn publish_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Source>> sources_ ABSL_GUARDED_BY(mu_);
  // A copy of the states for readers (metrics scrapes), never held during a
  // fetch: mu_ is held through a refresh, downloads included.
  mutable absl::Mutex states_mu_;
  std::vector<SourceState> states_ ABSL_GUARDED_BY(states_mu_);
};

}  // namespace gpuadvisor::refresher

#endif  // GPUADVISOR_SERVICES_REFRESHER_REFRESHER_H_
