#include "services/gateway/gateway_service_impl.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status/grpc_status.h"
#include "common/validation/field_ranges.h"
#include "grpcpp/client_context.h"
#include "services/catalog/provenance.h"
#include "services/gateway/backend_status.h"
#include "services/gateway/workload_defaults.h"

namespace gpuadvisor::gateway {
namespace {

constexpr char kService[] = "gpuadvisor.gateway.v1.GatewayService";

}  // namespace

absl::Status MapBackendStatus(Backend backend, const grpc::Status& status) {
  const char* name = backend == Backend::kSizing ? "sizing" : "pricing";
  const absl::Status s = FromGrpcStatus(status);
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kResourceExhausted:
      return absl::Status(s.code(), absl::StrCat(name, " backend: ", s.message()));
    case absl::StatusCode::kFailedPrecondition:
      // Pricing does not hold the catalog version asked for (yet): the
      // caller (RecommendCall::Quoted) retries, then reports it as UNAVAILABLE.
      if (backend == Backend::kPricing)
        return absl::Status(s.code(), absl::StrCat(name, " backend: ", s.message()));
      [[fallthrough]];
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
      if (backend == Backend::kSizing) return s;
      [[fallthrough]];
    default:
      return absl::InternalError(absl::StrCat(name, " backend rejected the gateway's request (",
                                              absl::StatusCodeToString(s.code()),
                                              "): ", s.message()));
  }
}

namespace {

std::unique_ptr<grpc::ClientContext> BackendContext(grpc::ServerContext* context,
                                                    absl::Duration timeout) {
  std::unique_ptr<grpc::ClientContext> client = grpc::ClientContext::FromServerContext(*context);
  // The child deadline is the earlier of the caller's and ours.
  client->set_deadline(std::chrono::system_clock::now() +
                       std::chrono::microseconds(absl::ToInt64Microseconds(timeout)));
  return client;
}

absl::Status NoCatalogYet() {
  return absl::UnavailableError(
      "gateway has no catalog snapshot yet (catalog backend not reached)");
}

}  // namespace

GatewayServiceImpl::GatewayServiceImpl(catalog::CatalogReplica* replica,
                                       std::unique_ptr<sizing::v1::SizingService::Stub> sizing,
                                       std::unique_ptr<pricing::v1::PricingService::Stub> pricing,
                                       Metrics* metrics, Options options)
    : replica_(replica),
      index_cache_(options.index_cache != nullptr ? options.index_cache : &own_index_cache_),
      sizing_(std::move(sizing)),
      pricing_(std::move(pricing)),
      metrics_(metrics),
      options_(options),
      limiter_(options.rate_limit),
      gateway_metrics_(metrics),
      quote_classes_(options.overheads),
      pipeline_options_{.price_book = options.price_book,
                        .region_groups = options.region_groups,
                        .overheads = options.overheads,
                        .estimate_cache = options.estimate_cache,
                        .quote_classes = &quote_classes_} {
  if (options_.sizing_probe_interval > absl::ZeroDuration()) {
    sizing_probe_ = std::thread([this] { ProbeSizing(); });
  }
}

GatewayServiceImpl::~GatewayServiceImpl() {
  {
    absl::MutexLock lock(&probe_mu_);
    probe_stop_ = true;
  }
  if (sizing_probe_.joinable()) sizing_probe_.join();
}

std::shared_ptr<const OfferIndex> GatewayServiceImpl::ServingIndex() {
  if (!options_.price_book) return index_cache_->Get(replica_->Current());
  return index_cache_->Get(replica_->Current(), [this](const std::string& version) {
    return options_.price_book(version) != nullptr;
  });
}

std::string GatewayServiceImpl::SizingModel() const {
  absl::MutexLock lock(&sizing_model_mu_);
  return sizing_model_;
}

void GatewayServiceImpl::HeardSizingModel(const std::string& fingerprint) {
  {
    absl::MutexLock lock(&sizing_model_mu_);
    if (fingerprint == sizing_model_) return;
    sizing_model_ = fingerprint;
  }
  // Another sizing model (a deploy): estimates of the old one are dropped,
  // and the response cache's keys name the new one.
  gateway_metrics_.sizing_model_changes().Increment();
  if (options_.estimate_cache != nullptr) options_.estimate_cache->SetModel(fingerprint);
}

void GatewayServiceImpl::ProbeSizing() {
  absl::MutexLock lock(&probe_mu_);
  while (!probe_stop_) {
    probe_mu_.Unlock();
    grpc::ClientContext client;
    client.set_deadline(absl::ToChronoTime(absl::Now() + options_.backend_timeout));
    sizing::v1::ListModelsResponse models;
    const absl::Time start = absl::Now();
    const grpc::Status status =
        sizing_->ListModels(&client, sizing::v1::ListModelsRequest(), &models);
    metrics_->ClientHandled("gpuadvisor.sizing.v1.SizingService", "ListModels", status.error_code(),
                            absl::ToDoubleSeconds(absl::Now() - start));
    if (status.ok()) HeardSizingModel(models.model_fingerprint());
    probe_mu_.Lock();
    probe_mu_.AwaitWithTimeout(absl::Condition(&probe_stop_), options_.sizing_probe_interval);
  }
}

