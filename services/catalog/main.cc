// catalog_server: serves GPU specs and cloud offers (gpuadvisor.catalog.v1).
//
//   catalog_server --port=50051 --metrics_port=9461 --data_dir=data
//       [--skypilot_csv=aws=path/vms.csv,...] [--vast_json=search.json,...]
//       [--gcp_billing_json=skus.json,...] [--aws_price_list_json=index.json,...]
//       [--gpuhunt_csv=[provider=]path.csv,...] [--admin_token_file=FILE]
//
// Prints "catalog listening grpc=HOST:PORT metrics=HOST:PORT" once serving.
// The admin token (ReloadCatalog) comes from --admin_token_file or the
// GPUADVISOR_ADMIN_TOKEN environment variable. Reloads go through the
// ReloadCatalog RPC (the caller learns whether they took) or, with
// --reload_interval_seconds, happen by polling the files.

#include <cstdio>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/synchronization/notification.h"
#include "common/grpc/server.h"
#include "common/grpc/service_main.h"
#include "services/catalog/catalog_flags.h"
#include "services/catalog/catalog_service_impl.h"

ABSL_FLAG(int, reload_interval_seconds, 0,
          "Re-read the files this often (0 = only on ReloadCatalog); unchanged files keep the version.");

ABSL_FLAG(int, max_watchers, 1000, "Most concurrent WatchCatalog streams; more get RESOURCE_EXHAUSTED.");
ABSL_FLAG(double, watch_slow_seconds, 30,
          "A watcher whose write has not drained for this long is dropped with RESOURCE_EXHAUSTED.");

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);
  const gpuadvisor::catalog::CatalogSources sources = gpuadvisor::catalog::CatalogSourcesFromFlags();

  absl::StatusOr<std::string> token = gpuadvisor::catalog::AdminTokenFromFlags();
  if (!token.ok()) return gpuadvisor::FailStartup("catalog", token.status());

  gpuadvisor::Metrics metrics("catalog");
  gpuadvisor::catalog::CatalogStore store(sources);
  gpuadvisor::catalog::CatalogServiceImpl service(&store, &metrics, {.admin_token = *token,
       .watch = {.max_watchers = absl::GetFlag(FLAGS_max_watchers),
                 .slow_watcher = absl::Seconds(absl::GetFlag(FLAGS_watch_slow_seconds))}});
  if (absl::Status loaded = service.Reload(); !loaded.ok()) {
    return gpuadvisor::FailStartup("catalog", loaded);
  }

  // Optional polling, for files replaced in place (a mounted ConfigMap). The
  // store keeps the version of identical content, so an unchanged file wakes
  // no watcher; a bad one is rejected and counted like a bad ReloadCatalog.
  absl::Notification stop;
  std::thread poller;
  if (const int seconds = absl::GetFlag(FLAGS_reload_interval_seconds); seconds > 0) {
    poller = std::thread([&, seconds] {
      while (!stop.WaitForNotificationWithTimeout(absl::Seconds(seconds))) {
        if (absl::Status reloaded = service.Reload(); !reloaded.ok()) {
          std::fprintf(stderr, "catalog: reload rejected, previous catalog still serving: %s\n",
                       reloaded.ToString().c_str());
        }
      }
    });
  }

  gpuadvisor::ServiceMainOptions options = gpuadvisor::ServiceMainOptionsFromFlags(
      "catalog", 50051, 9461, {"gpuadvisor.catalog.v1.CatalogService"});
  return gpuadvisor::ServeUntilSignal(options, metrics, {&service}, [&] {
    stop.Notify();
    if (poller.joinable()) poller.join();
    service.Shutdown();
  });
}
