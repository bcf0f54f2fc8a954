#ifndef GPUADVISOR_COMMON_GRPC_CHANNEL_H_
#define GPUADVISOR_COMMON_GRPC_CHANNEL_H_

// The channel every service uses to call another: round_robin over all the
// addresses a target resolves to ("dns:///catalog-headless:50051" reaches
// every replica) that report SERVING (client-side health checking),
// keepalive pings so a hung backend is noticed, and a receive limit large enough for whole catalog
// snapshots (WatchCatalog), which outgrow gRPC's 4 MB default near 30,000
// offers.

#include <memory>
#include <string>

#include "grpcpp/channel.h"

namespace gpuadvisor {

inline constexpr int kMaxBackendMessageBytes = 64 << 20;
inline constexpr char kBackendServiceConfig[] =
    R"({"loadBalancingConfig":[{"round_robin":{}}],"healthCheckConfig":{"serviceName":""}})";
inline constexpr int kKeepaliveSeconds = 10;
inline constexpr int kKeepaliveTimeoutSeconds = 5;

std::shared_ptr<grpc::Channel> BackendChannel(const std::string& target);

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_CHANNEL_H_
