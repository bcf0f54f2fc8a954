// Pieces of the HTTP transport that need no connection state: the peer
// certificate's identity, the head of a cut request, the TLS context and the
// listening endpoint, the refusal bytes and the connection metrics
// (http_transport_parts.h).

#include "services/gateway/http/http_transport_parts.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/beast/http.hpp>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gpuadvisor::gateway::http::transport_internal {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// "CN=admin-ops,SAN=admin-ops" of a verified peer certificate, as gRPC's
// CallerIdentity names it; "" when there is none.
std::string CertificateIdentity(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (cert == nullptr) return "";
  std::vector<std::string> names;
  if (SSL_get_verify_result(ssl) == X509_V_OK) {
    char cn[256] = {};
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn)) >
        0) {
      names.push_back(absl::StrCat("CN=", cn));
    }
    auto* sans =
        static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
    for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
      if (name->type != GEN_DNS) continue;
      const ASN1_STRING* dns = name->d.dNSName;
      names.push_back(absl::StrCat(
          "SAN=", absl::string_view(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                    static_cast<size_t>(ASN1_STRING_length(dns)))));
    }
    GENERAL_NAMES_free(sans);
  }
  X509_free(cert);
  return absl::StrJoin(names, ",");
}

// The request line and the complete header lines in `bytes`, the start of a
// request whose headers were cut by a deadline or a size limit.
HttpRequest HeadFromBytes(absl::string_view bytes) {
  HttpRequest head;
  size_t at = 0;
  for (;;) {
    const size_t end = bytes.find("\r\n", at);
    if (end == absl::string_view::npos || end == at) break;  // cut, or the blank line
    const absl::string_view line = bytes.substr(at, end - at);
    at = end + 2;
    if (absl::EndsWith(line, " HTTP/1.1") || absl::EndsWith(line, " HTTP/1.0")) {
      const std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
      head.method = std::string(parts[0]);
      head.target = std::string(parts.size() > 1 ? parts[1] : "");
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    head.headers.emplace_back(std::string(absl::StripAsciiWhitespace(line.substr(0, colon))),
                              std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  return head;
}

absl::StatusOr<std::unique_ptr<ssl::context>> MakeTlsContext(const TlsFiles& files,
                                                             ClientAuth client_auth) {
  if (files.cert_path.empty() || files.key_path.empty()) {
    return absl::InvalidArgumentError("TLS: HTTPS needs both --tls_cert and --tls_key");
  }
  auto context = std::make_unique<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use);
  error_code ec;
  context->use_certificate_chain_file(files.cert_path, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat(files.cert_path, ": ", ec.message()));
  context->use_private_key_file(files.key_path, ssl::context::pem, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat(files.key_path, ": ", ec.message()));
  if (!files.ca_path.empty() && client_auth != ClientAuth::kNone) {
    context->load_verify_file(files.ca_path, ec);
    if (ec) return absl::InvalidArgumentError(absl::StrCat(files.ca_path, ": ", ec.message()));
    context->set_verify_mode(
        ssl::verify_peer | (client_auth == ClientAuth::kRequire ? ssl::verify_fail_if_no_peer_cert
                                                                : ssl::verify_none),
        ec);
    // With peer verification on, OpenSSL refuses to resume a session whose
    // context id is unset ("session id context uninitialized"): a browser's
    // second connection, which resumes the first one's session, would fail its
    // handshake and the page would load without its script.
    static constexpr unsigned char kSessionContext[] = "gpu-advisor-http";
    if (SSL_CTX_set_session_id_context(context->native_handle(), kSessionContext,
                                       sizeof(kSessionContext) - 1) != 1) {
      return absl::InternalError("TLS: cannot set the session id context");
    }
  } else if (client_auth == ClientAuth::kRequire) {
    return absl::InvalidArgumentError("TLS: requiring client certificates needs --tls_ca");
  }
  return context;
}

absl::StatusOr<tcp::endpoint> Endpoint(const std::string& host, int port) {
  error_code ec;
  asio::ip::address address = asio::ip::make_address(host, ec);
  if (!ec) return tcp::endpoint(address, static_cast<uint16_t>(port));
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec || results.empty()) {
    return absl::UnavailableError(absl::StrCat("http: cannot resolve ", host, ": ", ec.message()));
  }
  return results.begin()->endpoint();
}

std::string Serialize(const HttpResponse& r) {
  namespace bhttp = boost::beast::http;
  bhttp::response<bhttp::string_body> response(static_cast<bhttp::status>(r.status), 11);
  response.set(bhttp::field::content_type, r.content_type);
  for (const auto& [name, value] : r.headers) response.insert(name, value);
  response.body() = r.body;
  response.keep_alive(false);
  response.prepare_payload();
  std::ostringstream out;
  out << response;
  return out.str();
}

ConnectionMetrics RegisterConnectionMetrics(prometheus::Registry& registry) {
  ConnectionMetrics m;
  m.open = &prometheus::BuildGauge()
                .Name("gpuadvisor_http_connections")
                .Help("HTTP connections open now.")
                .Register(registry)
                .Add({});
  m.refused = &prometheus::BuildCounter()
                   .Name("gpuadvisor_http_connections_refused_total")
                   .Help("HTTP connections refused at accept: --http_max_connections were open.")
                   .Register(registry)
                   .Add({});
  auto& closed = prometheus::BuildCounter()
                     .Name("gpuadvisor_http_connections_closed_total")
                     .Help("HTTP connections the server closed, by the limit that closed them.")
                     .Register(registry);
  for (const char* reason :
       {"header_timeout", "body_timeout", "idle_timeout", "write_timeout", "header_too_large",
        "body_too_large", "bad_request", "tls_handshake"}) {
    m.closed[reason] = &closed.Add({{"reason", reason}});
  }
  return m;
}

}  // namespace gpuadvisor::gateway::http::transport_internal
