// refresher: keeps the catalog's market data fresh from public sources
// (docs/catalog.md "Refresh"). Fetches every source of --config on its own
// interval, imports and guards it (services/refresher/refresher.h), writes
// the good copies to --output (the file catalog_server reads with
// --refreshed_offers) and asks the catalog writer to reload
// (ReloadCatalog, admin token from --admin_token_file or
// $GPUADVISOR_ADMIN_TOKEN). Serves /metrics (per-source ages) and writes the
// per-source states to --states_json.
//
//   refresher --config=data/refresher/sources.textproto --data_dir=data
//     --output=/var/lib/gpuadvisor/refreshed.binpb --catalog_address=127.0.0.1:50051
//
// Prints "refresher listening metrics=HOST:PORT" once serving; --once
// refreshes every source one time and exits (0 = all published).

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc/channel.h"
#include "common/grpc/server.h"
#include "common/io/text_proto.h"
#include "common/metrics/metrics.h"
#include "common/metrics/write_failures.h"
#include "gpuadvisor/catalog/v1/catalog.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "services/catalog/background_priority.h"
#include "services/catalog/catalog_loader.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/refresher/refresher.h"
#include "services/refresher/source_metrics.h"

ABSL_FLAG(std::string, config, "data/refresher/sources.textproto", "RefresherConfig file.");
ABSL_FLAG(std::string, data_dir, "data", "The catalog data (GPUs, curated offers, tables).");
ABSL_FLAG(std::string, output, "", "The OfferList written for catalog_server --refreshed_offers.");
ABSL_FLAG(std::string, states_json, "",
          "Per-source states written after every refresh; "
          "default <output>.sources.json.");
ABSL_FLAG(std::string, catalog_address, "", "The catalog writer; empty = only write --output.");
ABSL_FLAG(std::string, admin_token_file, "", "The admin token; else $GPUADVISOR_ADMIN_TOKEN.");
ABSL_FLAG(std::string, ca_file, "", "Extra CA bundle for the sources (a test server).");
ABSL_FLAG(std::string, host, "127.0.0.1", "Address /metrics listens on.");
ABSL_FLAG(int, metrics_port, 9464, "Port of /metrics (0 = any).");
ABSL_FLAG(bool, once, false, "Refresh every source once and exit.");
ABSL_FLAG(int, nice, 0,
          "Nice value (SCHED_BATCH) the refresher runs at, below the services answering calls "
          "on the same machine (e.g. 10); 0 = unchanged. Off by default: on a busy machine it "
          "delays the new prices more than it spares the serving path (docs/performance.md).");
ABSL_FLAG(std::string, writer_host, "",
          "Refresh only on the host of this name (a sidecar in every pod of the catalog "
          "StatefulSet: the writer's refreshes, the others stay idle); empty = always.");

namespace {

using gpuadvisor::refresher::Refresher;

// ReloadCatalog on the writer; an error carries the catalog's reason.
gpuadvisor::refresher::PublishFn ReloadVia(const std::string& address, const std::string& token) {
  if (address.empty()) return [] { return absl::OkStatus(); };
  auto stub = std::shared_ptr<gpuadvisor::catalog::v1::CatalogService::Stub>(
      gpuadvisor::catalog::v1::CatalogService::NewStub(gpuadvisor::BackendChannel(address)));
  return [stub, token]() -> absl::Status {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    if (!token.empty()) context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    gpuadvisor::catalog::v1::ReloadCatalogRequest request;
    gpuadvisor::catalog::v1::ReloadCatalogResponse response;
    const grpc::Status s = stub->ReloadCatalog(&context, request, &response);
    if (s.ok()) return absl::OkStatus();
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        absl::StrCat("ReloadCatalog: ", s.error_message()));
  };
}

// The configuration, the curated catalog (GPU names, machine shapes) and the
// options of the Refresher; an error message for a bad start.
struct Setup {
  gpuadvisor::refresher::RefresherConfig config;
  gpuadvisor::catalog::v1::CatalogSnapshot curated;
  std::unique_ptr<gpuadvisor::catalog::GpuNameResolver> gpus;
  gpuadvisor::refresher::RefresherOptions options;
  std::string token;
};

absl::Status LoadSetup(gpuadvisor::Metrics& metrics, Setup& setup) {
  if (absl::Status s = gpuadvisor::LoadTextProtoFile(absl::GetFlag(FLAGS_config), &setup.config);
      !s.ok()) {
    return s;
  }
  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  absl::StatusOr<gpuadvisor::catalog::v1::CatalogSnapshot> curated =
      gpuadvisor::catalog::LoadCatalogSnapshot(
          gpuadvisor::catalog::CatalogSourcesFor(data_dir, "", ""));
  if (!curated.ok()) return curated.status();
  setup.curated = *std::move(curated);
  setup.gpus = std::make_unique<gpuadvisor::catalog::GpuNameResolver>(setup.curated.gpus());
  const std::string output = absl::GetFlag(FLAGS_output);
  if (output.empty()) return absl::InvalidArgumentError("--output is required");
  gpuadvisor::refresher::RefresherOptions& options = setup.options;
  options.output_path = output;
  options.on_write_failed =
      gpuadvisor::WriteFailureCounter(metrics.registry(), "refresher", "refreshed_offers");
  options.ca_file = absl::GetFlag(FLAGS_ca_file);
  options.import = {setup.gpus.get(), &setup.curated.offers(),
                    absl::StrCat(data_dir, "/catalog/country_continents.csv"),
                    absl::StrCat(data_dir, "/catalog/gcp_billing_families.csv")};
  absl::StatusOr<std::string> token =
      gpuadvisor::ReadAdminToken(absl::GetFlag(FLAGS_admin_token_file), "GPUADVISOR_ADMIN_TOKEN");
  if (!token.ok()) return token.status();
  setup.token = *std::move(token);
  return absl::OkStatus();
}

