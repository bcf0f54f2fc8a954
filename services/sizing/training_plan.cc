#include "services/sizing/training_plan.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "services/sizing/formulas.h"
#include "services/sizing/profiles.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;

// Micro-batches per pipeline stage by default, so that the 1F1B bubble
// (p - 1) / (m + p - 1) stays near 20% (Narayanan et al. 2021 §2.2).
constexpr int kMicroBatchesPerStage = 4;
// Interleaved 1F1B: at most this many model chunks per stage (more chunks
// shrink the bubble but multiply the pipeline messages).
constexpr int kMaxVirtualStages = 8;

bool OffloadsOptimizer(v1::Offload o) {
  return o != v1::OFFLOAD_NONE && o != v1::OFFLOAD_UNSPECIFIED;
}
bool OffloadsParams(v1::Offload o) {
  return o == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_CPU || o == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_NVME;
}
bool OffloadsToNvme(v1::Offload o) {
  return o == v1::OFFLOAD_OPTIMIZER_NVME || o == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_NVME;
}

const char* CheckpointingName(v1::GradientCheckpointing c) {
  switch (c) {
    case v1::GRADIENT_CHECKPOINTING_SELECTIVE:
      return "selective";
    case v1::GRADIENT_CHECKPOINTING_FULL:
      return "full";
    default:
      return "no";
  }
}

int LargestPowerOfTwoDividing(int limit, int a, int b) {
  int best = 1;
  for (int e = 2; e <= limit; e *= 2) {
    if (a % e == 0 && b % e == 0) best = e;
  }
  return best;
}

}  // namespace

double OptimizerStepSeconds(const TrainContext& c, const TrainPlan& p) {
  const Job& j = *c.job;
  // Optimizer offloaded: the CPU steps it (host traffic above).
  if (OffloadsOptimizer(p.offload) || c.bandwidth <= 0) return 0;
  // The update is elementwise and memory-bound: per trainable parameter
  // held on this GPU it reads and writes the optimizer state (fp32 master,
  // moments), reads the gradient and writes the 16-bit weight (fused AdamW:
  // 12 + 12 + 2 + 2 = 28 B in mixed precision), at the GPU's achieved
  // bandwidth. ZeRO-1 and up shard the state over the data-parallel ranks.
  const double stages = static_cast<double>(p.tp) * p.pp;
  const double shards = p.zero >= 1 ? std::max(1, p.dp) : 1;
  const double expert_shards = p.zero >= 1 ? std::max(1, p.dp / std::max(1, p.ep)) : 1;
  const double params = j.train.trainable_dense / stages / shards +
                        j.train.trainable_expert / stages / std::max(1, p.ep) / expert_shards;
  const double bytes_per_param = 2.0 * j.train.optimizer_bytes_per_param +
                                 j.train.grad_bytes_per_param + j.train.weight_bytes_per_param;
  return params * bytes_per_param / c.bandwidth;
}

bool SetBatch(const Job& j, TrainPlan* p) {
  const double per_pass = static_cast<double>(p->dp) * j.train.micro_batch;
  if (j.train.global_batch > 0) {
    if (per_pass > j.train.global_batch) return false;
    p->micro_batches = static_cast<int>(std::max(1.0, std::round(j.train.global_batch / per_pass)));
    p->global_batch = p->micro_batches * per_pass;
    p->global_batch_defaulted = false;
    return true;
  }
  int m = p->pp > 1 ? kMicroBatchesPerStage * p->pp : 1;
  // The task's default tokens per step (data/sizing/profiles.textproto
  // batch_defaults, from common recipes).
  const v1::BatchDefault* d = j.profiles != nullptr ? j.profiles->BatchDefaultFor(j.task) : nullptr;
  if (d != nullptr && j.train.seq > 0) {
    m = std::max(m, static_cast<int>(std::ceil(d->tokens() / (j.train.seq * per_pass))));
  }
  p->micro_batches = m;
  p->global_batch = m * per_pass;
  p->global_batch_defaulted = true;
  return true;
}

int VirtualStages(const Job& j, const TrainPlan& p) {
  if (p.pp <= 1 || !j.framework->interleaved_pipeline()) return 1;
  // Megatron needs m to be a multiple of p; chunks of at least one layer.
  if (p.micro_batches % p.pp != 0) return 1;
  const int layers_per_stage = static_cast<int>(j.model->layers) / p.pp;
  return std::max(1, std::min(kMaxVirtualStages, layers_per_stage));
}

