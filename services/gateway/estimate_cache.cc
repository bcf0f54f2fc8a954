#include "services/gateway/estimate_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/io/deterministic.h"

namespace gpuadvisor::gateway {

std::string EstimateCache::WorkloadKey(const sizing::v1::EstimateRequest& request) {
  if (request.configurations_size() > 0) {
    // The gateway keys its request before adding configurations; a copy only
    // for other callers.
    sizing::v1::EstimateRequest bare = request;
    bare.clear_configurations();
    return WorkloadKey(bare);
  }
  return DeterministicBytes(request);
}

std::string EstimateCache::model() const {
  absl::MutexLock lock(&mu_);
  return model_;
}

bool EstimateCache::SetModel(const std::string& model) {
  absl::MutexLock lock(&mu_);
  if (model == model_) return false;
  model_ = model;
  entries_.clear();
  order_.clear();
  count_ = 0;
  return true;
}

EstimateCache::Totals EstimateCache::Lookup(const std::string& workload_key,
                                            absl::Span<const ConfigKey> configs, absl::Time now,
                                            std::vector<Estimate>& found) {
  found.assign(configs.size(), nullptr);
  if (!enabled()) return nullptr;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(workload_key);
  if (it == entries_.end()) return nullptr;
  const Entry& entry = it->second;
  if (now - entry.created > options_.max_age) return nullptr;  // Insert replaces it
  // A request's configurations come shape by shape (one hardware key, a few
  // node counts): the same key (the same bytes, often the same buffer) is
  // looked up once.
  auto hw = entry.by_hardware.end();
  absl::string_view last;
  bool looked_up = false;
  for (size_t i = 0; i < configs.size(); ++i) {
    const absl::string_view hardware = configs[i].hardware;
    const bool same = looked_up && hardware.size() == last.size() &&
                      (hardware.data() == last.data() || hardware == last);
    if (!same) {
      hw = entry.by_hardware.find(hardware);
      last = hardware;
      looked_up = true;
    }
    if (hw == entry.by_hardware.end()) continue;
    for (const auto& [nodes, estimate] : hw->second) {
      if (nodes == configs[i].nodes) {
        found[i] = estimate;
        break;
      }
    }
  }
  return entry.totals;
}

void EstimateCache::Insert(const std::string& workload_key, Totals totals,
                           absl::Span<const ConfigKey> configs,
                           absl::Span<const Estimate> estimates, absl::Time now,
                           const std::string& model) {
  if (!enabled()) return;
  absl::MutexLock lock(&mu_);
  if (model != model_) return;  // sized by a model the cache no longer holds
  auto it = entries_.find(workload_key);
  if (it != entries_.end() && now - it->second.created > options_.max_age) {
    count_ -= it->second.count;
    entries_.erase(it);
    it = entries_.end();
    // Rare (once per workload per max_age): a linear search is fine.
    for (auto o = order_.begin(); o != order_.end(); ++o) {
      if (*o == workload_key) {
        order_.erase(o);
        break;
      }
    }
  }
  if (it == entries_.end()) {
    if (totals == nullptr) return;  // an expired entry's runs cannot start a new one
    it = entries_.try_emplace(workload_key).first;
    it->second.totals = std::move(totals);
    it->second.created = now;
    order_.push_back(workload_key);
  }
  Entry& entry = it->second;
  for (size_t i = 0; i < configs.size() && i < estimates.size(); ++i) {
    if (estimates[i] == nullptr) continue;
    auto& slots = entry.by_hardware[configs[i].hardware];
    bool present = false;
    for (const auto& slot : slots) present |= slot.first == configs[i].nodes;
    if (present) continue;
    slots.emplace_back(configs[i].nodes, estimates[i]);
    ++entry.count;
    ++count_;
  }
  EvictLocked();
}

void EstimateCache::EvictLocked() {
  // The oldest workloads go first; the newest one stays even when it alone
  // holds more than the bound.
  while (count_ > options_.max_estimates && order_.size() > 1) {
    auto it = entries_.find(order_.front());
    order_.pop_front();
    if (it == entries_.end()) continue;
    count_ -= it->second.count;
    entries_.erase(it);
  }
}

size_t EstimateCache::estimates() const {
  absl::MutexLock lock(&mu_);
  return count_;
}

}  // namespace gpuadvisor::gateway
