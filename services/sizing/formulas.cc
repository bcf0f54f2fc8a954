#include "services/sizing/formulas.h"

namespace gpuadvisor::sizing {

double ZeroModelStateBytesPerGpu(double params, int zero_stage, int dp, double k) {
  const double n = dp < 1 ? 1.0 : static_cast<double>(dp);
  switch (zero_stage) {
    case 0:
      return (2.0 + 2.0 + k) * params;
    case 1:
      return 4.0 * params + k * params / n;
    case 2:
      return 2.0 * params + (2.0 + k) * params / n;
    default:
      return (2.0 + 2.0 + k) * params / n;
  }
}

double AllReduceSeconds(double bytes, int ranks, double bus_bytes_per_second) {
  if (ranks <= 1 || bus_bytes_per_second <= 0) return 0.0;
  const double n = ranks;
  return bytes / bus_bytes_per_second * 2.0 * (n - 1.0) / n;
}

double AllGatherSeconds(double bytes, int ranks, double bus_bytes_per_second) {
  if (ranks <= 1 || bus_bytes_per_second <= 0) return 0.0;
  const double n = ranks;
  return bytes / bus_bytes_per_second * (n - 1.0) / n;
}

double ZeroCommunicationFactor(int zero_stage) { return zero_stage >= 3 ? 1.5 : 1.0; }

double KorthikantiActivationBytesPerLayer(double s, double b, double h, double a, int t,
                                          bool sequence_parallel, bool selective) {
  const double tp = t < 1 ? 1.0 : static_cast<double>(t);
  const double sbh = s * b * h;
  const double scores = selective ? 0.0 : 5.0 * a * s / (h * tp);
  const double linear = sequence_parallel ? 34.0 / tp : 10.0 + 24.0 / tp;
  return sbh * (linear + scores);
}

double MegatronModelFlopsPerIteration(double batch, double layers, double seq,
                                      double hidden, double vocab) {
  return 72.0 * batch * layers * seq * hidden * hidden *
         (1.0 + seq / (6.0 * hidden) + vocab / (12.0 * hidden * layers));
}

double MegatronTrainingSeconds(double tokens, double params, int gpus,
                               double achieved_flops_per_gpu, bool recompute) {
  if (gpus < 1 || achieved_flops_per_gpu <= 0) return 0.0;
  const double factor = recompute ? 8.0 : 6.0;
  return factor * tokens * params / (gpus * achieved_flops_per_gpu);
}

double KvCacheBytesPerToken(int layers, int kv_heads, int head_dim, int kv_lora_rank,
                            int qk_rope_head_dim, double bytes_per_element) {
  if (kv_lora_rank > 0) {
    return static_cast<double>(layers) * (kv_lora_rank + qk_rope_head_dim) *
           bytes_per_element;
  }
  return 2.0 * layers * kv_heads * head_dim * bytes_per_element;
}

}  // namespace gpuadvisor::sizing
