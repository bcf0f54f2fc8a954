// gpu-advisor: the command-line client of GPU Advisor (see kUsage below).
// Talks to the gateway (recommend, estimate), the catalog (offers, gpus) and
// the sizing service (models). Prints an aligned table, or JSON with --json.
// Errors are one line on stderr and a non-zero exit code.

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/io/text_proto.h"
#include "common/status/grpc_status.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gpuadvisor/catalog/v1/catalog.grpc.pb.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "gpuadvisor/sizing/v1/sizing.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "services/cli/workload_flags.h"

constexpr char kUsage[] = R"(which cloud GPU to rent, how long it runs, what it costs.

Usage: gpu-advisor COMMAND [flags]

Commands:
  recommend   ranked, explained offers for a workload (gateway)
  estimate    memory, plan, throughput and hours on one GPU configuration (gateway)
  offers      cloud offers in the catalog, filtered (catalog)
  gpus        GPU models and their specs (catalog)
  models      model presets known to sizing (sizing)
  health      grpc.health.v1 status of --target (default: the gateway); exit 0 if SERVING

Examples:
  gpu-advisor recommend --model=llama-3.1-70b --task=qlora --train_tokens=5e7
  gpu-advisor recommend --model=llama-3.1-8b --task=inference --context=4096 --concurrency=16 --objective=cheapest
  gpu-advisor recommend --request_file=request.json --json
  gpu-advisor estimate --model=llama-3.1-8b --task=full_finetune --gpu=H100-SXM --gpus=8
  gpu-advisor offers --gpu=H100-SXM --max_usd_per_hour=40
  gpu-advisor gpus
  gpu-advisor models

Servers:   --gateway=HOST:PORT (127.0.0.1:50050) --catalog=... (50051) --sizing=... (50052)
           --timeout_seconds=10
Workload:  --model=PRESET --task=pretrain|full_finetune|lora|qlora|inference|batch_inference
           --precision=fp32|bf16|fp16|fp8|int8|int4|nf4 --optimizer=adamw|adamw_8bit|sgd|adafactor
           --params=N (explicit model size instead of, or on top of, a preset)
           --train_tokens=N --seq_len=N --batch=N --lora_rank=N --gradient_checkpointing
           --context=N --concurrency=N --output_tokens=N --requests=N --serving_hours=H
           --dataset_gb=N --checkpoint_interval_minutes=N --restartable=true|false
           --request_file=FILE (a RecommendRequest in protobuf JSON; flags above are ignored)
Limits:    --objective=cheapest|fastest|best_value|deadline --deadline_hours=H
           --max_usd_per_hour=N --max_total_usd=N --min_tokens_per_second=N
           --providers=a,b --regions=a,b
           --purchase=on_demand,spot,reserved --single_node --max_gpus=N --max_nodes=N
           --vram_margin=0.1 --gpus_filter=H100-SXM,A100-80GB --max_results=10
Estimate:  --gpu=NAME --gpus=N --nodes=N --link=nvlink|pcie|none
Offers:    --gpu=NAME --min_vram_gb=N --providers=... --regions=... --max_usd_per_hour=N --page_size=N
Health:    --target=HOST:PORT --service=NAME ("" = the whole server)
Output:    --json (machine-readable protobuf JSON)
)";

