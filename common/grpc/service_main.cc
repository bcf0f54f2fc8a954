#include "common/grpc/service_main.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace gpuadvisor {

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
  AnnounceListening(options.name, options.server.host, server->port, endpoint->port);

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
