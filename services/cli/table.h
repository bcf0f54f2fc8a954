#ifndef GPUADVISOR_SERVICES_CLI_TABLE_H_
#define GPUADVISOR_SERVICES_CLI_TABLE_H_

// Plain-text output of the CLI: aligned tables and the generic "field: value"
// listing of whatever a response carries beyond the columns shown.

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace gpuadvisor::cli {

// Renders rows as an aligned text table; the first row is the header.
std::string RenderTable(const std::vector<std::vector<std::string>>& rows);
// The same, with the last column's cells cut (ending in "...") so that lines
// fit `max_width` characters; the last column keeps at least 24 characters
// however wide the others are. 0 = no limit. Widths count UTF-8 characters.
std::string RenderTable(const std::vector<std::vector<std::string>>& rows, size_t max_width);

// Characters (UTF-8 code points) in `text`.
size_t DisplayWidth(absl::string_view text);
// `text` cut to `width` characters, ending in "..." when it was longer.
std::string CutToWidth(absl::string_view text, size_t width);

// The width to cut tables to: the terminal's columns when stdout is one,
// else $COLUMNS, else 160.
size_t TerminalWidth();

// "name: value" lines for every set scalar, enum and repeated scalar field of
// `message` (recursing into sub-messages as "outer.inner") whose path is not
// in `shown`. Enums print their short name, numbers compactly.
std::vector<std::string> OtherFields(const google::protobuf::Message& message,
                                     const absl::flat_hash_set<std::string>& shown);

}  // namespace gpuadvisor::cli

#endif  // GPUADVISOR_SERVICES_CLI_TABLE_H_
