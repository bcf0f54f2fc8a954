#ifndef GPUADVISOR_COMMON_GRPC_RATE_LIMITER_H_
#define GPUADVISOR_COMMON_GRPC_RATE_LIMITER_H_

// Per-client rate limiting for public servers: one token bucket per peer
// address (the IP, not the port, so a client cannot reset its bucket by
// opening new connections). A bucket holds up to `burst` tokens and refills
// at `per_second`; each call takes one. A call without a token gets
// RESOURCE_EXHAUSTED naming the limit. At most `max_peers` buckets are kept;
// when full, full (idle) buckets are forgotten first, then the stalest.
//
//   PeerRateLimiter limiter({.per_second = 50, .burst = 100});
//   if (grpc::Status s = limiter.Admit(*context); !s.ok()) return s;
//
// The client of a call (ClientKey): a verified client certificate's identity
// under mTLS; else the peer IP, or, when the peer is one of
// Options::trusted_proxies, the client it names in x-forwarded-for /
// forwarded metadata (client_address.h). An in-process call (the gateway's
// HTTP front end) names its client in kClientKeyMetadata.
//
// per_second <= 0 disables the limiter (Admit always succeeds).
// Thread-safe.

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/grpc/client_address.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"

namespace gpuadvisor {

class PeerRateLimiter {
 public:
  struct Options {
    double per_second = 0;  // refill rate; <= 0: unlimited
    double burst = 0;       // bucket size; < 1 is taken as max(1, per_second)
    size_t max_peers = 100'000;
    ProxyRanges trusted_proxies = ProxyRanges();  // whose forwarded-address metadata is believed
  };
  // Metadata an in-process caller sets to the key of the client it serves.
  static constexpr char kClientKeyMetadata[] = "x-gpuadvisor-client";

  explicit PeerRateLimiter(Options options);

  // Takes a token from `peer`'s bucket at time `now`; false if it is empty.
  bool Allow(absl::string_view peer, absl::Time now);

  // Allow() for the caller of `context` (its peer IP), as a gRPC status; sync
  // and callback servers alike.
  grpc::Status Admit(const grpc::ServerContextBase& context);
  // Admit() for a client this process names itself (the gateway's HTTP
  // front end calling the service in process): `client_key` as ClientKey
  // gives it.
  grpc::Status AdmitClient(absl::string_view client_key);

  // The bucket `context`'s call is counted in: "cert:CN=x,SAN=y",
  // "203.0.113.9", or the in-process caller's kClientKeyMetadata.
  std::string ClientKey(const grpc::ServerContextBase& context) const;

  // "ipv4:10.0.0.7:51234" -> "ipv4:10.0.0.7", "ipv6:[::1]:5000" -> "ipv6:[::1]";
  // anything else is kept whole.
  static std::string PeerKey(absl::string_view peer);

  bool enabled() const { return options_.per_second > 0; }
  size_t peers() const;

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time updated;
  };
  void EvictLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_RATE_LIMITER_H_