ABSL_FLAG(std::string, gateway, "127.0.0.1:50050", "Gateway address.");
ABSL_FLAG(std::string, catalog, "127.0.0.1:50051", "Catalog service address.");
ABSL_FLAG(std::string, sizing, "127.0.0.1:50052", "Sizing service address.");
ABSL_FLAG(double, timeout_seconds, 10, "Deadline of each call.");
ABSL_FLAG(bool, json, false, "Print protobuf JSON instead of a table.");
ABSL_FLAG(std::string, request_file, "", "RecommendRequest in protobuf JSON.");
ABSL_FLAG(std::string, model, "", "Model preset, e.g. llama-3.1-70b.");
ABSL_FLAG(double, params, 0, "Total parameters (explicit model or override).");
ABSL_FLAG(std::string, task, "inference", "Workload task.");
ABSL_FLAG(std::string, precision, "", "Precision (default: bf16; nf4 for qlora).");
ABSL_FLAG(std::string, optimizer, "", "Optimizer for training (default adamw).");
ABSL_FLAG(double, train_tokens, 0, "Tokens to train on.");
ABSL_FLAG(int, seq_len, 0, "Training sequence length.");
ABSL_FLAG(int, batch, 0, "Micro-batch size per GPU.");
ABSL_FLAG(int, lora_rank, 0, "LoRA rank.");
ABSL_FLAG(bool, gradient_checkpointing, false, "Force full gradient checkpointing.");
ABSL_FLAG(int, context, 0, "Serving context length (prompt + output).");
ABSL_FLAG(int, concurrency, 0, "Concurrent sequences served.");
ABSL_FLAG(int, output_tokens, 0, "Output tokens per request.");
ABSL_FLAG(double, requests, 0, "Requests in a batch-inference job.");
ABSL_FLAG(double, serving_hours, 0, "Lifetime of an inference endpoint.");
ABSL_FLAG(double, dataset_gb, 0, "Dataset size stored during the job.");
ABSL_FLAG(double, checkpoint_interval_minutes, 0, "Checkpoint interval.");
ABSL_FLAG(std::string, restartable, "", "true/false: can the job resume from a checkpoint.");
ABSL_FLAG(std::string, objective, "cheapest", "Ranking objective.");
ABSL_FLAG(double, deadline_hours, 0, "Must finish within.");
ABSL_FLAG(double, max_usd_per_hour, 0, "Hourly budget.");
ABSL_FLAG(double, max_total_usd, 0, "Total budget.");
ABSL_FLAG(double, min_tokens_per_second, 0, "Throughput floor (training, or summed decode).");
ABSL_FLAG(std::string, providers, "", "Comma-separated providers.");
ABSL_FLAG(std::string, regions, "", "Comma-separated regions.");
ABSL_FLAG(std::string, purchase, "", "Comma-separated purchase options.");
ABSL_FLAG(bool, single_node, false, "Only single-node configurations.");
ABSL_FLAG(int, max_gpus, 0, "Most GPUs in total.");
ABSL_FLAG(int, max_nodes, 0, "Most nodes.");
ABSL_FLAG(double, vram_margin, -1, "Fraction of GPU memory kept free (default 0.1).");
ABSL_FLAG(std::string, gpus_filter, "", "Only these GPU models (recommend).");
ABSL_FLAG(int, max_results, 10, "Recommendations to return.");
ABSL_FLAG(std::string, gpu, "", "GPU model (estimate, offers).");
ABSL_FLAG(int, gpus, 1, "GPUs per node (estimate).");
ABSL_FLAG(int, nodes, 1, "Nodes (estimate).");
ABSL_FLAG(std::string, link, "nvlink", "Intra-node link (estimate).");
ABSL_FLAG(double, min_vram_gb, 0, "Minimum GPU memory (offers).");
ABSL_FLAG(int, page_size, 50, "Offers per page (offers).");
ABSL_FLAG(std::string, target, "", "Server to check (health); default --gateway.");
ABSL_FLAG(std::string, service, "", "Service name to check (health); empty = overall.");

namespace gpuadvisor::cli {
namespace {

// Exits with one line on stderr.
[[noreturn]] void Fail(const absl::Status& status) {
  std::fprintf(stderr, "gpu-advisor: %s: %s\n", absl::StatusCodeToString(status.code()).c_str(),
               std::string(status.message()).c_str());
  std::exit(status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1);
}

template <typename T>
T OrFail(absl::StatusOr<T> value) {
  if (!value.ok()) Fail(value.status());
  return *std::move(value);
}

void PrintJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  std::cout << json;
}

std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(
                            static_cast<int64_t>(absl::GetFlag(FLAGS_timeout_seconds) * 1000)));
  return context;
}

std::shared_ptr<grpc::Channel> Channel(const std::string& target) {
  return grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
}

void Check(const grpc::Status& status, const std::string& target) {
  if (status.ok()) return;
  absl::Status s = FromGrpcStatus(status);
  if (s.code() == absl::StatusCode::kUnavailable || s.code() == absl::StatusCode::kDeadlineExceeded) {
    s = absl::Status(s.code(), absl::StrCat(target, ": ", s.message(),
                                            " (is it running? deploy/local/run.sh starts all four)"));
  }
  Fail(s);
}

