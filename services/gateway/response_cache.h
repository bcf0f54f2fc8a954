#ifndef GPUADVISOR_SERVICES_GATEWAY_RESPONSE_CACHE_H_
#define GPUADVISOR_SERVICES_GATEWAY_RESPONSE_CACHE_H_

// A bounded LRU cache of whole Recommend answers, for callers that poll with
// the same request (autoscalers ask before every node). An entry is keyed by
// the request's deterministic bytes together with the catalog version and the
// price-book version the answer was computed from, so an answer is never
// served across a version change: a new version simply stops matching, and
// the first insert under new versions drops every older entry. Thread-safe.

#include <cstddef>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"

namespace gpuadvisor::gateway {

class ResponseCache {
 public:
  struct Options {
    size_t max_entries = 4096;  // 0 disables the cache
  };

  explicit ResponseCache(Options options) : options_(options) {}

  bool enabled() const { return options_.max_entries > 0; }

  // The key for `request` under the given versions; "" when either version
  // is unknown (nothing is cached then).
  static std::string Key(const v1::RecommendRequest& request, const std::string& catalog_version,
                         const std::string& price_book_version);

  struct Hit {
    std::shared_ptr<const v1::RecommendResponse> response;  // null on a miss
    absl::Time stored_at;  // to age the answer's price_book_age_seconds
  };

  // The cached answer for `key`; response is null when there is none.
  Hit Lookup(const std::string& key);

  // Stores `response` under `key`, computed from the versions the key names.
  void Insert(const std::string& key, const std::string& catalog_version,
              const std::string& price_book_version, v1::RecommendResponse response,
              absl::Time now);

  size_t size() const;

 private:
  using Entry = std::pair<std::string, Hit>;

  const Options options_;
  mutable absl::Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> index_ ABSL_GUARDED_BY(mu_);
  std::string versions_ ABSL_GUARDED_BY(mu_);  // the versions every entry was computed from
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_RESPONSE_CACHE_H_
