#ifndef GPUADVISOR_COMMON_GRPC_WATCH_FOLLOWER_H_
#define GPUADVISOR_COMMON_GRPC_WATCH_FOLLOWER_H_

// The follower side of the watch protocol WatchHub serves (WatchCatalog,
// WatchPrices): one implementation, a template over the request, the response
// and the watched value, used by the catalog replica and the price follower.
//
// - The request names the version last taken (known_version: the writer
//   skips sending it again), asks for heartbeats (heartbeat_interval_millis)
//   and for chunks (accept_chunks).
// - A call waits (gRPC wait_for_ready) while the writer is unreachable or not
//   SERVING, and starts as soon as it is; a call not answered yet is not
//   timed, the age still rises.
// - Heartbeats: the interval the writer accepted (its heartbeat header) times
//   the stream: `missed_heartbeats` intervals of silence cancel the call and
//   it is re-dialled. A writer that announces no interval is not timed (an
//   open stream counts as current). Time spent applying a value is not
//   silence.
// - Chunks are reassembled whole (SnapshotAssembler) before the value is
//   applied; chunks out of order, corrupt or cut short by the end of the
//   stream are dropped and reported (on_rejected, "...; keeping version V"),
//   the served value stays, and the follower re-dials.
// - Backoff: after a failed or ended stream the follower waits
//   retry_interval, doubling each time up to max_retry_interval, and back to
//   retry_interval once it holds the writer's current value (a value taken,
//   or a heartbeat while holding one).
// - Age (AgeSeconds): -1 before any value; 0 while the stream is open and
//   heard from within two heartbeat intervals; otherwise seconds since the
//   follower was last known current.
// Thread-safe.

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/grpc/watch_chunks.h"
#include "common/time/clock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/sync_stream.h"

namespace gpuadvisor {

struct WatchFollowerOptions {
  // Names the process in the follower's log lines ("gateway", "catalog replica").
  std::string name = "follower";
  absl::Duration retry_interval = absl::Seconds(1);       // first wait before re-dialling
  absl::Duration max_retry_interval = absl::Seconds(30);  // the wait doubles up to this
  absl::Duration heartbeat_interval = absl::Seconds(1);   // asked of the writer; zero: none
  int missed_heartbeats = 3;
  // Called from the follower thread with the reason a value (or its chunks)
  // will not be served; may be null.
  std::function<void(const absl::Status&)> on_rejected = nullptr;
  // What ages and silences are measured with (tests move a ManualClock).
  const Clock* clock = Clock::Real();
};

// The untyped part: call state, the watchdog, age and backoff.
class WatchFollowerState {
 public:
  // `peer` names the writer in log lines ("the catalog"), `value_name` the
  // value ("snapshot").
  WatchFollowerState(WatchFollowerOptions options, std::string peer, std::string value_name);
  ~WatchFollowerState();  // StopWatchdog()s

  const WatchFollowerOptions& options() const { return options_; }

  // The watchdog thread (when heartbeats are asked for), until Stop().
  void StartWatchdog();
  // Stops: cancels the active call, wakes every wait, joins the watchdog.
  void Stop();
  bool stopping() const;

  // A new call with `context`; false when stopping. Returns the known version.
  bool BeginCall(grpc::ClientContext* context, std::string* known_version);
  // Initial metadata arrived (or the call ended): read the headers.
  void Accepted(const grpc::ClientContext& context, const std::string& version_header,
                const std::string& heartbeat_header);
  // A message arrived; `heartbeat`: one carrying no value nor chunk.
  void Heard(bool heartbeat);
  // The follower thread is applying a value (or done): not silence.
  void SetApplying(bool applying);
  // A value of `version` was taken (from the writer or a cache written at
  // `synced_at`, InfinitePast = now).
  void Took(const std::string& version, absl::Time synced_at = absl::InfinitePast());
  // Logs and reports a value that will not be served; `serving` names what
  // stays ("" = nothing).
  void Reject(const absl::Status& status, const std::string& serving);
  // The call ended with `status`: waits the backoff. False when stopping.
  bool EndCall(const grpc::Status& status);

  double AgeSeconds() const;
  absl::Duration retry_delay() const;
  // The wait after `previous`: doubled, at most max_retry_interval.
  static absl::Duration NextRetryDelay(absl::Duration previous,
                                       const WatchFollowerOptions& options);

 private:
  void Watchdog();

  const WatchFollowerOptions options_;
  const std::string peer_;
  const std::string value_name_;
  std::thread watchdog_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* active_call_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool accepted_ ABSL_GUARDED_BY(mu_) = false;   // initial metadata arrived
  bool connected_ ABSL_GUARDED_BY(mu_) = false;  // the writer named its version or sent a message
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;  // by the watchdog, once per call
  bool applying_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration call_heartbeat_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();  // accepted
  absl::Time silent_since_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();  // what the watchdog times
  absl::Time last_message_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time synced_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool has_value_ ABSL_GUARDED_BY(mu_) = false;
  std::string known_version_ ABSL_GUARDED_BY(mu_);
  absl::Duration retry_delay_ ABSL_GUARDED_BY(mu_);
};

// Follows one writer. `Request` has known_version, heartbeat_interval_millis
// and accept_chunks; `Response` a `chunk` (SnapshotChunk) and the value;
// `Value` a `version`.
template <typename Request, typename Response, typename Value>
class WatchFollower {
 public:
  struct Protocol {
    std::string peer;        // "the catalog", "the pricing writer"
    std::string value_name;  // "snapshot", "price book"
    std::string version_header;
    std::string heartbeat_header;
    // Opens the watch call (the stub's method).
    std::function<std::unique_ptr<grpc::ClientReaderInterface<Response>>(grpc::ClientContext*,
                                                                         const Request&)>
        open;
    // The whole value a response carries, or null.
    Value* (*value_of)(Response*) = nullptr;
    // Validates and serves a value; `serialized` holds its bytes when it
    // arrived in chunks, else it is empty, and `fnv1a64` their checksum
    // (checked against the chunks'). Not OK: rejected (reported).
    std::function<absl::Status(Value value, std::string serialized, const std::string& fnv1a64)>
        apply;
    // The version being served, "" for none (named in rejections).
    std::function<std::string()> serving_version;
  };

