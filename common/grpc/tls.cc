#include "common/grpc/tls.h"

#include <cstdio>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/io/text_proto.h"
#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/auth_context.h"

ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain: serve TLS (and present it to backends).");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA: verify backends against it, and ask callers for certificates it signed (mTLS).");
ABSL_FLAG(std::string, tls_client_auth, "",
          "require | optional | none; default require for catalog/sizing/pricing, optional for the "
          "gateway.");

namespace gpuadvisor {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path) {
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> pem = ReadFile(path);
  if (!pem.ok())
    return absl::InvalidArgumentError(absl::StrCat("TLS file: ", pem.status().message()));
  if (pem->find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a PEM file"));
  }
  return pem;
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const TlsFiles& files, ClientAuth client_auth) {
  if (!files.enabled()) return grpc::InsecureServerCredentials();
  if (files.cert_path.empty() || files.key_path.empty()) {
    return absl::InvalidArgumentError("TLS: a server needs both --tls_cert and --tls_key");
  }
  absl::StatusOr<std::string> cert = ReadPem(files.cert_path);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem(files.key_path);
  if (!key.ok()) return key.status();
  absl::StatusOr<std::string> ca = ReadPem(files.ca_path);
  if (!ca.ok()) return ca.status();
  grpc_ssl_client_certificate_request_type request = GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
  if (!ca->empty()) {
    switch (client_auth) {
      case ClientAuth::kRequire:
        request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
        break;
      case ClientAuth::kOptional:
        request = GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
        break;
      case ClientAuth::kNone:
        break;
    }
  } else if (client_auth == ClientAuth::kRequire) {
    return absl::InvalidArgumentError("TLS: requiring client certificates needs --tls_ca");
  }
  grpc::SslServerCredentialsOptions options(request);
  options.pem_root_certs = *ca;
  options.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const TlsFiles& files) {
  if (!files.enabled()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  absl::StatusOr<std::string> ca = ReadPem(files.ca_path);
  if (!ca.ok()) return ca.status();
  absl::StatusOr<std::string> cert = ReadPem(files.cert_path);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem(files.key_path);
  if (!key.ok()) return key.status();
  options.pem_root_certs = *ca;
  options.pem_cert_chain = *cert;
  options.pem_private_key = *key;
  return grpc::SslCredentials(options);
}

TlsFiles TlsFilesFromFlags() {
  return {absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key), absl::GetFlag(FLAGS_tls_ca)};
}

absl::StatusOr<ClientAuth> ClientAuthFromFlags(const std::string& service_name) {
  const std::string value = absl::GetFlag(FLAGS_tls_client_auth);
  if (value.empty()) {
    if (absl::GetFlag(FLAGS_tls_ca).empty()) return ClientAuth::kNone;
    return service_name == "gateway" ? ClientAuth::kOptional : ClientAuth::kRequire;
  }
  if (value == "require") return ClientAuth::kRequire;
  if (value == "optional") return ClientAuth::kOptional;
  if (value == "none") return ClientAuth::kNone;
  return absl::InvalidArgumentError(
      absl::StrCat("--tls_client_auth: must be require, optional or none, got \"", value, "\""));
}

std::string CallerIdentity(const grpc::ServerContext& context) {
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    std::vector<std::string> names;
    for (const char* property : {GRPC_X509_CN_PROPERTY_NAME, GRPC_X509_SAN_PROPERTY_NAME}) {
      for (const grpc::string_ref& value : auth->FindPropertyValues(property)) {
        names.push_back(
            absl::StrCat(property == std::string(GRPC_X509_CN_PROPERTY_NAME) ? "CN=" : "SAN=",
                         std::string(value.data(), value.size())));
      }
    }
    if (!names.empty()) return absl::StrJoin(names, ",");
    return "authenticated peer";
  }
  return absl::StrCat("unauthenticated peer ", context.peer());
}

absl::Status RequireVerifiedClientOnTls(const grpc::ServerContext& context) {
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr) return absl::OkStatus();
  bool tls = false;
  for (const grpc::string_ref& value :
       auth->FindPropertyValues(GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME)) {
    tls = tls || std::string(value.data(), value.size()) == GRPC_SSL_TRANSPORT_SECURITY_TYPE;
  }
  if (tls && !auth->IsPeerAuthenticated()) {
    return absl::PermissionDeniedError(
        "admin RPCs need a client certificate signed by the service's CA");
  }
  return absl::OkStatus();
}

void AuditLog(const std::string& service, const std::string& rpc,
              const grpc::ServerContext& context, const std::string& outcome,
              const std::string& detail) {
  std::fprintf(stderr, "AUDIT time=%s service=%s rpc=%s caller=\"%s\" peer=%s outcome=%s %s\n",
               absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone()).c_str(),
               service.c_str(), rpc.c_str(), CallerIdentity(context).c_str(),
               context.peer().c_str(), outcome.c_str(), detail.c_str());
  std::fflush(stderr);
}

}  // namespace gpuadvisor
