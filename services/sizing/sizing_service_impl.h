#ifndef GPUADVISOR_SERVICES_SIZING_SIZING_SERVICE_IMPL_H_
#define GPUADVISOR_SERVICES_SIZING_SIZING_SERVICE_IMPL_H_

// gRPC adapter for gpuadvisor.sizing.v1.SizingService over a SizingModel.
// Estimate is CPU-only and runs on the gRPC callback API: answered on the gRPC
// thread that delivered the request (no handler thread, no handoff).
// Every answer names the model that gave it (model_fingerprint: the model's
// data fingerprint with the build's version and commit). Stateless apart
// from the immutable model; thread-safe.

#include <memory>
#include <string>

#include "common/metrics/metrics.h"
#include "gpuadvisor/sizing/v1/sizing.grpc.pb.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {

class SizingServiceImpl final
    : public v1::SizingService::WithCallbackMethod_Estimate<v1::SizingService::Service> {
 public:
  // `metrics` must outlive the service.
  SizingServiceImpl(std::shared_ptr<const SizingModel> model, Metrics* metrics);

  // (The synchronous overload is the generated one that is never called.)
  using v1::SizingService::WithCallbackMethod_Estimate<v1::SizingService::Service>::Estimate;
  grpc::ServerUnaryReactor* Estimate(grpc::CallbackServerContext* context,
                                     const v1::EstimateRequest* request,
                                     v1::EstimateResponse* response) override;
  grpc::Status ListModels(grpc::ServerContext* context, const v1::ListModelsRequest* request,
                          v1::ListModelsResponse* response) override;

  // What every answer carries as model_fingerprint.
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  const std::shared_ptr<const SizingModel> model_;
  Metrics* metrics_;
  MethodMetrics& estimate_rpc_;  // resolved once
  const std::string fingerprint_;
};

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_SIZING_SERVICE_IMPL_H_
