#ifndef GPUADVISOR_SERVICES_GATEWAY_BACKEND_STATUS_H_
#define GPUADVISOR_SERVICES_GATEWAY_BACKEND_STATUS_H_

// Which backend answers the gateway passes on as they are (gateway's
// adapter, gateway_service_impl.h "Status mapping"): a backend's
// UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED and RESOURCE_EXHAUSTED pass
// through; sizing's INVALID_ARGUMENT and NOT_FOUND describe the caller's
// workload and pass through; pricing's FAILED_PRECONDITION (a catalog
// version it does not hold yet) is kept for the caller to retry; anything
// else is the gateway's fault: INTERNAL.

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace gpuadvisor::gateway {

enum class Backend { kSizing, kPricing };

absl::Status MapBackendStatus(Backend backend, const grpc::Status& status);

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_BACKEND_STATUS_H_
