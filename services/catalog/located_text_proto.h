#ifndef GPUADVISOR_SERVICES_CATALOG_LOCATED_TEXT_PROTO_H_
#define GPUADVISOR_SERVICES_CATALOG_LOCATED_TEXT_PROTO_H_

// Text-format parsing that remembers where every field was, so errors about
// a data file's content can name file:line:column like syntax errors do.

#include <string>

#include "absl/status/status.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"

namespace gpuadvisor::catalog {

// Parses `text` into `message`, recording positions into `tree`. Syntax
// errors are kInvalidArgument "<path>:<line>:<col>: <parser message>".
absl::Status ParseWithLocations(const std::string& text, const std::string& path,
                                google::protobuf::Message* message,
                                google::protobuf::TextFormat::ParseInfoTree* tree);

// Rewrites `status` (whose message starts with a field of the list element,
// "gpu_model: ..." or "aliases[2]: ...") to
// "<path>:<line>:<col>: <list>[<index>].<message>", the position being that
// of the named field when the text has it, else that of the element.
absl::Status Located(const std::string& path,
                     const google::protobuf::TextFormat::ParseInfoTree& tree,
                     const google::protobuf::FieldDescriptor* list, int index,
                     const absl::Status& status);

// The 1-based line of element `index` of `list`, or 0 when unknown.
int LineOf(const google::protobuf::TextFormat::ParseInfoTree& tree,
           const google::protobuf::FieldDescriptor* list, int index);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_LOCATED_TEXT_PROTO_H_
