// catalog_server: serves GPU specs and cloud offers (gpuadvisor.catalog.v1).
//
//   catalog_server --port=50051 --metrics_port=9461 --data_dir=data
//       [--skypilot_csv=aws=path/vms.csv,...] [--admin_token_file=FILE]
//
// Prints "catalog listening grpc=HOST:PORT metrics=HOST:PORT" once serving.
// The admin token (ReloadCatalog) comes from --admin_token_file or the
// GPUADVISOR_ADMIN_TOKEN environment variable. SIGHUP is not used: reloads go
// through the ReloadCatalog RPC so the caller learns whether they took.

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_split.h"
#include "common/grpc/server.h"
#include "common/grpc/service_main.h"
#include "services/catalog/catalog_service_impl.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Address to listen on (0.0.0.0 for all interfaces).");
ABSL_FLAG(int, port, 50051, "gRPC port; 0 picks a free port.");
ABSL_FLAG(int, metrics_port, 9461, "Prometheus /metrics port; 0 picks a free port.");
ABSL_FLAG(std::string, data_dir, "data", "Folder with catalog/gpus.textproto and catalog/offers.textproto.");
ABSL_FLAG(std::string, offers, "", "Comma-separated OfferList files; default <data_dir>/catalog/offers.textproto.");
ABSL_FLAG(std::string, skypilot_csv, "", "Comma-separated SkyPilot v8 vms.csv files (cloud=path or .../<cloud>/vms.csv).");
ABSL_FLAG(std::string, admin_token_file, "", "File holding the admin token; else $GPUADVISOR_ADMIN_TOKEN.");

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);
  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);

  gpuadvisor::catalog::CatalogSources sources;
  sources.gpus_path = data_dir + "/catalog/gpus.textproto";
  const std::string offers = absl::GetFlag(FLAGS_offers);
  sources.offer_paths = offers.empty()
                            ? std::vector<std::string>{data_dir + "/catalog/offers.textproto"}
                            : absl::StrSplit(offers, ',', absl::SkipEmpty());
  sources.skypilot_csv_paths = absl::StrSplit(absl::GetFlag(FLAGS_skypilot_csv), ',', absl::SkipEmpty());

  absl::StatusOr<std::string> token =
      gpuadvisor::ReadAdminToken(absl::GetFlag(FLAGS_admin_token_file), "GPUADVISOR_ADMIN_TOKEN");
  if (!token.ok()) return gpuadvisor::FailStartup("catalog", token.status());

  gpuadvisor::Metrics metrics("catalog");
  gpuadvisor::catalog::CatalogStore store(sources);
  gpuadvisor::catalog::CatalogServiceImpl service(&store, &metrics, {.admin_token = *token});
  if (absl::Status loaded = service.Reload(); !loaded.ok()) {
    return gpuadvisor::FailStartup("catalog", loaded);
  }

  gpuadvisor::ServiceMainOptions options;
  options.name = "catalog";
  options.server.host = absl::GetFlag(FLAGS_host);
  options.server.port = absl::GetFlag(FLAGS_port);
  options.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  options.health_names = {"gpuadvisor.catalog.v1.CatalogService"};
  return gpuadvisor::ServeUntilSignal(options, metrics, {&service}, [&] { service.Shutdown(); });
}