namespace {

// Weights held per GPU: dense part over TP x PP, experts also over EP;
// ZeRO-3 shards both over the rest of the data-parallel group and gathers
// the current and the prefetched layer (DeepSpeed's 4 x largest_layer_params
// at 16-bit). Returns the gather buffer, a workspace, not model state: it is
// reported under overhead so that weights + gradients + optimizer stay
// ZeRO's sharded model states (16 psi / N_d).
double WeightsMemory(const Job& j, const TrainPlan& p, Memory* mem) {
  const ModelSpec& m = *j.model;
  const double shard = static_cast<double>(p.tp) * p.pp;
  const double dp = p.dp;
  const double ep = p.ep;
  const double edp = std::max(1.0, dp / ep);  // data-parallel group of one expert shard
  const double held_per_param = m.params > 0 ? j.train.WeightBytes() / m.params : 2.0;
  const double expert_share = m.params > 0 ? m.routed_expert_params / m.params : 0.0;
  const double gather = 2.0 * m.largest_layer_params * held_per_param / p.tp *
                        (1.0 - expert_share + expert_share / ep);
  if (OffloadsParams(p.offload) && p.zero >= 3) {
    mem->weights = 0;
    return gather;
  }
  if (p.zero >= 3) {
    mem->weights =
        j.train.weight_bytes_dense / shard / dp + j.train.weight_bytes_expert / shard / ep / edp;
    return gather;
  }
  mem->weights = j.train.weight_bytes_dense / shard + j.train.weight_bytes_expert / shard / ep;
  return 0;
}

// Gradients and optimizer state of the trainable parameters.
void OptimizerStateMemory(const Job& j, const TrainPlan& p, Memory* mem) {
  if (OffloadsOptimizer(p.offload)) return;
  const ModelSpec& m = *j.model;
  const double shard = static_cast<double>(p.tp) * p.pp;
  const double dp = p.dp;
  const double edp = std::max(1.0, dp / p.ep);
  const double dense = j.train.trainable_dense / shard;
  const double expert = j.train.trainable_expert / shard / p.ep;
  if (j.train.optimizer_in_backward) {
    // Each parameter is stepped as soon as its gradient exists: one
    // layer's gradients at a time (torchtune optimizer_in_bwd).
    mem->grads =
        j.train.TrainableParams() / std::max(1.0, m.layers) / p.tp * j.train.grad_bytes_per_param;
  } else {
    mem->grads = (dense / (p.zero >= 2 ? dp : 1.0) + expert / (p.zero >= 2 ? edp : 1.0)) *
                 j.train.grad_bytes_per_param;
  }
  mem->optimizer = (dense / (p.zero >= 1 ? dp : 1.0) + expert / (p.zero >= 1 ? edp : 1.0)) *
                   j.train.optimizer_bytes_per_param;
  if (j.train.paged_optimizer) mem->pageable = mem->optimizer;
}

// Activations of one micro-batch, sequence-parallel under TP. With 1F1B
// the first stage holds p micro-batches of L/p layers: L layers' worth
// whatever p is (Korthikanti §4.2.3); the last stage also holds logits.
void ActivationMemory(const Job& j, const TrainPlan& p, Memory* mem) {
  const ModelSpec& m = *j.model;
  const double tokens = j.train.micro_batch * j.train.seq;
  const double per_layer =
      m.activation_elements_per_token_layer * j.train.act_bytes_per_element * tokens / p.tp;
  const double layer_input = m.hidden * j.train.act_bytes_per_element * tokens / p.tp;
  double stored = 0;   // what checkpointing keeps for backward
  double working = 0;  // one layer's recompute working set
  switch (p.ckpt) {
    case v1::GRADIENT_CHECKPOINTING_FULL:
      stored = layer_input * m.layers;
      working = per_layer;
      break;
    case v1::GRADIENT_CHECKPOINTING_SELECTIVE:
      stored = 0.5 * per_layer * m.layers;
      break;
    default:
      stored = per_layer * m.layers;
  }
  if (j.train.activation_offload && !(j.train.activation_offload_needs_checkpointing &&
                                      p.ckpt == v1::GRADIENT_CHECKPOINTING_NONE)) {
    // Saved activations stream to CPU memory; about two layers' worth stay
    // resident (torchtune activation offloading, Unsloth offloaded checkpoints).
    const double resident = 2.0 * stored / std::max(1.0, m.layers);
    mem->offloaded_activations = stored - resident;
    stored = resident;
  }
  const double logits = j.train.logits_bytes_per_token * tokens / p.tp;
  if (p.pp > 1) {
    mem->activations = std::max(stored + working, stored / p.pp + working + logits);
  } else {
    mem->activations = stored + working + logits;
  }
}

}  // namespace

