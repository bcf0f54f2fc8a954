#include "services/cli/cli_docs.h"

#include "absl/strings/str_cat.h"

namespace gpuadvisor::cli {

// Every example below is run by tests/integration/cli_test.sh against a live
// stack (from the repository root, with $GPUADVISOR_GATEWAY set).
const std::map<std::string, std::vector<std::string>>& Examples() {
  static const auto* examples = new std::map<std::string, std::vector<std::string>>{
      {"recommend",
       {"gpu-advisor recommend --model=llama-3.1-70b --task=qlora --train_tokens=50M "
        "--seq_len=2048",
        "gpu-advisor recommend --model=llama-3.1-8b --task=inference --context=4096 "
        "--concurrency=16 "
        "--objective=cheapest",
        "gpu-advisor recommend --model=llama-3.1-8b --task=inference --context=4K --concurrency=32 "
        "--max_ttft=2 --min_user_tps=20 --max_results=3",
        "gpu-advisor recommend --model=llama-3.1-8b --task=full_finetune --train_tokens=1B "
        "--seq_len=4096 "
        "--purchase=on_demand --max_nodes=2 --providers=aws,gcp",
        "gpu-advisor recommend --model=llama-3.1-8b --task=lora --train_tokens=100M --seq_len=4096 "
        "--regions=eu "
        "--purchase=on_demand",
        "gpu-advisor recommend --params=13B --task=lora --dataset_tokens=200M --epochs=3 "
        "--seq_len=2048 "
        "--global_batch=64 --dataset_gb=5GB --max_results=3",
        "gpu-advisor recommend --request_file=docs/examples/request.json --json",
        "gpu-advisor recommend --model=llama-3.1-8b --task=lora --train_tokens=50M --seq_len=2048 "
        "--export=skypilot",
        "gpu-advisor recommend --model=llama-3.1-8b --task=full_finetune --train_tokens=200M "
        "--seq_len=2048 "
        "--egress=2TB --providers=aws,lambda --max_results=4",
        "gpu-advisor recommend --model=llama-3.1-8b --task=inference --concurrency=64 "
        "--min_user_tps=0 "
        "--max_results=3",
        "gpu-advisor recommend --hf_config=docs/examples/mistral-small-24b.config.json "
        "--task=inference "
        "--context=8K --concurrency=8 --max_results=3",
        "gpu-advisor recommend --model=llama-3.1-8b --task=inference --concurrency=16 "
        "--serving_hours=8760 --providers=gcp --commit_years=3 --upfront=none --max_results=3"}},
      {"estimate",
       {"gpu-advisor estimate --model=llama-3.1-8b --task=full_finetune --train_tokens=1e9 "
        "--seq_len=4096 "
        "--gpu=H100-SXM --gpus=8",
        "gpu-advisor estimate --model=llama-3.1-70b --task=full_finetune --train_tokens=1B "
        "--seq_len=4096 "
        "--gpu=H100-SXM --gpus=8 --nodes=2 --tp=8 --zero=3 --offload=optimizer_cpu",
        "gpu-advisor estimate --request_file=docs/examples/request.json --gpu=A100-80GB --gpus=2",
        "gpu-advisor estimate --hf_config=docs/examples/mistral-small-24b.config.json "
        "--task=inference "
        "--context=8K --concurrency=8 --gpu=H100-SXM"}},
      {"offers",
       {"gpu-advisor offers --gpu=H100-SXM --max_usd_per_hour=40",
        "gpu-advisor offers --min_vram=80GB --purchase=spot --page_size=20",
        "gpu-advisor offers --providers=vast --regions='France\\, FR\\, EU'",
        "gpu-advisor offers --gpu=H100-SXM,H200 --purchase=spot --sort=price_per_gpu --page_size=5",
        "gpu-advisor offers --group_by=gpu --min_vram=40GB"}},
      {"gpus", {"gpu-advisor gpus"}},
      {"models", {"gpu-advisor models"}},
      {"sources", {"gpu-advisor sources", "gpu-advisor sources --json"}},
      {"health", {"gpu-advisor health"}},
  };
  return *examples;
}

std::string Footer(const std::string& command) {
  std::string out = "Examples:\n";
  for (const std::string& e : Examples().at(command)) absl::StrAppend(&out, "  ", e, "\n");
  return out;
}

namespace {

using Docs = absl::flat_hash_map<std::string, FlagDoc>;

// The workload: the model, the task and its sizes.
void AddWorkloadDocs(Docs& docs) {
  docs.insert({
      {"workload.task", {{}, "what the GPUs do", "Workload"}},
      {"workload.model.preset",
       {{"model"}, "model preset (see `gpu-advisor models`), e.g. llama-3.1-70b", ""}},
      {"workload.model.params",
       {{"params"}, "total parameters, e.g. 70B (explicit model, or preset override)", ""}},
      {"workload.precision", {{}, "weights/compute precision (default bf16; nf4 for qlora)", ""}},
      {"workload.optimizer", {{}, "training optimizer (default adamw)", ""}},
      {"workload.micro_batch_size", {{"batch"}, "sequences per GPU per micro-step", ""}},
      {"workload.sequence_length", {{"seq_len"}, "training sequence length (tokens)", ""}},
      {"workload.gradient_checkpointing",
       {{}, "activation checkpointing (default: chosen by sizing)", ""}},
      {"workload.train_tokens", {{}, "tokens to train on in total, e.g. 50M", ""}},
      {"workload.dataset_tokens",
       {{}, "dataset size in tokens (with --epochs instead of --train_tokens)", ""}},
      {"workload.epochs", {{}, "passes over --dataset_tokens", ""}},
      {"workload.lora_rank", {{}, "LoRA rank (default 16; 64 for qlora)", ""}},
      {"workload.context_length",
       {{"context"}, "serving: prompt + output tokens per sequence", ""}},
      {"workload.concurrent_sequences",
       {{"concurrency"}, "serving: sequences decoded at once", ""}},
      {"workload.output_tokens", {{}, "serving: output tokens per request", ""}},
      {"workload.requests", {{}, "batch inference: number of requests", ""}},
  });
}

// The workload: data, checkpoints, serving and parallelism.
void AddWorkloadDetailDocs(Docs& docs) {
  docs.insert({
      {"workload.dataset_gb", {{}, "dataset stored during the job, e.g. 40GB", ""}},
      {"workload.egress_gb",
       {{"egress"},
        "data moved out to the internet, e.g. 500GB, priced at the provider's "
        "egress rate (default: trained weights or batch outputs; 0 = none)",
        ""}},
      {"workload.checkpoint_interval_minutes", {{}, "minutes between checkpoints", ""}},
      {"workload.restartable",
       {{}, "the job resumes from a checkpoint (default: training yes, serving no)", ""}},
      {"workload.global_batch_size", {{"global_batch"}, "sequences per optimizer step", ""}},
      {"workload.prompt_tokens", {{}, "serving: prompt tokens per request", ""}},
      {"workload.serving_hours", {{}, "inference endpoint lifetime in hours (default 720)", ""}},
      {"workload.kv_cache_precision",
       {{}, "KV-cache precision (default: serving precision, at most 16-bit)", ""}},
      {"workload.lora_target_modules",
       {{}, "LoRA target modules: q,k,v,o,gate,up,down (default all)", ""}},
      {"workload.chunked_loss", {{}, "loss computed in chunks/fused with the LM head", ""}},
      {"workload.parallelism.zero_stage", {{"zero"}, "ZeRO stage 0-3 (FSDP FULL_SHARD = 3)", ""}},
      {"workload.parallelism.tensor_parallel", {{"tp"}, "tensor-parallel degree", ""}},
      {"workload.parallelism.pipeline_parallel", {{"pp"}, "pipeline-parallel degree", ""}},
      {"workload.parallelism.offload",
       {{"offload"}, "offload optimizer/params to CPU or NVMe", ""}},
      {"workload.parallelism.master_weights", {{}, "keep an fp32 master copy", ""}},
  });
}

// The constraints: budget, where, what, SLOs and the choice of hosts.
void AddConstraintDocs(Docs& docs) {
  docs.insert({
      {"constraints.objective",
       {{}, "ranking: cheapest total (default), fastest, best_value, deadline", ""}},
      {"constraints.max_usd_per_hour", {{}, "hourly budget, whole cluster", ""}},
      {"constraints.max_total_usd", {{}, "budget for the whole job", ""}},
      {"constraints.deadline_hours", {{}, "must finish within this many hours", ""}},
      {"constraints.tie_band_fraction",
       {{"tie_band"},
        "totals (or hours, value) within this fraction of the best rank as a tie, then by time "
        "and risk (default: the estimate's own uncertainty; 0 = strict order)",
        ""}},
      {"constraints.confidence",
       {{}, "confidence of the deadline and budget checks, 0.5-0.99 (default 0.8: P80)", ""}},
      {"constraints.providers", {{}, "only these providers, e.g. aws,gcp", ""}},
      {"constraints.exclude_providers", {{}, "leave out these providers, e.g. vast,runpod", ""}},
      {"constraints.host_tier",
       {{},
        "hosts: datacenter, community (marketplace hosts) or any (default: datacenter for an "
        "endpoint, any otherwise)",
        ""}},
      {"constraints.min_host_reliability",
       {{},
        "least host reliability, 0-1 (Vast's score, e.g. 0.98); offers without a figure are "
        "kept",
        ""}},
      {"constraints.group_regions",
       {{},
        "one row per offer sold alike in several regions (default true; false = a row per "
        "region)",
        ""}},
      {"constraints.regions", {{}, "only these regions", ""}},
      {"constraints.purchase_options", {{"purchase"}, "how to buy (default on_demand,spot)", ""}},
      {"constraints.max_commitment_years",
       {{"commit_years"},
        "longest commitment term for reserved prices, years (default 1 when reserved is asked; "
        "set: adds reserved to the defaults; 0 = none); a term is paid whole",
        ""}},
      {"constraints.upfront_payments",
       {{"upfront"}, "upfront rules a commitment may have: none, partial, all (default any)", ""}},
      {"constraints.single_node", {{}, "only single-node configurations", ""}},
      {"constraints.max_gpus", {{}, "most GPUs in total", ""}},
      {"constraints.vram_margin", {{}, "fraction of GPU memory kept free (default 0.1)", ""}},
      {"constraints.max_nodes", {{}, "most nodes per cluster", ""}},
      {"constraints.gpu_models", {{"gpu"}, "only these GPU models, e.g. H100-SXM,A100-80GB", ""}},
      {"constraints.min_tokens_per_second",
       {{}, "throughput floor (training tokens/s or summed decode)", ""}},
      {"constraints.max_time_to_first_token_seconds",
       {{"max_ttft"}, "serving SLO: most seconds to the first token", ""}},
      {"constraints.min_user_tokens_per_second",
       {{"min_user_tps"},
        "serving SLO: least output tokens/s per user (endpoint default 10; 0 = no floor)",
        ""}},
  });
}

// Output, and the fields of EstimateRequest.
void AddOtherDocs(Docs& docs) {
  docs.insert({
      {"max_results", {{}, "recommendations to return (default 10)", "Output"}},
      {"vram_margin", {{}, "fraction of GPU memory kept free (default 0.1)", "Workload"}},
      {"serving_slo.max_time_to_first_token_seconds",
       {{"max_ttft"},
        "serving SLO: most seconds to the first token (the layout is chosen to meet it)",
        "Workload"}},
      {"serving_slo.min_tokens_per_second_per_user",
       {{"min_user_tps"},
        "serving SLO: least output tokens/s per user at full load (no floor unless given)",
        "Workload"}},
      {"serving_slo.min_tokens_per_second",
       {{"min_tps"}, "serving SLO: least output tokens/s of the whole configuration", "Workload"}},
  });
}

}  // namespace

// Readable help and short names for the fields people type most; every other
// field still gets a flag, named after it, with generated help.
WalkOptions WorkloadDocs() {
  WalkOptions o;
  o.root_group = "Output";
  o.flatten = {"workload", "constraints"};
  // The config.json text comes from a file through --hf_config, not a flag.
  // min_user_tokens_per_second (--min_user_tps) supersedes the older
  // min_tokens_per_second_per_user, which cannot say "no floor".
  o.skip = {"workload.model.hf_config_json", "constraints.min_tokens_per_second_per_user"};
  AddWorkloadDocs(o.docs);
  AddWorkloadDetailDocs(o.docs);
  AddConstraintDocs(o.docs);
  AddOtherDocs(o.docs);
  return o;
}

WalkOptions ConfigurationDocs() {
  WalkOptions o;
  o.root_group = "GPU configuration";
  o.docs = {
      {"gpu_model", {{"gpu"}, "GPU model or alias, e.g. H100-SXM (required)", ""}},
      {"gpus_per_node", {{"gpus"}, "GPUs per node (default 1)", ""}},
      {"nodes", {{}, "nodes (default 1)", ""}},
      {"link",
       {{},
        "intra-node link (default: the topology most catalog offers of the GPU have, as recommend "
        "uses)",
        ""}},
      {"fabric", {{}, "inter-node fabric (default infiniband when --nodes > 1)", ""}},
  };
  return o;
}

WalkOptions OfferDocs() {
  WalkOptions o;
  o.root_group = "Filters";
  o.docs = {
      {"gpu_models", {{"gpu"}, "GPU models or aliases, e.g. H100-SXM,A100", ""}},
      {"min_gpu_memory_bytes", {{"min_vram"}, "at least this much memory per GPU, e.g. 80GB", ""}},
      {"min_gpus", {{}, "at least this many GPUs per node", ""}},
      {"max_gpus", {{}, "at most this many GPUs per node", ""}},
      {"providers", {{}, "only these providers", ""}},
      {"regions", {{}, "only these regions", ""}},
      {"links", {{}, "intra-node links", ""}},
      {"fabrics", {{}, "inter-node fabrics", ""}},
      {"max_usd_per_hour", {{}, "at most this price per hour at --purchase", ""}},
      {"purchase_option", {{"purchase"}, "only offers sold this way", ""}},
      {"page_size", {{}, "offers per page (default 100, max 1000)", "Output"}},
      {"page_token", {{}, "next page, as printed by the previous one", "Output"}},
  };
  return o;
}

}  // namespace gpuadvisor::cli
