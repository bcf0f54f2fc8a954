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
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
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
#include "services/cli/cli_docs.h"
#include "services/cli/commands.h"
#include "services/cli/completion.h"
#include "services/cli/offers_view.h"
#include "services/cli/proto_flags.h"
#include "services/cli/table.h"
#include "services/gateway/export.h"

namespace gpuadvisor::cli {
namespace {

namespace gw = gateway::v1;

constexpr char kDescription[] =
    "gpu-advisor: which cloud GPU to rent for an ML workload, how long it runs, what it costs.\n"
    "Every command talks to the gateway only (--gateway or $GPUADVISOR_GATEWAY).\n"
    "Numbers take suffixes (70B, 5e7, 1T); byte sizes take units (40GB); enums their short\n"
    "names (qlora, on_demand). `gpu-advisor COMMAND --help` lists a command's flags.";

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
  app->add_flag("--wide", g->wide,
                "long cells (the TOP WARNING column) in full, not cut to the terminal width")
      ->group(group);
  const std::string tls = "TLS (default: plaintext)";
  app->add_option("--tls_ca", g->tls_ca, "PEM file of the CA that signed the server's certificate")
      ->group(tls);
  app->add_option("--tls_cert", g->tls_cert,
                  "PEM client certificate, for servers that ask for one (mTLS)")
      ->group(tls);
  app->add_option("--tls_key", g->tls_key, "PEM key of --tls_cert")->group(tls);
}

// The build this binary is (common/metrics/build_info.cmake, linked in).
extern "C" const char* gpuadvisor_build_version();
extern "C" const char* gpuadvisor_build_commit();

// The command line: every command and its flags, bound to the values below.
struct CommandLine {
  Globals globals;
  CLI::App app{kDescription, "gpu-advisor"};
  CLI::App *recommend = nullptr, *estimate = nullptr, *offers = nullptr, *gpus = nullptr,
           *models = nullptr, *sources = nullptr, *health = nullptr, *completion = nullptr,
           *help = nullptr;
  ProtoFlags recommend_flags, estimate_flags, config_flags, offer_flags;
  std::string request_file, hf_config, export_format, offers_sort, offers_group_by;
  int export_alternative = 1;
  std::string target, service, help_command, shell;

  CommandLine() {
    if (const char* env = std::getenv("GPUADVISOR_GATEWAY"); env != nullptr && *env != '\0')
      globals.gateway = env;
    app.require_subcommand(0, 1);
    app.get_formatter()->column_width(40);
    app.set_version_flag("--version",
                         absl::StrCat("gpu-advisor ", gpuadvisor_build_version(), " (commit ",
                                      gpuadvisor_build_commit(), ")"),
                         "the version and the commit this binary was built from");
    std::string all_examples = "Examples:\n";
    for (const char* c :
         {"recommend", "estimate", "offers", "gpus", "models", "sources", "health"}) {
      for (const std::string& e : Examples().at(c)) absl::StrAppend(&all_examples, "  ", e, "\n");
    }
    app.footer(all_examples);
    // The connection and output flags go before the command or after it.
    AddGlobals(&app, &globals);
    AddRecommend();
    AddEstimate();
    AddOffers();
    gpus = app.add_subcommand("gpus", "GPU models, their specs and aliases");
    AddGlobals(gpus, &globals);
    gpus->footer(Footer("gpus"));
    models = app.add_subcommand("models", "model presets known to sizing");
    AddGlobals(models, &globals);
    models->footer(Footer("models"));
    sources = app.add_subcommand(
        "sources", "where prices come from: per source its last attempt, success, rows and age");
    AddGlobals(sources, &globals);
    sources->footer(Footer("sources"));
    health = app.add_subcommand("health", "grpc.health.v1 status; exit 0 if SERVING");
    health->add_option("--target", target, "server to check (default: the gateway)");
    health->add_option("--service", service, "service name; empty = the whole server");
    AddGlobals(health, &globals);
    health->footer(Footer("health"));
    completion = app.add_subcommand(
        "completion", "a bash or zsh completion script: source <(gpu-advisor completion bash)");
    completion->add_option("shell", shell, "bash or zsh")
        ->required()
        ->check(CLI::IsMember({"bash", "zsh"}));
    help = app.add_subcommand("help", "this help, or a command's: gpu-advisor help COMMAND");
    help->add_option("command", help_command, "a command");
  }

