// gpu-advisor: the command-line client of GPU Advisor. Every command talks to
// the gateway alone (--gateway, or $GPUADVISOR_GATEWAY). CLI11 dispatches the
// subcommands; the flags of recommend, estimate and offers are generated from
// the request messages' descriptors (services/cli/proto_flags.h), so a field
// added to Workload, Constraints, GpuConfiguration or ListOffersRequest gets
// its flag without a change here.
//
// Exit codes: 0 ok; 1 the server or the network failed; 2 bad input (flags,
// files, or the server's INVALID_ARGUMENT / NOT_FOUND); 3 nothing matched
// (no offer qualifies, or filters that leave no offer). Errors are one line
// on stderr, or under --json one JSON object on stdout:
// {"error": {"code": "INVALID_ARGUMENT", "message": "...", "exit_code": 2}}.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/io/json_quote.h"
#include "common/io/text_proto.h"
#include "common/status/grpc_status.h"
#include "common/status/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "services/cli/assumed_topology.h"
#include "services/cli/proto_flags.h"
#include "services/cli/table.h"
#include "services/gateway/export.h"

namespace gpuadvisor::cli {
namespace {

namespace gw = gateway::v1;
using google::protobuf::Message;

constexpr char kDescription[] =
    "gpu-advisor: which cloud GPU to rent for an ML workload, how long it runs, what it costs.\n"
    "Every command talks to the gateway only (--gateway or $GPUADVISOR_GATEWAY).\n"
    "Numbers take suffixes (70B, 5e7, 1T); byte sizes take units (40GB); enums their short\n"
    "names (qlora, on_demand). `gpu-advisor COMMAND --help` lists a command's flags.";

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
        "--context=8K --concurrency=8 --max_results=3"}},
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
        "gpu-advisor offers --providers=vast --regions='France\\, FR\\, EU'"}},
      {"gpus", {"gpu-advisor gpus"}},
      {"models", {"gpu-advisor models"}},
      {"health", {"gpu-advisor health"}},
  };
  return *examples;
}

std::string Footer(const std::string& command) {
  std::string out = "Examples:\n";
  for (const std::string& e : Examples().at(command)) absl::StrAppend(&out, "  ", e, "\n");
  return out;
}

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
  o.docs = {
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
      {"constraints.objective",
       {{}, "ranking: cheapest total (default), fastest, best_value, deadline", ""}},
      {"constraints.max_usd_per_hour", {{}, "hourly budget, whole cluster", ""}},
      {"constraints.max_total_usd", {{}, "budget for the whole job", ""}},
      {"constraints.deadline_hours", {{}, "must finish within this many hours", ""}},
      {"constraints.providers", {{}, "only these providers, e.g. aws,gcp", ""}},
      {"constraints.regions", {{}, "only these regions", ""}},
      {"constraints.purchase_options", {{"purchase"}, "how to buy (default on_demand,spot)", ""}},
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
  };
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

// ---------------------------------------------------------------------------
// Errors and output.

struct Globals {
  std::string gateway = "127.0.0.1:50050";
  double timeout_seconds = 10;
  bool json = false;
  // TLS: the CA that signed the server's certificate, and a client
  // certificate and key for servers that ask for one (mTLS). None = plaintext.
  std::string tls_ca, tls_cert, tls_key;
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
};

// The channel credentials of the --tls_* flags: plaintext without them;
// TLS verified against --tls_ca (the system roots without it), presenting
// --tls_cert/--tls_key when given. INVALID_ARGUMENT naming the flag for a
// file that cannot be read or a certificate without its key.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> TlsCredentials(const Globals& g) {
  if (g.tls_ca.empty() && g.tls_cert.empty() && g.tls_key.empty())
    return grpc::InsecureChannelCredentials();
  if (g.tls_cert.empty() != g.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key: give both or neither");
  }
  grpc::SslCredentialsOptions options;
  const std::pair<const char*, const std::string*> files[] = {
      {"--tls_ca", &g.tls_ca}, {"--tls_cert", &g.tls_cert}, {"--tls_key", &g.tls_key}};
  std::string* fields[] = {&options.pem_root_certs, &options.pem_cert_chain,
                           &options.pem_private_key};
  for (int i = 0; i < 3; ++i) {
    if (files[i].second->empty()) continue;
    absl::StatusOr<std::string> pem = ReadFile(*files[i].second);
    if (!pem.ok())
      return absl::InvalidArgumentError(absl::StrCat(files[i].first, ": ", pem.status().message()));
    *fields[i] = *std::move(pem);
  }
  return grpc::SslCredentials(options);
}

int ExitCode(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 0;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 2;
    default:
      return 1;
  }
}

