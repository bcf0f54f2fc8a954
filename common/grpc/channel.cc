#include "common/grpc/channel.h"

#include <cstdio>
#include <cstdlib>

#include "common/grpc/tls.h"
#include "grpc/grpc.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace gpuadvisor {

std::shared_ptr<grpc::Channel> BackendChannel(const std::string& target) {
  grpc::ChannelArguments args;
  // round_robin over every address, skipping backends whose grpc.health.v1
  // status is not SERVING (client-side health checking): a backend draining
  // before shutdown, or still loading, gets no new calls.
  args.SetServiceConfigJSON(kBackendServiceConfig);
  args.SetMaxReceiveMessageSize(kMaxBackendMessageBytes);
  // Keepalive: a backend that stops answering (SIGSTOP, partition) is noticed
  // within kKeepaliveSeconds + kKeepaliveTimeoutSeconds, even on an idle
  // connection; servers accept pings this often (ServerOptions).
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveSeconds * 1000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutSeconds * 1000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentialsFor(TlsFilesFromFlags());
  if (!credentials.ok()) {
    // A configuration error at start-up: never fall back to plaintext.
    std::fprintf(stderr, "backend channel to %s: %s\n", target.c_str(),
                 credentials.status().ToString().c_str());
    std::exit(1);
  }
  return grpc::CreateCustomChannel(target, *credentials, args);
}

}  // namespace gpuadvisor
