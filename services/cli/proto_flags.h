#ifndef GPUADVISOR_SERVICES_CLI_PROTO_FLAGS_H_
#define GPUADVISOR_SERVICES_CLI_PROTO_FLAGS_H_

// Command-line flags derived from protobuf descriptors, so every field of a
// request message (Workload, Constraints, GpuConfiguration, ListOffersRequest,
// and fields added to them later) gets a flag without a hand-written table.
// Pure functions over descriptors and reflection: no terminal, no CLI library.
//
//   std::vector<FlagSpec> flags = WalkFlags(RecommendRequest::descriptor(), options);
//   ... the CLI collects the raw strings given for each flag ...
//   RETURN_IF_ERROR(ApplyFlag(&request, flags[i], {"70B"}));
//
// Value syntax (ParseQuantity): numbers take e-notation and suffixes K, M,
// B or G, T, P (x1e3 .. x1e15: `--params=70B`, `--train_tokens=1T`). Fields
// whose name ends in `_bytes` or `_gb` are byte sizes: `40GB`, `1.5TB`,
// `80GiB`, and a plain number is in the field's own unit. Enums take the
// value name without the enum's prefix, case-insensitive, `-` or `_`
// (`qlora`, `on-demand`) or any unique prefix of it (`batch`). Bools take
// true/false/yes/no/1/0. Repeated fields take comma-separated values and the
// flag may repeat; `\,` is a literal comma inside one value.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace gpuadvisor::cli {

// What a field's flag looks like; keyed by the field's path from the root
// message ("workload.sequence_length").
struct FlagDoc {
  std::vector<std::string> aliases;  // extra names, e.g. "seq_len"
  std::string help;                  // "" = generated from the descriptor
  std::string group;                 // "" = the message the field belongs to
};

struct WalkOptions {
  std::string root_group;  // group of the root message's own fields
  // Message-typed fields whose own fields are flags without a prefix
  // ("workload" -> --task rather than --workload.task).
  absl::flat_hash_set<std::string> flatten;
  // Field paths that get no flag (set by dedicated flags or not inputs).
  absl::flat_hash_set<std::string> skip;
  absl::flat_hash_map<std::string, FlagDoc> docs;
};

// One flag per scalar, enum, string or repeated scalar field.
struct FlagSpec {
  std::string name;  // "sequence_length", "model.params"
  std::vector<std::string> aliases;
  std::string help;       // ends with the accepted values
  std::string group;      // "Workload", "Model", ...
  std::string type_name;  // "INT", "NUM", "SIZE", "BOOL", "TEXT", "{a,b}"
  bool is_bool = false;   // a flag that may stand alone (= true)
  bool repeated = false;
  std::string path;                                              // "workload.sequence_length"
  std::vector<const google::protobuf::FieldDescriptor*> fields;  // root .. leaf
};

// Walks `root` depth-first in field-number order. Nested messages that are
// not flattened prefix their fields ("model.layers", "parallelism.offload");
// repeated message fields and fields of types that recur are skipped.
std::vector<FlagSpec> WalkFlags(const google::protobuf::Descriptor* root,
                                const WalkOptions& options);

// Sets the flag's field in `root` (creating the enclosing messages) from the
// raw strings given on the command line: the last one for a single field,
// all of them (comma-split) replacing the old contents for a repeated field.
// kInvalidArgument naming the flag, e.g. `--max_gpus: "8x" is not a number`.
absl::Status ApplyFlag(google::protobuf::Message* root, const FlagSpec& flag,
                       const std::vector<std::string>& raw);

enum class Unit { kCount, kBytes, kGigabytes };
// Unit of a numeric field from its name (`_bytes`, `_gb`, else a count).
Unit UnitOf(const google::protobuf::FieldDescriptor* field);
// "70B" -> 7e10, "5e7" -> 5e7, "40GB" as kGigabytes -> 40, as kBytes -> 4e10.
absl::StatusOr<double> ParseQuantity(absl::string_view text, Unit unit);

// Enum value from a user's word (see above); the error lists the choices.
absl::StatusOr<const google::protobuf::EnumValueDescriptor*> ParseEnum(
    const google::protobuf::EnumDescriptor* type, absl::string_view text);
// "TASK_QLORA" -> "qlora", "PURCHASE_OPTION_ON_DEMAND" -> "on_demand".
std::string EnumShortName(const google::protobuf::EnumValueDescriptor* value);
// The same for a number of `type`; "-" for an unknown number, "" for 0.
std::string EnumShortName(const google::protobuf::EnumDescriptor* type, int number);
// Short names of every value but the UNSPECIFIED one, in declaration order.
std::vector<std::string> EnumChoices(const google::protobuf::EnumDescriptor* type);

// Splits "a,b\,c,,d" into {"a", "b,c", "d"} (blank items dropped, trimmed).
std::vector<std::string> SplitList(absl::string_view list);

// Parses protobuf JSON (proto or lowerCamel field names) into `message`.
// kInvalidArgument naming `file_name` and the message type.
absl::Status ParseJson(absl::string_view json, absl::string_view file_name,
                       google::protobuf::Message* message);

}  // namespace gpuadvisor::cli

#endif  // GPUADVISOR_SERVICES_CLI_PROTO_FLAGS_H_
