#include "common/grpc/service_main.h"

#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/grpc/limits.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Address to listen on (0.0.0.0 for all interfaces).");
ABSL_FLAG(int, port, -1,
          "gRPC port; 0 picks a free port. Default: gateway 50050, catalog 50051, sizing 50052, "
          "pricing 50053.");
ABSL_FLAG(int, metrics_port, -1,
          "Prometheus /metrics port; 0 picks a free port. Default: gateway 9460, catalog 9461, "
          "sizing 9462, pricing 9463.");

ABSL_FLAG(int, max_receive_bytes, -1,
          "Largest request accepted; -1 = the service's contract size (common/grpc/limits.h).");
ABSL_FLAG(int, max_threads, 128, "Most gRPC handler threads; past it calls get RESOURCE_EXHAUSTED.");
ABSL_FLAG(int, max_concurrent_streams, 100, "Most concurrent calls per client connection.");
ABSL_FLAG(int, memory_quota_mb, 256, "gRPC ResourceQuota for transport buffers, in MiB.");

namespace gpuadvisor {

ServiceMainOptions ServiceMainOptionsFromFlags(std::string name, int default_port,
                                               int default_metrics_port,
                                               std::vector<std::string> health_names) {
  ServiceMainOptions options;
  options.name = std::move(name);
  options.server.host = absl::GetFlag(FLAGS_host);
  const int port = absl::GetFlag(FLAGS_port);
  const int metrics_port = absl::GetFlag(FLAGS_metrics_port);
  options.server.port = port >= 0 ? port : default_port;
  options.metrics_port = metrics_port >= 0 ? metrics_port : default_metrics_port;
  options.health_names = std::move(health_names);
  const int max_receive = absl::GetFlag(FLAGS_max_receive_bytes);
  options.server.max_receive_bytes = max_receive > 0 ? max_receive : MaxRequestBytesFor(options.name.c_str());
  options.server.max_threads = absl::GetFlag(FLAGS_max_threads);
  options.server.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  options.server.memory_quota_bytes = int64_t{absl::GetFlag(FLAGS_memory_quota_mb)} << 20;
  return options;
}

int FailStartup(const std::string& name, const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", name.c_str(), status.ToString().c_str());
  return 1;
}

int ServeUntilSignal(const ServiceMainOptions& options, Metrics& metrics,
                     const std::vector<grpc::Service*>& services,
                     const std::function<void()>& before_shutdown) {
  absl::StatusOr<StartedServer> server = StartServer(options.server, services);
  if (!server.ok()) return FailStartup(options.name, server.status());
  absl::StatusOr<MetricsEndpoint> endpoint =
      ServeMetrics(absl::StrCat(options.server.host, ":", options.metrics_port), metrics);
  if (!endpoint.ok()) {
    ShutdownServer(*server->server, 0);
    return FailStartup(options.name, endpoint.status());
  }
  std::vector<std::string> extra;
  if (options.on_started) {
    absl::StatusOr<std::vector<std::string>> started = options.on_started(*server->server);
    if (!started.ok()) {
      ShutdownServer(*server->server, 0);
      (void)endpoint->exposer.release();
      return FailStartup(options.name, started.status());
    }
    extra = *std::move(started);
  }
  AnnounceListening(options.name, options.server.host, server->port, endpoint->port, extra);

  bool serving = false;
  while (true) {
    if (!serving && (!options.ready || options.ready())) {
      SetServing(*server->server, options.health_names, true);
      serving = true;
    }
    if (serving ? WaitForTerminationSignal() : WaitForTerminationSignal(0.1)) break;
  }
  SetServing(*server->server, options.health_names, false);
  if (before_shutdown) before_shutdown();
  ShutdownServer(*server->server, options.shutdown_grace_seconds);
  // civetweb's stop joins threads that poll with a one-second timeout. The
  // process is about to exit and the exposer holds only a weak reference to
  // the registry, so let the OS reclaim it instead of waiting.
  (void)endpoint->exposer.release();
  return 0;
}

}  // namespace gpuadvisor
