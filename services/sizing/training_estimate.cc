// Training on one configuration: candidates -> choose -> fill.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/io/units.h"
#include "services/sizing/estimator.h"
#include "services/sizing/precision.h"
#include "services/sizing/profiles.h"
#include "services/sizing/sizing_model.h"
#include "services/sizing/training_plan.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;

constexpr int kMaxCandidates = 256;
// Two plans within this relative step time are a tie (then less memory wins).
constexpr double kTie = 0.005;

struct Evaluated {
  TrainPlan plan;
  Memory mem;
  TrainStep step;
  bool valid = false;
  double SecondsPerToken() const {
    return step.tokens_per_second > 0 ? 1.0 / step.tokens_per_second
                                      : std::numeric_limits<double>::infinity();
  }
};

// Fraction of peak a transformer reaches: the GPU's base, lower for narrow
// models (small GEMMs) and few tokens per micro-batch, times the framework.
double TrainingEfficiency(const Job& j, const GpuSpec& g) {
  const ModelSpec& m = *j.model;
  const double tokens = j.train.micro_batch * j.train.seq;
  const v1::KernelConstants& k = j.engine->kernels();
  double e = g.compute_efficiency * m.hidden / (m.hidden + k.gemm_width_half()) * tokens /
             (tokens + k.training_tokens_half()) * j.train.efficiency_factor;
  // Only the GEMMs run in FP8; attention, norms and casts do not (HANDBOOK
  // A2.2): the generation's FP8 factor (data) of the 16-bit efficiency at
  // the FP8 peak.
  if (j.precision == v1::PRECISION_FP8 && g.fp8_flops > 0) {
    const double framework =
        j.framework->fp8_efficiency() > 0 ? j.framework->fp8_efficiency() : 1.0;
    e *= std::min(1.0, g.fp8_training_factor * framework);
  }
  return e;
}

bool Better(const Evaluated& a, const Evaluated& b) {
  const double ta = a.SecondsPerToken(), tb = b.SecondsPerToken();
  if (ta < tb * (1.0 - kTie)) return true;
  if (tb < ta * (1.0 - kTie)) return false;
  return a.mem.Total() < b.mem.Total();
}

bool SameStructure(const TrainPlan& a, const TrainPlan& b) {
  return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.ep == b.ep && a.zero == b.zero &&
         a.offload == b.offload;
}

struct Search {
  Evaluated best, runner_up, leanest;
  int evaluated = 0;
};

// For each structural candidate, the cheapest checkpointing that fits (none
// -> selective -> full, or the one the workload names), then the fastest.
void RunSearch(const TrainContext& c, v1::Offload offload, Search* s) {
  const Job& j = *c.job;
  std::array<TrainPlan, kMaxCandidates> cands;
  const int n = EnumerateTrainingPlans(c, cands.data(), kMaxCandidates);
  v1::GradientCheckpointing ckpts[3] = {v1::GRADIENT_CHECKPOINTING_NONE,
                                        v1::GRADIENT_CHECKPOINTING_SELECTIVE,
                                        v1::GRADIENT_CHECKPOINTING_FULL};
  int n_ckpts = 3;
  if (j.train.checkpointing != v1::GRADIENT_CHECKPOINTING_UNSPECIFIED) {
    ckpts[0] = j.train.checkpointing;
    n_ckpts = 1;
  }
  for (int i = 0; i < n; ++i) {
    TrainPlan p = cands[i];
    p.offload = offload;
    if (offload == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_CPU ||
        offload == v1::OFFLOAD_OPTIMIZER_AND_PARAMS_NVME) {
      if (p.zero < 3 && j.zero_hint >= 0) continue;
      p.zero = 3;  // parameter offload is a ZeRO-3 feature
    }
    if (!SetBatch(j, &p)) continue;
    p.virtual_stages = VirtualStages(j, p);
    for (int k = 0; k < n_ckpts; ++k) {
      p.ckpt = ckpts[k];
      Evaluated e;
      e.plan = p;
      e.mem = TrainingMemory(j, p);
      e.valid = true;
      if (!s->leanest.valid || e.mem.Total() < s->leanest.mem.Total()) s->leanest = e;
      if (e.mem.Total() - e.mem.pageable > c.usable) continue;
      e.step = TrainingStep(c, p, e.mem);
      if (e.mem.pageable > 0 && e.mem.Total() > c.usable) {
        // bitsandbytes paged optimizers live in CUDA unified memory: the
        // driver keeps pages on the GPU while there is room and evicts the
        // rest to host memory (the step above pays for their traffic).
        e.mem.paged_out = std::min(e.mem.pageable, e.mem.Total() - c.usable);
        e.mem.optimizer -= e.mem.paged_out;
      }
      ++s->evaluated;
      if (!s->best.valid || Better(e, s->best)) {
        if (s->best.valid && !SameStructure(s->best.plan, e.plan)) s->runner_up = s->best;
        s->best = e;
      } else if (!SameStructure(s->best.plan, e.plan) &&
                 (!s->runner_up.valid || Better(e, s->runner_up))) {
        s->runner_up = e;
      }
      break;  // more checkpointing only costs time
    }
  }
}

