#ifndef GPUADVISOR_SERVICES_GATEWAY_HTTP_PROTO_JSON_H_
#define GPUADVISOR_SERVICES_GATEWAY_HTTP_PROTO_JSON_H_

// The HTTP/JSON contract is the gRPC contract: bodies are protobuf's JSON
// mapping of the same messages, query parameters are set onto the request
// message through its descriptor, and errors carry the gRPC code. Nothing
// here knows a field by name, so a field added to a .proto reaches HTTP
// users without a change here. Plain C++ over protobuf; thread-safe.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace gpuadvisor::gateway::http {

// Parses a JSON body into `message` (protobuf JSON mapping: proto field names
// or lowerCamelCase, enums by name or number, 64-bit integers as strings or
// numbers). Unknown fields are rejected. An empty body leaves `message` empty.
// kInvalidArgument naming the field path on error
// ("workload.task: invalid value ...").
absl::Status ParseJsonBody(const std::string& body, google::protobuf::Message* message);

// Serialises `message` with proto field names and every field present (zeros
// included, unset `optional` fields left out), so a client can rely on the
// shape the OpenAPI document describes.
std::string ToJson(const google::protobuf::Message& message);

// Sets query parameters onto `message`: the key is a field path of proto
// names or JSON names ("page_size", "gpu_models", "filter.provider"); the
// value is parsed by the field's type (enums by name, with or without the
// enum's prefix, or number; bools true/false/1/0). A repeated field takes
// every occurrence of its key and comma-separated lists. Keys in `ignored`
// are skipped. kInvalidArgument naming the parameter for an unknown key, a
// message-typed leaf or a value that does not parse.
absl::Status SetFieldsFromQuery(const std::vector<std::pair<std::string, std::string>>& params,
                                const std::vector<std::string>& ignored,
                                google::protobuf::Message* message);

// An error as google.rpc.Status JSON, the body grpc-gateway writes:
//   {"code": 3, "message": "workload.model.params: must be > 0",
//    "details": [
//      {"@type": "type.googleapis.com/google.rpc.BadRequest",
//       "field_violations": [{"field": "workload.model.params",
//                             "description": "must be > 0"}]},
//      {"@type": "type.googleapis.com/google.rpc.ErrorInfo",
//       "reason": "INVALID_ARGUMENT", "domain": "gpuadvisor"}]}
// `code` is the gRPC code (the HTTP status is HttpStatusFor's); the
// BadRequest is present when the message starts with a field path
// ("<path>: ..."). Proto field names, as in every answer of this API.
std::string ErrorJson(const absl::Status& status);

// The HTTP status for a gRPC/absl code, as grpc-gateway maps it
// (runtime.HTTPStatusFromCode: INVALID_ARGUMENT 400, NOT_FOUND 404,
// RESOURCE_EXHAUSTED 429, CANCELLED 499, UNAVAILABLE 503, ...).
int HttpStatusFor(absl::StatusCode code);

// "INVALID_ARGUMENT" for kInvalidArgument, and so on for all 17 codes.
std::string CodeName(absl::StatusCode code);

// The field path an error message starts with ("workload.model.params" for
// "workload.model.params: must be > 0"), or "" when it starts with none.
std::string FieldOf(const std::string& message);

}  // namespace gpuadvisor::gateway::http

#endif  // GPUADVISOR_SERVICES_GATEWAY_HTTP_PROTO_JSON_H_
