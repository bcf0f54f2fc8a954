#include "common/grpc/watch_hub.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/metrics/function_metric.h"
#include "grpcpp/support/slice.h"

namespace gpuadvisor {
namespace {

std::atomic<int64_t> g_live_encodings{0};

// Counts itself so tests can see how many encodings are alive.
struct CountedEncoded : WatchHub::Encoded {
  CountedEncoded() { ++g_live_encodings; }
  ~CountedEncoded() { --g_live_encodings; }
};

}  // namespace

std::shared_ptr<const WatchHub::Encoded> WatchHub::Encode(
    const google::protobuf::MessageLite& response, std::string version) {
  auto encoded = std::make_shared<CountedEncoded>();
  encoded->version = std::move(version);
  std::string bytes;
  response.SerializeToString(&bytes);
  grpc::Slice slice = OwningSlice(std::move(bytes));
  encoded->bytes = grpc::ByteBuffer(&slice, 1);
  return encoded;
}

std::shared_ptr<WatchHub::Encoded> WatchHub::NewEncoded() {
  return std::make_shared<CountedEncoded>();
}

grpc::Slice WatchHub::OwningSlice(std::string bytes) {
  auto* owned = new std::string(std::move(bytes));
  return grpc::Slice(
      owned->data(), owned->size(), +[](void* p) { delete static_cast<std::string*>(p); }, owned);
}

class WatchHub::Watcher final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  Watcher(WatchHub* hub, grpc::CallbackServerContext* context, std::string known,
          absl::Duration heartbeat, bool chunks)
      : hub_(hub),
        context_(context),
        known_(std::move(known)),
        heartbeat_(heartbeat),
        chunks_(chunks) {}

  void Ref() { refs_.fetch_add(1); }
  void Unref() {
    if (refs_.fetch_sub(1) == 1) delete this;
  }

  // The newest version: written now if nothing is in flight, else kept as
  // the one pending write (replacing an older pending one).
  void Offer(const std::shared_ptr<const Encoded>& encoded) {
    absl::ReleasableMutexLock lock(&mu_);
    if (finished_) return;
    const std::string& newest = pending_ != nullptr ? pending_->version : known_;
    if (encoded->version == newest) return;
    if (in_flight_ != nullptr) {
      pending_ = encoded;
      return;
    }
    StartLocked(encoded, &lock);
  }

