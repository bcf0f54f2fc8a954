#ifndef GPUADVISOR_COMMON_METRICS_METRICS_H_
#define GPUADVISOR_COMMON_METRICS_METRICS_H_

// One owner for the Prometheus registry and the metric families every
// service shares (gRPC server and client RPC metrics, data-load metrics).
// Services add their own families to registry(). Thread-safe.

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/support/status.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace gpuadvisor {

class Metrics;

// The series of one RPC method, resolved once (Metrics::ServerMethod,
// Metrics::ClientMethod) and kept by the caller: recording a call takes no
// lock and builds no label map. The handled counter of a status code other
// than OK is created on the code's first use. Thread-safe.
class MethodMetrics {
 public:
  MethodMetrics(const MethodMetrics&) = delete;
  MethodMetrics& operator=(const MethodMetrics&) = delete;

  // grpc_server_started_total (a client method has none: no-op).
  void Started();
  // grpc_{server,client}_handled_total with the code, and the latency.
  void Handled(grpc::StatusCode code, double seconds);

 private:
  friend class Metrics;
  static constexpr int kCodes = 17;  // grpc::StatusCode OK (0) .. UNAUTHENTICATED (16)
  MethodMetrics(Metrics* owner, prometheus::Family<prometheus::Counter>* handled_family,
                std::map<std::string, std::string> labels, prometheus::Counter* started,
                prometheus::Histogram* seconds);

  Metrics* const owner_;
  prometheus::Family<prometheus::Counter>* const handled_family_;
  const std::map<std::string, std::string> labels_;  // without grpc_code
  prometheus::Counter* const started_;               // null for a client method
  prometheus::Histogram* const seconds_;
  std::atomic<prometheus::Counter*> handled_[kCodes] = {};  // by code, once used
};

class Metrics {
 public:
  // `service` labels the data-load metrics ("catalog", "pricing", ...).
  explicit Metrics(std::string service);

  prometheus::Registry& registry() { return *registry_; }
  std::shared_ptr<prometheus::Registry> shared_registry() { return registry_; }

  // Adds a collectable computed at scrape time (for values such as an age
  // that change without any event to record them). Served with the registry.
  void AddCollectable(std::shared_ptr<prometheus::Collectable> collectable);
  const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables() const {
    return collectables_;
  }

  // The Prometheus text exposition of everything registered.
  std::string Serialize() const;

  // Creates the server series of each method at zero (started, handled with
  // grpc_code="OK", latency), so rate() sees the first calls after a start
  // instead of a series that appears mid-burst. Call once per service.
  // `methods` are (method, grpc_type) pairs: "unary", "server_stream", ...
  void InitializeMethods(const std::string& grpc_service,
                         const std::vector<std::pair<std::string, std::string>>& methods);

  // The series of a server method (grpc_server_*) or of calls to a backend
  // method (grpc_client_*), created at zero (started, latency, handled with
  // grpc_code="OK") on the first ask. Look them up once (a member of the
  // service) and record through the handle: the lookup takes a lock and
  // builds labels, recording does not. The handle lives as long as this.
  MethodMetrics& ServerMethod(const std::string& grpc_service, const std::string& method,
                              const std::string& grpc_type = "unary");
  MethodMetrics& ClientMethod(const std::string& grpc_service, const std::string& method);

  // grpc_server_* metrics (go-grpc-prometheus names and labels), looked up
  // per call: for methods off the hot path.
  void ServerStarted(const std::string& grpc_type, const std::string& grpc_service,
                     const std::string& method);
  void ServerHandled(const std::string& grpc_type, const std::string& grpc_service,
                     const std::string& method, grpc::StatusCode code, double seconds);
  // grpc_client_* metrics, for calls to backends.
  void ClientHandled(const std::string& grpc_service, const std::string& method,
                     grpc::StatusCode code, double seconds);

  // gpuadvisor_data_loads_total{service,result="ok"|"rejected"} and the
  // timestamp of the last accepted load.
  void DataLoaded(bool accepted, double unix_seconds);

 private:
  friend class MethodMetrics;
  using Labels = std::map<std::string, std::string>;
  MethodMetrics& MethodFor(bool server, const std::string& grpc_type,
                           const std::string& grpc_service, const std::string& method);
  // Family::Add() takes a lock and hashes labels; the hot path looks the
  // child up in our own cache keyed by (family, labels) instead.
  prometheus::Counter& CounterFor(prometheus::Family<prometheus::Counter>& family,
                                  const Labels& labels);
  prometheus::Histogram& HistogramFor(prometheus::Family<prometheus::Histogram>& family,
                                      const Labels& labels);

  const std::string service_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;  // includes registry_
  prometheus::Family<prometheus::Counter>& server_started_;
  prometheus::Family<prometheus::Counter>& server_handled_;
  prometheus::Family<prometheus::Histogram>& server_seconds_;
  prometheus::Family<prometheus::Counter>& client_handled_;
  prometheus::Family<prometheus::Histogram>& client_seconds_;
  prometheus::Family<prometheus::Counter>& loads_;
  prometheus::Counter& loads_ok_;
  prometheus::Counter& loads_rejected_;
  prometheus::Gauge& last_load_timestamp_;

  std::mutex mu_;  // guards the caches; Family::Add is itself thread-safe
  std::map<std::pair<const void*, Labels>, prometheus::Counter*> counters_;
  std::map<std::pair<const void*, Labels>, prometheus::Histogram*> histograms_;
  // By (server?, type, service, method).
  std::map<std::tuple<bool, std::string, std::string, std::string>, std::unique_ptr<MethodMetrics>>
      methods_;
};

// Records one server RPC: started on construction, handled with its code and
// latency when Finish() is called (or as UNKNOWN if never finished).
class RpcScope {
 public:
  // The hot path: `method` resolved once (Metrics::ServerMethod); may be null
  // (records nothing).
  explicit RpcScope(MethodMetrics* method);
  // Looks the method up on each call. `grpc_type` as in go-grpc-prometheus:
  // "unary" or "server_stream".
  RpcScope(Metrics* metrics, const std::string& grpc_service, const std::string& method,
           const std::string& grpc_type = "unary");
  ~RpcScope();
  RpcScope(const RpcScope&) = delete;
  RpcScope& operator=(const RpcScope&) = delete;
  // Moves the record (to an async call object); `other` then records nothing.
  RpcScope(RpcScope&& other) noexcept;

  // Records the outcome and returns `status` unchanged.
  grpc::Status Finish(grpc::Status status);

 private:
  MethodMetrics* method_;
  std::chrono::steady_clock::time_point start_;
  bool finished_ = false;
};

// Serves /metrics for `metrics` on `address` ("127.0.0.1:0" picks a port).
struct MetricsEndpoint {
  std::unique_ptr<prometheus::Exposer> exposer;
  int port = 0;
};
absl::StatusOr<MetricsEndpoint> ServeMetrics(const std::string& address, Metrics& metrics);

// Default latency buckets in seconds.
prometheus::Histogram::BucketBoundaries LatencyBuckets();

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_METRICS_METRICS_H_
