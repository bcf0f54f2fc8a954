#ifndef GPUADVISOR_COMMON_GRPC_SERVICE_MAIN_H_
#define GPUADVISOR_COMMON_GRPC_SERVICE_MAIN_H_

// The part every server binary's main() shares once its data is loaded:
// listen, serve /metrics, report SERVING, announce the bound ports, wait for
// SIGINT/SIGTERM, then drain and stop.

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/grpc/server.h"
#include "common/metrics/metrics.h"

namespace gpuadvisor {

struct ServiceMainOptions {
  std::string name;                       // "catalog": first word of the announcement
  ServerOptions server;                   // host and gRPC port
  int metrics_port = 0;                   // on the same host
  std::vector<std::string> health_names;  // full service names marked SERVING
  // On SIGTERM: health turns NOT_SERVING, the server keeps answering for
  // drain_seconds (load balancers and health-checking channels steer away),
  // then `before_shutdown` runs and in-flight calls get shutdown_grace_seconds.
  double drain_seconds = 0;
  int health_port = -1;       // >= 0: also serve grpc.health.v1 alone, plaintext (TLS-less probes)
  absl::Status config_error;  // a bad flag found by ServiceMainOptionsFromFlags
  double shutdown_grace_seconds = 2.0;
  // With TLS: the certificate is checked at start (tls_check.h: expired,
  // mismatched or unchained stops start-up); expiring within this is a
  // WARNING line. gpuadvisor_tls_certificate_expiry_seconds counts down.
  absl::Duration tls_expiry_warning = absl::Hours(24 * 30);
  // Health turns SERVING once this returns true (checked every 100 ms);
  // null = ready at once.
  std::function<bool()> ready;
  // Runs once the gRPC server is up, before the announcement: starts further
  // listeners that call the server in-process (server.InProcessChannel) and
  // returns their "key=host:port" parts for the announce line (the gateway's
  // "http=H:P"). An error stops start-up (exit code 1). Null = none.
  std::function<absl::StatusOr<std::vector<std::string>>(grpc::Server& server)> on_started;
};

// Options from the flags every server binary shares (--host, --port,
// --metrics_port; defined in service_main.cc): a flag left unset takes the
// service's own default port.
ServiceMainOptions ServiceMainOptionsFromFlags(std::string name, int default_port,
                                               int default_metrics_port,
                                               std::vector<std::string> health_names);

// Requires BlockTerminationSignals() at the top of main(). `before_shutdown`
// runs after health turns NOT_SERVING and before the server drains (use it to
// end streams). Returns the process exit code: 0 after a signal, 1 if the
// server or the metrics endpoint cannot start (the reason goes to stderr).
int ServeUntilSignal(const ServiceMainOptions& options, Metrics& metrics,
                     const std::vector<grpc::Service*>& services,
                     const std::function<void()>& before_shutdown = nullptr);

// Prints "<name>: <status>" to stderr and returns 1, for main()'s early exits.
int FailStartup(const std::string& name, const absl::Status& status);

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_SERVICE_MAIN_H_