std::string Percent(double f) { return absl::StrFormat("%.0f%%", 100.0 * f); }

// Why `runner` lost to `best`, from the step components per token.
std::string RunnerUpReason(const Evaluated& best, const Evaluated& runner) {
  const double tb = best.SecondsPerToken(), tr = runner.SecondsPerToken();
  if (tr <= tb * (1.0 + kTie)) {
    return absl::StrCat("as fast, but needs ", FormatGb(runner.mem.Total()), " per GPU against ",
                        FormatGb(best.mem.Total()));
  }
  auto per_token = [](const Evaluated& e, double part) {
    return e.step.seconds > 0 ? part / e.step.seconds * e.SecondsPerToken() : 0.0;
  };
  struct Part {
    const char* what;
    double delta;
  };
  const double compute_b = per_token(
      best, best.step.seconds - best.step.communication - best.step.bubble - best.step.offload);
  const double compute_r = per_token(runner, runner.step.seconds - runner.step.communication -
                                                 runner.step.bubble - runner.step.offload);
  const Part parts[] = {{"communication", per_token(runner, runner.step.communication) -
                                              per_token(best, best.step.communication)},
                        {"pipeline bubble",
                         per_token(runner, runner.step.bubble) - per_token(best, best.step.bubble)},
                        {"offload traffic", per_token(runner, runner.step.offload) -
                                                per_token(best, best.step.offload)},
                        {"compute (recomputation or smaller GEMMs)", compute_r - compute_b}};
  const Part* worst = &parts[0];
  for (const Part& p : parts) {
    if (p.delta > worst->delta) worst = &p;
  }
  std::string why = absl::StrCat(Percent(tr / tb - 1.0), " slower, mostly ", worst->what);
  if (worst == &parts[0]) {
    absl::StrAppend(&why, " (", Percent(runner.step.communication_fraction),
                    " of its step against ", Percent(best.step.communication_fraction), ")");
  } else if (worst == &parts[1]) {
    absl::StrAppend(&why, " (", Percent(runner.step.bubble_fraction), " of its step against ",
                    Percent(best.step.bubble_fraction), ")");
  }
  return why;
}

void FillPlan(const Evaluated& e, int nodes, v1::ParallelPlan* plan) {
  const TrainPlan& p = e.plan;
  plan->set_data_parallel(p.dp);
  plan->set_tensor_parallel(p.tp);
  plan->set_pipeline_parallel(p.pp);
  plan->set_expert_parallel(p.ep);
  plan->set_zero_stage(p.zero);
  plan->set_offload(p.offload);
  plan->set_gradient_checkpointing(p.ckpt);
  plan->set_needs_nvlink(p.tp > 1);
  plan->set_needs_fabric(nodes > 1);
  plan->set_replicas(1);
  plan->set_description(DescribeTraining(p));
  plan->set_micro_batch_size(
      static_cast<int>(e.plan.global_batch / std::max(1, p.micro_batches) / std::max(1, p.dp)));
  plan->set_micro_batches(p.micro_batches);
  plan->set_global_batch_size(static_cast<int>(std::llround(p.global_batch)));
  plan->set_bubble_fraction(e.step.bubble_fraction);
  plan->set_step_seconds(e.step.seconds);
  plan->set_communication_fraction(e.step.communication_fraction);
}

