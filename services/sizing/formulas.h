#ifndef GPUADVISOR_SERVICES_SIZING_FORMULAS_H_
#define GPUADVISOR_SERVICES_SIZING_FORMULAS_H_

// Closed-form formulas from the literature that the sizing model is built on.
// They are public so that tests can check them against the published numbers
// directly (HANDBOOK.md B-01, B-02, B-17, B-29, B-35). All functions are pure,
// thread-safe, take and return SI units (bytes, seconds, FLOPs) and never
// fail: callers validate their inputs (positive, finite) first.

namespace gpuadvisor::sizing {

// ZeRO (Rajbhandari et al. 2020, §5 and Fig. 1): model-state bytes per GPU
// for mixed-precision Adam with 16-bit weights and gradients (2 + 2 bytes per
// parameter) and `k` bytes of optimizer state per parameter (K = 12: fp32
// master weights, momentum and variance), data-parallel degree `dp`.
//   stage 0: (2 + 2 + K) P          stage 1: 4P + K P / dp
//   stage 2: 2P + (2 + K) P / dp    stage 3: (2 + 2 + K) P / dp
double ZeroModelStateBytesPerGpu(double params, int zero_stage, int dp, double k = 12.0);

// nccl-tests doc/PERFORMANCE.md: ring all-reduce of `bytes` per rank over
// `ranks` ranks at bus bandwidth `bus_bytes_per_second`:
// t = bytes / busbw * 2 (n - 1) / n. Zero for one rank.
double AllReduceSeconds(double bytes, int ranks, double bus_bytes_per_second);

// All-gather or reduce-scatter of a `bytes` array: t = bytes / busbw * (n - 1) / n.
double AllGatherSeconds(double bytes, int ranks, double bus_bytes_per_second);

// ZeRO §7: gradient communication per optimizer step in units of the
// all-reduce time: 1 for DP and ZeRO-1/2 (reduce-scatter + all-gather),
// 1.5 for ZeRO-3 (parameters gathered for forward and backward, gradients
// reduce-scattered).
double ZeroCommunicationFactor(int zero_stage);

// Korthikanti et al. 2022 (§4, Table 2): activation bytes per transformer
// layer for a GPT block with 16-bit activations, dropout and standard
// (non-flash) attention. s = sequence, b = micro-batch, h = hidden, a = heads,
// t = tensor-parallel degree. `sequence_parallel` shards the 10sbh part over
// t; `selective` drops the 5as^2b attention-score term.
double KorthikantiActivationBytesPerLayer(double s, double b, double h, double a, int t,
                                          bool sequence_parallel, bool selective);

// Korthikanti App. A: model FLOPs per iteration of a GPT model,
// 72 B L s h^2 (1 + s / (6h) + V / (12 h L)), B = sequences per iteration.
double MegatronModelFlopsPerIteration(double batch, double layers, double seq,
                                      double hidden, double vocab);

// Narayanan et al. 2021 §5.1: end-to-end training time 8 T P / (n X) with
// activation recomputation (6 T P / (n X) without), T tokens, P parameters,
// n GPUs, X achieved FLOP/s per GPU.
double MegatronTrainingSeconds(double tokens, double params, int gpus,
                               double achieved_flops_per_gpu, bool recompute);

// Per-token bytes of the KV cache: 2 (K and V) x layers x kv_heads x head_dim
// x bytes per element (HANDBOOK A1.7). For MLA (kv_lora_rank > 0) the cache
// holds one compressed latent of kv_lora_rank + qk_rope_head_dim per layer.
double KvCacheBytesPerToken(int layers, int kv_heads, int head_dim, int kv_lora_rank,
                            int qk_rope_head_dim, double bytes_per_element);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_FORMULAS_H_
