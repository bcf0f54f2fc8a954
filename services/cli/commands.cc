#include "services/cli/commands.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/io/json_quote.h"
#include "common/io/text_proto.h"
#include "common/io/units.h"
#include "common/status/grpc_status.h"
#include "common/status/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "services/cli/assumed_topology.h"
#include "services/cli/cli_docs.h"
#include "services/cli/completion.h"
#include "services/cli/offers_view.h"
#include "services/cli/proto_flags.h"
#include "services/cli/table.h"
#include "services/gateway/export.h"

namespace gpuadvisor::cli {

using google::protobuf::Message;

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

int Report(const absl::Status& status, bool json, int exit_code) {
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

void PrintJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  // Every field, zeros and empty lists included (as the HTTP API prints
  // them): "recommendations": [] says nothing qualified.
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  std::cout << json;
}

std::string Money(double usd) { return absl::StrFormat("%.2f", usd); }

// A P10-P90 interval in three significant figures ("10.0-16.7", "110-183"):
// narrow enough for the table; "-" when none.
std::string Range(const sizing::v1::Interval& i) {
  if (!(i.p50() > 0)) return "-";
  auto sig3 = [](double v) {
    if (v >= 100) return absl::StrFormat("%.0f", v);
    return v >= 10 ? absl::StrFormat("%.1f", v) : absl::StrFormat("%.2f", v);
  };
  return absl::StrCat(sig3(i.p10()), "-", sig3(i.p90()));
}

std::string Shape(const catalog::v1::Offer& offer) {
  return offer.nodes() > 1
             ? absl::StrFormat("%dx%d %s", offer.nodes(), offer.gpus_per_node(), offer.gpu_model())
             : absl::StrFormat("%dx %s", offer.gpus_per_node(), offer.gpu_model());
}

// ---------------------------------------------------------------------------
// recommend and estimate, and what every command shares.

std::shared_ptr<grpc::Channel> Commands::Channel() const {
  return grpc::CreateChannel(g_.gateway, g_.credentials);
}

std::unique_ptr<grpc::ClientContext> Commands::Context() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(g_.timeout_seconds * 1000)));
  return context;
}

