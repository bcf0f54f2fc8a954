#include "services/gateway/http/api_routes.h"

#include "gpuadvisor/gateway/v1/gateway.pb.h"

namespace gpuadvisor::gateway::http {

const google::protobuf::ServiceDescriptor* GatewayServiceDescriptor() {
  return v1::RecommendRequest::descriptor()->file()->FindServiceByName("GatewayService");
}

std::vector<ApiRoute> GatewayRoutes(const google::protobuf::ServiceDescriptor* service) {
  struct Spec {
    const char* http_method;
    const char* path;
    const char* rpc;
    const char* summary;
    bool exports;
  };
  static constexpr Spec kSpecs[] = {
      {"POST", "/v1/recommend", "Recommend",
       "Ranked, explained offers for a workload and constraints", true},
      {"POST", "/v1/estimate", "Estimate",
       "Sizing only: memory, plan, throughput and hours on given GPU configurations", false},
      {"GET", "/v1/offers", "ListOffers", "Offers of the catalog, filtered and paginated", false},
      {"GET", "/v1/gpus", "ListGpus", "GPU models and their datasheet specs", false},
      {"GET", "/v1/models", "ListModels", "Model presets known to the sizing service", false},
      {"GET", "/v1/sources", "ListSources",
       "Price sources: last attempt and success, rows read / kept / rejected, age and budget",
       false},
  };
  std::vector<ApiRoute> routes;
  for (const Spec& spec : kSpecs) {
    const google::protobuf::MethodDescriptor* method = service->FindMethodByName(spec.rpc);
    if (method == nullptr || method->client_streaming() || method->server_streaming()) continue;
    routes.push_back({spec.http_method, spec.path, method, spec.summary, spec.exports});
  }
  return routes;
}

}  // namespace gpuadvisor::gateway::http
