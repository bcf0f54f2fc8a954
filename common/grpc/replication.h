#ifndef GPUADVISOR_COMMON_GRPC_REPLICATION_H_
#define GPUADVISOR_COMMON_GRPC_REPLICATION_H_

// Single writer, followers over the existing watch streams (see
// docs/reliability.md, "Updates reach every replica"): one replica of the
// catalog (and of pricing) takes admin changes and persists them; the other
// replicas follow it with WatchCatalog / WatchPrices and forward admin calls
// to it. These helpers decide which replica is the writer and carry the
// caller's credentials along a forwarded call.

#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include "grpcpp/client_context.h"
#include "grpcpp/server_context.h"

namespace gpuadvisor {

// True when this process is the writer: no --writer_address was given, or
// --writer_host names this host (a StatefulSet gives every pod the same
// flags; pod 0's hostname makes it the writer).
inline bool IsWriter(const std::string& writer_address, const std::string& writer_host) {
  if (writer_address.empty()) return true;
  if (writer_host.empty()) return false;
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return false;
  return writer_host == name;
}

// A context for forwarding an admin call to the writer: the caller's
// deadline and cancellation (or `timeout` when it set none is shorter), and
// its authorization header, so the writer checks the same token. On TLS the
// writer sees this replica's certificate as the peer and logs both.
inline std::unique_ptr<grpc::ClientContext> ForwardingContext(const grpc::ServerContext& context,
                                                              std::chrono::seconds timeout) {
  std::unique_ptr<grpc::ClientContext> client = grpc::ClientContext::FromServerContext(context);
  const auto limit = std::chrono::system_clock::now() + timeout;
  if (context.deadline() > limit) client->set_deadline(limit);
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    client->AddMetadata("authorization", std::string(it->second.data(), it->second.size()));
  }
  return client;
}

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_REPLICATION_H_
