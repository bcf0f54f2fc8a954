#include "common/metrics/metrics.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "prometheus/text_serializer.h"

namespace gpuadvisor {

prometheus::Histogram::BucketBoundaries LatencyBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
          0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};
}

Metrics::Metrics(std::string service)
    : service_(std::move(service)),
      registry_(std::make_shared<prometheus::Registry>()),
      server_started_(prometheus::BuildCounter()
                          .Name("grpc_server_started_total")
                          .Help("RPCs started on the server.")
                          .Register(*registry_)),
      server_handled_(prometheus::BuildCounter()
                          .Name("grpc_server_handled_total")
                          .Help("RPCs completed on the server, by status code.")
                          .Register(*registry_)),
      server_seconds_(prometheus::BuildHistogram()
                          .Name("grpc_server_handling_seconds")
                          .Help("Server-side RPC latency in seconds.")
                          .Register(*registry_)),
      client_handled_(prometheus::BuildCounter()
                          .Name("grpc_client_handled_total")
                          .Help("RPCs to backends completed, by status code.")
                          .Register(*registry_)),
      client_seconds_(prometheus::BuildHistogram()
                          .Name("grpc_client_handling_seconds")
                          .Help("Latency of RPCs to backends in seconds.")
                          .Register(*registry_)),
      loads_(prometheus::BuildCounter()
                 .Name("gpuadvisor_data_loads_total")
                 .Help("Data loads and reloads, by result.")
                 .Register(*registry_)),
      loads_ok_(loads_.Add({{"service", service_}, {"result", "ok"}})),
      loads_rejected_(loads_.Add({{"service", service_}, {"result", "rejected"}})),
      last_load_timestamp_(prometheus::BuildGauge()
                               .Name("gpuadvisor_data_last_load_timestamp_seconds")
                               .Help("Unix time of the last accepted data load.")
                               .Register(*registry_)
                               .Add({{"service", service_}})) {
  collectables_.push_back(registry_);
}

void Metrics::AddCollectable(std::shared_ptr<prometheus::Collectable> collectable) {
  collectables_.push_back(std::move(collectable));
}

std::string Metrics::Serialize() const {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& collectable : collectables_) {
    std::vector<prometheus::MetricFamily> collected = collectable->Collect();
    families.insert(families.end(), std::make_move_iterator(collected.begin()),
                    std::make_move_iterator(collected.end()));
  }
  return prometheus::TextSerializer().Serialize(families);
}

prometheus::Counter& Metrics::CounterFor(prometheus::Family<prometheus::Counter>& family,
                                         const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(static_cast<const void*>(&family), labels);
  auto it = counters_.find(key);
  if (it == counters_.end()) it = counters_.emplace(key, &family.Add(labels)).first;
  return *it->second;
}

prometheus::Histogram& Metrics::HistogramFor(prometheus::Family<prometheus::Histogram>& family,
                                             const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(static_cast<const void*>(&family), labels);
  auto it = histograms_.find(key);
  if (it == histograms_.end()) it = histograms_.emplace(key, &family.Add(labels, LatencyBuckets())).first;
  return *it->second;
}

namespace {
std::map<std::string, std::string> RpcLabels(const std::string& grpc_type,
                                             const std::string& grpc_service,
                                             const std::string& method) {
  return {{"grpc_type", grpc_type}, {"grpc_service", grpc_service}, {"grpc_method", method}};
}
}  // namespace

void Metrics::InitializeMethods(const std::string& grpc_service,
                                const std::vector<std::pair<std::string, std::string>>& methods) {
  for (const auto& [method, grpc_type] : methods) {
    Labels labels = RpcLabels(grpc_type, grpc_service, method);
    CounterFor(server_started_, labels);
    HistogramFor(server_seconds_, labels);
    labels["grpc_code"] = GrpcCodeLabel(grpc::StatusCode::OK);
    CounterFor(server_handled_, labels);
  }
}

void Metrics::ServerStarted(const std::string& grpc_type, const std::string& grpc_service,
                            const std::string& method) {
  CounterFor(server_started_, RpcLabels(grpc_type, grpc_service, method)).Increment();
}

void Metrics::ServerHandled(const std::string& grpc_type, const std::string& grpc_service,
                            const std::string& method, grpc::StatusCode code, double seconds) {
  Labels labels = RpcLabels(grpc_type, grpc_service, method);
  HistogramFor(server_seconds_, labels).Observe(seconds);
  labels["grpc_code"] = GrpcCodeLabel(code);
  CounterFor(server_handled_, labels).Increment();
}

void Metrics::ClientHandled(const std::string& grpc_service, const std::string& method,
                            grpc::StatusCode code, double seconds) {
  Labels labels = RpcLabels("unary", grpc_service, method);
  HistogramFor(client_seconds_, labels).Observe(seconds);
  labels["grpc_code"] = GrpcCodeLabel(code);
  CounterFor(client_handled_, labels).Increment();
}

void Metrics::DataLoaded(bool accepted, double unix_seconds) {
  if (accepted) {
    loads_ok_.Increment();
    last_load_timestamp_.Set(unix_seconds);
  } else {
    loads_rejected_.Increment();
  }
}

RpcScope::RpcScope(Metrics* metrics, std::string grpc_service, std::string method,
                   std::string grpc_type)
    : metrics_(metrics),
      service_(std::move(grpc_service)),
      method_(std::move(method)),
      type_(std::move(grpc_type)),
      start_(std::chrono::steady_clock::now()) {
  if (metrics_ != nullptr) metrics_->ServerStarted(type_, service_, method_);
}

RpcScope::RpcScope(RpcScope&& other) noexcept
    : metrics_(other.metrics_),
      service_(std::move(other.service_)),
      method_(std::move(other.method_)),
      type_(std::move(other.type_)),
      start_(other.start_),
      finished_(other.finished_) {
  other.finished_ = true;
}

RpcScope::~RpcScope() {
  if (!finished_) Finish(grpc::Status(grpc::StatusCode::UNKNOWN, "handler did not finish"));
}

grpc::Status RpcScope::Finish(grpc::Status status) {
  if (!finished_ && metrics_ != nullptr) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    metrics_->ServerHandled(type_, service_, method_, status.error_code(), seconds);
  }
  finished_ = true;
  return status;
}

absl::StatusOr<MetricsEndpoint> ServeMetrics(const std::string& address, Metrics& metrics) {
  MetricsEndpoint endpoint;
  try {
    endpoint.exposer = std::make_unique<prometheus::Exposer>(address);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("metrics endpoint ", address, ": ", e.what()));
  }
  for (const auto& collectable : metrics.collectables()) endpoint.exposer->RegisterCollectable(collectable);
  const auto ports = endpoint.exposer->GetListeningPorts();
  if (ports.empty()) return absl::UnavailableError(absl::StrCat("metrics endpoint ", address, ": not bound"));
  endpoint.port = ports.front();
  return endpoint;
}

}  // namespace gpuadvisor