sizing::v1::Workload WorkloadFromFlags() {
  sizing::v1::Workload w;
  w.set_task(OrFail(ParseTask(absl::GetFlag(FLAGS_task))));
  std::string precision = absl::GetFlag(FLAGS_precision);
  if (precision.empty()) precision = w.task() == sizing::v1::TASK_QLORA ? "nf4" : "bf16";
  w.set_precision(OrFail(ParsePrecision(precision)));
  if (!absl::GetFlag(FLAGS_optimizer).empty()) {
    w.set_optimizer(OrFail(ParseOptimizer(absl::GetFlag(FLAGS_optimizer))));
  }
  w.mutable_model()->set_preset(absl::GetFlag(FLAGS_model));
  w.mutable_model()->set_params(absl::GetFlag(FLAGS_params));
  w.set_train_tokens(absl::GetFlag(FLAGS_train_tokens));
  w.set_sequence_length(absl::GetFlag(FLAGS_seq_len));
  w.set_micro_batch_size(absl::GetFlag(FLAGS_batch));
  w.set_lora_rank(absl::GetFlag(FLAGS_lora_rank));
  if (absl::GetFlag(FLAGS_gradient_checkpointing)) {
    w.set_gradient_checkpointing(sizing::v1::GRADIENT_CHECKPOINTING_FULL);
  }
  w.set_context_length(absl::GetFlag(FLAGS_context));
  w.set_concurrent_sequences(absl::GetFlag(FLAGS_concurrency));
  w.set_output_tokens(absl::GetFlag(FLAGS_output_tokens));
  w.set_requests(absl::GetFlag(FLAGS_requests));
  w.set_serving_hours(absl::GetFlag(FLAGS_serving_hours));
  w.set_dataset_gb(absl::GetFlag(FLAGS_dataset_gb));
  w.set_checkpoint_interval_minutes(absl::GetFlag(FLAGS_checkpoint_interval_minutes));
  const std::string restartable = absl::GetFlag(FLAGS_restartable);
  if (restartable == "true") w.set_restartable(true);
  if (restartable == "false") w.set_restartable(false);
  if (!restartable.empty() && restartable != "true" && restartable != "false") {
    Fail(absl::InvalidArgumentError("--restartable: use true or false"));
  }
  return w;
}

gateway::v1::RecommendRequest RequestFromFlags() {
  const std::string file = absl::GetFlag(FLAGS_request_file);
  if (!file.empty()) return OrFail(ParseRequestJson(OrFail(ReadFile(file)), file));
  gateway::v1::RecommendRequest request;
  *request.mutable_workload() = WorkloadFromFlags();
  gateway::v1::Constraints* c = request.mutable_constraints();
  c->set_objective(OrFail(ParseObjective(absl::GetFlag(FLAGS_objective))));
  c->set_deadline_hours(absl::GetFlag(FLAGS_deadline_hours));
  c->set_max_usd_per_hour(absl::GetFlag(FLAGS_max_usd_per_hour));
  c->set_max_total_usd(absl::GetFlag(FLAGS_max_total_usd));
  c->set_min_tokens_per_second(absl::GetFlag(FLAGS_min_tokens_per_second));
  for (const std::string& p : SplitList(absl::GetFlag(FLAGS_providers))) c->add_providers(p);
  for (const std::string& r : SplitList(absl::GetFlag(FLAGS_regions))) c->add_regions(r);
  for (const std::string& g : SplitList(absl::GetFlag(FLAGS_gpus_filter))) c->add_gpu_models(g);
  for (const std::string& o : SplitList(absl::GetFlag(FLAGS_purchase))) {
    c->add_purchase_options(OrFail(ParsePurchaseOption(o)));
  }
  c->set_single_node(absl::GetFlag(FLAGS_single_node));
  c->set_max_gpus(absl::GetFlag(FLAGS_max_gpus));
  c->set_max_nodes(absl::GetFlag(FLAGS_max_nodes));
  if (absl::GetFlag(FLAGS_vram_margin) >= 0) c->set_vram_margin(absl::GetFlag(FLAGS_vram_margin));
  request.set_max_results(absl::GetFlag(FLAGS_max_results));
  return request;
}

