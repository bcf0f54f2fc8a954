#ifndef GPUADVISOR_SERVICES_GATEWAY_HTTP_JSON_PRINT_H_
#define GPUADVISOR_SERVICES_GATEWAY_HTTP_JSON_PRINT_H_

// A direct printer of protobuf's JSON mapping, for answers: the same JSON as
// MessageToJsonString with proto field names and primitive fields always
// printed (ToJson's options), written straight from the message by
// reflection. Protobuf 3.21's printer serialises the message to binary and
// re-reads it through a type resolver: about 4 ms for a 47 KB Recommend
// answer on the development machine, more than the Recommend itself at 10k
// offers (docs/performance.md, "HTTP/JSON against gRPC").
//
// Fields are printed in field-number order; int64 and uint64 as decimal
// strings, doubles and floats as the shortest text that reads back the same
// value ("NaN", "Infinity", "-Infinity" quoted), bytes as base64, enums by
// value name (the number when unknown). Unset message fields and unset
// fields with presence (proto3 `optional`, oneof members) are left out;
// repeated fields print as lists, empty ones included. Thread-safe.

#include <string>

#include "google/protobuf/message.h"

namespace gpuadvisor::gateway::http {

// Appends `message` as JSON to `out` and returns true; false (with `out` in
// an unspecified state) when it reaches a field this printer leaves to
// protobuf's: a map, or a google.protobuf well-known type (Any, Struct,
// Timestamp, wrappers, ...), whose JSON forms are special.
bool PrintJsonDirect(const google::protobuf::Message& message, std::string* out);

}  // namespace gpuadvisor::gateway::http

#endif  // GPUADVISOR_SERVICES_GATEWAY_HTTP_JSON_PRINT_H_
