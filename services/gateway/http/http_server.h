#ifndef GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_SERVER_H_
#define GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_SERVER_H_

// The gateway's HTTP/JSON front (cpp-httplib, its own port): each route of
// api_routes.h calls the gRPC method on `channel` (in the gateway, the gRPC
// server's InProcessChannel, so HTTP and gRPC run the same service code,
// metrics and limits), plus:
//   GET /v1/health        grpc.health.v1 Check of the gateway service;
//                         200 {"status":"SERVING"} or 503
//   GET /v1/openapi.json  the OpenAPI 3 document (openapi.h)
//   GET /                 the comparison page; /static/* its assets
// Errors are ErrorJson bodies with HttpStatusFor(code). Bodies over
// Options::max_body_bytes get 413; unknown paths 404, both as JSON errors.
// Thread-safe; handlers run on a pool of Options::threads threads.

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"

namespace httplib {
class Server;
}

namespace gpuadvisor::gateway::http {

class HttpServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";                   // "0.0.0.0" for every interface
    int port = 0;                                     // 0 lets the kernel pick a free port
    size_t max_body_bytes = 1 << 20;                  // larger request bodies get 413
    absl::Duration call_timeout = absl::Seconds(30);  // deadline of each in-process call
    int threads = 8;                                  // handler threads
    // Service named in the health check (its status, not the server's "").
    std::string health_service = "gpuadvisor.gateway.v1.GatewayService";
  };

  // Binds and starts serving on a thread of its own. kUnavailable if the
  // address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(std::shared_ptr<grpc::Channel> channel,
                                                           const Options& options);
  ~HttpServer();  // Stop()s

  int port() const { return port_; }
  // Stops accepting, lets in-flight requests finish and joins the thread.
  // Idempotent.
  void Stop();

 private:
  HttpServer() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace gpuadvisor::gateway::http

#endif  // GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_SERVER_H_
