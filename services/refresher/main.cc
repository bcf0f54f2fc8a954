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
//     --output=/var/lib/gpuadvisor/refreshed.textproto --catalog_address=127.0.0.1:50051
//
// Prints "refresher listening metrics=HOST:PORT" once serving; --once
// refreshes every source one time and exits (0 = all published).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
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

int Run() {
  gpuadvisor::refresher::RefresherConfig config;
  if (absl::Status s = gpuadvisor::LoadTextProtoFile(absl::GetFlag(FLAGS_config), &config);
      !s.ok()) {
    std::fprintf(stderr, "refresher: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  absl::StatusOr<gpuadvisor::catalog::v1::CatalogSnapshot> curated =
      gpuadvisor::catalog::LoadCatalogSnapshot(
          gpuadvisor::catalog::CatalogSourcesFor(data_dir, "", ""));
  if (!curated.ok()) {
    std::fprintf(stderr, "refresher: %s\n", std::string(curated.status().message()).c_str());
    return 2;
  }
  const gpuadvisor::catalog::GpuNameResolver gpus(curated->gpus());
  const std::string output = absl::GetFlag(FLAGS_output);
  if (output.empty()) {
    std::fprintf(stderr, "refresher: --output is required\n");
    return 2;
  }
  gpuadvisor::Metrics metrics("refresher");
  gpuadvisor::refresher::RefresherOptions options;
  options.output_path = output;
  options.on_write_failed =
      gpuadvisor::WriteFailureCounter(metrics.registry(), "refresher", "refreshed_offers");
  const std::filesystem::path parent = std::filesystem::path(output).parent_path();
  options.scratch_dir = parent.empty() ? std::string(".") : parent.string();
  options.ca_file = absl::GetFlag(FLAGS_ca_file);
  options.import = {
      &gpus, &curated->offers(), absl::StrCat(data_dir, "/catalog/country_continents.csv"),
      absl::StrCat(data_dir, "/catalog/gcp_billing_families.csv"), options.scratch_dir};
  absl::StatusOr<std::string> token =
      gpuadvisor::ReadAdminToken(absl::GetFlag(FLAGS_admin_token_file), "GPUADVISOR_ADMIN_TOKEN");
  if (!token.ok()) {
    std::fprintf(stderr, "refresher: %s\n", std::string(token.status().message()).c_str());
    return 2;
  }
  Refresher refresher(std::move(config), std::move(options), gpuadvisor::refresher::Fetch,
                      ReloadVia(absl::GetFlag(FLAGS_catalog_address), *token));
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
  if (absl::GetFlag(FLAGS_once)) {
    refresher.RefreshDue(absl::Now());
    write_states();
    int failed = 0;
    for (const auto& s : refresher.States()) {
      std::printf("%s: %s%s%s\n", s.name.c_str(), s.result.c_str(), s.reason.empty() ? "" : ": ",
                  s.reason.c_str());
      if (!s.reason.empty()) ++failed;
    }
    return failed == 0 ? 0 : 1;
  }
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
      for (const auto& s : refresher.States()) {
        std::fprintf(stderr, "refresher: %s: %s%s%s\n", s.name.c_str(), s.result.c_str(),
                     s.reason.empty() ? "" : ": ", s.reason.c_str());
      }
    }
    const double wait =
        std::clamp(absl::ToDoubleSeconds(refresher.NextDue() - absl::Now()), 0.05, 1.0);
    if (gpuadvisor::WaitForTerminationSignal(wait) != 0) return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);
  return Run();
}