std::string Money(double usd) { return absl::StrFormat("%.2f", usd); }

std::string Shape(const catalog::v1::Offer& offer) {
  return offer.nodes() > 1
             ? absl::StrFormat("%dx%d %s", offer.nodes(), offer.gpus_per_node(), offer.gpu_model())
             : absl::StrFormat("%dx %s", offer.gpus_per_node(), offer.gpu_model());
}

const char* ExclusionName(gateway::v1::ExclusionReason reason) {
  switch (reason) {
    case gateway::v1::EXCLUSION_REASON_DOES_NOT_FIT: return "does not fit";
    case gateway::v1::EXCLUSION_REASON_OVER_BUDGET: return "over budget";
    case gateway::v1::EXCLUSION_REASON_MISSES_DEADLINE: return "misses deadline";
    case gateway::v1::EXCLUSION_REASON_NO_FABRIC: return "needs multi-node, no fabric";
    case gateway::v1::EXCLUSION_REASON_UNAVAILABLE: return "unavailable";
    case gateway::v1::EXCLUSION_REASON_FILTERED: return "filtered out";
    case gateway::v1::EXCLUSION_REASON_TOO_MANY_GPUS: return "too many GPUs";
    case gateway::v1::EXCLUSION_REASON_NOT_PRICED: return "no price";
    case gateway::v1::EXCLUSION_REASON_TOO_SLOW: return "too slow";
    default: return "other";
  }
}

int Recommend() {
  const gateway::v1::RecommendRequest request = RequestFromFlags();
  const std::string target = absl::GetFlag(FLAGS_gateway);
  auto stub = gateway::v1::GatewayService::NewStub(Channel(target));
  gateway::v1::RecommendResponse response;
  Check(stub->Recommend(Context().get(), request, &response), target);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(response);
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {
      {"RANK", "PROVIDER", "INSTANCE", "REGION", "GPUS", "BUY", "USD/H", "HOURS", "TOTAL USD",
       "MEM FREE", "TOP WARNING"}};
  for (const gateway::v1::Recommendation& r : response.recommendations()) {
    rows.push_back({absl::StrCat(r.rank()), r.offer().provider(), r.offer().instance_type(),
                    r.offer().region(), Shape(r.offer()), PurchaseOptionName(r.purchase_option()),
                    Money(r.cost().usd_per_hour()), absl::StrFormat("%.1f", r.estimated_hours()),
                    Money(r.cost().total_usd()), absl::StrFormat("%.0f%%", 100 * r.memory_margin()),
                    r.warnings().empty() ? "" : r.warnings(0)});
  }
  if (response.recommendations().empty()) {
    std::cout << "No offer qualifies.\n";
  } else {
    std::cout << RenderTable(rows);
    const gateway::v1::Recommendation& best = response.recommendations(0);
    std::cout << "\n#1 because:\n";
    for (const std::string& reason : best.reasons()) std::cout << "  - " << reason << "\n";
    for (const std::string& warning : best.warnings()) std::cout << "  ! " << warning << "\n";
  }
  std::cout << "\nExcluded:";
  if (response.excluded().empty()) std::cout << " none";
  for (const gateway::v1::Exclusion& e : response.excluded()) {
    std::cout << absl::StrFormat(" %s %d;", ExclusionName(e.reason()), e.count());
  }
  std::cout << absl::StrFormat("\nCatalog %s (age %ds), prices %s as of %s\n", response.catalog_version(),
                               response.catalog_age_seconds(), response.price_book_version(),
                               response.prices_as_of());
  return 0;
}