// Hints that cannot apply to this configuration: the field and why.
std::string HintProblem(const Job& j, int gpn, int gpus) {
  const std::string path = "workload.parallelism.";
  const int tp = std::max(1, j.tp_hint), pp = std::max(1, j.pp_hint);
  if (j.tp_hint > 0 && gpus % j.tp_hint != 0) {
    return absl::StrCat(path, "tensor_parallel: ", j.tp_hint, " does not divide the ", gpus,
                        " GPUs of this configuration");
  }
  if (j.tp_hint > gpn) {
    return absl::StrCat(path, "tensor_parallel: ", j.tp_hint, " exceeds the ", gpn,
                        " GPUs of one node");
  }
  if (j.pp_hint > 0 && gpus % (tp * pp) != 0) {
    return absl::StrCat(path, "pipeline_parallel: tensor x pipeline = ", tp * pp,
                        " does not divide the ", gpus, " GPUs of this configuration");
  }
  if (j.ep_hint > 1 && (gpus / (tp * pp)) % j.ep_hint != 0) {
    return absl::StrCat(path, "expert_parallel: ", j.ep_hint,
                        " does not divide the data-parallel degree ", gpus / (tp * pp));
  }
  if (j.ep_hint > 1 && j.model->resolved.experts() % j.ep_hint != 0) {
    return absl::StrCat(path, "expert_parallel: ", j.ep_hint, " does not divide the ",
                        j.model->resolved.experts(), " experts");
  }
  return "";
}

// Expected interruptions and restarts (data/sizing/profiles.textproto).
double Goodput(const Job& j, int gpus) {
  const v1::GoodputModel& g = j.profiles->goodput();
  if (g.interruptions_per_gpu_hour() <= 0) return 1.0;
  const double interval = j.train.checkpoint_interval_minutes > 0
                              ? j.train.checkpoint_interval_minutes
                              : g.default_checkpoint_interval_minutes();
  const double lost_hours = (g.restart_minutes() + interval / 2.0) / 60.0;
  const double overhead = g.interruptions_per_gpu_hour() * gpus * lost_hours;
  return std::max(0.5, 1.0 - overhead);
}

void AddNotes(const TrainContext& c, const Evaluated& e, v1::ConfigurationEstimate* out) {
  const Job& j = *c.job;
  const TrainPlan& p = e.plan;
  const Links& l = c.links;
  if (p.tp > 1 && (l.bridged_or_pcie || p.tp > l.domain_size)) {
    AddNote(v1::NOTE_SEVERITY_WARNING, "tp_over_pcie",
            absl::StrCat("TP over a bridged/PCIe domain: tensor-parallel all-reduces run at ",
                         FormatGb(l.IntraBus(p.tp)), "/s; an NVSwitch node is much faster."),
            out);
  }
  if (p.Gpus() > 1 && !l.fast_domain && p.dp > 1) {
    AddNote(v1::NOTE_SEVERITY_WARNING, "pcie_allreduce",
            "PCIe-only multi-GPU: the gradient all-reduce is bound by PCIe bandwidth.", out);
  }
  if (c.nodes > 1 && l.default_fabric) {
    AddNote(v1::NOTE_SEVERITY_WARNING, "fabric_assumed",
            "Fabric unspecified: the estimate assumes 100 Gb/s Ethernet between nodes.", out);
  }
  if (e.step.bubble_fraction > 0.10) {
    AddNote(v1::NOTE_SEVERITY_WARNING, "pipeline_bubble",
            absl::StrCat("Pipeline bubble is ", Percent(e.step.bubble_fraction), " of the step (PP",
                         p.pp, " with ", p.micro_batches,
                         " micro-batches): a larger global_batch_size shrinks it."),
            out);
  }
  if (e.step.communication_fraction > 0.30) {
    AddNote(v1::NOTE_SEVERITY_WARNING, "communication_bound",
            absl::StrCat(
                "Communication is ", Percent(e.step.communication_fraction),
                " of the step: a faster interconnect or fewer, larger GPUs would train faster."),
            out);
  }
  if (p.global_batch_defaulted) {
    AddNote(v1::NOTE_SEVERITY_INFO, "global_batch_assumed",
            absl::StrCat(
                "global_batch_size not given: ", static_cast<int64_t>(std::llround(p.global_batch)),
                " sequences per step assumed (",
                static_cast<int64_t>(std::llround(p.global_batch * j.train.seq)), " tokens; ",
                p.micro_batches, " micro-batch", p.micro_batches == 1 ? "" : "es", " of ",
                static_cast<int>(j.train.micro_batch), " per data-parallel rank)",
                j.profiles != nullptr && j.profiles->BatchDefaultFor(j.task) != nullptr
                    ? absl::StrCat(
                          ", from the task's default of ",
                          static_cast<int64_t>(j.profiles->BatchDefaultFor(j.task)->tokens()),
                          " tokens per step (", j.profiles->BatchDefaultFor(j.task)->source(), ")")
                    : std::string(),
                "."),
            out);
  }
  if (j.train.offload == v1::OFFLOAD_UNSPECIFIED && p.offload != v1::OFFLOAD_NONE) {
    AddNote(
        v1::NOTE_SEVERITY_WARNING, "offload_required",
        absl::StrCat("Fits only with ", v1::Offload_Name(p.offload),
                     ": nothing else fits in GPU memory; host traffic costs ",
                     Percent(e.step.offload / std::max(e.step.seconds, 1e-12)), " of the step."),
        out);
  }
  if (e.mem.paged_out > 0) {
    AddNote(
        v1::NOTE_SEVERITY_INFO, "paged_optimizer",
        absl::StrCat(
            "Paged optimizer state: ", FormatGb(e.mem.paged_out),
            " per GPU lives in CPU memory (unified memory pages), with host traffic every step."),
        out);
  }
  if (j.qlora && p.zero >= 3) {
    AddNote(v1::NOTE_SEVERITY_WARNING, "fsdp_qlora",
            "FSDP-QLoRA: the 4-bit base is sharded across GPUs (needs FSDP support for quantized "
            "weights, e.g. bitsandbytes >= 0.43 with PEFT/Accelerate).",
            out);
  }
}

