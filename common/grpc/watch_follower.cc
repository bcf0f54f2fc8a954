#include "common/grpc/watch_follower.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"

namespace gpuadvisor {

WatchFollowerState::WatchFollowerState(WatchFollowerOptions options, std::string peer,
                                       std::string value_name)
    : options_(std::move(options)),
      peer_(std::move(peer)),
      value_name_(std::move(value_name)),
      retry_delay_(options_.retry_interval) {}

WatchFollowerState::~WatchFollowerState() { Stop(); }

void WatchFollowerState::StartWatchdog() {
  if (options_.heartbeat_interval > absl::ZeroDuration())
    watchdog_ = std::thread([this] { Watchdog(); });
}

void WatchFollowerState::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (active_call_ != nullptr) active_call_->TryCancel();
  }
  if (watchdog_.joinable()) watchdog_.join();
}

bool WatchFollowerState::stopping() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

bool WatchFollowerState::BeginCall(grpc::ClientContext* context, std::string* known_version) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return false;
  active_call_ = context;
  accepted_ = connected_ = cancelled_ = false;
  call_heartbeat_ = absl::ZeroDuration();
  silent_since_ = options_.clock->Now();
  *known_version = known_version_;
  return true;
}

void WatchFollowerState::Accepted(const grpc::ClientContext& context,
                                  const std::string& version_header,
                                  const std::string& heartbeat_header) {
  const auto& metadata = context.GetServerInitialMetadata();
  absl::Duration heartbeat = absl::ZeroDuration();
  if (auto it = metadata.find(heartbeat_header); it != metadata.end()) {
    int64_t millis = 0;
    if (absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()), &millis) &&
        millis > 0) {
      heartbeat = absl::Milliseconds(millis);
    }
  }
  absl::MutexLock lock(&mu_);
  accepted_ = true;
  call_heartbeat_ = heartbeat;
  silent_since_ = options_.clock->Now();
  if (metadata.count(version_header) > 0) {
    connected_ = true;
    last_message_ = silent_since_;
  }
}

void WatchFollowerState::Heard(bool heartbeat) {
  absl::MutexLock lock(&mu_);
  connected_ = true;
  silent_since_ = last_message_ = options_.clock->Now();
  // A heartbeat: the writer has nothing newer than what this follower holds.
  if (heartbeat && has_value_) retry_delay_ = options_.retry_interval;
}

void WatchFollowerState::SetApplying(bool applying) {
  absl::MutexLock lock(&mu_);
  applying_ = applying;
  silent_since_ = options_.clock->Now();  // the silence the watchdog measures starts again
}

void WatchFollowerState::Took(const std::string& version, absl::Time synced_at) {
  absl::MutexLock lock(&mu_);
  has_value_ = true;
  known_version_ = version;
  if (synced_at != absl::InfinitePast()) {
    synced_at_ = synced_at;  // from a cache, before following
  } else {
    synced_at_ = options_.clock->Now();
    retry_delay_ = options_.retry_interval;  // current with the writer again
  }
}

void WatchFollowerState::Reject(const absl::Status& status, const std::string& serving) {
  const std::string keeping =
      serving.empty() ? absl::StrCat("no ", value_name_) : absl::StrCat("version ", serving);
  const std::string message = absl::StrCat(status.message(), "; keeping ", keeping);
  std::fprintf(stderr, "%s: %s\n", options_.name.c_str(), message.c_str());
  if (options_.on_rejected) options_.on_rejected(absl::Status(status.code(), message));
}

bool WatchFollowerState::EndCall(const grpc::Status& status) {
  absl::MutexLock lock(&mu_);
  if (connected_) {
    // Current until the last message heard (with heartbeats), else until
    // the stream ended.
    synced_at_ = call_heartbeat_ > absl::ZeroDuration() ? last_message_ : options_.clock->Now();
  }
  connected_ = accepted_ = false;
  call_heartbeat_ = absl::ZeroDuration();
  active_call_ = nullptr;
  if (stopping_) return false;
  const absl::Duration wait = retry_delay_;
  retry_delay_ = NextRetryDelay(wait, options_);
  std::fprintf(stderr, "%s: watch of %s ended: %s; reconnecting in %s\n", options_.name.c_str(),
               peer_.c_str(), status.ok() ? "closed by the writer" : status.error_message().c_str(),
               absl::FormatDuration(wait).c_str());
  mu_.AwaitWithTimeout(absl::Condition(&stopping_), wait);
  return !stopping_;
}

double WatchFollowerState::AgeSeconds() const {
  absl::MutexLock lock(&mu_);
  if (!has_value_) return -1;
  const absl::Time now = options_.clock->Now();
  if (connected_) {
    if (call_heartbeat_ <= absl::ZeroDuration()) return 0;  // no heartbeats: open is current
    const absl::Duration silent = now - last_message_;
    return silent <= 2 * call_heartbeat_ ? 0 : absl::ToDoubleSeconds(silent);
  }
  return std::max(0.0, absl::ToDoubleSeconds(now - synced_at_));
}

absl::Duration WatchFollowerState::retry_delay() const {
  absl::MutexLock lock(&mu_);
  return retry_delay_;
}

absl::Duration WatchFollowerState::NextRetryDelay(absl::Duration previous,
                                                  const WatchFollowerOptions& options) {
  return std::max(options.retry_interval, std::min(2 * previous, options.max_retry_interval));
}

void WatchFollowerState::Watchdog() {
  // Ends a stream that stays silent (a hung or partitioned writer).
  absl::MutexLock lock(&mu_);
  const absl::Duration tick = std::min(absl::Milliseconds(100), options_.heartbeat_interval);
  while (!stopping_) {
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), tick);
    // Not timed: a call the writer has not answered yet (it waits for the
    // writer to be reachable and SERVING), a writer that sends no
    // heartbeats, a value being applied.
    if (stopping_ || active_call_ == nullptr || !accepted_ || applying_ || cancelled_ ||
        call_heartbeat_ <= absl::ZeroDuration()) {
      continue;
    }
    const absl::Duration silent = options_.clock->Now() - silent_since_;
    if (silent > options_.missed_heartbeats * call_heartbeat_) {
      std::fprintf(stderr, "%s: nothing heard from %s for %s; reconnecting\n",
                   options_.name.c_str(), peer_.c_str(), absl::FormatDuration(silent).c_str());
      active_call_->TryCancel();
      cancelled_ = true;
    }
  }
}

}  // namespace gpuadvisor
