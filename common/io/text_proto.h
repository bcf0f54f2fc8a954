#ifndef GPUADVISOR_COMMON_IO_TEXT_PROTO_H_
#define GPUADVISOR_COMMON_IO_TEXT_PROTO_H_

// Reading the native data files under data/: protobuf text format, whose
// schema is the proto itself.

#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace gpuadvisor {

// Reads a whole file. kNotFound if it does not exist, kUnavailable on an I/O
// error.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Parses text format into `message` (cleared first). On error returns
// kInvalidArgument "<name>:<line>:<column>: <parser message>", naming the
// field where the parser does; `message` is then unspecified.
absl::Status ParseTextProto(absl::string_view text, absl::string_view name,
                            google::protobuf::Message* message);

// ReadFile + ParseTextProto, naming the file in errors.
absl::Status LoadTextProtoFile(const std::string& path, google::protobuf::Message* message);

// Writes `contents` to `path` through a temporary file and rename(), so a
// reader never sees half a file.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

// The same for a file written as consecutive pieces (a header and a large
// body), without concatenating them first.
absl::Status WriteFileAtomically(const std::string& path,
                                 std::initializer_list<absl::string_view> pieces);

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_IO_TEXT_PROTO_H_
