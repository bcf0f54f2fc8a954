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
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/sizing/model_spec.h"

namespace gpuadvisor::sizing {

// One GPU's datasheet figures plus what the throughput model derives from
// them. Units: bytes, bytes/s, FLOP/s.
struct GpuSpec {
  std::string name;
  std::string vendor;
  std::string architecture;
  double memory_bytes = 0;
  double memory_bandwidth = 0;
  double bf16_flops = 0;  // 0 when unsupported
  double fp16_flops = 0;
  double fp8_flops = 0;   // 0 when unsupported
  double fp32_flops = 0;  // vector FP32; 0 when not published
  double nvlink_bytes_per_second = 0;
  // Fraction of the 16-bit peak that dense transformer GEMM work reaches on
  // this GPU before model-size, batch and framework effects: the generation's
  // efficiency base (data/sizing/profiles.textproto) scaled by memory
  // bandwidth per FLOP relative to A100 (docs/sizing.md, "MFU").
  double compute_efficiency = 0;
  // Achieved fraction of memory bandwidth in 16-bit decode.
  double decode_bandwidth_efficiency = 0;
  // Non-empty when the generation's efficiency is not measured
  // (EfficiencyBase.not_measured): the base's source, which names the
  // conservative default. Every estimate on it is warned.
  std::string efficiency_not_measured;
  // Fraction of compute_efficiency FP8 training keeps at the FP8 peak
  // (EfficiencyBase.fp8_training, else the engine's default_fp8_training).
  double fp8_training_factor = 0;
};

class SizingModel {
 public:
  // Validates presets and GPU specs: kInvalidArgument naming the entry
  // ("models[3].attention_heads: ...", "gpus[2].memory_bytes: ..."), also for
  // duplicate names or aliases.
  // `profiles` (framework profiles, efficiency bases, goodput) may be empty:
  // then every framework factor is 1 and no goodput is applied; without its
  // engine constants (SizingProfiles.engine) the model validates its data
  // but Estimate answers FAILED_PRECONDITION.
  static absl::StatusOr<SizingModel> Create(gpuadvisor::sizing::v1::ModelList models,
                                            gpuadvisor::catalog::v1::GpuList gpus,
                                            gpuadvisor::sizing::v1::SizingProfiles profiles = {});

  // Loads a data/sizing/models.textproto-style ModelList, a
  // data/catalog/gpus.textproto-style GpuList and, when `profiles_path` is
  // not empty, a data/sizing/profiles.textproto-style SizingProfiles; when
  // `error_intervals_path` is not empty, the error_intervals of that
  // SizingProfiles file are added, and when `engine_path` is not empty its
  // engine constants (file:line:col parse errors).
  static absl::StatusOr<SizingModel> FromFiles(const std::string& models_path,
                                               const std::string& gpus_path,
                                               const std::string& profiles_path = "",
                                               const std::string& error_intervals_path = "",
                                               const std::string& engine_path = "");

  // The service's path: the GPU specs as the catalog service lists them
  // (ListGpus, services/sizing/catalog_gpus.h), the rest from
  // <data_dir>/sizing/ (models, profiles, error intervals, engine).
  static absl::StatusOr<SizingModel> FromDataDir(const std::string& data_dir,
                                                 gpuadvisor::catalog::v1::GpuList gpus);

  // Tests and the calibration: FromFiles on the layout of data/, the GPU
  // specs read from the catalog's file: <data_dir>/sizing/models.textproto,
  // <data_dir>/catalog/gpus.textproto, <data_dir>/sizing/profiles.textproto,
  // <data_dir>/sizing/error_intervals.textproto and
  // <data_dir>/sizing/engine.textproto.
  static absl::StatusOr<SizingModel> FromDataDir(const std::string& data_dir);

  // Sizes one workload on every configuration, in request order: for each,
  // the fastest plan that fits (tie: less memory; an endpoint: the best
  // full-load tokens_per_second_per_user, estimator.h; a serving workload:
  // the fastest of the plans that meet request.serving_slo when any does,
  // else the one that misses it least) and the runner-up.
  // Errors: kInvalidArgument with the field path ("workload.model.params: must
  // be > 0", "configurations[1].nodes: must be in [1, 100000]");
  // a parallelism hint that divides none of the configurations names its
  // field ("workload.parallelism.tensor_parallel: ..."); an unknown framework
  // "workload.framework";
  // kNotFound for an unknown preset ("workload.model.preset") or GPU
  // ("configurations[i].gpu_model"). A configuration the workload does not
  // fit is not an error: its estimate has fits = false and not_fit_reason.
  absl::StatusOr<gpuadvisor::sizing::v1::EstimateResponse> Estimate(
      const gpuadvisor::sizing::v1::EstimateRequest& request) const;

  // Every preset, resolved (derived fields filled in), in file order.
  gpuadvisor::sizing::v1::ListModelsResponse ListModels() const;

  // 16 hex digits over the data this model was created from (presets, GPU
  // specs, profiles, error intervals; deterministic bytes): equal data, equal
  // fingerprint. The service adds its build (EstimateResponse.model_fingerprint).
  const std::string& data_fingerprint() const;

  // The GPU behind a canonical name or alias (case, spaces, '-' and '_'
  // ignored), else behind the catalog's spelling of one
  // (catalog::GpuNameResolver: "H100 SXM5", "A100-80G-PCIe"), or nullptr.
  const GpuSpec* FindGpu(const std::string& name) const;

 private:
  struct Data;
  explicit SizingModel(std::shared_ptr<const Data> data) : data_(std::move(data)) {}

  // The presets / GPU names closest to an unknown one, ", "-joined (for the
  // NOT_FOUND a request gets).
  std::string ClosestPresets(absl::string_view name) const;
  std::string ClosestGpus(absl::string_view name) const;

  std::shared_ptr<const Data> data_;
};

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_SIZING_MODEL_H_
