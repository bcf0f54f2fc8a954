// sizing_server: memory, parallel plan, throughput and time estimates
// (gpuadvisor.sizing.v1).
//
//   sizing_server --port=50052 --metrics_port=9462 --data_dir=data
//       --catalog_address=127.0.0.1:50051
//
// Reads <data_dir>/sizing/ (presets, profiles, error intervals, engine
// constants) and takes the GPU specs from the catalog service (ListGpus, its
// validated list and names). It listens at once and reports health
// NOT_SERVING (calls: UNAVAILABLE) until the catalog has answered, so it may
// start before the catalog; a model that fails to load from the catalog's
// list stops it (exit code 1). Without --catalog_address it reads
// <data_dir>/catalog/gpus.textproto itself before listening (tests, a stack
// without a catalog). Prints "sizing listening grpc=HOST:PORT
// metrics=HOST:PORT" once listening.

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/grpc/channel.h"
#include "common/grpc/service_main.h"
#include "services/sizing/catalog_gpus.h"
#include "services/sizing/sizing_service_impl.h"

ABSL_FLAG(std::string, data_dir, "data",
          "Folder with sizing/*.textproto (and catalog/gpus.textproto without a catalog).");
ABSL_FLAG(std::string, catalog_address, "",
          "Catalog service target the GPU specs come from (ListGpus); empty: read "
          "<data_dir>/catalog/gpus.textproto.");

namespace {

namespace sz = ::gpuadvisor::sizing;

// Waits for the catalog's GPUs and installs the model built on them; on a
// model that does not load, records the failure and stops the server.
void LoadFromCatalog(const std::string& data_dir, const std::string& catalog,
                     const absl::Notification& stop, gpuadvisor::Metrics& metrics,
                     sz::SizingServiceImpl& service, std::atomic<bool>& failed) {
  auto stub = gpuadvisor::catalog::v1::CatalogService::NewStub(gpuadvisor::BackendChannel(catalog));
  absl::StatusOr<gpuadvisor::catalog::v1::GpuList> gpus = sz::WaitForCatalogGpus(*stub, stop);
  if (!gpus.ok()) return;  // stopped while waiting
  const int count = gpus->gpus_size();
  absl::StatusOr<sz::SizingModel> model = sz::SizingModel::FromDataDir(data_dir, *std::move(gpus));
  metrics.DataLoaded(model.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  if (!model.ok()) {
    gpuadvisor::FailStartup("sizing", model.status());
    failed = true;
    kill(getpid(), SIGTERM);
    return;
  }
  service.SetModel(std::make_shared<const sz::SizingModel>(*std::move(model)));
  std::fprintf(stderr, "sizing: GPU specs from the catalog (%d GPUs); SERVING\n", count);
}

}  // namespace

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);

  gpuadvisor::Metrics metrics("sizing");
  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  const std::string catalog = absl::GetFlag(FLAGS_catalog_address);
  std::shared_ptr<const sz::SizingModel> model;
  if (catalog.empty()) {
    absl::StatusOr<sz::SizingModel> loaded = sz::SizingModel::FromDataDir(data_dir);
    metrics.DataLoaded(loaded.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
    if (!loaded.ok()) return gpuadvisor::FailStartup("sizing", loaded.status());
    model = std::make_shared<const sz::SizingModel>(*std::move(loaded));
  }
  sz::SizingServiceImpl service(model, &metrics);

  gpuadvisor::ServiceMainOptions options = gpuadvisor::ServiceMainOptionsFromFlags(
      "sizing", 50052, 9462, {"gpuadvisor.sizing.v1.SizingService"});
  options.ready = [&service] { return service.has_model(); };
  absl::Notification stop;
  std::atomic<bool> failed{false};
  std::thread loader;
  if (!catalog.empty()) {
    loader = std::thread(LoadFromCatalog, data_dir, catalog, std::cref(stop), std::ref(metrics),
                         std::ref(service), std::ref(failed));
  }
  const int code =
      gpuadvisor::ServeUntilSignal(options, metrics, {&service}, [&stop] { stop.Notify(); });
  if (!stop.HasBeenNotified()) stop.Notify();
  if (loader.joinable()) loader.join();
  return failed ? 1 : code;
}
