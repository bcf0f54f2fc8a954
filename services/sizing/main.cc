// sizing_server: memory, parallel plan, throughput and time estimates
// (gpuadvisor.sizing.v1).
//
//   sizing_server --port=50052 --metrics_port=9462 --data_dir=data
//       --catalog_address=127.0.0.1:50051
//
// Reads <data_dir>/sizing/ (presets, profiles, error intervals, engine
// constants) and takes the GPU specs from the catalog service (ListGpus, its
// validated list and names), waiting for it up to --catalog_wait_seconds.
// Without --catalog_address it reads <data_dir>/catalog/gpus.textproto itself
// (tests, a stack without a catalog). Prints "sizing listening
// grpc=HOST:PORT metrics=HOST:PORT" once serving.

#include <memory>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
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
ABSL_FLAG(double, catalog_wait_seconds, 120, "How long to wait for the catalog at start-up.");

namespace {

absl::StatusOr<gpuadvisor::sizing::SizingModel> LoadModel() {
  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  const std::string catalog = absl::GetFlag(FLAGS_catalog_address);
  if (catalog.empty()) return gpuadvisor::sizing::SizingModel::FromDataDir(data_dir);
  auto stub = gpuadvisor::catalog::v1::CatalogService::NewStub(gpuadvisor::BackendChannel(catalog));
  absl::StatusOr<gpuadvisor::catalog::v1::GpuList> gpus = gpuadvisor::sizing::FetchCatalogGpus(
      *stub, absl::Seconds(absl::GetFlag(FLAGS_catalog_wait_seconds)));
  if (!gpus.ok()) return gpus.status();
  return gpuadvisor::sizing::SizingModel::FromDataDir(data_dir, *std::move(gpus));
}

}  // namespace

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);

  gpuadvisor::Metrics metrics("sizing");
  absl::StatusOr<gpuadvisor::sizing::SizingModel> model = LoadModel();
  metrics.DataLoaded(model.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  if (!model.ok()) return gpuadvisor::FailStartup("sizing", model.status());
  gpuadvisor::sizing::SizingServiceImpl service(
      std::make_shared<const gpuadvisor::sizing::SizingModel>(std::move(*model)), &metrics);

  gpuadvisor::ServiceMainOptions options = gpuadvisor::ServiceMainOptionsFromFlags(
      "sizing", 50052, 9462, {"gpuadvisor.sizing.v1.SizingService"});
  return gpuadvisor::ServeUntilSignal(options, metrics, {&service});
}