absl::Status Commands::Rpc(const grpc::Status& status) const {
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

absl::Status Commands::ReadRequestFile(const std::string& file, Message* request) const {
  absl::StatusOr<std::string> text = ReadFile(file);
  if (!text.ok())
    return absl::InvalidArgumentError(absl::StrCat("--request_file: ", text.status().message()));
  return ParseJson(*text, file, request);
}

// --hf_config: the file's text becomes workload.model.hf_config_json (the
// sizing service maps it, sizing/hf_config.h). A preset is not combined.
absl::Status Commands::ApplyHfConfig(const std::string& file, sizing::v1::Workload* workload) {
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

namespace {

std::string AgeCell(int64_t seconds) {
  if (seconds < 0) return "?";
  if (seconds < 120) return absl::StrCat(seconds, "s");
  if (seconds < 2 * 3600) return absl::StrCat(seconds / 60, "m");
  if (seconds < 2 * 86400) return absl::StrCat(seconds / 3600, "h");
  return absl::StrCat(seconds / 86400, "d");
}

// "C-AWS 5d", "R5 226d!" (older than its source's budget): where the price
// comes from and its age.
std::string PricedCell(const gw::PriceProvenance& p) {
  if (p.source().empty()) return "-";
  return absl::StrCat(p.source(), " ", AgeCell(p.age_seconds()), p.stale() ? "!" : "");
}

// The ranked table: serving answers also show what users get (first token
// and total tokens/s, each with its P10-P90 interval, per-user speed and the
// price of a million output tokens). A row that stands for the same offer in
// several regions says how many more.
std::vector<std::vector<std::string>> RecommendationRows(const gw::RecommendResponse& response) {
  bool serving = false;
  for (const gw::Recommendation& r : response.recommendations())
    serving |= r.serving().replicas() > 0;
  std::vector<std::string> header = {"RANK",      "PROVIDER", "INSTANCE", "REGION", "GPUS",
                                     "BUY",       "PRICED",   "USD/H",    "HOURS",  "P10-P90",
                                     "TOTAL USD", "P10-P90",  "MEM FREE"};
  if (serving) {
    header.insert(header.end(),
                  {"TTFT S", "P10-P90", "TOK/S", "P10-P90", "TOK/S/USER", "USD/1M TOK"});
  }
  header.push_back("TOP WARNING");
  std::vector<std::vector<std::string>> rows = {header};
  for (const gw::Recommendation& r : response.recommendations()) {
    std::vector<std::string> row = {
        absl::StrCat(r.rank()),
        r.offer().provider(),
        r.offer().instance_type(),
        r.also_in_regions().empty()
            ? r.offer().region()
            : absl::StrCat(r.offer().region(), " (+", r.also_in_regions_size(), ")"),
        Shape(r.offer()),
        Short(catalog::v1::PurchaseOption_descriptor(), r.purchase_option()),
        PricedCell(r.price()),
        Money(r.cost().usd_per_hour()),
        absl::StrFormat("%.1f", r.estimated_hours()),
        Range(r.estimated_hours_interval()),
        Money(r.cost().total_usd()),
        Range(r.total_usd_interval()),
        absl::StrFormat("%.0f%%", 100 * r.memory_margin())};
    if (serving) {
      row.insert(row.end(), {absl::StrFormat("%.2f", r.serving().time_to_first_token_seconds()),
                             Range(r.time_to_first_token_interval()),
                             absl::StrFormat("%.0f", r.tokens_per_second()),
                             Range(r.tokens_per_second_interval()),
                             absl::StrFormat("%.1f", r.serving().tokens_per_second_per_user()),
                             Money(r.serving().usd_per_million_output_tokens())});
    }
    row.push_back(r.warnings().empty() ? "" : r.warnings(0));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Why #1 ranks first, its warnings and notes, and the what-ifs.
void PrintTopExplained(const gw::RecommendResponse& response) {
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

// What was left out, and the data the answer is from.
void PrintExclusions(const gw::RecommendResponse& response) {
  std::cout << "\nExcluded:";
  if (response.excluded().empty()) std::cout << " none";
  std::cout << "\n";
  for (const gw::Exclusion& e : response.excluded()) {
    std::cout << absl::StrFormat(
        "  %s: %d, e.g. %s%s\n", Short(gw::ExclusionReason_descriptor(), e.reason()), e.count(),
        e.example(), e.detail().empty() ? "" : absl::StrCat(" (", e.detail(), ")"));
  }
  std::cout << absl::StrFormat(
      "Catalog %s (age %ds), price book %s\n", response.catalog_version(),
      response.catalog_age_seconds(),
      response.price_book_version().empty() ? "-" : response.price_book_version());
  if (!response.oldest_price_as_of().empty()) {
    std::cout << absl::StrFormat(
        "Prices used: oldest %s (%s old), newest %s (%s old)\n", response.oldest_price_as_of(),
        AgeCell(response.oldest_price_age_seconds()), response.newest_price_as_of(),
        AgeCell(response.newest_price_age_seconds()));
  }
}

// --export: the same library as the HTTP API's ?format= (services/gateway/export.h).
absl::StatusOr<int> PrintExport(const std::string& export_format, int export_alternative,
                                const gw::RecommendRequest& request,
                                const gw::RecommendResponse& response) {
  ASSIGN_OR_RETURN(const gateway::ExportFormat format, gateway::ParseExportFormat(export_format));
  absl::StatusOr<gateway::ExportFile> file =
      gateway::ExportAnswer(format, request, response, export_alternative);
  if (!file.ok() && response.recommendations().empty()) {
    std::cerr << "gpu-advisor: " << file.status().message() << "\n";
    return 3;  // nothing matches, as without --export
  }
  if (!file.ok()) return file.status();
  std::cout << file->text;
  return response.recommendations().empty() ? 3 : 0;
}

}  // namespace

// Returns the exit code.
// `export_format`: "" for the table (or --json), else an ExportFormat name.
absl::StatusOr<int> Commands::Recommend(const std::string& request_file,
                                        const std::string& hf_config, const ProtoFlags& flags,
                                        const std::string& export_format, int export_alternative) {
  gw::RecommendRequest request;
  if (!request_file.empty()) RETURN_IF_ERROR(ReadRequestFile(request_file, &request));
  RETURN_IF_ERROR(flags.Apply(&request));
  RETURN_IF_ERROR(ApplyHfConfig(hf_config, request.mutable_workload()));
  auto stub = gw::GatewayService::NewStub(Channel());
  gw::RecommendResponse response;
  RETURN_IF_ERROR(Rpc(stub->Recommend(Context().get(), request, &response)));
  const int code = response.recommendations().empty() ? 3 : 0;
  if (!export_format.empty()) {
    return PrintExport(export_format, export_alternative, request, response);
  }
  if (g_.json) {
    PrintJson(response);
    return code;
  }
  if (response.recommendations().empty()) {
    std::cout << "No offer qualifies";
    if (!flags.Given().empty()) std::cout << " for " << flags.Given();
    std::cout << ".\n";
  } else {
    std::cout << RenderTable(RecommendationRows(response), g_.wide ? 0 : TerminalWidth());
    PrintTopExplained(response);
  }
  if (!response.nearest_misses().empty()) {
    std::cout << "\nNearest misses:\n";
    for (const gw::NearestMiss& m : response.nearest_misses())
      std::cout << "  " << m.summary() << "\n";
  }
  PrintAssumptions(response.assumptions());
  PrintExclusions(response);
  return code;
}

absl::StatusOr<int> Commands::Estimate(const std::string& request_file,
                                       const std::string& hf_config,
                                       const ProtoFlags& workload_flags,
                                       const ProtoFlags& config_flags) {
  gw::EstimateRequest request;
  if (!request_file.empty()) {
    // An EstimateRequest, or a RecommendRequest whose workload is sized.
    absl::StatusOr<std::string> text = ReadFile(request_file);
    if (!text.ok())
      return absl::InvalidArgumentError(absl::StrCat("--request_file: ", text.status().message()));
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
  RETURN_IF_ERROR(CheckModelled(request));
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
      "workload: %.3g FLOPs, %.3g tokens, checkpoint %s, single-GPU minimum %s\n", t.total_flops(),
      t.total_tokens(), FormatGb(t.checkpoint_bytes(), 2),
      FormatGb(t.min_vram_bytes_single_gpu(), 2));
  return 0;
}

// Sizing models GPUs; TPUs, Trainium and Gaudi are listed in the catalog
// but their memory, throughput and plans are not modelled, so an estimate
// of one would be a wrong number printed as an answer. INVALID_ARGUMENT
// naming the accelerator; a GPU list that cannot be read checks nothing.
absl::Status Commands::CheckModelled(const gw::EstimateRequest& request) {
  absl::StatusOr<catalog::v1::ListGpusResponse> gpus = ListGpus();
  if (!gpus.ok()) return absl::OkStatus();
  for (const sizing::v1::GpuConfiguration& config : request.configurations()) {
    for (const catalog::v1::Gpu& g : gpus->gpus()) {
      bool named = absl::EqualsIgnoreCase(g.name(), config.gpu_model());
      for (const std::string& alias : g.aliases())
        named |= absl::EqualsIgnoreCase(alias, config.gpu_model());
      const auto kind = g.accelerator_kind();
      if (!named || kind == catalog::v1::ACCELERATOR_KIND_GPU ||
          kind == catalog::v1::ACCELERATOR_KIND_UNSPECIFIED) {
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "--gpu: ", g.name(), " is a ", Short(catalog::v1::AcceleratorKind_descriptor(), kind),
          " accelerator; sizing models GPUs only (memory, parallel plans and throughput of "
          "TPUs, Trainium and Gaudi are not modelled), so it has no estimate. `gpu-advisor gpus` "
          "lists the accelerators and their kinds"));
    }
  }
  return absl::OkStatus();
}

// Every catalog offer of `gpu` (any alias), read through the gateway.
absl::StatusOr<std::vector<catalog::v1::Offer>> Commands::OffersOf(const std::string& gpu) {
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
void Commands::PrintAssumptions(
    const google::protobuf::RepeatedPtrField<gw::Assumption>& assumptions) {
  if (assumptions.empty()) return;
  std::cout << "\nAssumed:\n";
  for (const gw::Assumption& a : assumptions) {
    std::cout << "  " << a.field() << " = " << a.value()
              << (a.note().empty() ? "" : absl::StrCat(" (", a.note(), ")")) << "\n";
  }
}

void Commands::PrintEstimate(const gw::EstimateResponse& response,
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
                            {"weights", FormatGb(m.weights_bytes(), 2)},
                            {"gradients", FormatGb(m.gradients_bytes(), 2)},
                            {"optimizer", FormatGb(m.optimizer_bytes(), 2)},
                            {"activations", FormatGb(m.activations_bytes(), 2)},
                            {"kv cache", FormatGb(m.kv_cache_bytes(), 2)},
                            {"overhead", FormatGb(m.overhead_bytes(), 2)},
                            {"total", FormatGb(m.total_bytes(), 2)},
                            {"capacity", FormatGb(e.gpu_memory_bytes(), 2)}});
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
  const std::vector<std::string> other = OtherFields(
      e, {"configuration", "fits", "memory", "plan", "tokens_per_second", "estimated_hours",
          "gpu_memory_bytes", "utilization", "communication_fraction", "notes", "structured_notes",
          "not_fit_reason", "memory_margin", "runner_up", "runner_up_reason", "serving"});
  for (const std::string& line : other) std::cout << line << "\n";
}

}  // namespace gpuadvisor::cli
