// libFuzzer: the CSV reader of the SkyPilot and price-file importers.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "services/catalog/import/csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gpuadvisor::catalog::ParseCsv(text, "fuzz.csv");
  return 0;
}