int Report(const absl::Status& status, bool json, int exit_code = -1) {
  if (exit_code < 0) exit_code = ExitCode(status.code());
  const std::string code = absl::StatusCodeToString(status.code());
  const std::string message(status.message());
  if (json) {
    std::cout << absl::StrFormat(
        "{\"error\": {\"code\": %s, \"message\": %s, \"exit_code\": %d}}\n", JsonQuote(code),
        JsonQuote(message), exit_code);
  } else {
    std::cerr << "gpu-advisor: " << code << ": " << message << "\n";
  }
  return exit_code;
}

void PrintJson(const Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  std::cout << json;
}

std::string Money(double usd) { return absl::StrFormat("%.2f", usd); }
std::string Gb(int64_t bytes) { return absl::StrFormat("%.2f GB", bytes / 1e9); }

std::string Shape(const catalog::v1::Offer& offer) {
  return offer.nodes() > 1
             ? absl::StrFormat("%dx%d %s", offer.nodes(), offer.gpus_per_node(), offer.gpu_model())
             : absl::StrFormat("%dx %s", offer.gpus_per_node(), offer.gpu_model());
}

template <typename Enum>
std::string Short(const google::protobuf::EnumDescriptor* type, Enum value) {
  const std::string name = EnumShortName(type, static_cast<int>(value));
  return name.empty() ? "-" : absl::StrReplaceAll(name, {{"_", "-"}});
}

// ---------------------------------------------------------------------------
// Flags bound to CLI11 options.

class ProtoFlags {
 public:
  // Adds one option per flag to `app`; a name taken already (by an earlier
  // set of flags on the same command) falls back to the field's full path.
  void Add(CLI::App* app, std::vector<FlagSpec> specs) {
    for (FlagSpec& spec : specs) {
      std::vector<std::string> names = {Taken(app, spec.name) ? spec.path : spec.name};
      for (const std::string& alias : spec.aliases) {
        if (!Taken(app, alias)) names.push_back(alias);
      }
      std::string joined;
      for (const std::string& n : names)
        absl::StrAppend(&joined, joined.empty() ? "" : ",", "--", n);
      // No variable: the raw strings are read back in Apply (an lvalue
      // string argument here would be taken as the storage, not the help).
      CLI::Option* option = spec.is_bool ? app->add_flag(joined) : app->add_option(joined);
      option->description(spec.help)->group(spec.group);
      if (!spec.is_bool) {
        option->type_name(spec.type_name)->expected(1)->allow_extra_args(false);
        option->multi_option_policy(spec.repeated ? CLI::MultiOptionPolicy::TakeAll
                                                  : CLI::MultiOptionPolicy::TakeLast);
      }
      flags_.emplace_back(std::move(spec), option);
    }
  }

  // Sets every field whose flag was given; later flags override the file.
  absl::Status Apply(Message* root) const {
    for (const auto& [spec, option] : flags_) {
      if (option->count() == 0) continue;
      RETURN_IF_ERROR(ApplyFlag(root, spec, option->results()));
    }
    return absl::OkStatus();
  }

  // "--providers=AWS --regions=eu" for the flags that were given.
  std::string Given() const {
    std::vector<std::string> given;
    for (const auto& [spec, option] : flags_) {
      if (option->count() > 0) {
        given.push_back(absl::StrCat("--", spec.name, "=", absl::StrJoin(option->results(), ",")));
      }
    }
    return absl::StrJoin(given, " ");
  }

  bool WasGiven(const std::string& name) const {
    for (const auto& [spec, option] : flags_) {
      if (spec.name == name) return option->count() > 0;
    }
    return false;
  }

 private:
  static bool Taken(CLI::App* app, const std::string& name) {
    return app->get_option_no_throw("--" + name) != nullptr;
  }

  std::deque<std::pair<FlagSpec, CLI::Option*>> flags_;
};

// ---------------------------------------------------------------------------
// Commands.

class Commands {
 public:
  explicit Commands(Globals* globals) : g_(*globals) {}

  std::shared_ptr<grpc::Channel> Channel() const {
    return grpc::CreateChannel(g_.gateway, g_.credentials);
  }

