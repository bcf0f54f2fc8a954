#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_JSON_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_JSON_H_

// JSON input for the importers, parsed by protobuf's JSON reader into a
// google.protobuf.Value (no hand-written parser), and small typed accessors
// for the shapes real price files use: numbers that are sometimes strings
// ("96", "32.7726000000"), nulls where a value is expected, missing keys.
// All numbers become doubles (exact up to 2^53, enough for ids and prices).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"

namespace gpuadvisor::catalog::json {

using Value = google::protobuf::Value;

// Parses any JSON document (object, array, ...). kInvalidArgument
// "<file_name>: not JSON: <parser message>".
absl::StatusOr<Value> Parse(absl::string_view text, absl::string_view file_name);

// The member `key` of an object; nullptr if `v` is not an object or lacks it.
const Value* Get(const Value& v, absl::string_view key);
// Nested members: Get(v, {"terms", "OnDemand"}).
const Value* Path(const Value& v, std::initializer_list<absl::string_view> keys);

bool IsNull(const Value* v);
// A string member, or "" when absent/null/not a string.
std::string String(const Value& v, absl::string_view key);
// A number member, also from a numeric string ("96", " 1.5 "); nullopt when
// absent, null, or not numeric.
std::optional<double> Number(const Value& v, absl::string_view key);
std::optional<double> AsNumber(const Value* v);
// A bool member; nullopt when absent or not a bool.
std::optional<bool> Bool(const Value& v, absl::string_view key);

// The members of the list `list_key` of every page, in page order, for paged
// price files: `root` is one page (an object) or a list of pages.
// kInvalidArgument "<file_name>: page <n>: no "<list_key>" list (<not_what>)"
// when a page lacks the list, e.g. not_what = "not an OCI price list".
absl::StatusOr<std::vector<const Value*>> PageItems(const Value& root, absl::string_view list_key,
                                                    absl::string_view file_name,
                                                    absl::string_view not_what);

}  // namespace gpuadvisor::catalog::json

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_JSON_H_
