#ifndef GPUADVISOR_SERVICES_GATEWAY_RESPONSE_CACHE_H_
#define GPUADVISOR_SERVICES_GATEWAY_RESPONSE_CACHE_H_

// A bounded LRU cache of whole Recommend answers, for callers that poll with
// the same request (autoscalers ask before every node). An entry is keyed by
// the request's deterministic bytes together with the catalog version, the
// price-book version and sizing's model fingerprint the answer was computed
// from, so an answer is never served across a version change (a sizing
// deploy included): a new version simply stops matching, and the first
// insert under new versions drops every older entry. It also coalesces
// identical requests: while one caller computes a key, the others wait for
// its answer (LookupOrJoin, Complete). Thread-safe.

#include <cstddef>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"

namespace gpuadvisor::gateway {

// A Recommend answer as the gateway sends it, encoded once: a cached answer is
// sent as these bytes, never copied or encoded again. The two age fields
// (price_book_age_seconds, catalog_age_seconds) change with every call, so
// `bytes` leaves them out and Send() appends them: protobuf parses the
// concatenation of two encodings of a message as their merge, and fields may
// come in any order.
struct EncodedAnswer {
  grpc::Slice bytes;                   // the RecommendResponse without its age fields
  int64_t price_book_age_seconds = 0;  // as computed
  bool empty = false;                  // no recommendations

  // Encodes `response` (its age fields are left out of `bytes`).
  static EncodedAnswer From(v1::RecommendResponse response) { return Encode(response); }
  // The same, in place: clears the age fields of `response` (which may live
  // on an arena: nothing is copied).
  static EncodedAnswer Encode(v1::RecommendResponse& response);
  // The answer to send: `bytes`, then the two ages (a few bytes).
  grpc::ByteBuffer Send(int64_t price_book_age, int64_t catalog_age) const;
};

class ResponseCache {
 public:
  struct Options {
    size_t max_entries = 4096;  // 0 disables the cache
  };

  explicit ResponseCache(Options options) : options_(options) {}

  bool enabled() const { return options_.max_entries > 0; }

  // The key for `request` under the given versions; "" when the catalog or
  // price-book version is unknown (nothing is cached then). `sizing_model`
  // is sizing's model_fingerprint ("" from a sizing that names none).
  static std::string Key(const v1::RecommendRequest& request, const std::string& catalog_version,
                         const std::string& price_book_version,
                         const std::string& sizing_model = "");
  // The versions a key names, as Insert and Complete take them.
  static std::string Versions(const std::string& catalog_version,
                              const std::string& price_book_version,
                              const std::string& sizing_model = "");

  struct Hit {
    std::shared_ptr<const EncodedAnswer> response;  // null on a miss
    absl::Time stored_at;                           // to age the answer's price_book_age_seconds
  };

  // The cached answer for `key`; response is null when there is none.
  Hit Lookup(const std::string& key);

  // A caller that joined a key being computed: called once, by the caller
  // that computes it (in Complete), with its answer, or with null when it
  // has none to share (then compute your own).
  using Waiter =
      absl::AnyInvocable<void(std::shared_ptr<const EncodedAnswer> answer, absl::Time computed_at)>;
  struct Joined {
    enum Outcome {
      kHit,     // `hit` holds the cached answer
      kLeads,   // nobody computes the key: the caller does, then calls Complete
      kJoined,  // another caller computes it: `waiter` was kept and will be called
    };
    Outcome outcome = kLeads;
    Hit hit;
  };
  // The cached answer for `key`, or else the caller computes it (the first
  // to ask) or waits for the one that does. A disabled cache or an empty key
  // always leads (and need not Complete).
  Joined LookupOrJoin(const std::string& key, Waiter waiter);
  // Ends the computation of `key` that LookupOrJoin gave to the caller:
  // stores `response` (unless null: a failure, or an answer of other
  // versions) and calls the waiters of the key, outside the lock.
  void Complete(const std::string& key, const std::string& versions,
                std::shared_ptr<const EncodedAnswer> response, absl::Time now);

  // Stores `response` under `key`, computed from `versions` (Versions()).
  void Insert(const std::string& key, const std::string& versions,
              std::shared_ptr<const EncodedAnswer> response, absl::Time now);
  void Insert(const std::string& key, const std::string& catalog_version,
              const std::string& price_book_version, std::shared_ptr<const EncodedAnswer> response,
              absl::Time now) {
    Insert(key, Versions(catalog_version, price_book_version), std::move(response), now);
  }

  size_t size() const;

 private:
  using Entry = std::pair<std::string, Hit>;
  void InsertLocked(const std::string& key, const std::string& versions, Hit value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> index_ ABSL_GUARDED_BY(mu_);
  std::string versions_ ABSL_GUARDED_BY(mu_);  // the versions every entry was computed from
  // Keys being computed, and the callers waiting for each.
  absl::flat_hash_map<std::string, std::vector<Waiter>> computing_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_RESPONSE_CACHE_H_
