#ifndef GPUADVISOR_SERVICES_GATEWAY_ESTIMATE_CACHE_H_
#define GPUADVISOR_SERVICES_GATEWAY_ESTIMATE_CACHE_H_

// Sizing answers kept per (workload, GPU configuration), so a Recommend asks
// the sizing service only for the configurations it has not sized yet for
// that workload (often none). A sizing answer depends on the workload (with
// the gateway's defaults applied), the VRAM margin, the serving SLOs (which
// choose among a configuration's layouts) and the hardware of one
// configuration, not on prices or on which offers sell that hardware, so one
// entry serves every request, catalog and price book that reaches it.
//
// Entries are of one sizing model (EstimateResponse.model_fingerprint: its
// data and code): SetModel with another fingerprint (a sizing deploy, heard by
// the gateway) drops them all, and an answer of another model is not stored.
// An entry is also dropped after Options::max_age. Bounded by the number of configuration
// estimates held: when full, the oldest workloads go first. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::gateway {

class EstimateCache {
 public:
  struct Options {
    size_t max_estimates = 50000;  // configuration estimates held; 0 disables the cache
    absl::Duration max_age = absl::Minutes(10);  // an entry older than this is sized again
  };

  explicit EstimateCache(Options options) : options_(options) {}

  bool enabled() const { return options_.max_estimates > 0; }

  // The key of a sizing request without its configurations: the
  // deterministic bytes of everything else in it (workload, vram_margin,
  // serving_slo, and any field added later), so two requests share estimates
  // only when sizing would answer them alike.
  static std::string WorkloadKey(const sizing::v1::EstimateRequest& request);

  // A configuration: its hardware (OfferShape::Key(), everything but the node
  // count) and the node count.
  struct ConfigKey {
    absl::string_view hardware;
    int32_t nodes = 1;
  };
  using Estimate = std::shared_ptr<const sizing::v1::ConfigurationEstimate>;

  // What sizing said of the workload itself: an EstimateResponse holding
  // totals and model, no estimates.
  using Totals = std::shared_ptr<const sizing::v1::EstimateResponse>;

  // Fills found[i] (resized to configs.size()) with the cached estimate of
  // configs[i], null where there is none; returns the workload's totals, null
  // when the workload is unknown or expired (then nothing is found).
  Totals Lookup(const std::string& workload_key, absl::Span<const ConfigKey> configs,
                absl::Time now, std::vector<Estimate>& found);

  // Stores the workload's totals (when `totals` is not null and the workload
  // is new) and configs[i] -> estimates[i], when `model` (the answer's
  // model_fingerprint) is the cache's model.
  void Insert(const std::string& workload_key, Totals totals, absl::Span<const ConfigKey> configs,
              absl::Span<const Estimate> estimates, absl::Time now, const std::string& model = "");

  // The sizing model the entries are of ("" at first), and a switch to
  // another (dropping every entry; false when it is the same).
  std::string model() const;
  bool SetModel(const std::string& model);

  size_t estimates() const;

 private:
  struct Entry {
    Totals totals;
    absl::Time created;
    // Hardware key -> (nodes, estimate) pairs.
    absl::flat_hash_map<std::string, std::vector<std::pair<int32_t, Estimate>>> by_hardware;
    size_t count = 0;
  };
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);  // workload keys, oldest first
  size_t count_ ABSL_GUARDED_BY(mu_) = 0;
  std::string model_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_ESTIMATE_CACHE_H_
