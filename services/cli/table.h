#ifndef GPUADVISOR_SERVICES_CLI_TABLE_H_
#define GPUADVISOR_SERVICES_CLI_TABLE_H_

// Plain-text output of the CLI: aligned tables and the generic "field: value"
// listing of whatever a response carries beyond the columns shown.

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "google/protobuf/message.h"

namespace gpuadvisor::cli {

// Renders rows as an aligned text table; the first row is the header.
std::string RenderTable(const std::vector<std::vector<std::string>>& rows);

// "name: value" lines for every set scalar, enum and repeated scalar field of
// `message` (recursing into sub-messages as "outer.inner") whose path is not
// in `shown`. Enums print their short name, numbers compactly.
std::vector<std::string> OtherFields(const google::protobuf::Message& message,
                                     const absl::flat_hash_set<std::string>& shown);

}  // namespace gpuadvisor::cli

#endif  // GPUADVISOR_SERVICES_CLI_TABLE_H_