int Estimate() {
  gateway::v1::EstimateRequest request;
  *request.mutable_workload() = WorkloadFromFlags();
  sizing::v1::GpuConfiguration* config = request.add_configurations();
  if (absl::GetFlag(FLAGS_gpu).empty()) Fail(absl::InvalidArgumentError("--gpu: required for estimate"));
  config->set_gpu_model(absl::GetFlag(FLAGS_gpu));
  config->set_gpus_per_node(absl::GetFlag(FLAGS_gpus));
  config->set_nodes(absl::GetFlag(FLAGS_nodes));
  config->set_link(OrFail(ParseLink(absl::GetFlag(FLAGS_link))));
  if (config->nodes() > 1) config->set_fabric(catalog::v1::FABRIC_TYPE_INFINIBAND);
  if (absl::GetFlag(FLAGS_vram_margin) >= 0) request.set_vram_margin(absl::GetFlag(FLAGS_vram_margin));
  const std::string target = absl::GetFlag(FLAGS_gateway);
  auto stub = gateway::v1::GatewayService::NewStub(Channel(target));
  gateway::v1::EstimateResponse response;
  Check(stub->Estimate(Context().get(), request, &response), target);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(response);
    return 0;
  }
  const sizing::v1::ConfigurationEstimate& e = response.estimates(0);
  const sizing::v1::MemoryBreakdown& m = e.memory();
  auto gb = [](int64_t bytes) { return absl::StrFormat("%.2f GB", bytes / 1e9); };
  std::cout << absl::StrFormat("%s on %dx%d %s: %s\n", response.model().name().empty() ? response.model().preset() : response.model().name(),
                               config->nodes(), config->gpus_per_node(), config->gpu_model(),
                               e.fits() ? "fits" : "does NOT fit");
  std::cout << RenderTable({{"MEMORY PER GPU", "BYTES"},
                            {"weights", gb(m.weights_bytes())},
                            {"gradients", gb(m.gradients_bytes())},
                            {"optimizer", gb(m.optimizer_bytes())},
                            {"activations", gb(m.activations_bytes())},
                            {"kv cache", gb(m.kv_cache_bytes())},
                            {"overhead", gb(m.overhead_bytes())},
                            {"total", gb(m.total_bytes())},
                            {"capacity", gb(e.gpu_memory_bytes())}});
  std::cout << absl::StrFormat("plan: %s\nthroughput: %.0f tokens/s (MFU %.0f%%, %.0f%% in communication)\n"
                               "estimated hours: %.2f\n",
                               e.plan().description(), e.tokens_per_second(), 100 * e.utilization(),
                               100 * e.communication_fraction(), e.estimated_hours());
  if (!e.not_fit_reason().empty()) std::cout << "why not: " << e.not_fit_reason() << "\n";
  for (const std::string& note : e.notes()) std::cout << "  - " << note << "\n";
  std::cout << absl::StrFormat("workload: %.3g FLOPs, checkpoint %s, single-GPU minimum %s\n",
                               response.totals().total_flops(), gb(response.totals().checkpoint_bytes()),
                               gb(response.totals().min_vram_bytes_single_gpu()));
  return 0;
}

int Offers() {
  catalog::v1::ListOffersRequest request;
  if (!absl::GetFlag(FLAGS_gpu).empty()) {
    for (const std::string& g : SplitList(absl::GetFlag(FLAGS_gpu))) request.add_gpu_models(g);
  }
  request.set_min_gpu_memory_bytes(static_cast<int64_t>(absl::GetFlag(FLAGS_min_vram_gb) * 1e9));
  for (const std::string& p : SplitList(absl::GetFlag(FLAGS_providers))) request.add_providers(p);
  for (const std::string& r : SplitList(absl::GetFlag(FLAGS_regions))) request.add_regions(r);
  request.set_max_usd_per_hour(absl::GetFlag(FLAGS_max_usd_per_hour));
  request.set_page_size(absl::GetFlag(FLAGS_page_size));
  const std::string target = absl::GetFlag(FLAGS_catalog);
  auto stub = catalog::v1::CatalogService::NewStub(Channel(target));
  catalog::v1::ListOffersResponse response;
  Check(stub->ListOffers(Context().get(), request, &response), target);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(response);
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {
      {"PROVIDER", "INSTANCE", "REGION", "GPUS", "LINK", "FABRIC", "MAX NODES", "ON-DEMAND", "SPOT"}};
  for (const catalog::v1::Offer& o : response.offers()) {
    rows.push_back({o.provider(), o.instance_type(), o.region(), Shape(o), LinkName(o.link()),
                    FabricName(o.fabric()), absl::StrCat(o.max_nodes()),
                    o.on_demand_usd_per_hour() > 0 ? Money(o.on_demand_usd_per_hour()) : "-",
                    o.spot_usd_per_hour() > 0 ? Money(o.spot_usd_per_hour()) : "-"});
  }
  std::cout << RenderTable(rows)
            << absl::StrFormat("%d of %d offers%s\n", response.offers_size(), response.total_size(),
                               response.next_page_token().empty() ? "" : " (more: raise --page_size)");
  return 0;
}

