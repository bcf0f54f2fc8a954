#include "services/sizing/serving_plan.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "services/sizing/formulas.h"
#include "services/sizing/precision.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;

double KvSplit(const Job& j, const ServePlan& p) {
  return std::min(static_cast<double>(p.tp), j.model->kv_tp_shards) * p.pp;
}

}  // namespace

double KvBytesPerTokenPerGpu(const Job& j, const ServePlan& p) {
  return j.serve.kv_bytes_per_sequence / std::max(j.serve.context, 1.0) / KvSplit(j, p);
}

double KvBytesPerSequencePerGpu(const Job& j, const ServePlan& p) {
  return j.serve.kv_bytes_per_sequence / KvSplit(j, p);
}

Memory ServingMemory(const Job& j, const ServePlan& p) {
  const ModelSpec& m = *j.model;
  const v1::FrameworkProfile& e = *j.framework;
  Memory mem;
  const double shards = static_cast<double>(p.tp) * p.pp;
  mem.weights = j.serve.serving_weight_bytes / shards;
  mem.kv = p.batch * KvBytesPerSequencePerGpu(j, p);
  // Workspace: one layer's activations for the engine's prefill chunk
  // (vLLM profiles max_num_batched_tokens; a replica that never holds that
  // many tokens needs only its batch x context) plus fp32 logits of the
  // sampled positions.
  const double chunk = std::min(std::max(p.batch, 1.0) * j.serve.context,
                                static_cast<double>(e.max_batched_tokens()));
  mem.activations = chunk * m.activation_elements_per_token_layer * 2.0 / p.tp +
                    std::max(p.batch, 1.0) * m.vocab * 4.0;
  const v1::MemoryConstants& k = j.engine->memory();
  mem.overhead = k.cuda_context_bytes() + e.workspace_bytes() +
                 (e.cuda_graphs() ? e.cuda_graph_bytes() : 0.0) +
                 (shards > 1 ? k.nccl_buffer_bytes() : 0.0);
  return mem;
}

double PrefillWaitSeconds(double prefill_fraction, double batch, double prefill_seconds, double q) {
  if (batch <= 1 || prefill_seconds <= 0) return 0;
  const double rho = std::clamp(prefill_fraction * (batch - 1) / batch, 0.0, 0.999);
  if (rho <= 1 - q) return 0;
  const double tau = prefill_seconds / (2 * (1 - rho));
  return std::min(tau * std::log(rho / (1 - q)), (batch - 1) * prefill_seconds);
}

namespace {

// The replica's decode-step inputs shared by decode and prefill.
struct SpeedInputs {
  double peak = 0;  // FLOP/s at the serving precision
  double bw = 0;    // achieved memory bandwidth
};

// Routed-expert bytes read when `n` tokens each pick their experts: the
// experts at least one of them selects.
double TouchedExpertBytes(const Job& j, double n) {
  if (j.serve.expert_read_bytes <= 0) return 0;
  return j.serve.expert_read_bytes * (1.0 - std::pow(1.0 - j.model->active_expert_fraction, n));
}

// Communication of one decode step: under TP two all-reduces of b x h per
// layer (attention and MLP outputs); with expert parallelism the MoE layers
// dispatch and combine tokens with two all-to-alls instead of the MLP
// all-reduce. Pipeline stages pass the activations on.
double DecodeCommSeconds(const Job& j, const Links& links, int gpus_per_node, const ServePlan& p,
                         double b) {
  const ModelSpec& m = *j.model;
  double t_comm = 0;
  if (p.tp > 1) {
    const double bytes = b * m.hidden * 2.0;
    const double ar =
        links.IntraLatency(p.tp) + AllReduceSeconds(bytes, p.tp, links.IntraBus(p.tp));
    const double moe_layers = p.ep > 1 ? j.moe_layers : 0.0;
    const double k = std::max(1, m.resolved.active_experts());
    const double a2a =
        links.IntraLatency(p.tp) + AllGatherSeconds(bytes * k, p.ep, links.IntraBus(p.tp));
    t_comm += (2.0 * m.layers - moe_layers) * ar + 2.0 * moe_layers * a2a;
  }
  if (p.pp > 1) {
    const int gpn = std::max(1, gpus_per_node);
    t_comm += (p.pp - 1) * (links.node_latency + b * m.hidden * 2.0 / (links.node_bus / gpn));
  }
  return t_comm;
}

// One decode step at b sequences; sets step_seconds and
// communication_fraction. Pipeline stages run one after another for a
// token: their times add up, so only TP divides the per-step bytes and
// FLOPs. A decode step runs the linear layers (GEMMs: weights read once for
// the batch, compute-bound at large batch) and the attention kernels (each
// sequence's KV read, memory-bound at any batch: about 2 x heads / kv_heads
// FLOPs per cached element) one after the other, so their times add: a
// per-operator roofline (HANDBOOK A2.3).
void DecodeStep(const Job& j, const Links& links, int gpus_per_node, const ServePlan& p,
                const SpeedInputs& in, double b, ServeSpeed* s) {
  const ModelSpec& m = *j.model;
  // Weights read per decode step: the dense part plus the routed experts
  // that at least one of the b tokens selects.
  const double weights = j.serve.dense_read_bytes + TouchedExpertBytes(j, b);
  // TP splits the KV heads (no further than their count); each pipeline
  // stage reads its own layers' share, and the stages' times add up.
  const double kv =
      b * j.serve.kv_read_bytes_per_sequence / std::min(static_cast<double>(p.tp), m.kv_tp_shards);
  const v1::KernelConstants& k = j.engine->kernels();
  const double decode_efficiency =
      k.decode_gemm_efficiency() * m.hidden / (m.hidden + k.gemm_width_half());
  const double t_linear = std::max(
      weights / p.tp / in.bw, b * 2.0 * m.compute_params / (p.tp * in.peak * decode_efficiency));
  const double t_attention = kv / in.bw;
  const double t_comm = DecodeCommSeconds(j, links, gpus_per_node, p, b);
  s->step_seconds = t_linear + t_attention + m.layers * k.per_layer_step_seconds() + t_comm;
  s->communication_fraction = t_comm / s->step_seconds;
}

// Prefill of n tokens processed together on one replica: the GEMMs' FLOPs
// at the engine's prefill efficiency plus the weights read once per pass.
// The two add (a roofline without overlap): a short prompt is as slow as
// reading the weights, a long one is compute-bound. Every layer adds kernel
// latency and, under TP, two all-reduces of n x h; pipeline stages run one
// after another for one prompt.
double PrefillSeconds(const Job& j, const GpuSpec& gpu, const Links& links, int gpus_per_node,
                      const ServePlan& p, const SpeedInputs& in, double n) {
  const ModelSpec& m = *j.model;
  const v1::KernelConstants& k = j.engine->kernels();
  const double prefill_efficiency = gpu.compute_efficiency * m.hidden /
                                    (m.hidden + k.gemm_width_half()) *
                                    j.framework->prefill_efficiency();
  const double w = j.serve.dense_read_bytes + TouchedExpertBytes(j, n);
  double t = n * j.serve.prefill_flops_per_token / (p.tp * in.peak * prefill_efficiency) +
             w / p.tp / in.bw + m.layers * k.per_layer_step_seconds();
  if (p.tp > 1) {
    t += 2.0 * m.layers *
         (links.IntraLatency(p.tp) +
          AllReduceSeconds(n * m.hidden * 2.0, p.tp, links.IntraBus(p.tp)));
  }
  if (p.pp > 1) {
    const int gpn = std::max(1, gpus_per_node);
    t += (p.pp - 1) * (links.node_latency + n * m.hidden * 2.0 / (links.node_bus / gpn));
  }
  return t;
}

}  // namespace

