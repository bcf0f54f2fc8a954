#include "services/sizing/precision.h"

#include "absl/strings/str_cat.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {

double WeightBytesPerParam(v1::Precision p) {
  switch (p) {
    case v1::PRECISION_FP32:
      return 4.0;
    case v1::PRECISION_FP8:
    case v1::PRECISION_INT8:
      return 1.0;
    case v1::PRECISION_INT4:
      return 0.5 + 4.0 / 128.0;
    case v1::PRECISION_NF4:
      return 4.127 / 8.0;
    default:
      return 2.0;
  }
}

bool IsQuantized(v1::Precision p) {
  return p == v1::PRECISION_FP8 || p == v1::PRECISION_INT8 || p == v1::PRECISION_INT4 ||
         p == v1::PRECISION_NF4;
}

double BandwidthEfficiencyRatio(v1::Precision p, const v1::EngineConstants& k) {
  for (const v1::PrecisionBandwidth& b : k.precision_bandwidth()) {
    if (b.precision() == p) return b.bandwidth_fraction() / k.bf16_bandwidth_fraction();
  }
  return 1.0;
}

double Peak16(const GpuSpec& g) { return g.bf16_flops > 0 ? g.bf16_flops : g.fp16_flops; }

const char* PeakNoteCode(v1::Precision p) { return p == v1::PRECISION_FP8 ? "no_fp8" : "no_bf16"; }

double PeakFlops(const GpuSpec& g, v1::Precision p, bool training, std::string* note) {
  switch (p) {
    case v1::PRECISION_FP32:
      // NVIDIA Ampere and later run fp32 matmuls on TF32 tensor cores at half
      // the 16-bit rate; elsewhere the vector FP32 rate applies.
      if (g.vendor == "NVIDIA" && g.bf16_flops > 0) return g.bf16_flops / 2.0;
      return g.fp32_flops > 0 ? g.fp32_flops : Peak16(g) / 4.0;
    case v1::PRECISION_FP8:
      if (g.fp8_flops > 0) return g.fp8_flops;
      *note = absl::StrCat(g.name, " has no FP8: the estimate runs FP8 work at the 16-bit rate.");
      return Peak16(g);
    case v1::PRECISION_FP16:
      return g.fp16_flops > 0 ? g.fp16_flops : g.bf16_flops;
    default:
      if (g.bf16_flops > 0) return g.bf16_flops;
      *note = absl::StrCat(g.name, " has no BF16: the estimate uses FP16",
                           training ? " with loss scaling (overflow risk in training)." : ".");
      return g.fp16_flops;
  }
}

}  // namespace gpuadvisor::sizing
