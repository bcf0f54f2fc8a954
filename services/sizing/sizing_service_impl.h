#ifndef GPUADVISOR_SERVICES_SIZING_SIZING_SERVICE_IMPL_H_
#define GPUADVISOR_SERVICES_SIZING_SIZING_SERVICE_IMPL_H_

// gRPC adapter for gpuadvisor.sizing.v1.SizingService over a SizingModel.
// Estimate is CPU-only and runs on the gRPC callback API: answered on the gRPC
// thread that delivered the request (no handler thread, no handoff).
// Stateless apart from the immutable model; thread-safe.

#include <memory>

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

 private:
  const std::shared_ptr<const SizingModel> model_;
  Metrics* metrics_;
  MethodMetrics& estimate_rpc_;  // resolved once
};

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_SIZING_SERVICE_IMPL_H_
