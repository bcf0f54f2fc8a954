#ifndef GPUADVISOR_COMMON_GRPC_SERVER_H_
#define GPUADVISOR_COMMON_GRPC_SERVER_H_

// Starting a gRPC server the same way in every binary and test: default
// health service (grpc.health.v1), server reflection, the bound port, and
// bounded resources: a receive limit sized to the largest request the
// server's RPCs take (see common/grpc/limits.h), a ResourceQuota (memory and
// threads: past max_threads a call gets RESOURCE_EXHAUSTED instead of a new
// thread), a cap on concurrent streams per connection, and keepalive (idle
// connections are pinged; clients may ping every min_client_ping_seconds).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/grpc/tls.h"
#include "common/status/grpc_status.h"
#include "grpcpp/server.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/method_handler.h"
#include "grpcpp/support/status.h"
#include "grpcpp/support/sync_stream.h"

namespace gpuadvisor {

struct ServerOptions {
  std::string host = "127.0.0.1";   // "0.0.0.0" to listen on every interface
  int port = 0;                     // 0 lets the kernel pick a free port
  int max_receive_bytes = 1 << 20;  // largest request any RPC of the server takes
  int max_send_bytes = 64 << 20;    // catalog snapshots can be large (kMaxBackendMessageBytes)
  int64_t memory_quota_bytes = 256 << 20;      // gRPC's own buffers (ResourceQuota)
  int max_threads = 128;                       // sync handler threads (ResourceQuota)
  int max_concurrent_streams = 100;            // per HTTP/2 connection
  int keepalive_seconds = 20;                  // ping a connection idle this long
  int keepalive_timeout_seconds = 10;          // and close it if the ping is not answered
  int min_client_ping_seconds = 5;             // clients may ping this often (followers' keepalive)
  TlsFiles tls;                                // none: plaintext
  ClientAuth client_auth = ClientAuth::kNone;  // with tls.ca_path
};

struct StartedServer {
  std::unique_ptr<grpc::Server> server;
  int port = 0;  // the bound port
};

// Builds and starts a server for `services`. Health starts NOT_SERVING for
// the overall server (""); call SetServing once the data is loaded.
// kUnavailable if the address cannot be bound, kInvalidArgument for bad TLS files.
absl::StatusOr<StartedServer> StartServer(const ServerOptions& options,
                                          const std::vector<grpc::Service*>& services);

// Sets the health of "" and of each named service (full proto names).
void SetServing(grpc::Server& server, const std::vector<std::string>& service_names, bool serving);

// Admin RPCs carry "authorization: Bearer <token>". kUnauthenticated when the
// header is missing, kPermissionDenied when the token is wrong or no token is
// configured (admin disabled).
absl::Status CheckAdminToken(const grpc::ServerContext& context, const std::string& token);

// Index of `method` in the generated service `service` (full proto name), for
// Service::Mark* calls; -1 if unknown.
int MethodIndex(const std::string& service, const std::string& method);

// A handler for a unary admin method that authorizes the caller BEFORE the
// request body is read: an unauthenticated caller is answered at once and its
// body is never buffered whole or decoded. Authorization: on a TLS connection
// a verified client certificate (RequireVerifiedClientOnTls), then
// `authorize` (the admin token). Every attempt, allowed or not, is written as
// one AUDIT line naming the caller's certificate identity and the outcome.
// Install it from the service's constructor with
//   MarkMethodStreamed(MethodIndex(kService, "UpdatePrices"),
//                      AdminMethod<Req, Resp>(kService, "UpdatePrices", authorize, handler));
template <typename Request, typename Response>
grpc::internal::MethodHandler* AdminMethod(
    std::string service, std::string method,
    std::function<absl::Status(const grpc::ServerContext&)> authorize,
    std::function<grpc::Status(grpc::ServerContext*, const Request*, Response*)> handler) {
  return new grpc::internal::StreamedUnaryHandler<Request, Response>(
      [service = std::move(service), method = std::move(method), authorize = std::move(authorize),
       handler = std::move(handler)](grpc::ServerContext* context,
                                     grpc::ServerUnaryStreamer<Request, Response>* stream) {
        absl::Status allowed = RequireVerifiedClientOnTls(*context);
        if (allowed.ok()) allowed = authorize(*context);
        if (!allowed.ok()) {
          AuditLog(service, method, *context, "denied", std::string(allowed.message()));
          return ToGrpcStatus(allowed);
        }
        Request request;
        if (!stream->Read(&request)) {
          AuditLog(service, method, *context, "bad_request", "missing or unparsable request");
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "request: missing or unparsable");
        }
        Response response;
        grpc::Status status = handler(context, &request, &response);
        if (status.ok()) {
          AuditLog(service, method, *context, "ok", response.ShortDebugString().substr(0, 300));
          stream->Write(response);
        } else {
          AuditLog(service, method, *context, "rejected", status.error_message().substr(0, 300));
        }
        return status;
      });
}

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
