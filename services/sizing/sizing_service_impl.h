#ifndef GPUADVISOR_SERVICES_SIZING_SIZING_SERVICE_IMPL_H_
#define GPUADVISOR_SERVICES_SIZING_SIZING_SERVICE_IMPL_H_

// gRPC adapter for gpuadvisor.sizing.v1.SizingService over a SizingModel.
// Estimate is CPU-only and runs on the gRPC callback API: answered on the gRPC
// thread that delivered the request (no handler thread, no handoff).
// Every answer names the model that gave it (model_fingerprint: the model's
// data fingerprint with the build's version and commit). Stateless apart
// from the immutable model; thread-safe.
//
// A service built without a model (sizing_server waiting for the catalog's
// GPU list) answers UNAVAILABLE until SetModel; main() reports health
// SERVING only once has_model().

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/metrics/metrics.h"
#include "gpuadvisor/sizing/v1/sizing.grpc.pb.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {

class SizingServiceImpl final
    : public v1::SizingService::WithCallbackMethod_Estimate<v1::SizingService::Service> {
 public:
  // `metrics` must outlive the service. `model` may be null: see SetModel.
  SizingServiceImpl(std::shared_ptr<const SizingModel> model, Metrics* metrics);

  // Installs the model every later call answers with.
  void SetModel(std::shared_ptr<const SizingModel> model);
  bool has_model() const;

  // (The synchronous overload is the generated one that is never called.)
  using v1::SizingService::WithCallbackMethod_Estimate<v1::SizingService::Service>::Estimate;
  grpc::ServerUnaryReactor* Estimate(grpc::CallbackServerContext* context,
                                     const v1::EstimateRequest* request,
                                     v1::EstimateResponse* response) override;
  grpc::Status ListModels(grpc::ServerContext* context, const v1::ListModelsRequest* request,
                          v1::ListModelsResponse* response) override;

  // What every answer carries as model_fingerprint (empty without a model).
  std::string fingerprint() const;

 private:
  struct Loaded {
    std::shared_ptr<const SizingModel> model;
    std::string fingerprint;
  };
  std::shared_ptr<const Loaded> Current() const;

  Metrics* metrics_;
  MethodMetrics& estimate_rpc_;  // resolved once
  mutable absl::Mutex mu_;
  std::shared_ptr<const Loaded> loaded_ ABSL_GUARDED_BY(mu_);  // null until a model is set
};

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_SIZING_SERVICE_IMPL_H_