  // Heartbeat, slow-watcher and drop checks, once per hub tick.
  void Tick(absl::Time now, const std::shared_ptr<const Encoded>& heartbeat) {
    absl::ReleasableMutexLock lock(&mu_);
    if (done_) return;  // the call (and context_) is gone
    if (finished_) {
      if (!cancelled_ && now - finished_at_ > hub_->options_.slow_watcher) {
        // Finished but not draining either: release what it holds. Under
        // the lock, so OnDone (which takes it first) cannot free the call
        // meanwhile; gRPC runs OnCancel later, on its own thread.
        cancelled_ = true;
        context_->TryCancel();
      }
      return;
    }
    if (in_flight_ != nullptr) {
      if (now - write_started_ <= hub_->options_.slow_watcher) return;
      finished_ = true;
      finished_at_ = now;
      pending_.reset();
      lock.Release();
      ++hub_->stats_->dropped_slow;
      Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          absl::StrCat("watcher too slow: a write took longer than ",
                                       absl::FormatDuration(hub_->options_.slow_watcher),
                                       "; reconnect with known_version")));
      return;
    }
    if (heartbeat_ > absl::ZeroDuration() && heartbeat != nullptr &&
        now - last_write_ >= heartbeat_) {
      StartLocked(heartbeat, &lock);
    }
  }

  void Close(grpc::Status status) {
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      finished_ = true;
      finished_at_ = absl::Now();
      pending_.reset();
    }
    Finish(std::move(status));
  }

  void OnWriteDone(bool ok) override {
    absl::ReleasableMutexLock lock(&mu_);
    last_write_ = absl::Now();
    if (ok && !finished_ && in_flight_ != nullptr && part_ + 1 < PartCount(*in_flight_)) {
      // The next chunk of the same version, before anything else.
      ++part_;
      buffer_ = Part(*in_flight_, part_);
      write_started_ = last_write_;
      lock.Release();
      StartWrite(&buffer_);
      return;
    }
    in_flight_.reset();
    if (!ok) {
      // The stream broke (client gone or cancelled): end it.
      if (finished_) return;
      finished_ = true;
      finished_at_ = last_write_;
      pending_.reset();
      lock.Release();
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "watch stream broken"));
      return;
    }
    if (finished_ || pending_ == nullptr) return;
    std::shared_ptr<const Encoded> next = std::move(pending_);
    StartLocked(next, &lock);
  }

  void OnCancel() override { Close(grpc::Status::CANCELLED); }

  void OnDone() override {
    {
      absl::MutexLock lock(&mu_);
      done_ = true;
    }
    hub_->Remove(this);
    Unref();
  }

 private:
  // Starts writing `encoded`; releases the lock before calling into gRPC.
  // What this watcher writes for `encoded`: its chunks, or the whole message.
  bool Chunked(const Encoded& encoded) const { return chunks_ && !encoded.chunks.empty(); }
  size_t PartCount(const Encoded& encoded) const {
    return Chunked(encoded) ? encoded.chunks.size() : 1;
  }
  const grpc::ByteBuffer& Part(const Encoded& encoded, size_t i) const {
    return Chunked(encoded) ? encoded.chunks[i] : encoded.bytes;
  }

  void StartLocked(const std::shared_ptr<const Encoded>& encoded, absl::ReleasableMutexLock* lock)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!Chunked(*encoded) && !encoded->whole_refused.ok()) {
      // Too large for one message and this follower did not ask for chunks.
      finished_ = true;
      finished_at_ = absl::Now();
      pending_.reset();
      lock->Release();
      Finish(encoded->whole_refused);
      return;
    }
    in_flight_ = encoded;
    part_ = 0;
    buffer_ = Part(*encoded, 0);  // shares the slices: no copy of the snapshot
    write_started_ = absl::Now();
    if (!encoded->version.empty()) known_ = encoded->version;
    lock->Release();
    StartWrite(&buffer_);
  }

  WatchHub* hub_;
  grpc::CallbackServerContext* context_;
  std::atomic<int> refs_{2};  // gRPC until OnDone, and the hub's list

  absl::Mutex mu_;
  std::string known_ ABSL_GUARDED_BY(mu_);  // newest version written or in flight
  const absl::Duration heartbeat_;
  const bool chunks_;  // the watcher takes Encoded::chunks
  std::shared_ptr<const Encoded> in_flight_ ABSL_GUARDED_BY(mu_);
  size_t part_ ABSL_GUARDED_BY(mu_) = 0;  // of Parts(*in_flight_) being written
  std::shared_ptr<const Encoded> pending_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer buffer_;  // what StartWrite points at while in flight
  absl::Time write_started_ ABSL_GUARDED_BY(mu_);
  absl::Time last_write_ ABSL_GUARDED_BY(mu_) = absl::Now();
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;  // OnDone ran: never touch the call again
  absl::Time finished_at_ ABSL_GUARDED_BY(mu_);
};

WatchHub::WatchHub(Source source, Options options)
    : source_(std::move(source)), options_(options), thread_([this] { Run(); }) {}

WatchHub::~WatchHub() { Shutdown(); }

int64_t WatchHub::live_encodings() { return g_live_encodings.load(); }

int WatchHub::watchers() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(watchers_.size());
}

