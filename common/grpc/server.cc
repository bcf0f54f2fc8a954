#include "common/grpc/server.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/io/text_proto.h"
#include "google/protobuf/descriptor.h"
#include "grpc/grpc.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

namespace gpuadvisor {

absl::StatusOr<StartedServer> StartServer(const ServerOptions& options,
                                          const std::vector<grpc::Service*>& services) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  StartedServer started;
  const std::string address = absl::StrCat(options.host, ":", options.port);
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      ServerCredentialsFor(options.tls, options.client_auth);
  if (!credentials.ok()) return credentials.status();
  builder.AddListeningPort(address, *credentials, &started.port);
  builder.SetMaxReceiveMessageSize(options.max_receive_bytes);
  builder.SetMaxSendMessageSize(options.max_send_bytes);
  grpc::ResourceQuota quota(absl::StrCat("server:", address));
  quota.Resize(static_cast<size_t>(options.memory_quota_bytes));
  quota.SetMaxThreads(options.max_threads);
  builder.SetResourceQuota(quota);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.max_concurrent_streams);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, options.keepalive_seconds * 1000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             options.keepalive_timeout_seconds * 1000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             options.min_client_ping_seconds * 1000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  for (grpc::Service* service : services) builder.RegisterService(service);
  started.server = builder.BuildAndStart();
  if (started.server == nullptr || started.port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", address));
  }
  started.server->GetHealthCheckService()->SetServingStatus(false);
  return started;
}

void SetServing(grpc::Server& server, const std::vector<std::string>& service_names, bool serving) {
  grpc::HealthCheckServiceInterface* health = server.GetHealthCheckService();
  if (health == nullptr) return;
  for (const std::string& name : service_names) health->SetServingStatus(name, serving);
  health->SetServingStatus(serving);
}

int MethodIndex(const std::string& service, const std::string& method) {
  const google::protobuf::ServiceDescriptor* descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
  if (descriptor == nullptr) return -1;
  const google::protobuf::MethodDescriptor* found = descriptor->FindMethodByName(method);
  return found == nullptr ? -1 : found->index();
}

absl::Status CheckAdminToken(const grpc::ServerContext& context, const std::string& token) {
  if (token.empty())
    return absl::PermissionDeniedError("admin RPCs are disabled: no admin token configured");
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return absl::UnauthenticatedError("missing 'authorization: Bearer <token>' metadata");
  }
  const std::string value(it->second.data(), it->second.size());
  const std::string expected = absl::StrCat("Bearer ", token);
  // Compare in constant time so the answer's timing says nothing about the token.
  unsigned char difference = value.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < value.size() && i < expected.size(); ++i) {
    difference |= static_cast<unsigned char>(value[i] ^ expected[i]);
  }
  if (difference != 0) return absl::PermissionDeniedError("wrong admin token");
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadAdminToken(const std::string& path, const char* env_var) {
  if (!path.empty()) {
    absl::StatusOr<std::string> contents = ReadFile(path);
    if (!contents.ok()) return contents.status();
    return std::string(absl::StripTrailingAsciiWhitespace(*contents));
  }
  const char* value = std::getenv(env_var);
  return value == nullptr ? std::string() : std::string(value);
}

void AnnounceListening(const std::string& name, const std::string& host, int grpc_port,
                       int metrics_port, const std::vector<std::string>& extra) {
  std::string line = absl::StrCat(name, " listening grpc=", host, ":", grpc_port, " metrics=", host,
                                  ":", metrics_port);
  for (const std::string& part : extra) absl::StrAppend(&line, " ", part);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

namespace {
sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}
}  // namespace

void BlockTerminationSignals() {
  const sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForTerminationSignal() {
  const sigset_t set = TerminationSignals();
  int signal = 0;
  sigwait(&set, &signal);
  return signal;
}

int WaitForTerminationSignal(double timeout_seconds) {
  const sigset_t set = TerminationSignals();
  timespec timeout;
  timeout.tv_sec = static_cast<time_t>(timeout_seconds);
  timeout.tv_nsec =
      static_cast<long>((timeout_seconds - static_cast<double>(timeout.tv_sec)) * 1e9);
  const int signal = sigtimedwait(&set, nullptr, &timeout);
  return signal > 0 ? signal : 0;
}

void ShutdownServer(grpc::Server& server, double grace_seconds) {
  server.Shutdown(std::chrono::system_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(grace_seconds * 1000)));
}

}  // namespace gpuadvisor
