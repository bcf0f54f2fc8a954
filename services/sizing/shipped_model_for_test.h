#ifndef GPUADVISOR_SERVICES_SIZING_SHIPPED_MODEL_FOR_TEST_H_
#define GPUADVISOR_SERVICES_SIZING_SHIPPED_MODEL_FOR_TEST_H_

// For tests: the SizingModel of the repository's data/ (model presets,
// framework profiles, GPU specs), loaded once per test binary. A data file
// that does not load ends the binary with its error, so every test fails.

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {

inline const SizingModel& ShippedSizingModel() {
  static const SizingModel* model = [] {
    absl::StatusOr<SizingModel> m = SizingModel::FromDataDir(GPUADVISOR_SOURCE_DIR "/data");
    if (!m.ok()) {
      std::fprintf(stderr, "data/ does not load: %s\n", std::string(m.status().message()).c_str());
      std::abort();
    }
    return new SizingModel(*std::move(m));
  }();
  return *model;
}

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_SHIPPED_MODEL_FOR_TEST_H_
