// sizing_server: memory, parallel plan, throughput and time estimates
// (gpuadvisor.sizing.v1).
//
//   sizing_server --port=50052 --metrics_port=9462 --data_dir=data
//
// Reads <data_dir>/sizing/models.textproto and <data_dir>/catalog/gpus.textproto
// and prints "sizing listening grpc=HOST:PORT metrics=HOST:PORT" once serving.

#include <memory>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "common/grpc/service_main.h"
#include "services/sizing/sizing_service_impl.h"

ABSL_FLAG(std::string, data_dir, "data",
          "Folder with sizing/models.textproto and catalog/gpus.textproto.");

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);

  gpuadvisor::Metrics metrics("sizing");
  absl::StatusOr<gpuadvisor::sizing::SizingModel> model =
      gpuadvisor::sizing::SizingModel::FromDataDir(absl::GetFlag(FLAGS_data_dir));
  metrics.DataLoaded(model.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  if (!model.ok()) return gpuadvisor::FailStartup("sizing", model.status());
  gpuadvisor::sizing::SizingServiceImpl service(
      std::make_shared<const gpuadvisor::sizing::SizingModel>(std::move(*model)), &metrics);

  gpuadvisor::ServiceMainOptions options = gpuadvisor::ServiceMainOptionsFromFlags(
      "sizing", 50052, 9462, {"gpuadvisor.sizing.v1.SizingService"});
  return gpuadvisor::ServeUntilSignal(options, metrics, {&service});
}
