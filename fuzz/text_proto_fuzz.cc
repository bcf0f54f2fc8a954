// libFuzzer: the text-format parser every data file goes through, into the
// two largest schemas (a catalog snapshot and a price book). Must never
// crash, hang or leak whatever the bytes; errors are fine.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/io/text_proto.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gpuadvisor/pricing/v1/pricing.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  gpuadvisor::catalog::v1::CatalogSnapshot snapshot;
  (void)gpuadvisor::ParseTextProto(text, "fuzz", &snapshot);
  gpuadvisor::pricing::v1::PriceBook book;
  (void)gpuadvisor::ParseTextProto(text, "fuzz", &book);
  return 0;
}
