#ifndef GPUADVISOR_COMMON_GRPC_TLS_CHECK_H_
#define GPUADVISOR_COMMON_GRPC_TLS_CHECK_H_

// The start-up check of a server's TLS files, so a bad certificate stops the
// process with a clear line instead of every client failing its handshake:
//
//   absl::StatusOr<CertificateInfo> info = CheckCertificate(files, absl::Now());
//
// Errors (kInvalidArgument), each naming the file and, for dates, the date:
//   - a file that is not readable PEM;
//   - "server.pem: certificate expired on 2026-12-03 00:07:43 UTC";
//   - "server.pem: certificate not valid before 2027-01-01 ...";
//   - "server.key: private key does not match the certificate in server.pem";
//   - "server.pem: does not verify against ca.pem: <OpenSSL's reason>" (the
//     chain in the certificate file, up to a root in the CA file; checked
//     when a CA is given).
// Plain C++ over OpenSSL; thread-safe.

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/grpc/tls.h"

namespace gpuadvisor {

struct CertificateInfo {
  std::string subject;  // "CN=gpuadvisor-service,O=..."
  absl::Time not_after;
};

absl::StatusOr<CertificateInfo> CheckCertificate(const TlsFiles& files, absl::Time now);

// "2026-12-03 00:07:43 UTC".
std::string FormatCertificateTime(absl::Time t);

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_TLS_CHECK_H_
