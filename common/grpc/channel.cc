#include "common/grpc/channel.h"

#include "grpc/grpc.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace gpuadvisor {

std::shared_ptr<grpc::Channel> BackendChannel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetLoadBalancingPolicyName("round_robin");
  args.SetMaxReceiveMessageSize(kMaxBackendMessageBytes);
  // Keepalive: a backend that stops answering (SIGSTOP, partition) is noticed
  // within kKeepaliveSeconds + kKeepaliveTimeoutSeconds, even on an idle
  // connection; servers accept pings this often (ServerOptions).
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveSeconds * 1000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutSeconds * 1000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

}  // namespace gpuadvisor