  std::unique_ptr<grpc::ClientContext> Context() const {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::milliseconds(static_cast<int64_t>(g_.timeout_seconds * 1000)));
    return context;
  }

  absl::Status Rpc(const grpc::Status& status) const {
    if (status.ok()) return absl::OkStatus();
    absl::Status s = FromGrpcStatus(status);
    if (s.code() == absl::StatusCode::kUnavailable ||
        s.code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::Status(s.code(),
                          absl::StrCat("gateway ", g_.gateway, ": ", s.message(),
                                       " (is it running? deploy/local/run.sh starts the stack; "
                                       "set --gateway or GPUADVISOR_GATEWAY)"));
    }
    return s;
  }

  absl::Status ReadRequestFile(const std::string& file, Message* request) const {
    absl::StatusOr<std::string> text = ReadFile(file);
    if (!text.ok())
      return absl::InvalidArgumentError(absl::StrCat("--request_file: ", text.status().message()));
    return ParseJson(*text, file, request);
  }

  // --hf_config: the file's text becomes workload.model.hf_config_json (the
  // sizing service maps it, sizing/hf_config.h). A preset is not combined.
  static absl::Status ApplyHfConfig(const std::string& file, sizing::v1::Workload* workload) {
    if (file.empty()) return absl::OkStatus();
    if (!workload->model().preset().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--hf_config: a preset is given too (\"", workload->model().preset(),
                       "\" from --model or the request file); give one of them"));
    }
    absl::StatusOr<std::string> text = ReadFile(file);
    if (!text.ok())
      return absl::InvalidArgumentError(absl::StrCat("--hf_config: ", text.status().message()));
    workload->mutable_model()->set_hf_config_json(*std::move(text));
    return absl::OkStatus();
  }

  // Returns the exit code.
  // `export_format`: "" for the table (or --json), else an ExportFormat name.
  absl::StatusOr<int> Recommend(const std::string& request_file, const std::string& hf_config,
                                const ProtoFlags& flags, const std::string& export_format,
                                int export_alternative) {
    gw::RecommendRequest request;
    if (!request_file.empty()) RETURN_IF_ERROR(ReadRequestFile(request_file, &request));
    RETURN_IF_ERROR(flags.Apply(&request));
    RETURN_IF_ERROR(ApplyHfConfig(hf_config, request.mutable_workload()));
    auto stub = gw::GatewayService::NewStub(Channel());
    gw::RecommendResponse response;
    RETURN_IF_ERROR(Rpc(stub->Recommend(Context().get(), request, &response)));
    const int code = response.recommendations().empty() ? 3 : 0;
    if (!export_format.empty()) {
      // The same library as the HTTP API's ?format= (services/gateway/export.h).
      ASSIGN_OR_RETURN(const gateway::ExportFormat format,
                       gateway::ParseExportFormat(export_format));
      absl::StatusOr<gateway::ExportFile> file =
          gateway::ExportAnswer(format, request, response, export_alternative);
      if (!file.ok() && response.recommendations().empty()) {
        std::cerr << "gpu-advisor: " << file.status().message() << "\n";
        return 3;  // nothing matches, as without --export
      }
      if (!file.ok()) return file.status();
      std::cout << file->text;
      return code;
    }
    if (g_.json) {
      PrintJson(response);
      return code;
    }
    // Serving answers also show what users get: first token, per-user speed
    // and the price of a million output tokens.
    bool serving = false;
    for (const gw::Recommendation& r : response.recommendations())
      serving |= r.serving().replicas() > 0;
    std::vector<std::string> header = {"RANK", "PROVIDER", "INSTANCE", "REGION",    "GPUS",
                                       "BUY",  "USD/H",    "HOURS",    "TOTAL USD", "MEM FREE"};
    if (serving) header.insert(header.end(), {"TTFT S", "TOK/S/USER", "USD/1M TOK"});
    header.push_back("TOP WARNING");
    std::vector<std::vector<std::string>> rows = {header};
    for (const gw::Recommendation& r : response.recommendations()) {
      std::vector<std::string> row = {
          absl::StrCat(r.rank()),
          r.offer().provider(),
          r.offer().instance_type(),
          r.offer().region(),
          Shape(r.offer()),
          Short(catalog::v1::PurchaseOption_descriptor(), r.purchase_option()),
          Money(r.cost().usd_per_hour()),
          absl::StrFormat("%.1f", r.estimated_hours()),
          Money(r.cost().total_usd()),
          absl::StrFormat("%.0f%%", 100 * r.memory_margin())};
      if (serving) {
        row.insert(row.end(), {absl::StrFormat("%.2f", r.serving().time_to_first_token_seconds()),
                               absl::StrFormat("%.1f", r.serving().tokens_per_second_per_user()),
                               Money(r.serving().usd_per_million_output_tokens())});
      }
      row.push_back(r.warnings().empty() ? "" : r.warnings(0));
      rows.push_back(std::move(row));
    }
    if (response.recommendations().empty()) {
      std::cout << "No offer qualifies";
      if (!flags.Given().empty()) std::cout << " for " << flags.Given();
      std::cout << ".\n";
    } else {
      std::cout << RenderTable(rows);
      const gw::Recommendation& best = response.recommendations(0);
      std::cout << "\n#1 because:\n";
      for (const std::string& reason : best.reasons()) std::cout << "  - " << reason << "\n";
      for (const std::string& warning : best.warnings()) std::cout << "  ! " << warning << "\n";
      // Context, not warnings: already included in the numbers above.
      if (!best.notes().empty()) {
        std::cout << "\nNotes on #1:\n";
        for (const std::string& note : best.notes()) std::cout << "  - " << note << "\n";
      }
      if (!response.what_if().empty()) {
        std::cout << "\nWhat if:\n";
        for (const gw::WhatIf& w : response.what_if()) {
          std::cout << "  " << (w.summary().empty() ? w.axis() : w.summary())
                    << (w.qualifies() ? "" : " (misses a constraint)") << "\n";
        }
      }
    }
    if (!response.nearest_misses().empty()) {
      std::cout << "\nNearest misses:\n";
      for (const gw::NearestMiss& m : response.nearest_misses())
        std::cout << "  " << m.summary() << "\n";
    }
    PrintAssumptions(response.assumptions());
    std::cout << "\nExcluded:";
    if (response.excluded().empty()) std::cout << " none";
    std::cout << "\n";
    for (const gw::Exclusion& e : response.excluded()) {
      std::cout << absl::StrFormat(
          "  %s: %d, e.g. %s%s\n", Short(gw::ExclusionReason_descriptor(), e.reason()), e.count(),
          e.example(), e.detail().empty() ? "" : absl::StrCat(" (", e.detail(), ")"));
    }
    std::cout << absl::StrFormat(
        "Catalog %s (age %ds), prices %s as of %s\n", response.catalog_version(),
        response.catalog_age_seconds(),
        response.price_book_version().empty() ? "-" : response.price_book_version(),
        response.prices_as_of().empty() ? "-" : response.prices_as_of());
    return code;
  }

  absl::StatusOr<int> Estimate(const std::string& request_file, const std::string& hf_config,
                               const ProtoFlags& workload_flags, const ProtoFlags& config_flags) {
    gw::EstimateRequest request;
    if (!request_file.empty()) {
      // An EstimateRequest, or a RecommendRequest whose workload is sized.
      absl::StatusOr<std::string> text = ReadFile(request_file);
      if (!text.ok())
        return absl::InvalidArgumentError(
            absl::StrCat("--request_file: ", text.status().message()));
      if (!ParseJson(*text, request_file, &request).ok()) {
        gw::RecommendRequest recommend;
        RETURN_IF_ERROR(ParseJson(*text, request_file, &recommend));
        *request.mutable_workload() = recommend.workload();
        if (recommend.constraints().has_vram_margin()) {
          request.set_vram_margin(recommend.constraints().vram_margin());
        }
      }
    }
    RETURN_IF_ERROR(workload_flags.Apply(&request));
    RETURN_IF_ERROR(ApplyHfConfig(hf_config, request.mutable_workload()));
    std::vector<std::string> assumed;
    if (request.configurations().empty() || config_flags.WasGiven("gpu_model")) {
      sizing::v1::GpuConfiguration config;
      RETURN_IF_ERROR(config_flags.Apply(&config));
      if (config.gpu_model().empty())
        return absl::InvalidArgumentError("--gpu: required (e.g. --gpu=H100-SXM)");
      if (config.gpus_per_node() == 0) config.set_gpus_per_node(1);
      if (config.nodes() == 0) config.set_nodes(1);
      if (config.link() == catalog::v1::LINK_TYPE_UNSPECIFIED && !config.has_scale_up()) {
        // The topology recommend would size this GPU's offers with.
        absl::StatusOr<std::vector<catalog::v1::Offer>> offers = OffersOf(config.gpu_model());
        AssumedTopology topology;
        if (offers.ok()) {
          topology = AssumeTopology(*offers, &config);
        } else if (config.gpus_per_node() > 1) {
          config.set_link(catalog::v1::LINK_TYPE_PCIE);
          topology = {
              true, "--link=pcie",
              absl::StrCat("the catalog's offers could not be read (", offers.status().message(),
                           "), so PCIe, the cautious reading; --link=... to choose")};
        }
        if (topology.assumed) {
          assumed.push_back(topology.link_flag.empty()
                                ? topology.reason
                                : absl::StrCat(topology.link_flag, " (", topology.reason, ")"));
        }
      }
      if (config.fabric() == catalog::v1::FABRIC_TYPE_UNSPECIFIED && config.nodes() > 1 &&
          !config.has_scale_out()) {
        config.set_fabric(catalog::v1::FABRIC_TYPE_INFINIBAND);
        assumed.push_back("--fabric=infiniband");
      }
      request.clear_configurations();
      *request.add_configurations() = config;
    }
    auto stub = gw::GatewayService::NewStub(Channel());
    gw::EstimateResponse response;
    RETURN_IF_ERROR(Rpc(stub->Estimate(Context().get(), request, &response)));
    if (g_.json) {
      PrintJson(response);
      return 0;
    }
    for (int i = 0; i < response.estimates_size(); ++i) {
      PrintEstimate(response, response.estimates(i));
    }
    for (const std::string& a : assumed) std::cout << "assumed: " << a << "\n";
    PrintAssumptions(response.assumptions());
    const sizing::v1::WorkloadTotals& t = response.totals();
    std::cout << absl::StrFormat(
        "workload: %.3g FLOPs, %.3g tokens, checkpoint %s, single-GPU minimum %s\n",
        t.total_flops(), t.total_tokens(), Gb(t.checkpoint_bytes()),
        Gb(t.min_vram_bytes_single_gpu()));
    return 0;
  }

  // Every catalog offer of `gpu` (any alias), read through the gateway.
  absl::StatusOr<std::vector<catalog::v1::Offer>> OffersOf(const std::string& gpu) {
    auto stub = gw::GatewayService::NewStub(Channel());
    catalog::v1::ListOffersRequest request;
    request.add_gpu_models(gpu);
    request.set_page_size(1000);
    std::vector<catalog::v1::Offer> offers;
    for (int page = 0; page < 100; ++page) {
      catalog::v1::ListOffersResponse response;
      RETURN_IF_ERROR(Rpc(stub->ListOffers(Context().get(), request, &response)));
      for (catalog::v1::Offer& o : *response.mutable_offers()) offers.push_back(std::move(o));
      if (response.next_page_token().empty()) break;
      request.set_page_token(response.next_page_token());
    }
    return offers;
  }

  // The defaults the gateway applied, as it stated them.
  static void PrintAssumptions(
      const google::protobuf::RepeatedPtrField<gw::Assumption>& assumptions) {
    if (assumptions.empty()) return;
    std::cout << "\nAssumed:\n";
    for (const gw::Assumption& a : assumptions) {
      std::cout << "  " << a.field() << " = " << a.value()
                << (a.note().empty() ? "" : absl::StrCat(" (", a.note(), ")")) << "\n";
    }
  }

  void PrintEstimate(const gw::EstimateResponse& response,
                     const sizing::v1::ConfigurationEstimate& e) {
    const sizing::v1::GpuConfiguration& c = e.configuration();
    const sizing::v1::MemoryBreakdown& m = e.memory();
    const std::string model =
        response.model().name().empty() ? response.model().preset() : response.model().name();
    std::cout << absl::StrFormat("%s on %dx%d %s: %s (%.0f%% of GPU memory free)\n",
                                 model.empty() ? "model" : model, c.nodes(), c.gpus_per_node(),
                                 c.gpu_model(), e.fits() ? "fits" : "does NOT fit",
                                 100 * e.memory_margin());
    std::cout << RenderTable({{"MEMORY PER GPU", "BYTES"},
                              {"weights", Gb(m.weights_bytes())},
                              {"gradients", Gb(m.gradients_bytes())},
                              {"optimizer", Gb(m.optimizer_bytes())},
                              {"activations", Gb(m.activations_bytes())},
                              {"kv cache", Gb(m.kv_cache_bytes())},
                              {"overhead", Gb(m.overhead_bytes())},
                              {"total", Gb(m.total_bytes())},
                              {"capacity", Gb(e.gpu_memory_bytes())}});
    const sizing::v1::ParallelPlan& p = e.plan();
    std::cout << absl::StrFormat("plan: %s\n", p.description());
    std::cout << absl::StrFormat(
        "  data %d, tensor %d, pipeline %d, ZeRO %d, offload %s, checkpointing %s%s\n",
        p.data_parallel(), p.tensor_parallel(), p.pipeline_parallel(), p.zero_stage(),
        Short(sizing::v1::Offload_descriptor(), p.offload()),
        Short(sizing::v1::GradientCheckpointing_descriptor(), p.gradient_checkpointing()),
        p.replicas() > 0 ? absl::StrCat(", replicas ", p.replicas()) : "");
    std::cout << absl::StrFormat(
        "throughput: %.0f tokens/s (MFU %.0f%%, %.0f%% in communication)\n"
        "estimated hours: %.2f\n",
        e.tokens_per_second(), 100 * e.utilization(), 100 * e.communication_fraction(),
        e.estimated_hours());
    if (e.has_runner_up() && !e.runner_up().description().empty()) {
      std::cout << absl::StrFormat("runner-up: %s (lost: %s)\n", e.runner_up().description(),
                                   e.runner_up_reason());
    }
    if (e.has_serving()) {
      const sizing::v1::ServingEstimate& s = e.serving();
      std::cout << absl::StrFormat(
          "serving: time to first token %.1f ms, inter-token latency %.1f ms (%.1f tokens/s "
          "between prefills), "
          "%.1f tokens/s per user at full load\n"
          "  %.0f output tokens/s and %.2f requests/s over %d replica(s); per replica %.0f output "
          "tokens/s at "
          "%d concurrent sequences (KV cache holds %d, %d tokens)\n"
          "  bound: %s, prefill %.0f%% of each replica's time at full load\n",
          1e3 * s.time_to_first_token_seconds(), 1e3 * s.inter_token_latency_seconds(),
          s.decode_tokens_per_second_per_user(), s.tokens_per_second_per_user(),
          s.output_tokens_per_second(), s.requests_per_second(), s.replicas(),
          s.output_tokens_per_second_per_replica(), s.concurrency_per_replica(),
          s.max_concurrency_per_replica(), s.kv_cache_capacity_tokens_per_replica(),
          Short(sizing::v1::ServingBound_descriptor(), s.throughput_bound()),
          100 * s.prefill_fraction());
    }
    if (!e.not_fit_reason().empty()) std::cout << "why not: " << e.not_fit_reason() << "\n";
    // Notes: "!" a warning (changes whether the job works or what it
    // costs), "-" context; a note without a severity (an older sizing) is a
    // warning.
    for (const sizing::v1::Note& note : e.structured_notes()) {
      std::cout << (note.severity() == sizing::v1::NOTE_SEVERITY_INFO ? "  - " : "  ! ")
                << note.text() << "\n";
    }
    for (const std::string& note : e.notes()) {
      bool structured = false;
      for (const sizing::v1::Note& n : e.structured_notes()) structured |= n.text() == note;
      if (!structured) std::cout << "  ! " << note << "\n";
    }
    // Whatever else the estimate carries, so new outputs show up without a
    // change here.
    const std::vector<std::string> other =
        OtherFields(e, {"configuration", "fits", "memory", "plan", "tokens_per_second",
                        "estimated_hours", "gpu_memory_bytes", "utilization",
                        "communication_fraction", "notes", "structured_notes", "not_fit_reason",
                        "memory_margin", "runner_up", "runner_up_reason", "serving"});
    for (const std::string& line : other) std::cout << line << "\n";
  }

  absl::StatusOr<int> Offers(const ProtoFlags& flags) {
    catalog::v1::ListOffersRequest request;
    RETURN_IF_ERROR(flags.Apply(&request));
    auto stub = gw::GatewayService::NewStub(Channel());
    catalog::v1::ListOffersResponse response;
    RETURN_IF_ERROR(Rpc(stub->ListOffers(Context().get(), request, &response)));
    const int code = response.offers().empty() ? 3 : 0;
    if (g_.json) {
      PrintJson(response);
      return code;
    }
    if (response.offers().empty()) {
      std::cerr << "gpu-advisor: no offer matches "
                << (flags.Given().empty() ? "(no filters)" : flags.Given()) << " in catalog "
                << response.catalog_version()
                << "; `gpu-advisor offers` lists every provider, region and GPU\n";
      return code;
    }
    std::vector<std::vector<std::string>> rows = {{"PROVIDER", "INSTANCE", "REGION", "GPUS", "LINK",
                                                   "FABRIC", "MAX NODES", "ON-DEMAND", "SPOT"}};
    for (const catalog::v1::Offer& o : response.offers()) {
      rows.push_back({o.provider(), o.instance_type(), o.region(), Shape(o),
                      Short(catalog::v1::LinkType_descriptor(), o.link()),
                      Short(catalog::v1::FabricType_descriptor(), o.fabric()),
                      absl::StrCat(o.max_nodes()),
                      o.on_demand_usd_per_hour() > 0 ? Money(o.on_demand_usd_per_hour()) : "-",
                      o.spot_usd_per_hour() > 0 ? Money(o.spot_usd_per_hour()) : "-"});
    }
    std::cout << RenderTable(rows)
              << absl::StrFormat("%d of %d offers (catalog %s)\n", response.offers_size(),
                                 response.total_size(), response.catalog_version());
    if (!response.next_page_token().empty()) {
      std::cout << "more: --page_token=" << response.next_page_token() << " (same filters)\n";
    }
    return code;
  }

  absl::StatusOr<int> Gpus() {
    auto stub = gw::GatewayService::NewStub(Channel());
    catalog::v1::ListGpusResponse response;
    RETURN_IF_ERROR(
        Rpc(stub->ListGpus(Context().get(), catalog::v1::ListGpusRequest(), &response)));
    if (g_.json) {
      PrintJson(response);
      return 0;
    }
    std::vector<std::vector<std::string>> rows = {
        {"GPU", "VENDOR", "MEMORY", "TYPE", "BW TB/S", "BF16 TFLOPS", "FP8 TFLOPS", "ALIASES"}};
    for (const catalog::v1::Gpu& g : response.gpus()) {
      rows.push_back(
          {g.name(), g.vendor(), absl::StrFormat("%.0f GB", g.memory_bytes() / 1e9),
           absl::AsciiStrToUpper(Short(catalog::v1::MemoryType_descriptor(), g.memory_type())),
           absl::StrFormat("%.2f", g.memory_bandwidth_bytes_per_second() / 1e12),
           g.bf16_flops() > 0 ? absl::StrFormat("%.0f", g.bf16_flops() / 1e12) : "-",
           g.fp8_flops() > 0 ? absl::StrFormat("%.0f", g.fp8_flops() / 1e12) : "-",
           absl::StrJoin(g.aliases(), ",")});
    }
    std::cout << RenderTable(rows);
    return response.gpus().empty() ? 3 : 0;
  }

  absl::StatusOr<int> Models() {
    auto stub = gw::GatewayService::NewStub(Channel());
    sizing::v1::ListModelsResponse response;
    RETURN_IF_ERROR(
        Rpc(stub->ListModels(Context().get(), sizing::v1::ListModelsRequest(), &response)));
    if (g_.json) {
      PrintJson(response);
      return 0;
    }
    std::vector<std::vector<std::string>> rows = {
        {"PRESET", "PARAMS", "ACTIVE", "LAYERS", "HIDDEN", "KV HEADS", "CONTEXT", "KIND"}};
    for (const sizing::v1::Model& m : response.models()) {
      rows.push_back(
          {m.preset(), absl::StrFormat("%.2fB", m.params() / 1e9),
           m.active_params() > 0 ? absl::StrFormat("%.2fB", m.active_params() / 1e9) : "-",
           absl::StrCat(m.layers()), absl::StrCat(m.hidden_size()), absl::StrCat(m.kv_heads()),
           absl::StrCat(m.max_context_length()),
           m.kind() == sizing::v1::MODEL_KIND_UNSPECIFIED
               ? "decoder"
               : Short(sizing::v1::ModelKind_descriptor(), m.kind())});
    }
    std::cout << RenderTable(rows);
    return response.models().empty() ? 3 : 0;
  }

  absl::StatusOr<int> Health(const std::string& target, const std::string& service) {
    const std::string address = target.empty() ? g_.gateway : target;
    auto stub = grpc::health::v1::Health::NewStub(grpc::CreateChannel(address, g_.credentials));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    const grpc::Status status = stub->Check(Context().get(), request, &response);
    if (!status.ok()) {
      const absl::Status s = FromGrpcStatus(status);
      return absl::Status(s.code(), absl::StrCat(address, ": ", s.message()));
    }
    const std::string name =
        grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
    if (g_.json) {
      std::cout << absl::StrFormat("{\"target\": %s, \"service\": %s, \"status\": %s}\n",
                                   JsonQuote(address), JsonQuote(service), JsonQuote(name));
    } else {
      std::cout << address << ": " << name << "\n";
    }
    return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
  }

 private:
  const Globals& g_;
};

