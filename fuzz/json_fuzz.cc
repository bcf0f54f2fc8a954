// libFuzzer: the JSON reader of the offer-search importer, then the typed
// accessors the importer applies to whatever parsed.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "services/catalog/import/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpuadvisor::catalog::json::Value> value =
      gpuadvisor::catalog::json::Parse(text, "fuzz.json");
  if (value.ok()) {
    (void)gpuadvisor::catalog::json::String(*value, "gpu_name");
    (void)gpuadvisor::catalog::json::Number(*value, "dph_total");
    (void)gpuadvisor::catalog::json::Bool(*value, "rentable");
    (void)gpuadvisor::catalog::json::Path(*value, {"offers", "0"});
  }
  return 0;
}
