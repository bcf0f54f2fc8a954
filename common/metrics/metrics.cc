#include "common/metrics/metrics.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "common/metrics/process_metrics.h"
#include "common/status/grpc_status.h"
#include "prometheus/text_serializer.h"

namespace gpuadvisor {

prometheus::Histogram::BucketBoundaries LatencyBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
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
  // CPU, memory, descriptors, start time and the build, for every service.
  collectables_.push_back(std::make_shared<ProcessMetrics>(service_));
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
  if (it == histograms_.end())
    it = histograms_.emplace(key, &family.Add(labels, LatencyBuckets())).first;
  return *it->second;
}

namespace {
std::map<std::string, std::string> RpcLabels(const std::string& grpc_type,
                                             const std::string& grpc_service,
                                             const std::string& method) {
  return {{"grpc_type", grpc_type}, {"grpc_service", grpc_service}, {"grpc_method", method}};
}
}  // namespace

MethodMetrics::MethodMetrics(Metrics* owner,
                             prometheus::Family<prometheus::Counter>* handled_family,
                             std::map<std::string, std::string> labels,
                             prometheus::Counter* started, prometheus::Histogram* seconds)
    : owner_(owner),
      handled_family_(handled_family),
      labels_(std::move(labels)),
      started_(started),
      seconds_(seconds) {}

void MethodMetrics::Started() {
  if (started_ != nullptr) started_->Increment();
}

void MethodMetrics::Handled(grpc::StatusCode code, double seconds) {
  seconds_->Observe(seconds);
  const int index = code >= 0 && code < kCodes ? static_cast<int>(code)
                                               : static_cast<int>(grpc::StatusCode::UNKNOWN);
  prometheus::Counter* handled = handled_[index].load(std::memory_order_acquire);
  if (handled == nullptr) {
    // First call with this code: Metrics' cache makes racing first calls
    // agree on one counter.
    std::map<std::string, std::string> labels = labels_;
    labels["grpc_code"] = GrpcCodeLabel(static_cast<grpc::StatusCode>(index));
    handled = &owner_->CounterFor(*handled_family_, labels);
    handled_[index].store(handled, std::memory_order_release);
  }
  handled->Increment();
}

MethodMetrics& Metrics::ServerMethod(const std::string& grpc_service, const std::string& method,
                                     const std::string& grpc_type) {
  return MethodFor(true, grpc_type, grpc_service, method);
}

MethodMetrics& Metrics::ClientMethod(const std::string& grpc_service, const std::string& method) {
  return MethodFor(false, "unary", grpc_service, method);
}

MethodMetrics& Metrics::MethodFor(bool server, const std::string& grpc_type,
                                  const std::string& grpc_service, const std::string& method) {
  auto key = std::make_tuple(server, grpc_type, grpc_service, method);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = methods_.find(key);
    if (it != methods_.end()) return *it->second;
  }
  const Labels labels = RpcLabels(grpc_type, grpc_service, method);
  prometheus::Counter* started = server ? &CounterFor(server_started_, labels) : nullptr;
  prometheus::Histogram* seconds =
      &HistogramFor(server ? server_seconds_ : client_seconds_, labels);
  auto created = std::unique_ptr<MethodMetrics>(new MethodMetrics(
      this, server ? &server_handled_ : &client_handled_, labels, started, seconds));
  MethodMetrics* handle = created.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = methods_.emplace(std::move(key), std::move(created));
    handle = it->second.get();
  }
  // The OK series exists at zero from the start (rate() sees the first calls).
  Labels ok = labels;
  ok["grpc_code"] = GrpcCodeLabel(grpc::StatusCode::OK);
  handle->handled_[0].store(&CounterFor(*handle->handled_family_, ok), std::memory_order_release);
  return *handle;
}

void Metrics::InitializeMethods(const std::string& grpc_service,
                                const std::vector<std::pair<std::string, std::string>>& methods) {
  for (const auto& [method, grpc_type] : methods) ServerMethod(grpc_service, method, grpc_type);
}

void Metrics::ServerStarted(const std::string& grpc_type, const std::string& grpc_service,
                            const std::string& method) {
  ServerMethod(grpc_service, method, grpc_type).Started();
}

void Metrics::ServerHandled(const std::string& grpc_type, const std::string& grpc_service,
                            const std::string& method, grpc::StatusCode code, double seconds) {
  ServerMethod(grpc_service, method, grpc_type).Handled(code, seconds);
}

void Metrics::ClientHandled(const std::string& grpc_service, const std::string& method,
                            grpc::StatusCode code, double seconds) {
  ClientMethod(grpc_service, method).Handled(code, seconds);
}

void Metrics::DataLoaded(bool accepted, double unix_seconds) {
  if (accepted) {
    loads_ok_.Increment();
    last_load_timestamp_.Set(unix_seconds);
  } else {
    loads_rejected_.Increment();
  }
}

RpcScope::RpcScope(MethodMetrics* method)
    : method_(method), start_(std::chrono::steady_clock::now()) {
  if (method_ != nullptr) method_->Started();
}

RpcScope::RpcScope(Metrics* metrics, const std::string& grpc_service, const std::string& method,
                   const std::string& grpc_type)
    : RpcScope(metrics != nullptr ? &metrics->ServerMethod(grpc_service, method, grpc_type)
                                  : nullptr) {}

RpcScope::RpcScope(RpcScope&& other) noexcept
    : method_(other.method_), start_(other.start_), finished_(other.finished_) {
  other.finished_ = true;
}

RpcScope::~RpcScope() {
  if (!finished_) Finish(grpc::Status(grpc::StatusCode::UNKNOWN, "handler did not finish"));
}

grpc::Status RpcScope::Finish(grpc::Status status) {
  if (!finished_ && method_ != nullptr) {
    method_->Handled(
        status.error_code(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
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
  for (const auto& collectable : metrics.collectables())
    endpoint.exposer->RegisterCollectable(collectable);
  const auto ports = endpoint.exposer->GetListeningPorts();
  if (ports.empty())
    return absl::UnavailableError(absl::StrCat("metrics endpoint ", address, ": not bound"));
  endpoint.port = ports.front();
  return endpoint;
}

}  // namespace gpuadvisor
