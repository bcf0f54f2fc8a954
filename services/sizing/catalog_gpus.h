#ifndef GPUADVISOR_SERVICES_SIZING_CATALOG_GPUS_H_
#define GPUADVISOR_SERVICES_SIZING_CATALOG_GPUS_H_

// The GPU specs sizing sizes with come from the catalog service
// (CatalogService.ListGpus): the catalog validates them and owns their names,
// so sizing does not parse the catalog's GPU file itself. The file path
// (SizingModel::FromDataDir(data_dir)) is for tests and the calibration only.

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gpuadvisor/catalog/v1/catalog.grpc.pb.h"

namespace gpuadvisor::sizing {

// The catalog's GPU list, asking every `retry` (wait-for-ready calls) until
// the catalog answers with a non-empty list or `wait` has passed; then
// kUnavailable naming the last error.
absl::StatusOr<catalog::v1::GpuList> FetchCatalogGpus(
    catalog::v1::CatalogService::StubInterface& stub, absl::Duration wait,
    absl::Duration retry = absl::Seconds(1));

// FetchCatalogGpus with no time limit, for a server that is already up and
// reports NOT_SERVING meanwhile: asks in rounds of `round` (a line on stderr
// after the first failed round, then every 15th) until the catalog answers, or
// kCancelled within a round of `stop` being notified (shutdown).
absl::StatusOr<catalog::v1::GpuList> WaitForCatalogGpus(
    catalog::v1::CatalogService::StubInterface& stub, const absl::Notification& stop,
    absl::Duration round = absl::Seconds(2));

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_CATALOG_GPUS_H_