  WatchFollower(Protocol protocol, WatchFollowerOptions options)
      : protocol_(std::move(protocol)),
        state_(std::move(options), protocol_.peer, protocol_.value_name) {}
  ~WatchFollower() { Stop(); }

  // Follows in a background thread until Stop().
  void Start() {
    state_.StartWatchdog();
    thread_ = std::thread([this] { Follow(); });
  }
  void Stop() {
    state_.Stop();
    if (thread_.joinable()) thread_.join();
  }

  // A value served before following (a cache file written at `synced_at`).
  void Took(const std::string& version, absl::Time synced_at) { state_.Took(version, synced_at); }
  double AgeSeconds() const { return state_.AgeSeconds(); }
  absl::Duration retry_delay() const { return state_.retry_delay(); }

 private:
  void Follow() {
    while (true) {
      grpc::ClientContext context;
      Request request;
      std::string known;
      if (!state_.BeginCall(&context, &known)) return;
      FillRequest(known, &request);
      context.set_wait_for_ready(true);
      std::unique_ptr<grpc::ClientReaderInterface<Response>> reader =
          protocol_.open(&context, request);
      reader->WaitForInitialMetadata();  // the writer accepted the watch, or the call ended
      state_.Accepted(context, protocol_.version_header, protocol_.heartbeat_header);
      ReadStream(reader.get(), &context);
      if (!state_.EndCall(reader->Finish())) return;
    }
  }

  void FillRequest(const std::string& known, Request* request) const {
    request->set_known_version(known);
    const absl::Duration heartbeat = state_.options().heartbeat_interval;
    if (heartbeat > absl::ZeroDuration()) {
      request->set_heartbeat_interval_millis(
          static_cast<int32_t>(absl::ToInt64Milliseconds(heartbeat)));
    }
    request->set_accept_chunks(true);
  }

  // Reads until the stream ends, applying every whole value.
  void ReadStream(grpc::ClientReaderInterface<Response>* reader, grpc::ClientContext* context) {
    SnapshotAssembler<Value> assembler;
    Response update;
    while (reader->Read(&update)) {
      std::string serialized, checksum;
      absl::StatusOr<Value> value = Unpack(&update, &assembler, &serialized, &checksum);
      update.Clear();
      if (absl::IsDataLoss(value.status())) {
        // Out of order, corrupt or mislabelled chunks: drop them, keep
        // serving, and reconnect so the writer sends the value again.
        state_.SetApplying(false);
        Reject(value.status());
        context->TryCancel();
        break;
      }
      if (!value.ok()) continue;  // a heartbeat, or a chunk of a value still arriving
      Apply(*std::move(value), std::move(serialized), checksum);
    }
    if (assembler.in_progress()) {
      Reject(absl::DataLossError(absl::StrCat("watch stream ended after ", assembler.received(),
                                              " of ", assembler.total(), " bytes of ",
                                              protocol_.value_name, " ", assembler.version())));
      assembler.Reset();
    }
  }

  // The value `update` completes: kUnavailable while there is none (a
  // heartbeat, a chunk of a value still arriving), kDataLoss for bad chunks.
  absl::StatusOr<Value> Unpack(Response* update, SnapshotAssembler<Value>* assembler,
                               std::string* serialized, std::string* checksum) {
    if (update->has_chunk()) {
      state_.Heard(/*heartbeat=*/false);
      if (absl::Status added = assembler->Add(update->chunk()); !added.ok()) return added;
      if (!assembler->complete()) return absl::UnavailableError("chunk of a value");
      // Checking and parsing a large value takes seconds without reading the
      // stream: not silence for the watchdog.
      state_.SetApplying(true);
      return assembler->Take(serialized, checksum);
    }
    if (Value* whole = protocol_.value_of(update); whole != nullptr) {
      state_.Heard(/*heartbeat=*/false);
      assembler->Reset();
      return std::move(*whole);
    }
    state_.Heard(/*heartbeat=*/true);
    return absl::UnavailableError("heartbeat");
  }

  void Apply(Value value, std::string serialized, const std::string& checksum) {
    state_.SetApplying(true);
    std::string version = value.version();
    if (absl::Status applied = protocol_.apply(std::move(value), std::move(serialized), checksum);
        applied.ok()) {
      state_.Took(version);
    } else {
      Reject(applied);
    }
    state_.SetApplying(false);
  }

  void Reject(const absl::Status& status) {
    state_.Reject(status, protocol_.serving_version ? protocol_.serving_version() : "");
  }

  const Protocol protocol_;
  WatchFollowerState state_;
  std::thread thread_;
};

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_WATCH_FOLLOWER_H_