void AddGlobals(CLI::App* app, Globals* g) {
  const std::string group = "Output";
  // Not CLI11's envname(): the commands share this variable, and every
  // command's option would read the environment over a flag given to another.
  app->add_option("--gateway", g->gateway,
                  "gateway address HOST:PORT (default: $GPUADVISOR_GATEWAY, else 127.0.0.1:50050)")
      ->group(group);
  app->add_option("--timeout_seconds", g->timeout_seconds, "deadline of the call")
      ->capture_default_str()
      ->group(group);
  app->add_flag("--json", g->json, "print protobuf JSON (errors as {\"error\": ...})")
      ->group(group);
  const std::string tls = "TLS (default: plaintext)";
  app->add_option("--tls_ca", g->tls_ca, "PEM file of the CA that signed the server's certificate")
      ->group(tls);
  app->add_option("--tls_cert", g->tls_cert,
                  "PEM client certificate, for servers that ask for one (mTLS)")
      ->group(tls);
  app->add_option("--tls_key", g->tls_key, "PEM key of --tls_cert")->group(tls);
}

bool WantsJson(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json" || arg == "--json=true" || arg == "--json=1") return true;
  }
  return false;
}

int Main(int argc, char** argv) {
  Globals globals;
  if (const char* env = std::getenv("GPUADVISOR_GATEWAY"); env != nullptr && *env != '\0')
    globals.gateway = env;
  Commands commands(&globals);
  CLI::App app(kDescription, "gpu-advisor");
  app.require_subcommand(0, 1);
  app.get_formatter()->column_width(40);
  std::string all_examples = "Examples:\n";
  for (const char* c : {"recommend", "estimate", "offers", "gpus", "models", "health"}) {
    for (const std::string& e : Examples().at(c)) absl::StrAppend(&all_examples, "  ", e, "\n");
  }
  app.footer(all_examples);

  std::string request_file;
  CLI::App* recommend = app.add_subcommand("recommend", "ranked, explained offers for a workload");
  ProtoFlags recommend_flags;
  recommend
      ->add_option("--request_file", request_file,
                   "a RecommendRequest in protobuf JSON; flags given as well override its fields")
      ->check(CLI::ExistingFile)
      ->group("Workload");
  std::string hf_config;
  constexpr char kHfConfigHelp[] =
      "the model as its Hugging Face config.json (a file): architecture, MoE, MLA, sliding windows "
      "and quantization_config are read from it; other model flags override it";
  recommend->add_option("--hf_config", hf_config, kHfConfigHelp)
      ->check(CLI::ExistingFile)
      ->group("Model");
  recommend_flags.Add(recommend, WalkFlags(gw::RecommendRequest::descriptor(), WorkloadDocs()));
  std::string export_format;
  recommend
      ->add_option(
          "--export", export_format,
          "print the answer as the orchestrator's YAML, offers in rank order: SkyPilot task "
          "(resources.ordered), dstack task, or Karpenter NodePools (docs/http.md)")
      ->check(CLI::IsMember(gateway::ExportFormatNames(), CLI::ignore_case))
      ->group("Output");
  int export_alternative = 1;
  recommend
      ->add_option("--export_alternative", export_alternative,
                   "with --export: 1 = the file of rank 1's shape, N = the N-th other shape "
                   "(node count or replicas) the file's header names")
      ->check(CLI::PositiveNumber)
      ->group("Output");
  AddGlobals(recommend, &globals);
  recommend->footer(Footer("recommend"));

  CLI::App* estimate = app.add_subcommand(
      "estimate", "memory, parallel plan, throughput and hours on one GPU configuration");
  ProtoFlags estimate_flags, config_flags;
  estimate
      ->add_option(
          "--request_file", request_file,
          "an EstimateRequest, or a RecommendRequest's workload, in protobuf JSON; flags override")
      ->check(CLI::ExistingFile)
      ->group("Workload");
  estimate->add_option("--hf_config", hf_config, kHfConfigHelp)
      ->check(CLI::ExistingFile)
      ->group("Model");
  estimate_flags.Add(estimate, WalkFlags(gw::EstimateRequest::descriptor(), WorkloadDocs()));
  config_flags.Add(estimate,
                   WalkFlags(sizing::v1::GpuConfiguration::descriptor(), ConfigurationDocs()));
  AddGlobals(estimate, &globals);
  estimate->footer(Footer("estimate"));

  CLI::App* offers =
      app.add_subcommand("offers", "cloud offers in the catalog, filtered (like `sky show-gpus`)");
  ProtoFlags offer_flags;
  offer_flags.Add(offers, WalkFlags(catalog::v1::ListOffersRequest::descriptor(), OfferDocs()));
  AddGlobals(offers, &globals);
  offers->footer(Footer("offers"));

  CLI::App* gpus = app.add_subcommand("gpus", "GPU models, their specs and aliases");
  AddGlobals(gpus, &globals);
  gpus->footer(Footer("gpus"));
  CLI::App* models = app.add_subcommand("models", "model presets known to sizing");
  AddGlobals(models, &globals);
  models->footer(Footer("models"));

  CLI::App* health = app.add_subcommand("health", "grpc.health.v1 status; exit 0 if SERVING");
  std::string target, service;
  health->add_option("--target", target, "server to check (default: the gateway)");
  health->add_option("--service", service, "service name; empty = the whole server");
  AddGlobals(health, &globals);
  health->footer(Footer("health"));

  CLI::App* help =
      app.add_subcommand("help", "this help, or a command's: gpu-advisor help COMMAND");
  std::string help_command;
  help->add_option("command", help_command, "a command");

  const bool json = WantsJson(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();  // the help of the command whose --help it was
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      message =
          absl::StrCat("unknown command \"", argv[1],
                       "\"; commands: recommend, estimate, offers, gpus, models, health, help");
    } else if (!app.get_subcommands().empty()) {
      message =
          absl::StrCat(app.get_subcommands()[0]->get_name(), ": ", message, " (see gpu-advisor ",
                       app.get_subcommands()[0]->get_name(), " --help)");
    }
    return Report(absl::InvalidArgumentError(message), json, 2);
  }

  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = TlsCredentials(globals);
  if (!credentials.ok()) return Report(credentials.status(), globals.json || json, 2);
  globals.credentials = *std::move(credentials);

  absl::StatusOr<int> code = 0;
  if (recommend->parsed()) {
    code = commands.Recommend(request_file, hf_config, recommend_flags, export_format,
                              export_alternative);
  } else if (estimate->parsed()) {
    code = commands.Estimate(request_file, hf_config, estimate_flags, config_flags);
  } else if (offers->parsed()) {
    code = commands.Offers(offer_flags);
  } else if (gpus->parsed()) {
    code = commands.Gpus();
  } else if (models->parsed()) {
    code = commands.Models();
  } else if (health->parsed()) {
    code = commands.Health(target, service);
  } else if (help->parsed()) {
    if (help_command.empty()) {
      std::cout << app.get_formatter()->make_help(&app, "gpu-advisor", CLI::AppFormatMode::Normal);
      return 0;
    }
    try {
      std::cout << app.get_subcommand(help_command)->help("gpu-advisor");
    } catch (const CLI::Error&) {
      return Report(
          absl::InvalidArgumentError(absl::StrCat("unknown command \"", help_command, "\"")), json,
          2);
    }
    return 0;
  } else {
    std::cerr << app.help();
    return 2;
  }
  if (!code.ok()) return Report(code.status(), globals.json || json);
  return *code;
}

}  // namespace
}  // namespace gpuadvisor::cli

int main(int argc, char** argv) { return gpuadvisor::cli::Main(argc, argv); }
