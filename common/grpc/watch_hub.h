#ifndef GPUADVISOR_COMMON_GRPC_WATCH_HUB_H_
#define GPUADVISOR_COMMON_GRPC_WATCH_HUB_H_

// Fans a versioned value (a catalog snapshot, a price book) out to
// server-streaming watch calls with memory that does not grow with the
// number of watchers. Used by CatalogService.WatchCatalog and
// PricingService.WatchPrices; each service gives it a Source.
//
// - Each version is serialized once into a grpc::ByteBuffer. Every watcher
//   writes that same buffer (a ByteBuffer copy shares its slices), so N
//   watchers of a V-version history hold at most one encoding per distinct
//   version still in flight, not N copies of the value.
// - A watcher keeps at most one write in flight and one pending version (the
//   newest; older pending versions are dropped, a follower only needs the
//   latest). Watchers run on gRPC's callback API: no thread per watcher. One
//   hub thread waits for changes and ticks heartbeats.
// - A watcher whose write has been in flight longer than `slow_watcher` (it
//   stopped reading) is finished with RESOURCE_EXHAUSTED and, if it still
//   does not drain, cancelled, releasing what it held.
// - At most `max_watchers` streams; the next gets RESOURCE_EXHAUSTED.
// - Heartbeats: a watcher that asks for them (a positive heartbeat interval
//   in its request) gets Source::heartbeat's response at that interval
//   (clamped to [kMinWatchHeartbeatMillis, kMaxWatchHeartbeatMillis])
//   whenever nothing else is being written, so a follower notices a hung or
//   partitioned server within a few intervals. The accepted interval is
//   announced in the initial metadata header Source::heartbeat_header, and
//   the version current when the watch opened in Source::version_header.
//
// Thread-safe.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/metrics/metrics.h"
#include "google/protobuf/message_lite.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "grpcpp/support/slice.h"
#include "grpcpp/support/status.h"

namespace gpuadvisor {

inline constexpr int kMinWatchHeartbeatMillis = 100;
inline constexpr int kMaxWatchHeartbeatMillis = 60'000;

class WatchHub {
 public:
  struct Options {
    int max_watchers = 1000;
    absl::Duration slow_watcher = absl::Seconds(30);
    absl::Duration tick = absl::Milliseconds(100);  // heartbeat and slow-watcher check resolution
  };

  // One serialized response, shared by every watcher writing it.
  struct Encoded {
    std::string version;     // "" for a heartbeat
    grpc::ByteBuffer bytes;  // the whole value in one message
    // The same value as consecutive messages, for watchers that accept
    // chunks (Source::accepts_chunks); empty = this source does not chunk,
    // they get `bytes` too. A watcher writes all of them back to back (no
    // heartbeat or other version in between), each counted on its own by
    // the slow-watcher check. They may share slices with `bytes`.
    std::vector<grpc::ByteBuffer> chunks;
    // Not OK: `bytes` is unusable (the value is too large for one message);
    // a watcher that does not accept chunks is finished with this status.
    grpc::Status whole_refused;
  };
  // Serializes `response` once, for every watcher.
  static std::shared_ptr<const Encoded> Encode(const google::protobuf::MessageLite& response,
                                               std::string version);
  // An empty Encoded counted by live_encodings(), for sources that build
  // their own (chunks).
  static std::shared_ptr<Encoded> NewEncoded();
  // A slice that owns `bytes` (moved, not copied); sub-slices share it.
  static grpc::Slice OwningSlice(std::string bytes);

  // What is watched. Every function is called from the hub's threads and
  // must be thread-safe.
  struct Source {
    // Blocks until the latest version differs from `known` or `deadline`
    // passes; returns the latest version's response (Encode), or nullptr
    // when there is none yet or nothing changed.
    std::function<std::shared_ptr<const Encoded>(const std::string& known, absl::Time deadline)>
        wait_for_change;
    // The version now; "" before any.
    std::function<std::string()> current_version;
    // A serialized heartbeat response (no value, the server time).
    std::function<std::string(absl::Time now)> heartbeat;
    // Reads the watch request: the follower's known version (its first
    // update is skipped when it is the current one) and the heartbeat
    // interval it asks for (0 = none). False when the bytes do not parse.
    std::function<bool(const grpc::ByteBuffer& request, std::string* known,
                       int64_t* heartbeat_millis)>
        parse_request;
    // Whether the watch request asks for Encoded::chunks (null: never).
    std::function<bool(const grpc::ByteBuffer& request)> accepts_chunks;
    std::string version_header;    // initial metadata: the version at open
    std::string heartbeat_header;  // initial metadata: the accepted interval, ms
  };

  class Watcher;

  WatchHub(Source source, Options options);
  ~WatchHub();  // Shutdown()

  // The reactor for one watch call (request as raw bytes).
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Open(grpc::CallbackServerContext* context,
                                                   const grpc::ByteBuffer* request);

  // Finishes every stream (OK) and stops the hub thread; later Opens are refused.
  void Shutdown();

  // Counters shared with metric collectors (they may outlive the hub).
  struct Stats {
    std::atomic<int64_t> watchers{0};
    std::atomic<int64_t> dropped_slow{0};
    std::atomic<int64_t> refused{0};
  };
  std::shared_ptr<const Stats> stats() const { return stats_; }
  // Registers the stream counters, read at scrape time, as `<prefix>`
  // (open streams), `<prefix>_dropped_total` and `<prefix>_refused_total`;
  // `stream` names the RPC in their help ("WatchCatalog").
  void ExportMetrics(Metrics& metrics, const std::string& prefix, const std::string& stream) const;

  // For metrics and tests.
  int watchers() const;
  int64_t dropped_slow_watchers() const { return stats_->dropped_slow.load(); }
  // Distinct encoded versions alive (held by watchers or any hub), all hubs
  // of the process together.
  static int64_t live_encodings();

 private:
  void Run();
  std::shared_ptr<const Encoded> Latest() const;
  void Remove(Watcher* watcher);

  const Source source_;
  const Options options_;
  mutable absl::Mutex mu_;
  std::vector<Watcher*> watchers_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const Encoded> latest_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<Stats> stats_ = std::make_shared<Stats>();
  std::thread thread_;
};

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_WATCH_HUB_H_