// The search over plans without offload, then (only when nothing else fits
// and the framework offloads) with CPU offload.
Search Choose(const TrainContext& c) {
  const Job& j = *c.job;
  Search s;
  RunSearch(c, j.train.offload == v1::OFFLOAD_UNSPECIFIED ? v1::OFFLOAD_NONE : j.train.offload, &s);
  if (!s.best.valid && j.train.offload == v1::OFFLOAD_UNSPECIFIED && j.framework->cpu_offload()) {
    Search o;
    RunSearch(c, v1::OFFLOAD_OPTIMIZER_CPU, &o);
    if (!o.best.valid) RunSearch(c, v1::OFFLOAD_OPTIMIZER_AND_PARAMS_CPU, &o);
    if (o.best.valid) {
      o.leanest = s.leanest;
      s = o;
    }
  }
  return s;
}

// Why the chosen plan does not fit the configuration, or "".
std::string NotFitReasonFor(const TrainContext& c, const Evaluated& chosen, bool found) {
  const Job& j = *c.job;
  if (!found) {
    return absl::StrCat("needs ", FormatGb(chosen.mem.Total()), " per GPU with the leanest plan; ",
                        c.gpu->name, " has ", FormatGb(c.gpu->memory_bytes), " (",
                        FormatGb(c.usable), " usable at margin ", j.vram_margin, ")");
  }
  if (c.nodes > 1 && !c.links.fabric) {
    return "multi-node training needs an inter-node fabric; this configuration has none";
  }
  if (c.links.max_nodes > 0 && c.nodes > c.links.max_nodes) {
    return absl::StrCat("the fabric of this offer spans at most ", c.links.max_nodes, " nodes");
  }
  return "";
}

void SetFit(const TrainContext& c, const Evaluated& chosen, bool found,
            v1::ConfigurationEstimate* out) {
  const std::string reason = NotFitReasonFor(c, chosen, found);
  out->set_fits(reason.empty());
  if (reason.empty()) return;
  out->set_not_fit_reason(reason);
  AddNote(v1::NOTE_SEVERITY_WARNING, "does_not_fit", reason, out);
  if (found) return;
  AddNote(v1::NOTE_SEVERITY_INFO, "does_not_fit_advice",
          c.job->qlora ? "Consider a GPU with more memory or more GPUs (FSDP-QLoRA)."
                       : "Consider more GPUs, an 8-bit optimizer, CPU offload (framework "
                         "\"deepspeed\" or \"torchtune\", or parallelism.offload), LoRA or QLoRA.",
          out);
}

