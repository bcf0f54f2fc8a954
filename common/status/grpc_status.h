#ifndef GPUADVISOR_COMMON_STATUS_GRPC_STATUS_H_
#define GPUADVISOR_COMMON_STATUS_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace gpuadvisor {

// Longest message carried across the wire; longer ones are cut (TF Serving
// caps at 1024 too) so a pathological error cannot blow up a response.
inline constexpr size_t kMaxStatusMessageLength = 1024;

// Converts between absl and gRPC status with an explicit switch over all 17
// codes; the message is kept (capped at kMaxStatusMessageLength).
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

// go-grpc-prometheus spelling of a code ("OK", "NotFound", "Unavailable"),
// used as the grpc_code metric label so stock dashboards work.
const char* GrpcCodeLabel(grpc::StatusCode code);

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_STATUS_GRPC_STATUS_H_