Memory TrainingMemory(const Job& j, const TrainPlan& p) {
  Memory mem;
  const double gather_buffer = WeightsMemory(j, p, &mem);
  OptimizerStateMemory(j, p, &mem);
  ActivationMemory(j, p, &mem);
  const v1::MemoryConstants& k = j.engine->memory();
  mem.overhead = gather_buffer + k.cuda_context_bytes() + j.framework->workspace_bytes() +
                 (p.Gpus() > 1 ? k.nccl_buffer_bytes() : 0.0) + j.train.extra_overhead_bytes;
  return mem;
}

namespace {

// MoE: routed-expert GEMMs are as efficient as the tokens each expert gets
// per micro-batch (more with expert parallelism) and their width (split by
// TP unless experts are sharded by EP) allow. The multiplier on the
// micro-batch's GEMM time.
double ExpertFlopsFactor(const TrainContext& c, const TrainPlan& p) {
  const Job& j = *c.job;
  if (j.train.expert_flops_fraction <= 0) return 1.0;
  const ModelSpec& mm = *j.model;
  const double tokens_micro = j.train.micro_batch * j.train.seq;
  const double experts = std::max(1, mm.resolved.experts());
  const double tokens_per_expert =
      tokens_micro * std::max(1, mm.resolved.active_experts()) * p.ep / experts;
  const double width = mm.resolved.expert_intermediate_size() / (p.ep > 1 ? 1.0 : p.tp);
  const double dense_width = mm.intermediate / p.tp;
  const v1::KernelConstants& k = j.engine->kernels();
  const double e = tokens_per_expert / (tokens_per_expert + k.expert_tokens_half()) *
                   (width / (width + k.expert_width_half())) /
                   (dense_width / (dense_width + k.expert_width_half()));
  // The framework's FP8 gain (fused LayerNorm-Linear, cached FP8 weights)
  // is a dense-layer gain: grouped expert GEMMs quantize their inputs per
  // expert and keep the generation's FP8 factor.
  double expert_fp8 = 1.0;
  if (j.precision == v1::PRECISION_FP8 && c.gpu->fp8_flops > 0 &&
      j.framework->fp8_efficiency() > 0) {
    expert_fp8 = j.framework->fp8_efficiency();
  }
  return 1.0 - j.train.expert_flops_fraction +
         j.train.expert_flops_fraction * expert_fp8 / std::max(e, 0.05);
}

// Compute of one micro-batch on one stage, and QLoRA's dequantization of
// the frozen 4-bit weights: forward, backward (input gradients) and the
// recomputed forward (memory-bound traffic, not FLOPs).
double StageComputeSeconds(const TrainContext& c, const TrainPlan& p) {
  const Job& j = *c.job;
  const double tokens_micro = j.train.micro_batch * j.train.seq;
  const double stages = static_cast<double>(p.tp) * p.pp;
  double stage = tokens_micro * j.train.hw_flops_per_token[p.ckpt] * ExpertFlopsFactor(c, p) /
                 stages / (c.peak * c.efficiency);
  if (j.train.dequant_bytes_per_pass > 0 && c.bandwidth > 0) {
    const double passes = 2.0 + (p.ckpt == v1::GRADIENT_CHECKPOINTING_FULL ? 1.0 : 0.0);
    stage += passes * j.train.dequant_bytes_per_pass / stages / c.bandwidth;
  }
  return stage;
}

// Tensor parallel: 4 all-reduces of s*b*h activations per layer per
// micro-batch (Korthikanti §4.2.2), 2 more when recomputing the forward.
double TensorParallelSeconds(const TrainContext& c, const TrainPlan& p) {
  if (p.tp <= 1) return 0;
  const Job& j = *c.job;
  const Links& l = c.links;
  const int gpn = c.gpus_per_node;
  const double k = p.ckpt == v1::GRADIENT_CHECKPOINTING_FULL ? 6.0 : 4.0;
  const double bytes =
      j.train.micro_batch * j.train.seq * j.model->hidden * j.train.act_bytes_per_element;
  const bool cross_node = p.tp > gpn;
  const double bus = cross_node ? l.InterBus(gpn, gpn, gpn) : l.IntraBus(p.tp);
  const double lat = cross_node ? l.node_latency : l.IntraLatency(p.tp);
  return j.model->layers / p.pp * k * (lat + AllReduceSeconds(bytes, p.tp, bus));
}

// Expert parallel: dispatch and combine all-to-all per MoE layer in the
// forward, twice that in the backward (+2 when recomputing). Tokens leave
// the node for the EP ranks outside it, over the GPU's share of the NICs.
double ExpertParallelSeconds(const TrainContext& c, const TrainPlan& p) {
  const Job& j = *c.job;
  if (p.ep <= 1 || j.moe_layers <= 0) return 0;
  const Links& l = c.links;
  const int gpn = c.gpus_per_node;
  const double k = p.ckpt == v1::GRADIENT_CHECKPOINTING_FULL ? 6.0 : 4.0;
  const double bytes = j.train.micro_batch * j.train.seq * j.train.moe_dispatch_elements_per_token *
                       j.train.act_bytes_per_element / p.tp * (p.ep - 1.0) / p.ep;
  const int in_node = std::max(1, std::min(p.ep, gpn / p.tp));
  const int span = std::min(gpn, in_node * p.tp);
  double t = bytes * in_node / p.ep / l.IntraBus(span) + l.IntraLatency(span);
  if (in_node < p.ep) {
    const double off_node = bytes * (1.0 - static_cast<double>(in_node) / p.ep);
    t = std::max(t, off_node / (l.node_bus / gpn) + l.node_latency);
  }
  return j.moe_layers / p.pp * k * t;
}

// Pipeline: activations forward and gradients back per micro-batch (per
// model chunk when interleaved).
double PipelineSeconds(const TrainContext& c, const TrainPlan& p, int virtual_stages) {
  if (p.pp <= 1) return 0;
  const Job& j = *c.job;
  const Links& l = c.links;
  const int gpn = c.gpus_per_node;
  const double bytes =
      j.train.micro_batch * j.train.seq * j.model->hidden * j.train.act_bytes_per_element / p.tp;
  const bool across = p.Gpus() > gpn;
  return virtual_stages * (across ? 2.0 * (l.node_latency + bytes / (l.node_bus / gpn))
                                  : 2.0 * (l.IntraLatency(gpn) + bytes / l.IntraBus(gpn)));
}

// Data parallel, per optimizer step: gradient all-reduce (ZeRO-1/2:
// reduce-scatter + all-gather, same volume). ZeRO-3 gathers the held
// weights for forward and backward and reduce-scatters the gradients every
// micro-batch (ZeRO §7: 1.5x for full training; a frozen 4-bit base moves
// at its storage size). Experts reduce over their own data-parallel group.
// Returns the part not hidden behind `pipeline` (ZeRO-3) or the last
// backward of `compute`.
double DataParallelExposedSeconds(const TrainContext& c, const TrainPlan& p, double pipeline,
                                  double compute) {
  if (p.dp <= 1) return 0;
  const Job& j = *c.job;
  const Links& l = c.links;
  const int gpn = c.gpus_per_node;
  const double stages = static_cast<double>(p.tp) * p.pp;
  const bool spans_nodes = static_cast<double>(p.tp) * p.dp > gpn;
  const int members = std::max(1, std::min(p.dp, gpn / p.tp));
  const double bus = spans_nodes ? l.InterBus(members, gpn, gpn) : l.IntraBus(p.tp * p.dp);
  const double lat = spans_nodes ? l.node_latency : l.IntraLatency(p.tp * p.dp);
  const int edp = std::max(1, p.dp / p.ep);
  const double g_dense = j.train.trainable_dense * j.train.grad_bytes_per_param / stages;
  const double g_expert = j.train.trainable_expert * j.train.grad_bytes_per_param / stages / p.ep;
  double dp_time = 0;
  if (p.zero >= 3) {
    const double w_dense = j.train.weight_bytes_dense / stages;
    const double w_expert = j.train.weight_bytes_expert / stages / p.ep;
    const double per_micro =
        2.0 * (AllGatherSeconds(w_dense, p.dp, bus) + AllGatherSeconds(w_expert, edp, bus)) +
        AllGatherSeconds(g_dense, p.dp, bus) + AllGatherSeconds(g_expert, edp, bus) +
        3.0 * j.model->layers * lat;
    dp_time = p.micro_batches * per_micro;
  } else {
    dp_time = AllReduceSeconds(g_dense, p.dp, bus) + AllReduceSeconds(g_expert, edp, bus) + lat;
  }
  // Overlap: buckets reduce during the last backward (2/3 of a
  // micro-batch); ZeRO-3 prefetches during the whole step. ~10% is never
  // hidden (first and last buckets).
  const v1::KernelConstants& k = j.engine->kernels();
  const double window = k.dp_overlap_window() * (p.zero >= 3 ? pipeline : (2.0 / 3.0) * compute);
  return std::max(dp_time - window, k.dp_never_hidden() * dp_time);
}

// Host traffic: optimizer offload (gradients out, parameters back, CPU
// Adam), parameter offload (weights streamed in per pass), paged optimizer
// state that does not fit, offloaded activations beyond the overlap.
double OffloadSeconds(const TrainContext& c, const TrainPlan& p, const Memory& mem, double slots,
                      double compute) {
  const Job& j = *c.job;
  const double host = c.links.host_bytes_per_second;
  const v1::MemoryConstants& k = j.engine->memory();
  const double stages = static_cast<double>(p.tp) * p.pp;
  double offload = 0;
  const double shard_params = j.train.TrainableParams() / stages / std::max(1, p.dp);
  if (OffloadsOptimizer(p.offload)) {
    offload +=
        shard_params * (j.train.grad_bytes_per_param + j.train.weight_bytes_per_param) / host +
        shard_params / k.cpu_adam_params_per_second();
    if (OffloadsToNvme(p.offload)) {
      offload += shard_params * j.train.optimizer_bytes_per_param * 2.0 /
                 (k.nvme_bytes_per_second() / std::max(1, c.gpus_per_node));
    }
    if (OffloadsParams(p.offload)) {
      offload += p.micro_batches * 2.0 * j.train.WeightBytes() / stages / std::max(1, p.dp) / host;
    }
  }
  if (mem.pageable > 0) {
    const double spill = std::max(0.0, mem.Total() - c.usable);
    offload += 2.0 * std::min(spill, mem.pageable) / host;
  }
  if (mem.offloaded_activations > 0) {
    const double transfer = 2.0 * mem.offloaded_activations / host;
    offload += slots *
               std::max(0.0, transfer - j.engine->kernels().activation_offload_overlap() * compute);
  }
  return offload;
}

}  // namespace

