#ifndef GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_SERVER_H_
#define GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_SERVER_H_

// The gateway's HTTP/JSON front (its own port, served by HttpTransport: an
// event-driven server with a deadline and a size bound on every connection,
// see http_transport.h): each route of api_routes.h calls the gRPC method on
// `channel` (in the gateway, the gRPC server's InProcessChannel, so HTTP and
// gRPC run the same service code, metrics and limits), plus:
//   GET /v1/health        grpc.health.v1 Check of the gateway service;
//                         200 {"status":"SERVING"} or 503
//   GET /v1/openapi.json  the OpenAPI 3 document (openapi.h)
//   GET /                 the comparison page; /static/* its assets
// With Options::recommend set (the gateway's GatewayServiceImpl::
// RecommendLocal), POST /v1/recommend calls the service in process instead:
// on the connection's event-loop thread, with the parsed request message and
// no gRPC encoding, keeping the same rate limit, deadline, metrics, cache and
// status mapping.
// Conventions (docs/http.md):
//   - errors are google.rpc.Status JSON with the HTTP status grpc-gateway
//     gives the code (ErrorJson, HttpStatusFor); 404 for an unknown path,
//     405 with Allow for a known path and another method;
//   - X-Request-Id is taken from the request (or made) and echoed, sent on
//     to the gRPC call and written in the log line of a failed request;
//   - CORS for the origins of Options::cors_origins only (none by default);
//   - each call carries the client's key for the per-client rate limit
//     (client_address.h: the TCP peer, a forwarded address from a trusted
//     proxy, or the verified client certificate);
//   - gpuadvisor_http_requests_total{route,code} counts every answer.
// Thread-safe.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/grpc/tls.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "grpcpp/channel.h"
#include "services/gateway/http/http_transport.h"

namespace prometheus {
class Registry;
}

namespace gpuadvisor::gateway::http {

class HttpServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";                   // "0.0.0.0" for every interface
    int port = 0;                                     // 0 lets the kernel pick a free port
    HttpLimits limits;                                // deadlines and sizes of a connection
    absl::Duration call_timeout = absl::Seconds(30);  // deadline of each in-process call
    int threads = 8;                                  // handler threads
    int io_threads = 2;                               // event-loop threads
    TlsFiles tls;                                     // cert + key: HTTPS only
    ClientAuth client_auth = ClientAuth::kNone;       // client certificates over HTTPS
    // Origins allowed to call from a browser page ("https://ui.example.com",
    // or "*"); empty: no CORS headers at all.
    std::vector<std::string> cors_origins;
    // Proxies whose X-Forwarded-For / Forwarded headers are believed
    // ("10.0.0.0/8", "::1/128"); empty: the TCP peer is the client.
    std::vector<std::string> trusted_proxies;
    // Service named in the health check (its status, not the server's "").
    std::string health_service = "gpuadvisor.gateway.v1.GatewayService";
    prometheus::Registry* registry = nullptr;  // HTTP metrics when set; outlives the server
    bool log_requests = false;                 // a log line per request, not only failed ones
    // Recommend in this process without gRPC: called on the connection's
    // event-loop thread with what the gRPC call would carry (LocalCall) and
    // the parsed request; calls `done` once, from any thread, and never
    // blocks; the answer lives only while `done` runs. Null: /v1/recommend
    // calls the gRPC method on `channel` like every other route.
    struct LocalCall {
      std::string client_key;  // the rate limit's bucket (client_address.h)
      std::string request_id;  // X-Request-Id, taken or made
      absl::Time deadline;     // now + call_timeout
    };
    using RecommendFn = std::function<void(
        const LocalCall& call, v1::RecommendRequest request,
        absl::AnyInvocable<void(absl::StatusOr<const v1::RecommendResponse*>)> done)>;
    RecommendFn recommend;
  };

  // Binds and starts serving. kUnavailable if the address cannot be bound,
  // kInvalidArgument for a bad TLS file or proxy range.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(std::shared_ptr<grpc::Channel> channel,
                                                           const Options& options);
  ~HttpServer();  // Stop()s

  int port() const { return transport_->port(); }
  bool tls() const { return tls_; }
  // Stops accepting, lets in-flight requests finish and joins the threads.
  // Idempotent.
  void Stop();

 private:
  HttpServer() = default;

  std::unique_ptr<HttpTransport> transport_;
  bool tls_ = false;
};

}  // namespace gpuadvisor::gateway::http

#endif  // GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_SERVER_H_