void PrintStates(const Refresher& refresher, FILE* to) {
  for (const auto& s : refresher.States()) {
    std::fprintf(to, "%s%s: %s%s%s (fetch %.2f s, import and guards %.2f s, publish %.2f s)\n",
                 to == stderr ? "refresher: " : "", s.name.c_str(), s.result.c_str(),
                 s.reason.empty() ? "" : ": ", s.reason.c_str(), s.fetch_seconds, s.import_seconds,
                 s.publish_seconds);
  }
}

// --once: every source one time; 0 when every one published.
int RunOnce(Refresher& refresher, const std::function<void()>& write_states) {
  refresher.RefreshDue(absl::Now());
  write_states();
  PrintStates(refresher, stdout);
  int failed = 0;
  for (const auto& s : refresher.States()) failed += s.reason.empty() ? 0 : 1;
  return failed == 0 ? 0 : 1;
}

// Serves /metrics and refreshes every source when due, until SIGTERM.
int RunForever(gpuadvisor::Metrics& metrics, Refresher& refresher,
               const std::function<void()>& write_states) {
  metrics.AddCollectable(
      std::make_shared<gpuadvisor::refresher::SourceMetrics>(&refresher, absl::Now()));
  const std::string host = absl::GetFlag(FLAGS_host);
  absl::StatusOr<gpuadvisor::MetricsEndpoint> endpoint =
      gpuadvisor::ServeMetrics(absl::StrCat(host, ":", absl::GetFlag(FLAGS_metrics_port)), metrics);
  if (!endpoint.ok()) {
    std::fprintf(stderr, "refresher: %s\n", std::string(endpoint.status().message()).c_str());
    return 2;
  }
  std::printf("refresher listening metrics=%s:%d\n", host.c_str(), endpoint->port);
  std::fflush(stdout);
  for (;;) {
    if (refresher.RefreshDue(absl::Now()) > 0) {
      write_states();
      PrintStates(refresher, stderr);
    }
    const double wait =
        std::clamp(absl::ToDoubleSeconds(refresher.NextDue() - absl::Now()), 0.05, 1.0);
    if (gpuadvisor::WaitForTerminationSignal(wait) != 0) return 0;
  }
}

// A sidecar beside a catalog follower (Kubernetes: every pod of the
// StatefulSet has one) stays idle: only the writer's refresher refreshes.
bool IdleOffWriter() {
  const std::string writer = absl::GetFlag(FLAGS_writer_host);
  if (writer.empty()) return false;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || writer == name) return false;
  std::printf("refresher idle: this host (%s) is not the writer (%s)\n", name, writer.c_str());
  std::fflush(stdout);
  while (gpuadvisor::WaitForTerminationSignal(3600) == 0) {
  }
  return true;
}

int Run() {
  if (IdleOffWriter()) return 0;
  gpuadvisor::Metrics metrics("refresher");
  Setup setup;
  if (absl::Status s = LoadSetup(metrics, setup); !s.ok()) {
    std::fprintf(stderr, "refresher: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  const std::string output = setup.options.output_path;
  Refresher refresher(std::move(setup.config), std::move(setup.options),
                      gpuadvisor::refresher::Fetch,
                      ReloadVia(absl::GetFlag(FLAGS_catalog_address), setup.token));
  std::string states_path = absl::GetFlag(FLAGS_states_json);
  if (states_path.empty()) states_path = absl::StrCat(output, ".sources.json");
  auto states_failed =
      gpuadvisor::WriteFailureCounter(metrics.registry(), "refresher", "source_states");
  auto write_states = [&] {
    absl::Status s =
        gpuadvisor::WriteFileAtomically(states_path, refresher.StatesJson(absl::Now()));
    if (!s.ok()) {
      std::fprintf(stderr, "refresher: cannot write %s: %s\n", states_path.c_str(),
                   std::string(s.message()).c_str());
      states_failed(s);
    }
  };
  if (absl::GetFlag(FLAGS_once)) return RunOnce(refresher, write_states);
  return RunForever(metrics, refresher, write_states);
}

}  // namespace

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);
  // Before any thread starts: they all inherit it.
  gpuadvisor::catalog::LowerThisThreadPriority(absl::GetFlag(FLAGS_nice));
  return Run();
}