  static constexpr char kHfConfigHelp[] =
      "the model as its Hugging Face config.json (a file): architecture, MoE, MLA, sliding windows "
      "and quantization_config are read from it; other model flags override it";

  void AddRecommend() {
    recommend = app.add_subcommand("recommend", "ranked, explained offers for a workload");
    recommend
        ->add_option("--request_file", request_file,
                     "a RecommendRequest in protobuf JSON; flags given as well override its fields")
        ->check(CLI::ExistingFile)
        ->group("Workload");
    recommend->add_option("--hf_config", hf_config, kHfConfigHelp)
        ->check(CLI::ExistingFile)
        ->group("Model");
    recommend_flags.Add(recommend, WalkFlags(gw::RecommendRequest::descriptor(), WorkloadDocs()));
    recommend
        ->add_option(
            "--export", export_format,
            "print the answer as the orchestrator's YAML, offers in rank order: SkyPilot task "
            "(resources.ordered), dstack task, or Karpenter NodePools (docs/http.md)")
        ->check(CLI::IsMember(gateway::ExportFormatNames(), CLI::ignore_case))
        ->group("Output");
    recommend
        ->add_option("--export_alternative", export_alternative,
                     "with --export: 1 = the file of rank 1's shape, N = the N-th other shape "
                     "(node count or replicas) the file's header names")
        ->check(CLI::PositiveNumber)
        ->group("Output");
    AddGlobals(recommend, &globals);
    recommend->footer(Footer("recommend"));
  }

  void AddEstimate() {
    estimate = app.add_subcommand(
        "estimate", "memory, parallel plan, throughput and hours on one GPU configuration");
    estimate
        ->add_option("--request_file", request_file,
                     "an EstimateRequest, or a RecommendRequest's workload, in protobuf JSON; "
                     "flags override")
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
  }

  void AddOffers() {
    offers = app.add_subcommand(
        "offers",
        "cloud offers in the catalog, filtered, sorted or grouped by GPU (like `sky "
        "show-gpus`)");
    offer_flags.Add(offers, WalkFlags(catalog::v1::ListOffersRequest::descriptor(), OfferDocs()));
    offers
        ->add_option(
            "--sort", offers_sort,
            absl::StrCat("sort every matching offer by ", absl::StrJoin(OfferSortKeys(), "|"),
                         " (prices ascending at --purchase, sizes descending), then "
                         "show the first --page_size"))
        ->check(CLI::IsMember(OfferSortKeys()))
        ->group("Output");
    offers
        ->add_option("--group_by", offers_group_by,
                     "gpu: one row per GPU model with its counts per offer, providers and lowest "
                     "price per GPU-hour (like `sky show-gpus`)")
        ->check(CLI::IsMember({"gpu"}))
        ->group("Output");
    AddGlobals(offers, &globals);
    offers->footer(Footer("offers"));
  }

  // The commands and flags, for the completion scripts.
  std::vector<CompletionCommand> CompletionCommands() const {
    std::vector<CompletionCommand> out;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      CompletionCommand c{sub->get_name(), sub->get_description(), {}, {}};
      for (const CLI::Option* o : sub->get_options()) {
        for (const std::string& name : o->get_lnames()) c.flags.push_back("--" + name);
        const std::string type = o->get_type_name();
        if (type.size() > 2 && type.front() == '{' && type.back() == '}' &&
            !o->get_lnames().empty()) {
          std::vector<std::string> values =
              absl::StrSplit(type.substr(1, type.size() - 2), ',', absl::SkipEmpty());
          for (const std::string& name : o->get_lnames())
            c.values.emplace_back("--" + name, values);
        }
      }
      out.push_back(std::move(c));
    }
    return out;
  }

