// The serving half of BuildJob: weights, KV cache per token, bytes read and
// FLOPs per decode and prefill token.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "services/sizing/job.h"
#include "services/sizing/kv_cache.h"
#include "services/sizing/precision.h"
#include "services/sizing/serving_plan.h"

namespace gpuadvisor::sizing {

absl::Status BuildServingJob(const v1::Workload& w, Job* job, v1::WorkloadTotals* totals) {
  Job& j = *job;
  const ModelSpec& m = *j.model;
  const double max_ctx = m.max_context > 0 ? m.max_context : 4096.0;
  j.serve.context = w.context_length() > 0 ? w.context_length() : std::min(4096.0, max_ctx);
  j.serve.output =
      w.output_tokens() > 0 ? w.output_tokens() : std::min(256.0, std::floor(j.serve.context / 2));
  j.serve.prompt =
      w.prompt_tokens() > 0 ? w.prompt_tokens() : std::max(j.serve.context - j.serve.output, 1.0);
  j.serve.concurrency = w.concurrent_sequences() > 0 ? w.concurrent_sequences() : (j.batch ? 0 : 1);
  j.serve.requests = w.requests();
  j.serve.serving_hours = w.serving_hours() > 0 ? w.serving_hours() : 720.0;
  const v1::Precision p = j.precision;
  j.serve.serving_weight_bytes = QuantizedWeightBytes(m, p);
  j.serve.serving_expert_bytes = m.routed_expert_params * WeightBytesPerParam(p);
  // KV cache: the serving precision capped at 16 bits by default (4-bit
  // weight formats keep a 16-bit cache, as serving engines do).
  double kv_b = 2.0;
  if (w.kv_cache_precision() != v1::PRECISION_UNSPECIFIED) {
    kv_b = WeightBytesPerParam(w.kv_cache_precision());
  } else if (p == v1::PRECISION_FP8 || p == v1::PRECISION_INT8) {
    kv_b = 1.0;
  }
  j.serve.kv_bytes_per_token = m.kv_elements_per_token * kv_b;
  j.serve.kv_bytes_per_sequence = KvCacheElementsPerSequence(m.resolved, j.serve.context) * kv_b;
  const double ctx_read = std::min(j.serve.prompt + j.serve.output / 2.0, j.serve.context);
  // Decode attention without grouped-query sharing reads each KV head once
  // per query head (data/sizing/profiles.textproto, tensorrt-llm-0.6).
  const double reads = j.framework->decode_attention_per_query_head() && !m.mla && m.kv_heads > 0
                           ? std::max(1.0, m.heads / m.kv_heads)
                           : 1.0;
  j.serve.kv_read_bytes_per_sequence =
      KvCacheElementsPerSequence(m.resolved, ctx_read) * kv_b * reads;
  // Bytes read per decode step: every weight except the input embedding
  // (a lookup), routed experts split out for the batch-dependent part.
  const double q = WeightBytesPerParam(p);
  const double head_b = IsQuantized(p) ? 2.0 : q;
  const double head = m.tied_embeddings ? m.embedding_params : m.lm_head_params;
  const double body =
      std::max(m.params - m.embedding_params - m.lm_head_params - m.routed_expert_params, 0.0);
  j.serve.dense_read_bytes = body * q + head * head_b;
  j.serve.expert_read_bytes = m.routed_expert_params * q;
  j.serve.bw_ratio = BandwidthEfficiencyRatio(p, *j.engine);
  const double window = m.sliding_window;
  const double ctx_avg =
      std::min(j.serve.prompt + j.serve.output / 2.0, window > 0 ? window : j.serve.context);
  j.serve.decode_flops_per_token =
      2.0 * m.compute_params + 4.0 * m.layers * m.attention_width * ctx_avg;
  const double prompt_eff = window > 0 ? std::min(j.serve.prompt, window) : j.serve.prompt;
  j.serve.prefill_flops_per_token =
      2.0 * m.compute_params + 2.0 * m.layers * m.attention_width * prompt_eff;
  if (j.batch) {
    j.total_tokens = j.serve.requests * (j.serve.prompt + j.serve.output);
    totals->set_total_flops(j.serve.requests * (j.serve.prompt * j.serve.prefill_flops_per_token +
                                                j.serve.output * j.serve.decode_flops_per_token));
  }
  totals->set_checkpoint_bytes(static_cast<int64_t>(std::llround(j.serve.serving_weight_bytes)));
  totals->set_weights_bytes(static_cast<int64_t>(std::llround(j.serve.serving_weight_bytes)));
  ServePlan single;
  single.batch = j.serve.concurrency > 0 ? j.serve.concurrency : 1;
  totals->set_min_vram_bytes_single_gpu(
      static_cast<int64_t>(std::llround(ServingMemory(j, single).Total())));
  return absl::OkStatus();
}

}  // namespace gpuadvisor::sizing
