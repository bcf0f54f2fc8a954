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

constexpr double kGiB = 1073741824.0;
constexpr double kCudaContextBytes = 0.5 * kGiB;
constexpr double kNcclBytes = 0.25 * kGiB;
// Decode: fixed per-layer cost of a step (kernel launches, norms, sampling
// amortised; gpt-fast with torch.compile/CUDA graphs, HANDBOOK B-20).
constexpr double kPerLayerStepSeconds = 20e-6;

double ServingContext(const Job& j) {
  const double window = j.model->sliding_window;
  return window > 0 ? std::min(j.context, window) : j.context;
}

double KvSplit(const Job& j, const ServePlan& p) {
  return std::min(static_cast<double>(p.tp), j.model->kv_tp_shards) * p.pp;
}

}  // namespace

double KvBytesPerTokenPerGpu(const Job& j, const ServePlan& p) {
  return j.kv_bytes_per_token / KvSplit(j, p);
}

double KvBytesPerSequencePerGpu(const Job& j, const ServePlan& p) {
  return ServingContext(j) * j.kv_bytes_per_token / KvSplit(j, p);
}

Memory ServingMemory(const Job& j, const ServePlan& p) {
  const ModelSpec& m = *j.model;
  const v1::FrameworkProfile& e = *j.framework;
  Memory mem;
  const double shards = static_cast<double>(p.tp) * p.pp;
  mem.weights = j.serving_weight_bytes / shards;
  mem.kv = p.batch * KvBytesPerSequencePerGpu(j, p);
  // Workspace: one layer's activations for the engine's prefill chunk
  // (vLLM profiles max_num_batched_tokens; a replica that never holds that
  // many tokens needs only its batch x context) plus fp32 logits of the
  // sampled positions.
  const double chunk = std::min(std::max(p.batch, 1.0) * j.context,
                                static_cast<double>(e.max_batched_tokens()));
  mem.activations = chunk * m.activation_elements_per_token_layer * 2.0 / p.tp +
                    std::max(p.batch, 1.0) * m.vocab * 4.0;
  mem.overhead = kCudaContextBytes + e.workspace_bytes() + (e.cuda_graphs() ? e.cuda_graph_bytes() : 0.0) +
                 (shards > 1 ? kNcclBytes : 0.0);
  return mem;
}

ServeSpeed ServingSpeed(const Job& j, const GpuSpec& gpu, const Links& links, int gpus_per_node,
                        const ServePlan& p) {
  const ModelSpec& m = *j.model;
  const v1::FrameworkProfile& e = *j.framework;
  ServeSpeed s;
  std::string ignored;
  const double peak = PeakFlops(gpu, j.precision, false, &ignored);
  if (peak <= 0) return s;
  const double b = std::max(p.batch, 1.0);
  // Weights read per decode step: the dense part plus the routed experts
  // that at least one of the b tokens selects.
  double weights = j.dense_read_bytes;
  if (j.expert_read_bytes > 0) {
    const double touched = 1.0 - std::pow(1.0 - m.active_expert_fraction, b);
    weights += j.expert_read_bytes * touched;
  }
  const double ctx_avg = std::min(j.prompt + j.output / 2.0, ServingContext(j));
  const double kv_split = std::min(static_cast<double>(p.tp), m.kv_tp_shards);
  const double kv = b * ctx_avg * j.kv_bytes_per_token / kv_split;
  const double bw = gpu.memory_bandwidth * gpu.decode_bandwidth_efficiency * j.bw_ratio *
                    e.decode_efficiency();
  // Pipeline stages run one after another for a token: their times add up,
  // so only TP divides the per-step bytes and FLOPs.
  const double t_mem = (weights / p.tp + kv) / bw;
  const double decode_efficiency = 0.5 * m.hidden / (m.hidden + 512.0);
  const double t_compute = b * j.decode_flops_per_token / (p.tp * peak * decode_efficiency);
  double t_comm = 0;
  if (p.tp > 1) {
    // Two all-reduces of b x h per layer (attention and MLP outputs); with
    // expert parallelism the MoE layers dispatch and combine tokens with two
    // all-to-alls instead of the MLP all-reduce.
    const double bytes = b * m.hidden * 2.0;
    const double ar = links.IntraLatency(p.tp) + AllReduceSeconds(bytes, p.tp, links.IntraBus(p.tp));
    const double moe_layers = p.ep > 1 ? j.moe_layers : 0.0;
    const double k = std::max(1, m.resolved.active_experts());
    const double a2a = links.IntraLatency(p.tp) +
                       AllGatherSeconds(bytes * k, p.ep, links.IntraBus(p.tp));
    t_comm += (2.0 * m.layers - moe_layers) * ar + 2.0 * moe_layers * a2a;
  }
  if (p.pp > 1) {
    const int gpn = std::max(1, gpus_per_node);
    t_comm += (p.pp - 1) * (links.node_latency + b * m.hidden * 2.0 / (links.node_bus / gpn));
  }
  s.step_seconds = std::max(t_mem, t_compute) + m.layers * kPerLayerStepSeconds + t_comm;
  s.communication_fraction = t_comm / s.step_seconds;

  const double prefill_efficiency = gpu.compute_efficiency * m.hidden / (m.hidden + 512.0) *
                                    j.prompt / (j.prompt + 64.0) * e.prefill_efficiency();
  const double one_prompt_rate = p.tp * peak * prefill_efficiency / j.prefill_flops_per_token;
  s.prefill_tokens_per_second = one_prompt_rate * p.pp;
  // Time to first token at light load: the prefill produces it. Short
  // prompts are bound by reading the weights once; every layer adds kernel
  // latency and, under TP, two all-reduces of prompt x h.
  double t_prefill_comm = 0;
  if (p.tp > 1) {
    const double bytes = j.prompt * m.hidden * 2.0;
    t_prefill_comm = 2.0 * m.layers *
                     (links.IntraLatency(p.tp) + AllReduceSeconds(bytes, p.tp, links.IntraBus(p.tp)));
  }
  s.ttft_seconds = std::max(j.prompt / one_prompt_rate, (j.dense_read_bytes + j.expert_read_bytes) / p.tp / bw) +
                   m.layers * kPerLayerStepSeconds + t_prefill_comm;
  // A request costs its prefill plus its share of the batched decode steps.
  const double per_request = j.prompt / s.prefill_tokens_per_second + j.output * s.step_seconds / b;
  s.requests_per_second = 1.0 / per_request;
  s.output_tokens_per_second = s.requests_per_second * j.output;
  return s;
}

}  // namespace gpuadvisor::sizing
