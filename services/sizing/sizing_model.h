#ifndef GPUADVISOR_SERVICES_SIZING_SIZING_MODEL_H_
#define GPUADVISOR_SERVICES_SIZING_SIZING_MODEL_H_

// The sizing domain model: memory per GPU, parallel plan, throughput and time
// of a workload on GPU configurations. Pure C++ over model presets and GPU
// specs (no gRPC); the formulas and their sources are in docs/sizing.md.
//
// Thread safety: a SizingModel is immutable after Create(); concurrent const
// calls are safe. It is movable and cheap to share through
// std::shared_ptr<const SizingModel>.

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/sizing/model_spec.h"

namespace gpuadvisor::sizing {

// One GPU's datasheet figures plus what the throughput model derives from
// them. Units: bytes, bytes/s, FLOP/s.
struct GpuSpec {
  std::string name;
  std::string vendor;
  double memory_bytes = 0;
  double memory_bandwidth = 0;
  double bf16_flops = 0;  // 0 when unsupported
  double fp16_flops = 0;
  double fp8_flops = 0;   // 0 when unsupported
  double fp32_flops = 0;  // vector FP32; 0 when not published
  double nvlink_bytes_per_second = 0;
  // Fraction of the 16-bit peak that dense transformer GEMM work reaches on
  // this GPU before model-size and batch effects (docs/sizing.md, "MFU").
  double compute_efficiency = 0;
};

class SizingModel {
 public:
  // Validates presets and GPU specs: kInvalidArgument naming the entry
  // ("models[3].attention_heads: ...", "gpus[2].memory_bytes: ..."), also for
  // duplicate names or aliases.
  static absl::StatusOr<SizingModel> Create(gpuadvisor::sizing::v1::ModelList models,
                                            gpuadvisor::catalog::v1::GpuList gpus);

  // Loads a data/sizing/models.textproto-style ModelList and a
  // data/catalog/gpus.textproto-style GpuList (file:line:col parse errors).
  static absl::StatusOr<SizingModel> FromFiles(const std::string& models_path,
                                               const std::string& gpus_path);

  // FromFiles on the layout of data/: <data_dir>/sizing/models.textproto and
  // <data_dir>/catalog/gpus.textproto.
  static absl::StatusOr<SizingModel> FromDataDir(const std::string& data_dir);

  // Sizes one workload on every configuration, in request order.
  // Errors: kInvalidArgument with the field path ("workload.model.params: must
  // be > 0", "configurations[1].nodes: must be in [1, 100000]");
  // kNotFound for an unknown preset ("workload.model.preset") or GPU
  // ("configurations[i].gpu_model"). A configuration the workload does not
  // fit is not an error: its estimate has fits = false and not_fit_reason.
  absl::StatusOr<gpuadvisor::sizing::v1::EstimateResponse> Estimate(
      const gpuadvisor::sizing::v1::EstimateRequest& request) const;

  // Every preset, resolved (derived fields filled in), in file order.
  gpuadvisor::sizing::v1::ListModelsResponse ListModels() const;

  // The GPU behind a canonical name or alias (case, spaces, '-' and '_'
  // ignored), or nullptr.
  const GpuSpec* FindGpu(const std::string& name) const;

 private:
  struct Data;
  explicit SizingModel(std::shared_ptr<const Data> data) : data_(std::move(data)) {}

  std::shared_ptr<const Data> data_;
};

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_SIZING_MODEL_H_
