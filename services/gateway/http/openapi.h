#ifndef GPUADVISOR_SERVICES_GATEWAY_HTTP_OPENAPI_H_
#define GPUADVISOR_SERVICES_GATEWAY_HTTP_OPENAPI_H_

// The OpenAPI 3.0 document of the HTTP/JSON API, generated from the proto
// descriptors of the routes' messages, so every field of every request and
// response message is present by construction:
//   - components.schemas["<full.proto.Name>"] for each message and enum
//     reachable from a route, properties named by proto field name, typed by
//     protobuf's JSON mapping (64-bit integers are decimal strings, enums are
//     their value names, repeated = array, map = object);
//   - POST routes take the input message as the JSON body; GET routes take
//     one query parameter per scalar leaf of the input message (dotted paths
//     for nested messages);
//   - errors are components.schemas.Error (ErrorJson in proto_json.h).
// Descriptions come from the .proto comments when `documented` holds the
// descriptor set with source info, and are left out otherwise.

#include <memory>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "services/gateway/http/api_routes.h"

namespace gpuadvisor::gateway::http {

// `export_formats` are the values `format` takes on export routes besides
// "json" (the default). `documented` may be null. Pretty-printed JSON.
std::string OpenApiJson(const std::vector<ApiRoute>& routes,
                        const std::vector<std::string>& export_formats,
                        const google::protobuf::DescriptorPool* documented);

// A pool built from a serialized FileDescriptorSet (protoc
// --include_imports --include_source_info), for the comments; null if the
// bytes do not parse or build.
std::unique_ptr<google::protobuf::DescriptorPool> PoolFromDescriptorSet(const std::string& bytes);

}  // namespace gpuadvisor::gateway::http

#endif  // GPUADVISOR_SERVICES_GATEWAY_HTTP_OPENAPI_H_