TrainStep TrainingStep(const TrainContext& c, const TrainPlan& p, const Memory& mem) {
  const Job& j = *c.job;
  TrainStep s;
  if (c.peak <= 0 || c.efficiency <= 0) return s;
  const double compute = StageComputeSeconds(c, p);
  const int v = VirtualStages(j, p);
  // Frameworks that overlap these collectives with the GEMMs hide part of
  // them (profile comm_overlap); the rest stays on the critical path.
  const double comm_micro =
      (TensorParallelSeconds(c, p) + ExpertParallelSeconds(c, p) + PipelineSeconds(c, p, v)) *
      (1.0 - j.framework->comm_overlap());
  const double stage = compute + comm_micro;

  // 1F1B: (m + (p - 1) / v) slots of one micro-batch per stage, bubble
  // (p - 1) / (v m).
  const double fill = (p.pp - 1.0) / v;
  const double slots = p.micro_batches + fill;
  const double pipeline = slots * stage;
  s.bubble = fill * stage;
  const double dp_exposed = DataParallelExposedSeconds(c, p, pipeline, compute);
  const double offload = OffloadSeconds(c, p, mem, slots, compute);
  const double optimizer = OptimizerStepSeconds(c, p);
  s.seconds = pipeline + dp_exposed + offload + optimizer;
  s.optimizer = optimizer;
  s.stage_compute = compute;
  s.communication = slots * comm_micro + dp_exposed;
  s.offload = offload;
  if (s.seconds <= 0) return s;
  s.tokens_per_second = p.global_batch * j.train.seq / s.seconds;
  s.utilization = s.tokens_per_second * j.train.model_flops_per_token / (p.Gpus() * c.peak);
  s.communication_fraction = s.communication / s.seconds;
  s.bubble_fraction = s.bubble / s.seconds;
  return s;
}