ServeSpeed ServingSpeed(const Job& j, const GpuSpec& gpu, const Links& links, int gpus_per_node,
                        const ServePlan& p) {
  const v1::FrameworkProfile& e = *j.framework;
  ServeSpeed s;
  std::string ignored;
  SpeedInputs in;
  in.peak = PeakFlops(gpu, j.precision, false, &ignored);
  if (in.peak <= 0) return s;
  in.bw = gpu.memory_bandwidth * gpu.decode_bandwidth_efficiency * j.serve.bw_ratio *
          e.decode_efficiency();
  const double b = std::max(p.batch, 1.0);
  DecodeStep(j, links, gpus_per_node, p, in, b, &s);
  s.ttft_unloaded_seconds = PrefillSeconds(j, gpu, links, gpus_per_node, p, in, j.serve.prompt);
  // Prefill throughput under load: the engine batches prompts into chunks
  // of up to max_batched_tokens; stages of a pipeline work on different
  // chunks at once.
  const double chunk = std::max(
      j.serve.prompt, std::min(b * j.serve.prompt, static_cast<double>(e.max_batched_tokens())));
  s.prefill_tokens_per_second =
      p.pp * chunk / PrefillSeconds(j, gpu, links, gpus_per_node, p, in, chunk);
  // A request costs its prefill plus its share of the batched decode steps.
  const double prefill_per_request = j.serve.prompt / s.prefill_tokens_per_second;
  const double per_request = prefill_per_request + j.serve.output * s.step_seconds / b;
  s.requests_per_second = 1.0 / per_request;
  s.output_tokens_per_second = s.requests_per_second * j.serve.output;
  s.prefill_fraction = prefill_per_request / per_request;
  s.prefill_wait_seconds =
      PrefillWaitSeconds(s.prefill_fraction, b, prefill_per_request, kTtftPercentile);
  s.ttft_seconds = s.ttft_unloaded_seconds + s.prefill_wait_seconds;
  // At full load the b sequences in flight each complete one request per
  // b x per_request seconds (Little's law); a sequence streams its output in
  // that cycle after its first token, its decode steps stalled by the other
  // sequences' prefills. So the per-user speed times the concurrency is the
  // replica's output rate, not b / step_seconds.
  const double streaming =
      std::max(b * per_request - s.ttft_unloaded_seconds, j.serve.output * s.step_seconds);
  s.user_tokens_per_second = streaming > 0 ? j.serve.output / streaming : 0.0;
  return s;
}

}  // namespace gpuadvisor::sizing
