#ifndef GPUADVISOR_SERVICES_REFRESHER_ZIP_ARCHIVE_H_
#define GPUADVISOR_SERVICES_REFRESHER_ZIP_ARCHIVE_H_

// The files of a ZIP archive held in memory (dstack gpuhunt publishes its
// catalogs as catalog.zip, one <provider>.csv made by `zip -j`). Reads the
// central directory, then each member, stored (method 0) or deflated
// (method 8, zlib); checks each member's CRC-32 and size. No ZIP64, no
// encryption, no multi-disk archives: those are kInvalidArgument.
//
//   absl::StatusOr<std::vector<ZipMember>> files = ReadZip(body, "runpod.zip", 256 << 20);

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuadvisor::refresher {

struct ZipMember {
  std::string name;  // as stored, e.g. "runpod.csv"
  std::string data;
};

// kInvalidArgument "<name>: ..." for a body that is not a whole ZIP archive
// (truncated, corrupt, a member whose CRC does not match); kResourceExhausted
// when the members together exceed `max_bytes` uncompressed.
absl::StatusOr<std::vector<ZipMember>> ReadZip(absl::string_view archive, absl::string_view name,
                                               int64_t max_bytes);

}  // namespace gpuadvisor::refresher

#endif  // GPUADVISOR_SERVICES_REFRESHER_ZIP_ARCHIVE_H_