int EnumerateTrainingPlans(const TrainContext& c, TrainPlan* out, int cap) {
  const Job& j = *c.job;
  const ModelSpec& m = *j.model;
  const int gpn = c.gpus_per_node;
  const int gpus = gpn * c.nodes;
  const bool model_parallel = j.framework->model_parallel() || j.tp_hint > 0 || j.pp_hint > 0;
  int tps[12], n_tp = 0;
  if (j.tp_hint > 0) {
    tps[n_tp++] = j.tp_hint;
  } else {
    tps[n_tp++] = 1;
    for (int tp = 2; model_parallel && tp <= gpn && n_tp < 12; tp *= 2) {
      if (gpn % tp == 0 && static_cast<int>(m.heads) % tp == 0) tps[n_tp++] = tp;
    }
  }
  int pps[12], n_pp = 0;
  if (j.pp_hint > 0) {
    pps[n_pp++] = j.pp_hint;
  } else {
    pps[n_pp++] = 1;
    for (int pp = 2; model_parallel && pp <= c.nodes && pp <= m.layers && n_pp < 12; pp *= 2) {
      if (c.nodes % pp == 0) pps[n_pp++] = pp;
    }
  }
  int n = 0;
  for (int ti = 0; ti < n_tp; ++ti) {
    for (int pi = 0; pi < n_pp; ++pi) {
      const int tp = tps[ti], pp = pps[pi];
      if (gpus % (tp * pp) != 0) continue;
      const int dp = gpus / (tp * pp);
      int eps[3], n_ep = 0;
      if (j.ep_hint > 0) {
        eps[n_ep++] = j.ep_hint;
      } else {
        eps[n_ep++] = 1;
        const int experts = m.resolved.experts();
        if (j.moe && experts > 1 && dp > 1) {
          const int node_ep = LargestPowerOfTwoDividing(std::max(1, gpn / tp), experts, dp);
          const int wide_ep = LargestPowerOfTwoDividing(std::min(experts, dp), experts, dp);
          if (node_ep > 1) eps[n_ep++] = node_ep;
          if (wide_ep > node_ep) eps[n_ep++] = wide_ep;
        }
      }
      int zeros[4], n_zero = 0;
      if (j.zero_hint >= 0) {
        zeros[n_zero++] = j.zero_hint;
      } else if (dp == 1) {
        zeros[n_zero++] = 0;
      } else if (pp > 1) {
        zeros[n_zero++] = std::min(1, j.framework->max_zero_stage());  // distributed optimizer
      } else {
        for (int z = 0; z <= j.framework->max_zero_stage(); ++z) zeros[n_zero++] = z;
      }
      for (int ei = 0; ei < n_ep; ++ei) {
        if (dp % eps[ei] != 0) continue;
        for (int zi = 0; zi < n_zero && n < cap; ++zi) {
          TrainPlan p;
          p.dp = dp;
          p.tp = tp;
          p.pp = pp;
          p.ep = eps[ei];
          p.zero = zeros[zi];
          out[n++] = p;
        }
      }
    }
  }
  return n;
}

