#ifndef GPUADVISOR_COMMON_GRPC_SERVER_H_
#define GPUADVISOR_COMMON_GRPC_SERVER_H_

// Starting a gRPC server the same way in every binary and test: default
// health service (grpc.health.v1), server reflection, and the bound port.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/server.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"

namespace gpuadvisor {

struct ServerOptions {
  std::string host = "127.0.0.1";  // "0.0.0.0" to listen on every interface
  int port = 0;                    // 0 lets the kernel pick a free port
  int max_message_bytes = 64 << 20;  // catalog snapshots can be large (kMaxBackendMessageBytes)
};

struct StartedServer {
  std::unique_ptr<grpc::Server> server;
  int port = 0;  // the bound port
};

// Builds and starts a server for `services`. Health starts NOT_SERVING for
// the overall server (""); call SetServing once the data is loaded.
// kUnavailable if the address cannot be bound.
absl::StatusOr<StartedServer> StartServer(const ServerOptions& options,
                                          const std::vector<grpc::Service*>& services);

// Sets the health of "" and of each named service (full proto names).
void SetServing(grpc::Server& server, const std::vector<std::string>& service_names,
                bool serving);

// Admin RPCs carry "authorization: Bearer <token>". kUnauthenticated when the
// header is missing, kPermissionDenied when the token is wrong or no token is
// configured (admin disabled).
absl::Status CheckAdminToken(const grpc::ServerContext& context, const std::string& token);

// Reads the admin token: the file at `path` when given (trailing whitespace
// trimmed), else the environment variable `env_var`; empty if neither.
absl::StatusOr<std::string> ReadAdminToken(const std::string& path, const char* env_var);

// Prints "<name> listening grpc=<host:port> metrics=<host:port>[ <extra>...]"
// on stdout and flushes, so scripts and tests started with port 0 learn the
// bound ports. `extra` holds further "key=host:port" listeners (the gateway's
// "http=").
void AnnounceListening(const std::string& name, const std::string& host, int grpc_port,
                       int metrics_port, const std::vector<std::string>& extra = {});

// Blocks SIGINT and SIGTERM in the calling thread. Call first thing in main(),
// before any thread starts, so every thread inherits the mask and
// WaitForTerminationSignal() is the only place that sees them.
void BlockTerminationSignals();

// Waits for SIGINT or SIGTERM (after BlockTerminationSignals) and returns it;
// with a timeout, returns 0 if none arrived in time.
int WaitForTerminationSignal();
int WaitForTerminationSignal(double timeout_seconds);

// Gracefully stops `server`: in-flight calls get up to `grace_seconds` to
// finish, then are cancelled.
void ShutdownServer(grpc::Server& server, double grace_seconds);

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_SERVER_H_
