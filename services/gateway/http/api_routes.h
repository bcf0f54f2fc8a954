#ifndef GPUADVISOR_SERVICES_GATEWAY_HTTP_API_ROUTES_H_
#define GPUADVISOR_SERVICES_GATEWAY_HTTP_API_ROUTES_H_

// The HTTP/JSON routes of the gateway and the gRPC method each one calls.
// One table drives the server, the OpenAPI document and its checks, so a
// route cannot be served without being documented or the reverse.

#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"

namespace gpuadvisor::gateway::http {

struct ApiRoute {
  std::string http_method;  // "GET" or "POST"
  std::string path;         // "/v1/recommend"
  // The gRPC method called in-process. POST routes read its input message
  // from the JSON body; GET routes from query parameters (SetFieldsFromQuery).
  const google::protobuf::MethodDescriptor* method = nullptr;
  std::string summary;
  bool exports = false;  // takes ?format=json|skypilot|dstack|karpenter
};

// The routes of `service` (gpuadvisor.gateway.v1.GatewayService):
//   POST /v1/recommend  Recommend      POST /v1/estimate  Estimate
//   GET  /v1/offers     ListOffers     GET  /v1/gpus      ListGpus
//   GET  /v1/models     ListModels     GET  /v1/sources   ListSources
// A route whose method the service does not define is left out.
std::vector<ApiRoute> GatewayRoutes(const google::protobuf::ServiceDescriptor* service);

// gpuadvisor.gateway.v1.GatewayService from the generated pool.
const google::protobuf::ServiceDescriptor* GatewayServiceDescriptor();

// Paths that are not RPCs.
inline constexpr char kHealthPath[] = "/v1/health";
inline constexpr char kOpenApiPath[] = "/v1/openapi.json";

}  // namespace gpuadvisor::gateway::http

#endif  // GPUADVISOR_SERVICES_GATEWAY_HTTP_API_ROUTES_H_