int Gpus() {
  const std::string target = absl::GetFlag(FLAGS_catalog);
  auto stub = catalog::v1::CatalogService::NewStub(Channel(target));
  catalog::v1::ListGpusResponse response;
  Check(stub->ListGpus(Context().get(), catalog::v1::ListGpusRequest(), &response), target);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(response);
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {{"GPU", "VENDOR", "MEMORY", "TYPE", "BW TB/S", "BF16 TFLOPS", "FP8 TFLOPS"}};
  for (const catalog::v1::Gpu& g : response.gpus()) {
    rows.push_back({g.name(), g.vendor(), absl::StrFormat("%.0f GB", g.memory_bytes() / 1e9),
                    g.memory_type() == catalog::v1::MEMORY_TYPE_HBM ? "HBM" : "GDDR",
                    absl::StrFormat("%.2f", g.memory_bandwidth_bytes_per_second() / 1e12),
                    g.bf16_flops() > 0 ? absl::StrFormat("%.0f", g.bf16_flops() / 1e12) : "-",
                    g.fp8_flops() > 0 ? absl::StrFormat("%.0f", g.fp8_flops() / 1e12) : "-"});
  }
  std::cout << RenderTable(rows);
  return 0;
}

int Models() {
  const std::string target = absl::GetFlag(FLAGS_sizing);
  auto stub = sizing::v1::SizingService::NewStub(Channel(target));
  sizing::v1::ListModelsResponse response;
  Check(stub->ListModels(Context().get(), sizing::v1::ListModelsRequest(), &response), target);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(response);
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {{"PRESET", "PARAMS", "ACTIVE", "LAYERS", "HIDDEN", "KV HEADS", "CONTEXT"}};
  for (const sizing::v1::Model& m : response.models()) {
    rows.push_back({m.preset(), absl::StrFormat("%.2fB", m.params() / 1e9),
                    m.active_params() > 0 ? absl::StrFormat("%.2fB", m.active_params() / 1e9) : "-",
                    absl::StrCat(m.layers()), absl::StrCat(m.hidden_size()), absl::StrCat(m.kv_heads()),
                    absl::StrCat(m.max_context_length())});
  }
  std::cout << RenderTable(rows);
  return 0;
}

int Health() {
  std::string target = absl::GetFlag(FLAGS_target);
  if (target.empty()) target = absl::GetFlag(FLAGS_gateway);
  auto stub = grpc::health::v1::Health::NewStub(Channel(target));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(absl::GetFlag(FLAGS_service));
  grpc::health::v1::HealthCheckResponse response;
  Check(stub->Check(Context().get(), request, &response), target);
  const bool serving = response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
  std::cout << target << ": " << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status())
            << "\n";
  return serving ? 0 : 1;
}

}  // namespace
}  // namespace gpuadvisor::cli

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string command = args.size() > 1 ? args[1] : "";
  if (args.size() > 2) {
    gpuadvisor::cli::Fail(absl::InvalidArgumentError(absl::StrCat("unexpected argument \"", args[2], "\"")));
  }
  if (command == "recommend") return gpuadvisor::cli::Recommend();
  if (command == "estimate") return gpuadvisor::cli::Estimate();
  if (command == "offers") return gpuadvisor::cli::Offers();
  if (command == "gpus") return gpuadvisor::cli::Gpus();
  if (command == "models") return gpuadvisor::cli::Models();
  if (command == "health") return gpuadvisor::cli::Health();
  if (command.empty() || command == "help") {
    std::fputs(kUsage, command.empty() ? stderr : stdout);
    return command.empty() ? 2 : 0;
  }
  gpuadvisor::cli::Fail(absl::InvalidArgumentError(
      absl::StrCat("unknown command \"", command, "\"; try: gpu-advisor help")));
}
