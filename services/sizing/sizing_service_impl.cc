#include "services/sizing/sizing_service_impl.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/io/fingerprint.h"
#include "common/metrics/process_metrics.h"
#include "common/status/grpc_status.h"

namespace gpuadvisor::sizing {
namespace {
constexpr char kService[] = "gpuadvisor.sizing.v1.SizingService";
constexpr char kNoModel[] = "sizing is starting: waiting for the catalog's GPU list (ListGpus)";
}  // namespace

SizingServiceImpl::SizingServiceImpl(std::shared_ptr<const SizingModel> model, Metrics* metrics)
    : metrics_(metrics), estimate_rpc_(metrics->ServerMethod(kService, "Estimate")) {
  metrics_->InitializeMethods(kService, {{"Estimate", "unary"}, {"ListModels", "unary"}});
  if (model != nullptr) SetModel(std::move(model));
}

void SizingServiceImpl::SetModel(std::shared_ptr<const SizingModel> model) {
  auto loaded = std::make_shared<Loaded>();
  loaded->fingerprint = FingerprintHex(
      absl::StrCat(model->data_fingerprint(), "/", BuildVersion(), "/", BuildCommit()));
  loaded->model = std::move(model);
  absl::MutexLock lock(&mu_);
  loaded_ = std::move(loaded);
}

std::shared_ptr<const SizingServiceImpl::Loaded> SizingServiceImpl::Current() const {
  absl::MutexLock lock(&mu_);
  return loaded_;
}

bool SizingServiceImpl::has_model() const { return Current() != nullptr; }

std::string SizingServiceImpl::fingerprint() const {
  std::shared_ptr<const Loaded> loaded = Current();
  return loaded == nullptr ? std::string() : loaded->fingerprint;
}

grpc::ServerUnaryReactor* SizingServiceImpl::Estimate(grpc::CallbackServerContext* context,
                                                      const v1::EstimateRequest* request,
                                                      v1::EstimateResponse* response) {
  RpcScope rpc(&estimate_rpc_);
  const std::shared_ptr<const Loaded> loaded = Current();
  absl::StatusOr<v1::EstimateResponse> estimate =
      loaded == nullptr ? absl::UnavailableError(kNoModel) : loaded->model->Estimate(*request);
  if (estimate.ok()) {
    *response = std::move(*estimate);
    response->set_model_fingerprint(loaded->fingerprint);
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(rpc.Finish(estimate.ok() ? grpc::Status::OK : ToGrpcStatus(estimate.status())));
  return reactor;
}

grpc::Status SizingServiceImpl::ListModels(grpc::ServerContext*, const v1::ListModelsRequest*,
                                           v1::ListModelsResponse* response) {
  RpcScope rpc(metrics_, kService, "ListModels");
  const std::shared_ptr<const Loaded> loaded = Current();
  if (loaded == nullptr) return rpc.Finish(ToGrpcStatus(absl::UnavailableError(kNoModel)));
  *response = loaded->model->ListModels();
  response->set_model_fingerprint(loaded->fingerprint);
  return rpc.Finish(grpc::Status::OK);
}

}  // namespace gpuadvisor::sizing