std::string DescribeTraining(const TrainPlan& p) {
  std::string d;
  if (p.Gpus() == 1) {
    d = "Single GPU";
  } else if (p.tp == 1 && p.pp == 1) {
    if (p.zero == 0) {
      d = absl::StrCat("Data parallel over ", p.dp, " GPUs (DDP)");
    } else if (p.zero == 3) {
      d = absl::StrCat("ZeRO-3 over ", p.dp, " GPUs (FSDP full shard)");
    } else {
      d = absl::StrCat("ZeRO-", p.zero, " over ", p.dp, " GPUs");
    }
  } else {
    d = absl::StrCat("TP", p.tp, " x PP", p.pp, " x DP", p.dp);
    if (p.zero > 0) absl::StrAppend(&d, " with ZeRO-", p.zero);
  }
  if (p.ep > 1) absl::StrAppend(&d, ", experts over EP", p.ep);
  if (p.pp > 1) {
    absl::StrAppend(&d, ", ", p.micro_batches, " micro-batches per pipeline");
    if (p.virtual_stages > 1)
      absl::StrAppend(&d, " (interleaved, ", p.virtual_stages, " chunks per stage)");
  }
  absl::StrAppend(&d, ", ", CheckpointingName(p.ckpt), " activation checkpointing");
  if (p.offload != v1::OFFLOAD_NONE && p.offload != v1::OFFLOAD_UNSPECIFIED) {
    absl::StrAppend(&d, ", ", v1::Offload_Name(p.offload));
  }
  return d;
}

}  // namespace gpuadvisor::sizing
