#ifndef GPUADVISOR_SERVICES_CLI_COMMANDS_H_
#define GPUADVISOR_SERVICES_CLI_COMMANDS_H_

// The commands of gpu-advisor (services/cli/main.cc parses the command line):
// the connection flags, errors and output shared by every command, the flags
// generated from request messages bound to CLI11 options, and one method per
// command, returning its exit code. recommend and estimate live in
// commands.cc, offers, gpus, models and health in commands_catalog.cc.

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/status/status_macros.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "grpcpp/security/credentials.h"
#include "services/cli/offers_view.h"
#include "services/cli/proto_flags.h"

namespace gpuadvisor::cli {

namespace gw = gateway::v1;

// ---------------------------------------------------------------------------
// Errors and output.

struct Globals {
  std::string gateway = "127.0.0.1:50050";
  double timeout_seconds = 10;
  bool json = false;
  bool wide = false;  // long cells in full instead of cut to the terminal
  // TLS: the CA that signed the server's certificate, and a client
  // certificate and key for servers that ask for one (mTLS). None = plaintext.
  std::string tls_ca, tls_cert, tls_key;
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
};

// The channel credentials of the --tls_* flags: plaintext without them; TLS
// verified against --tls_ca (the system roots without it), presenting
// --tls_cert/--tls_key when given. INVALID_ARGUMENT naming the flag for a
// file that cannot be read or a certificate without its key.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> TlsCredentials(const Globals& g);
// The exit code of a status: 0 ok, 2 bad input, 1 anything else.
int ExitCode(absl::StatusCode code);
// Prints the error (one line on stderr, or a JSON object on stdout under
// --json) and returns `exit_code`, or ExitCode(status) when it is negative.
int Report(const absl::Status& status, bool json, int exit_code = -1);
// Protobuf JSON of `message`, proto field names, every field.
void PrintJson(const google::protobuf::Message& message);
std::string Money(double usd);
// "8x H100-SXM", "2x8 H100-SXM".
std::string Shape(const catalog::v1::Offer& offer);

// An enum value's short name with '-' for '_'; "-" when it has none.

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
  absl::Status Apply(google::protobuf::Message* root) const {
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

  std::shared_ptr<grpc::Channel> Channel() const;

  std::unique_ptr<grpc::ClientContext> Context() const;

  absl::Status Rpc(const grpc::Status& status) const;

  absl::Status ReadRequestFile(const std::string& file, google::protobuf::Message* request) const;

  // --hf_config: the file's text becomes workload.model.hf_config_json (the
  // sizing service maps it, sizing/hf_config.h). A preset is not combined.
  static absl::Status ApplyHfConfig(const std::string& file, sizing::v1::Workload* workload);

  // Returns the exit code.
  // `export_format`: "" for the table (or --json), else an ExportFormat name.
  absl::StatusOr<int> Recommend(const std::string& request_file, const std::string& hf_config,
                                const ProtoFlags& flags, const std::string& export_format,
                                int export_alternative);

  absl::StatusOr<int> Estimate(const std::string& request_file, const std::string& hf_config,
                               const ProtoFlags& workload_flags, const ProtoFlags& config_flags);

  // Sizing models GPUs; TPUs, Trainium and Gaudi are listed in the catalog
  // but their memory, throughput and plans are not modelled, so an estimate
  // of one would be a wrong number printed as an answer. INVALID_ARGUMENT
  // naming the accelerator; a GPU list that cannot be read checks nothing.
  absl::Status CheckModelled(const gw::EstimateRequest& request);

  // Every catalog offer of `gpu` (any alias), read through the gateway.
  absl::StatusOr<std::vector<catalog::v1::Offer>> OffersOf(const std::string& gpu);

  // The defaults the gateway applied, as it stated them.
  static void PrintAssumptions(
      const google::protobuf::RepeatedPtrField<gw::Assumption>& assumptions);

  void PrintEstimate(const gw::EstimateResponse& response,
                     const sizing::v1::ConfigurationEstimate& e);

  // `sort`: "" for the catalog's order, else a key of OfferSortKeys();
  // `group_by`: "" or "gpu". Both read every matching offer (all pages).
  absl::StatusOr<int> Offers(const ProtoFlags& flags, const std::string& sort,
                             const std::string& group_by);

  // Every offer matching `request`'s filters, page after page.
  absl::StatusOr<catalog::v1::ListOffersResponse> AllOffers(catalog::v1::ListOffersRequest request);

  // GPU model -> memory per GPU, from ListGpus.
  absl::StatusOr<GpuMemory> GpuMemories();

  absl::StatusOr<catalog::v1::ListGpusResponse> ListGpus();

  absl::StatusOr<int> Gpus();

  absl::StatusOr<int> Models();
  // Per price source: result, last attempt and success, age against its
  // budget, offers, rows read / kept / rejected by reason. Exit 0; 3 when
  // the catalog names no source.
  absl::StatusOr<int> Sources();

  absl::StatusOr<int> Health(const std::string& target, const std::string& service);

 private:
  const Globals& g_;
};

}  // namespace gpuadvisor::cli

#endif  // GPUADVISOR_SERVICES_CLI_COMMANDS_H_