// Speed, goodput and the run's hours.
void FillSpeed(const Job& j, const TrainStep& st, int gpus, v1::ConfigurationEstimate* out) {
  out->set_tokens_per_second(st.tokens_per_second);
  out->set_utilization(st.utilization);
  out->set_communication_fraction(st.communication_fraction);
  out->set_goodput(1.0);
  if (st.tokens_per_second > 0 && j.total_tokens > 0) {
    const double run_hours = j.total_tokens / st.tokens_per_second / 3600.0;
    const double goodput = Goodput(j, gpus);
    out->set_goodput(goodput);
    out->set_estimated_hours(run_hours / goodput);
    if (goodput < 0.98) {
      AddNote(
          v1::NOTE_SEVERITY_INFO, "goodput",
          absl::StrCat("Expected interruptions on ", gpus, " GPUs cost ", Percent(1.0 - goodput),
                       " of wall time (restarts and lost progress since the last "
                       "checkpoint); estimated_hours includes them."),
          out);
    }
  }
  if (j.total_tokens <= 0) {
    AddNote(v1::NOTE_SEVERITY_WARNING, "no_train_tokens",
            "No train_tokens or dataset size given: estimated_hours is 0.", out);
  }
}

}  // namespace

void EstimateTraining(const Job& j, const GpuSpec& gpu, const v1::GpuConfiguration& config,
                      v1::ConfigurationEstimate* out) {
  TrainContext c;
  c.job = &j;
  c.gpu = &gpu;
  c.gpus_per_node = config.gpus_per_node();
  c.nodes = config.nodes();
  c.links = ResolveLinks(gpu, config, j.engine->links());
  const double capacity = gpu.memory_bytes;
  c.usable = capacity * (1.0 - j.vram_margin);
  out->set_gpu_memory_bytes(static_cast<int64_t>(capacity));
  for (const v1::Note& note : j.notes)
    AddNote(note.severity(), note.code().c_str(), note.text(), out);
  if (!c.links.unsupported.empty()) return NotFit(c.links.unsupported, out);
  const int gpus = c.gpus_per_node * c.nodes;
  if (std::string hint = HintProblem(j, c.gpus_per_node, gpus); !hint.empty()) {
    return NotFit(hint, out);
  }
  std::string peak_note;
  c.peak = PeakFlops(gpu, j.precision, true, &peak_note);
  c.efficiency = TrainingEfficiency(j, gpu);
  c.bandwidth = gpu.memory_bandwidth * gpu.decode_bandwidth_efficiency;

  const Search s = Choose(c);
  const bool found = s.best.valid;
  if (!found && !s.leanest.valid) {
    return NotFit(j.train.global_batch > 0
                      ? absl::StrCat("workload.global_batch_size: ", j.train.global_batch,
                                     " sequences cannot be split over the data-parallel ranks of ",
                                     gpus, " GPUs with micro_batch_size ", j.train.micro_batch)
                      : "no parallel plan applies to this configuration",
                  out);
  }
  Evaluated chosen = found ? s.best : s.leanest;
  if (!found) chosen.step = TrainingStep(c, chosen.plan, chosen.mem);

  FillPlan(chosen, c.nodes, out->mutable_plan());
  const Memory& mem = chosen.mem;
  SetMemory(mem.weights, mem.grads, mem.optimizer, mem.activations, mem.kv, mem.overhead,
            out->mutable_memory());
  out->set_memory_margin(1.0 - mem.Total() / capacity);
  if (s.runner_up.valid && found) {
    FillPlan(s.runner_up, c.nodes, out->mutable_runner_up());
    out->set_runner_up_reason(RunnerUpReason(s.best, s.runner_up));
  }
  SetFit(c, chosen, found, out);
  AddNotes(c, chosen, out);
  if (!j.precision_note.empty())
    AddNote(v1::NOTE_SEVERITY_INFO, "precision", j.precision_note, out);
  if (!peak_note.empty())
    AddNote(v1::NOTE_SEVERITY_WARNING, PeakNoteCode(j.precision), peak_note, out);
  FillSpeed(j, chosen.step, gpus, out);
}

}  // namespace gpuadvisor::sizing
