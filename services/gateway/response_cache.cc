#include "services/gateway/response_cache.h"

#include "absl/strings/str_cat.h"
#include "common/io/deterministic.h"

namespace gpuadvisor::gateway {

EncodedAnswer EncodedAnswer::Encode(v1::RecommendResponse& response) {
  EncodedAnswer encoded;
  encoded.price_book_age_seconds = response.price_book_age_seconds();
  encoded.empty = response.recommendations().empty();
  response.clear_price_book_age_seconds();
  response.clear_catalog_age_seconds();
  const size_t size = response.ByteSizeLong();
  grpc_slice slice = grpc_slice_malloc(size);
  response.SerializeWithCachedSizesToArray(GRPC_SLICE_START_PTR(slice));
  encoded.bytes = grpc::Slice(slice, grpc::Slice::STEAL_REF);
  return encoded;
}

grpc::ByteBuffer EncodedAnswer::Send(int64_t price_book_age, int64_t catalog_age) const {
  v1::RecommendResponse ages;
  ages.set_price_book_age_seconds(price_book_age);
  ages.set_catalog_age_seconds(catalog_age);
  uint8_t buffer[32];  // two tagged varints: at most 22 bytes
  const size_t size = ages.ByteSizeLong();
  ages.SerializeWithCachedSizesToArray(buffer);
  const grpc::Slice parts[2] = {bytes, grpc::Slice(buffer, size)};
  return grpc::ByteBuffer(parts, size > 0 ? 2 : 1);
}

std::string ResponseCache::Versions(const std::string& catalog_version,
                                    const std::string& price_book_version,
                                    const std::string& sizing_model) {
  return absl::StrCat(catalog_version, "\n", price_book_version, "\n", sizing_model);
}

std::string ResponseCache::Key(const v1::RecommendRequest& request,
                               const std::string& catalog_version,
                               const std::string& price_book_version,
                               const std::string& sizing_model) {
  if (catalog_version.empty() || price_book_version.empty()) return "";
  std::string key =
      absl::StrCat(catalog_version.size(), ":", catalog_version, price_book_version.size(), ":",
                   price_book_version, sizing_model.size(), ":", sizing_model);
  // Deterministic: map fields (none today) and field order never vary the
  // bytes of equal requests.
  AppendDeterministicBytes(request, &key);
  return key;
}

ResponseCache::Hit ResponseCache::Lookup(const std::string& key) {
  if (key.empty() || !enabled()) return {};
  absl::MutexLock lock(&mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return {};
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

ResponseCache::Joined ResponseCache::LookupOrJoin(const std::string& key, Waiter waiter) {
  Joined joined;
  if (key.empty() || !enabled()) return joined;
  absl::MutexLock lock(&mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    joined.outcome = Joined::kHit;
    joined.hit = it->second->second;
    return joined;
  }
  auto [it, first] = computing_.try_emplace(key);
  if (!first) {
    it->second.push_back(std::move(waiter));
    joined.outcome = Joined::kJoined;
  }
  return joined;
}

void ResponseCache::Complete(const std::string& key, const std::string& versions,
                             std::shared_ptr<const EncodedAnswer> response, absl::Time now) {
  if (key.empty() || !enabled()) return;
  std::vector<Waiter> waiters;
  {
    absl::MutexLock lock(&mu_);
    if (response != nullptr) InsertLocked(key, versions, Hit{response, now});
    if (auto it = computing_.find(key); it != computing_.end()) {
      waiters = std::move(it->second);
      computing_.erase(it);
    }
  }
  for (Waiter& waiter : waiters) waiter(response, now);
}

void ResponseCache::Insert(const std::string& key, const std::string& versions,
                           std::shared_ptr<const EncodedAnswer> response, absl::Time now) {
  if (key.empty() || !enabled()) return;
  absl::MutexLock lock(&mu_);
  InsertLocked(key, versions, Hit{std::move(response), now});
}

void ResponseCache::InsertLocked(const std::string& key, const std::string& versions, Hit value) {
  if (versions != versions_) {
    // Entries of older versions can never match again: drop them at once
    // rather than waiting for the LRU to push them out.
    lru_.clear();
    index_.clear();
    versions_ = versions;
  }
  if (auto it = index_.find(key); it != index_.end()) {
    it->second->second = std::move(value);
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.emplace_front(key, std::move(value));
  index_.emplace(key, lru_.begin());
  while (lru_.size() > options_.max_entries) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

size_t ResponseCache::size() const {
  absl::MutexLock lock(&mu_);
  return lru_.size();
}

}  // namespace gpuadvisor::gateway
