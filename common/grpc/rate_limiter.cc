#include "common/grpc/rate_limiter.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "grpcpp/security/auth_context.h"

namespace gpuadvisor {

PeerRateLimiter::PeerRateLimiter(Options options) : options_(options) {
  if (options_.burst < 1) options_.burst = std::max(1.0, options_.per_second);
  if (options_.max_peers < 1) options_.max_peers = 1;
}

std::string PeerRateLimiter::PeerKey(absl::string_view peer) {
  if (!absl::StartsWith(peer, "ipv4:") && !absl::StartsWith(peer, "ipv6:"))
    return std::string(peer);
  const size_t colon = peer.rfind(':');
  if (colon <= 4) return std::string(peer);
  // ipv6 addresses are bracketed, so the last colon is the port's.
  return std::string(peer.substr(0, colon));
}

size_t PeerRateLimiter::peers() const {
  absl::MutexLock lock(&mu_);
  return buckets_.size();
}

void PeerRateLimiter::EvictLocked(absl::Time now) {
  // First forget buckets that have refilled completely: they carry no state.
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    const double refilled =
        it->second.tokens + absl::ToDoubleSeconds(now - it->second.updated) * options_.per_second;
    if (refilled >= options_.burst) {
      buckets_.erase(it++);
    } else {
      ++it;
    }
  }
  if (buckets_.size() < options_.max_peers) return;
  auto stalest = buckets_.begin();
  for (auto it = buckets_.begin(); it != buckets_.end(); ++it) {
    if (it->second.updated < stalest->second.updated) stalest = it;
  }
  buckets_.erase(stalest);
}

bool PeerRateLimiter::Allow(absl::string_view peer, absl::Time now) {
  if (!enabled()) return true;
  absl::MutexLock lock(&mu_);
  auto it = buckets_.find(peer);
  if (it == buckets_.end()) {
    if (buckets_.size() >= options_.max_peers) EvictLocked(now);
    it = buckets_.emplace(std::string(peer), Bucket{options_.burst, now}).first;
  }
  Bucket& bucket = it->second;
  if (now > bucket.updated) {
    bucket.tokens =
        std::min(options_.burst,
                 bucket.tokens + absl::ToDoubleSeconds(now - bucket.updated) * options_.per_second);
    bucket.updated = now;
  }
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

namespace {

std::string Metadata(const grpc::ServerContextBase& context, const char* key) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(key);
  return it == metadata.end() ? std::string() : std::string(it->second.data(), it->second.size());
}

}  // namespace

std::string PeerRateLimiter::ClientKey(const grpc::ServerContextBase& context) const {
  const std::string ip = IpOfPeer(context.peer());
  if (ip.empty()) {
    // In-process (no address): the HTTP front end names the client it serves.
    std::string named = Metadata(context, kClientKeyMetadata);
    return named.empty() ? PeerKey(context.peer()) : named;
  }
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    std::string identity;
    for (const grpc::string_ref& value : auth->GetPeerIdentity()) {
      absl::StrAppend(&identity, identity.empty() ? "" : ",",
                      absl::string_view(value.data(), value.size()));
    }
    if (!identity.empty()) return absl::StrCat("cert:", identity);
  }
  if (options_.trusted_proxies.empty()) return ip;
  return ClientAddress(ip, Metadata(context, "x-forwarded-for"), Metadata(context, "forwarded"),
                       options_.trusted_proxies);
}

grpc::Status PeerRateLimiter::Admit(const grpc::ServerContextBase& context) {
  if (!enabled()) return grpc::Status::OK;
  return AdmitClient(ClientKey(context));
}

grpc::Status PeerRateLimiter::AdmitClient(absl::string_view client_key) {
  if (!enabled()) return grpc::Status::OK;
  if (Allow(client_key, absl::Now())) return grpc::Status::OK;
  return grpc::Status(
      grpc::StatusCode::RESOURCE_EXHAUSTED,
      absl::StrFormat("rate limit: at most %g calls per second per client (burst %g); "
                      "retry later",
                      options_.per_second, options_.burst));
}

}  // namespace gpuadvisor
