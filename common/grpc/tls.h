#ifndef GPUADVISOR_COMMON_GRPC_TLS_H_
#define GPUADVISOR_COMMON_GRPC_TLS_H_

// TLS for every server and backend channel, from three PEM files:
//
//   --tls_cert=server.pem --tls_key=server.key --tls_ca=ca.pem
//
// Server: with cert and key it serves TLS only. With a CA too it asks every
// caller for a client certificate signed by that CA (mutual TLS): required by
// default for the internal services (catalog, sizing, pricing), verified when
// presented but optional for the public gateway (--tls_client_auth overrides:
// require | optional | none). Channels: with a CA the backend channels verify
// the server against it and present cert/key as their own identity (mTLS
// between services). No flags: plaintext, which is the local default and is
// announced with a loud warning on stderr.
//
// Admin RPCs on a TLS server need a verified client certificate as well as
// the admin token, and every admin change is written to stderr as one
// "AUDIT ..." line naming the caller's certificate identity.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_context.h"

namespace gpuadvisor {

enum class ClientAuth { kNone, kOptional, kRequire };

struct TlsFiles {
  std::string cert_path;  // PEM certificate chain
  std::string key_path;   // PEM private key
  std::string ca_path;    // PEM roots that sign peers' certificates
  bool enabled() const { return !cert_path.empty() || !key_path.empty() || !ca_path.empty(); }
};

// Server credentials for `files` (insecure when none are given). Errors name
// the file that cannot be read or the missing half of a cert/key pair.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const TlsFiles& files, ClientAuth client_auth);

// Channel credentials for `files` (insecure when none are given).
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const TlsFiles& files);

// The TLS files named by the --tls_cert/--tls_key/--tls_ca flags, and the
// client authentication of --tls_client_auth ("" = the default for `name`).
TlsFiles TlsFilesFromFlags();
absl::StatusOr<ClientAuth> ClientAuthFromFlags(const std::string& service_name);

// Who is calling: the verified certificate's identity ("CN=admin-ops" /
// "SAN=...") when there is one, else "unauthenticated peer <addr>".
std::string CallerIdentity(const grpc::ServerContext& context);

// For admin RPCs: on a TLS connection the caller must present a verified
// certificate (kPermissionDenied otherwise). Plaintext passes (local mode).
absl::Status RequireVerifiedClientOnTls(const grpc::ServerContext& context);

// One line on stderr: AUDIT service=... rpc=... caller=... outcome=... detail.
void AuditLog(const std::string& service, const std::string& rpc,
              const grpc::ServerContext& context, const std::string& outcome,
              const std::string& detail);

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_TLS_H_