  std::vector<std::string> GlobalFlags() const {
    std::vector<std::string> out;
    for (const CLI::Option* o : app.get_options()) {
      for (const std::string& name : o->get_lnames()) out.push_back("--" + name);
    }
    return out;
  }
};

bool WantsJson(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json" || arg == "--json=true" || arg == "--json=1") return true;
  }
  return false;
}

// Parses the command line; returns the exit code when there is nothing more
// to run (help, version, a parse error), else -1.
int Parse(CommandLine& cli, int argc, char** argv, bool json) {
  CLI::App& app = cli.app;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();  // the help of the command whose --help it was
    return 0;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (app.get_subcommands().empty()) {
      for (int i = 1; i < argc; ++i) {
        if (argv[i][0] == '-') continue;
        message = absl::StrCat(
            "unknown command \"", argv[i],
            "\"; commands: recommend, estimate, offers, gpus, models, sources, health, "
            "completion, help");
        break;
      }
    } else {
      message =
          absl::StrCat(app.get_subcommands()[0]->get_name(), ": ", message, " (see gpu-advisor ",
                       app.get_subcommands()[0]->get_name(), " --help)");
    }
    return Report(absl::InvalidArgumentError(message), json, 2);
  }
  return -1;
}

int Help(CommandLine& cli, bool json) {
  if (cli.help_command.empty()) {
    std::cout << cli.app.get_formatter()->make_help(&cli.app, "gpu-advisor",
                                                    CLI::AppFormatMode::Normal);
    return 0;
  }
  try {
    std::cout << cli.app.get_subcommand(cli.help_command)->help("gpu-advisor");
  } catch (const CLI::Error&) {
    return Report(
        absl::InvalidArgumentError(absl::StrCat("unknown command \"", cli.help_command, "\"")),
        json, 2);
  }
  return 0;
}

int Main(int argc, char** argv) {
  CommandLine cli;
  const bool json = WantsJson(argc, argv);
  if (const int code = Parse(cli, argc, argv, json); code >= 0) return code;
  Globals& globals = cli.globals;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = TlsCredentials(globals);
  if (!credentials.ok()) return Report(credentials.status(), globals.json || json, 2);
  globals.credentials = *std::move(credentials);

  Commands commands(&globals);
  absl::StatusOr<int> code = 0;
  if (cli.recommend->parsed()) {
    code = commands.Recommend(cli.request_file, cli.hf_config, cli.recommend_flags,
                              cli.export_format, cli.export_alternative);
  } else if (cli.estimate->parsed()) {
    code = commands.Estimate(cli.request_file, cli.hf_config, cli.estimate_flags, cli.config_flags);
  } else if (cli.offers->parsed()) {
    code = commands.Offers(cli.offer_flags, cli.offers_sort, cli.offers_group_by);
  } else if (cli.gpus->parsed()) {
    code = commands.Gpus();
  } else if (cli.models->parsed()) {
    code = commands.Models();
  } else if (cli.sources->parsed()) {
    code = commands.Sources();
  } else if (cli.health->parsed()) {
    code = commands.Health(cli.target, cli.service);
  } else if (cli.completion->parsed()) {
    std::cout << (cli.shell == "zsh" ? ZshCompletion(cli.CompletionCommands(), cli.GlobalFlags())
                                     : BashCompletion(cli.CompletionCommands(), cli.GlobalFlags()));
  } else if (cli.help->parsed()) {
    return Help(cli, json);
  } else {
    std::cerr << cli.app.help();
    return 2;
  }
  if (!code.ok()) return Report(code.status(), globals.json || json);
  return *code;
}

}  // namespace
}  // namespace gpuadvisor::cli

int main(int argc, char** argv) { return gpuadvisor::cli::Main(argc, argv); }
