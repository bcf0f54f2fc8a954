#include "services/sizing/sizing_service_impl.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/io/fingerprint.h"
#include "common/metrics/process_metrics.h"
#include "common/status/grpc_status.h"

namespace gpuadvisor::sizing {
namespace {
constexpr char kService[] = "gpuadvisor.sizing.v1.SizingService";
}  // namespace

SizingServiceImpl::SizingServiceImpl(std::shared_ptr<const SizingModel> model, Metrics* metrics)
    : model_(std::move(model)),
      metrics_(metrics),
      estimate_rpc_(metrics->ServerMethod(kService, "Estimate")),
      fingerprint_(FingerprintHex(
          absl::StrCat(model_->data_fingerprint(), "/", BuildVersion(), "/", BuildCommit()))) {
  metrics_->InitializeMethods(kService, {{"Estimate", "unary"}, {"ListModels", "unary"}});
}

grpc::ServerUnaryReactor* SizingServiceImpl::Estimate(grpc::CallbackServerContext* context,
                                                      const v1::EstimateRequest* request,
                                                      v1::EstimateResponse* response) {
  RpcScope rpc(&estimate_rpc_);
  absl::StatusOr<v1::EstimateResponse> estimate = model_->Estimate(*request);
  if (estimate.ok()) {
    *response = std::move(*estimate);
    response->set_model_fingerprint(fingerprint_);
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(rpc.Finish(estimate.ok() ? grpc::Status::OK : ToGrpcStatus(estimate.status())));
  return reactor;
}

grpc::Status SizingServiceImpl::ListModels(grpc::ServerContext*, const v1::ListModelsRequest*,
                                           v1::ListModelsResponse* response) {
  RpcScope rpc(metrics_, kService, "ListModels");
  *response = model_->ListModels();
  response->set_model_fingerprint(fingerprint_);
  return rpc.Finish(grpc::Status::OK);
}

}  // namespace gpuadvisor::sizing
