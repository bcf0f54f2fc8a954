#ifndef GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_TRANSPORT_PARTS_H_
#define GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_TRANSPORT_PARTS_H_

// Internal to http_transport.cc: the pieces that need no connection state.

// clang-format off
#include <utility>  // before Boost.Asio: its awaitable.hpp uses std::exchange without it
// clang-format on
#include <openssl/ssl.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "services/gateway/http/http_transport.h"

namespace gpuadvisor::gateway::http::transport_internal {

// "CN=admin-ops,SAN=admin-ops" of a verified peer certificate, as gRPC's
// CallerIdentity names it; "" when there is none.
std::string CertificateIdentity(SSL* ssl);

// The request line (if there) and the complete header lines in `bytes`: what
// is left in the read buffer of a request whose headers were cut by a
// deadline or a size limit.
HttpRequest HeadFromBytes(absl::string_view bytes);

// A TLS 1.2+ server context with the certificate chain and key, verifying
// client certificates against files.ca_path as `client_auth` asks;
// kInvalidArgument naming the file that cannot be used.
absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeTlsContext(const TlsFiles& files,
                                                                          ClientAuth client_auth);

// The endpoint to listen on: `host` as an address, else resolved.
absl::StatusOr<boost::asio::ip::tcp::endpoint> Endpoint(const std::string& host, int port);

// An answer as HTTP/1.1 bytes, closing the connection (the 503 written at
// once to a connection over the cap).
std::string Serialize(const HttpResponse& r);

// gpuadvisor_http_connections{,_refused_total,_closed_total}.
struct ConnectionMetrics {
  prometheus::Gauge* open = nullptr;
  prometheus::Counter* refused = nullptr;
  std::map<std::string, prometheus::Counter*> closed;  // by reason, all made here
};
ConnectionMetrics RegisterConnectionMetrics(prometheus::Registry& registry);

}  // namespace gpuadvisor::gateway::http::transport_internal

#endif  // GPUADVISOR_SERVICES_GATEWAY_HTTP_HTTP_TRANSPORT_PARTS_H_