absl::StatusOr<sizing::v1::EstimateResponse> GatewayServiceImpl::CallEstimate(
    grpc::ServerContext* context, const sizing::v1::EstimateRequest& request) {
  std::unique_ptr<grpc::ClientContext> client = BackendContext(context, options_.backend_timeout);
  sizing::v1::EstimateResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status status = sizing_->Estimate(client.get(), request, &response);
  gateway_metrics_.sizing_estimate().Handled(status.error_code(),
                                             absl::ToDoubleSeconds(absl::Now() - start));
  if (!status.ok()) return MapBackendStatus(Backend::kSizing, status);
  return response;
}

grpc::Status GatewayServiceImpl::Estimate(grpc::ServerContext* context,
                                          const v1::EstimateRequest* request,
                                          v1::EstimateResponse* response) {
  RpcScope rpc(metrics_, kService, "Estimate");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  // Every number's physical range, from the table all services share.
  if (absl::Status s = validation::CheckRanges(*request); !s.ok()) {
    return rpc.Finish(ToGrpcStatus(s));
  }
  sizing::v1::EstimateRequest forward;
  *forward.mutable_workload() = request->workload();
  std::vector<v1::Assumption> assumptions;
  if (absl::Status s =
          ApplyWorkloadDefaults(*forward.mutable_workload(), assumptions, WorkloadUse::kSize);
      !s.ok()) {
    return rpc.Finish(ToGrpcStatus(s));
  }
  *forward.mutable_configurations() = request->configurations();
  if (request->has_vram_margin()) forward.set_vram_margin(request->vram_margin());
  if (request->has_serving_slo()) *forward.mutable_serving_slo() = request->serving_slo();
  absl::StatusOr<sizing::v1::EstimateResponse> sized = CallEstimate(context, forward);
  if (!sized.ok()) return rpc.Finish(ToGrpcStatus(sized.status()));
  HeardSizingModel(sized->model_fingerprint());
  response->mutable_estimates()->Swap(sized->mutable_estimates());
  response->mutable_totals()->Swap(sized->mutable_totals());
  AddSizedAssumptions(forward.workload(), *sized, assumptions);
  response->mutable_model()->Swap(sized->mutable_model());
  for (v1::Assumption& a : assumptions) *response->add_assumptions() = std::move(a);
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status GatewayServiceImpl::ListOffers(grpc::ServerContext* context,
                                            const catalog::v1::ListOffersRequest* request,
                                            catalog::v1::ListOffersResponse* response) {
  RpcScope rpc(metrics_, kService, "ListOffers");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  std::shared_ptr<const catalog::Catalog> current = replica_->Current();
  if (current == nullptr) return rpc.Finish(ToGrpcStatus(NoCatalogYet()));
  absl::StatusOr<catalog::v1::ListOffersResponse> offers = current->ListOffers(*request);
  if (!offers.ok()) return rpc.Finish(ToGrpcStatus(offers.status()));
  *response = std::move(*offers);
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status GatewayServiceImpl::ListGpus(grpc::ServerContext* context,
                                          const catalog::v1::ListGpusRequest*,
                                          catalog::v1::ListGpusResponse* response) {
  RpcScope rpc(metrics_, kService, "ListGpus");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  std::shared_ptr<const catalog::Catalog> current = replica_->Current();
  if (current == nullptr) return rpc.Finish(ToGrpcStatus(NoCatalogYet()));
  *response->mutable_gpus() = current->snapshot().gpus();
  response->set_catalog_version(current->snapshot().version());
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status GatewayServiceImpl::ListSources(grpc::ServerContext* context,
                                             const catalog::v1::ListSourcesRequest*,
                                             catalog::v1::ListSourcesResponse* response) {
  RpcScope rpc(metrics_, kService, "ListSources");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  std::shared_ptr<const catalog::Catalog> current = replica_->Current();
  if (current == nullptr) return rpc.Finish(ToGrpcStatus(NoCatalogYet()));
  const catalog::v1::CatalogSnapshot& snapshot = current->snapshot();
  *response->mutable_sources() = snapshot.sources();
  for (catalog::v1::SourceState& s : *response->mutable_sources()) {
    if (s.kind() == "file") s.set_last_attempt_unix_seconds(snapshot.loaded_at_unix_seconds());
  }
  const absl::Time now = absl::Now();
  catalog::AgeSources(*response->mutable_sources(), now);
  response->set_catalog_version(snapshot.version());
  response->set_now_unix_seconds(absl::ToUnixSeconds(now));
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status GatewayServiceImpl::ListModels(grpc::ServerContext* context,
                                            const sizing::v1::ListModelsRequest* request,
                                            sizing::v1::ListModelsResponse* response) {
  RpcScope rpc(metrics_, kService, "ListModels");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  std::unique_ptr<grpc::ClientContext> client = BackendContext(context, options_.backend_timeout);
  const absl::Time start = absl::Now();
  const grpc::Status status = sizing_->ListModels(client.get(), *request, response);
  metrics_->ClientHandled("gpuadvisor.sizing.v1.SizingService", "ListModels", status.error_code(),
                          absl::ToDoubleSeconds(absl::Now() - start));
  if (!status.ok()) {
    response->Clear();
    return rpc.Finish(ToGrpcStatus(MapBackendStatus(Backend::kSizing, status)));
  }
  return rpc.Finish(grpc::Status::OK);
}

}  // namespace gpuadvisor::gateway
