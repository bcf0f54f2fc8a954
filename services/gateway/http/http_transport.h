#ifndef GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_TRANSPORT_H_
#define GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_TRANSPORT_H_

// An event-driven HTTP/1.1 server (Boost.Beast over Asio) whose every
// connection is bounded in time and size, so slow, idle or endless clients
// cannot hold the ones that behave:
//
//   - headers: one total deadline from the connection's accept (or the first
//     byte of a kept-alive connection's next request) to the end of the
//     headers, TLS handshake included; not renewed by each byte received;
//   - body: one total deadline from the end of the headers to the end of the
//     body; a byte at a time does not extend it;
//   - idle keep-alive: a kept-alive connection with no new request is closed;
//   - requests per connection: the last answer says "Connection: close";
//   - concurrent connections: past the cap a new connection is refused at
//     once (503 on plaintext, then closed), never queued;
//   - header bytes, header count and body bytes, chunked bodies included.
//
// A request that breaks a limit gets its status (408 for a deadline passed
// mid-request, 413 for the body, 431 for the headers) with
// "Connection: close", and the connection is closed after a short drain; a
// connection that sent nothing is simply closed. Requests that are read whole
// are first offered to the async handler on the connection's event-loop
// thread (a route that answers without blocking, e.g. Recommend calling the
// service in process: no thread hop), and otherwise handed to `handler` on a
// pool of worker threads (a handler may block, e.g. on a gRPC call);
// connections wait on Asio's epoll, not on threads.
//
// With Options::tls the port speaks HTTPS only (same PEM files as gRPC's
// --tls_cert/--tls_key/--tls_ca); client certificates signed by the CA are
// requested (ClientAuth::kOptional) or required (kRequire). A failed
// handshake (plaintext, wrong CA) closes the connection.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/grpc/tls.h"

namespace prometheus {
class Registry;
}

namespace gpuadvisor::gateway::http {

// Every bound of a connection (docs/reliability.md lists them with the
// figures the tests measured). Flags of the gateway set each one.
struct HttpLimits {
  absl::Duration header_timeout = absl::Seconds(10);  // accept/first byte -> end of headers
  absl::Duration body_timeout = absl::Seconds(30);    // end of headers -> end of body
  absl::Duration idle_timeout = absl::Seconds(30);    // between requests on a kept-alive conn
  absl::Duration write_timeout = absl::Seconds(30);   // to write one answer
  int max_requests_per_connection = 1000;             // then "Connection: close"
  int max_connections = 2048;                         // open at once; more are refused at once
  size_t max_header_bytes = 16 << 10;                 // request line + headers; more: 431
  int max_header_count = 100;                         // header fields; more: 431
  size_t max_body_bytes = 1 << 20;                    // decoded body, chunked too; more: 413
};

struct HttpRequest {
  std::string method;                                        // "GET", "POST", "OPTIONS", ...
  std::string target;                                        // "/v1/offers?page_size=3"
  std::string path;                                          // target up to '?'
  std::string query;                                         // after '?', "" if none
  std::vector<std::pair<std::string, std::string>> headers;  // as received
  std::string body;
  std::string peer_ip;             // the TCP peer, "127.0.0.1" / "::1"
  bool tls = false;                // arrived over HTTPS
  std::string client_certificate;  // verified client certificate: "CN=x,SAN=y"; "" if none
  // The first header named `name` (case-insensitive), "" if absent.
  std::string Header(absl::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

class HttpTransport {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    int port = 0;            // 0 lets the kernel pick a free port
    int io_threads = 2;      // threads running the event loop (reads, writes, timers)
    int worker_threads = 8;  // threads running the handler
    HttpLimits limits;
    TlsFiles tls;  // cert and key: serve HTTPS only
    ClientAuth client_auth = ClientAuth::kNone;
    // Answers the transport makes itself (400, 408, 413, 431, 503 when full):
    // the answer for a status and message (e.g. the API's JSON error shape,
    // request id and CORS headers). `head` is what was read of the request:
    // method, target and the header fields received whole (all of them once
    // the headers ended; the complete lines so far when a deadline or a size
    // limit cut them; none when nothing came).
    std::function<HttpResponse(int status, const std::string& message, const HttpRequest& head)>
        error_response;
    // Sees every answer written: the request's method and target ("" when the
    // request line was never read) and the status.
    std::function<void(const std::string& method, const std::string& target, int status)> observe;
    // Registers gpuadvisor_http_connections{,_refused_total,_closed_total}
    // when set; must outlive the transport.
    prometheus::Registry* registry = nullptr;
  };
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // Writes the answer of one request; called once, from any thread.
  using Reply = std::function<void(HttpResponse)>;
  // Offered every request first, on the connection's event-loop thread:
  // false leaves it to the Handler on the worker pool; true means it calls
  // `reply` itself (at once or later, from any thread). It must not block.
  using AsyncHandler = std::function<bool(std::shared_ptr<const HttpRequest>, const Reply& reply)>;

  // Binds and starts serving. kUnavailable if the address cannot be bound,
  // kInvalidArgument naming the file if the TLS files cannot be used.
  static absl::StatusOr<std::unique_ptr<HttpTransport>> Start(Options options, Handler handler,
                                                              AsyncHandler async = nullptr);
  ~HttpTransport();  // Stop()s

  int port() const;
  // Connections open now.
  int connections() const;
  // Stops accepting, gives requests being handled up to `grace` to finish,
  // then closes every connection and joins the threads. Idempotent.
  void Stop(absl::Duration grace = absl::Seconds(5));

  struct Impl;

 private:
  HttpTransport() = default;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuadvisor::gateway::http

#endif  // GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_TRANSPORT_H_
