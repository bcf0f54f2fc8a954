#ifndef GPUADVISOR_SERVICES_SIZING_FORMULAS_H_
#define GPUADVISOR_SERVICES_SIZING_FORMULAS_H_

// Closed-form formulas from the literature that the sizing model calls. Each
// is used by the engine; the calibration test checks the engine as a whole
// through SizingModel::Estimate (data/sizing/calibration.textproto). All
// functions are pure, thread-safe, take and return SI units (bytes, seconds,
// FLOPs) and never fail: callers validate their inputs (positive, finite)
// first.

namespace gpuadvisor::sizing {

// nccl-tests doc/PERFORMANCE.md: ring all-reduce of `bytes` per rank over
// `ranks` ranks at bus bandwidth `bus_bytes_per_second`:
// t = bytes / busbw * 2 (n - 1) / n. Zero for one rank.
double AllReduceSeconds(double bytes, int ranks, double bus_bytes_per_second);

// All-gather or reduce-scatter of a `bytes` array: t = bytes / busbw * (n - 1) / n.
double AllGatherSeconds(double bytes, int ranks, double bus_bytes_per_second);

// Per-token bytes of the KV cache: 2 (K and V) x layers x kv_heads x head_dim
// x bytes per element (HANDBOOK A1.7). For MLA (kv_lora_rank > 0) the cache
// holds one compressed latent of kv_lora_rank + qk_rope_head_dim per layer.
double KvCacheBytesPerToken(int layers, int kv_heads, int head_dim, int kv_lora_rank,
                            int qk_rope_head_dim, double bytes_per_element);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_FORMULAS_H_
