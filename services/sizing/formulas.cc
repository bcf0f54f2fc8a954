#include "services/sizing/formulas.h"

namespace gpuadvisor::sizing {

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

double KvCacheBytesPerToken(int layers, int kv_heads, int head_dim, int kv_lora_rank,
                            int qk_rope_head_dim, double bytes_per_element) {
  if (kv_lora_rank > 0) {
    return static_cast<double>(layers) * (kv_lora_rank + qk_rope_head_dim) * bytes_per_element;
  }
  return 2.0 * layers * kv_heads * head_dim * bytes_per_element;
}

}  // namespace gpuadvisor::sizing