std::shared_ptr<const WatchHub::Encoded> WatchHub::Latest() const {
  absl::MutexLock lock(&mu_);
  return latest_;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* WatchHub::Open(grpc::CallbackServerContext* context,
                                                           const grpc::ByteBuffer* request_bytes) {
  std::string known;
  int64_t heartbeat_millis = 0;
  const bool parsed = source_.parse_request(*request_bytes, &known, &heartbeat_millis);
  absl::Duration heartbeat = absl::ZeroDuration();
  if (heartbeat_millis > 0) {
    heartbeat = absl::Milliseconds(
        std::clamp<int64_t>(heartbeat_millis, kMinWatchHeartbeatMillis, kMaxWatchHeartbeatMillis));
  }
  const bool chunks =
      parsed && source_.accepts_chunks != nullptr && source_.accepts_chunks(*request_bytes);
  auto* watcher = new Watcher(this, context, known, heartbeat, chunks);
  const std::string current = source_.current_version();
  grpc::Status refused = grpc::Status::OK;
  {
    absl::MutexLock lock(&mu_);
    if (!parsed) {
      refused =
          grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "request: unparsable watch request");
    } else if (shutdown_) {
      refused = grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down");
    } else if (static_cast<int>(watchers_.size()) >= options_.max_watchers) {
      refused = grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrCat("too many watchers (", options_.max_watchers, "); retry later"));
    } else {
      watchers_.push_back(watcher);
      stats_->watchers = static_cast<int64_t>(watchers_.size());
    }
  }
  if (!refused.ok()) {
    ++stats_->refused;
    watcher->Unref();  // never listed: OnDone's Remove finds nothing, its Unref frees it
    watcher->Finish(refused);
    return watcher;
  }
  // Accept the watch at once, naming the current version, so a follower knows
  // it is current even when nothing has changed since its known_version.
  context->AddInitialMetadata(source_.version_header, current);
  if (heartbeat > absl::ZeroDuration()) {
    context->AddInitialMetadata(source_.heartbeat_header,
                                absl::StrCat(absl::ToInt64Milliseconds(heartbeat)));
  }
  watcher->StartSendInitialMetadata();
  if (std::shared_ptr<const Encoded> latest = Latest(); latest != nullptr) watcher->Offer(latest);
  return watcher;
}

void WatchHub::Remove(Watcher* watcher) {
  bool listed = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = std::find(watchers_.begin(), watchers_.end(), watcher);
    if (it != watchers_.end()) {
      *it = watchers_.back();
      watchers_.pop_back();
      stats_->watchers = static_cast<int64_t>(watchers_.size());
      listed = true;
    }
  }
  if (listed) watcher->Unref();
}

void WatchHub::Run() {
  std::string known;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (shutdown_) return;
    }
    std::shared_ptr<const Encoded> changed =
        source_.wait_for_change(known, absl::Now() + options_.tick);
    if (changed != nullptr && changed->version == known) changed.reset();
    if (changed != nullptr) known = changed->version;
    std::vector<Watcher*> watchers;
    {
      absl::MutexLock lock(&mu_);
      if (shutdown_) return;
      if (changed != nullptr) latest_ = changed;
      watchers = watchers_;
      for (Watcher* watcher : watchers) watcher->Ref();
    }
    const absl::Time now = absl::Now();
    std::shared_ptr<const Encoded> heartbeat;
    if (!watchers.empty()) {
      auto encoded = std::make_shared<CountedEncoded>();
      grpc::Slice slice(source_.heartbeat(now));
      encoded->bytes = grpc::ByteBuffer(&slice, 1);
      heartbeat = std::move(encoded);
    }
    for (Watcher* watcher : watchers) {
      if (changed != nullptr) watcher->Offer(changed);
      watcher->Tick(now, heartbeat);
      watcher->Unref();
    }
  }
}

void WatchHub::Shutdown() {
  std::vector<Watcher*> watchers;
  {
    absl::MutexLock lock(&mu_);
    if (shutdown_) return;
    shutdown_ = true;
    watchers = watchers_;
    for (Watcher* watcher : watchers) watcher->Ref();
  }
  for (Watcher* watcher : watchers) {
    watcher->Close(grpc::Status::OK);
    watcher->Unref();
  }
  if (thread_.joinable()) thread_.join();
}

void WatchHub::ExportMetrics(Metrics& metrics, const std::string& prefix,
                             const std::string& stream) const {
  const std::shared_ptr<const Stats> stats = stats_;
  metrics.AddCollectable(std::make_shared<FunctionMetric>(
      prefix, "Open " + stream + " streams.",
      [stats] { return static_cast<double>(stats->watchers.load()); }));
  metrics.AddCollectable(std::make_shared<FunctionMetric>(
      prefix + "_dropped_total",
      stream + " streams ended with RESOURCE_EXHAUSTED because the follower stopped reading.",
      [stats] { return static_cast<double>(stats->dropped_slow.load()); },
      prometheus::MetricType::Counter));
  metrics.AddCollectable(std::make_shared<FunctionMetric>(
      prefix + "_refused_total",
      stream + " streams refused (watcher cap reached, shutting down, bad request).",
      [stats] { return static_cast<double>(stats->refused.load()); },
      prometheus::MetricType::Counter));
}

}  // namespace gpuadvisor
