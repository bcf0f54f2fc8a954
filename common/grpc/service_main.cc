#include "common/grpc/service_main.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/grpc/limits.h"
#include "common/grpc/tls_check.h"
#include "common/metrics/function_metric.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Address to listen on (0.0.0.0 for all interfaces).");
ABSL_FLAG(int, port, -1,
          "gRPC port; 0 picks a free port. Default: gateway 50050, catalog 50051, sizing 50052, "
          "pricing 50053.");
ABSL_FLAG(int, metrics_port, -1,
          "Prometheus /metrics port; 0 picks a free port. Default: gateway 9460, catalog 9461, "
          "sizing 9462, pricing 9463.");

ABSL_FLAG(int, max_receive_bytes, -1,
          "Largest request accepted; -1 = the service's contract size (common/grpc/limits.h).");
ABSL_FLAG(int, max_threads, 128,
          "Most gRPC handler threads; past it calls get RESOURCE_EXHAUSTED.");
ABSL_FLAG(int, max_concurrent_streams, 100, "Most concurrent calls per client connection.");
ABSL_FLAG(int, memory_quota_mb, 256, "gRPC ResourceQuota for transport buffers, in MiB.");
ABSL_FLAG(double, drain_seconds, 0,
          "On SIGTERM: report NOT_SERVING, keep serving this long so load balancers and "
          "health-checking clients steer away, then stop (Kubernetes: 5-10).");
ABSL_FLAG(int, health_port, -1,
          "Extra plaintext port serving only grpc.health.v1, for probes that cannot speak TLS "
          "(Kubernetes grpc probes); -1 = none, 0 = pick one.");
ABSL_FLAG(
    double, tls_expiry_warning_days, 30,
    "With --tls_cert: a certificate expiring within this many days is a start-up WARNING "
    "(an expired one stops start-up); gpuadvisor_tls_certificate_expiry_seconds counts down.");
ABSL_FLAG(double, shutdown_grace_seconds, 2,
          "After the drain, how long in-flight calls get to finish.");

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
  options.server.max_receive_bytes =
      max_receive > 0 ? max_receive : MaxRequestBytesFor(options.name.c_str());
  options.server.max_threads = absl::GetFlag(FLAGS_max_threads);
  options.server.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  options.server.memory_quota_bytes = int64_t{absl::GetFlag(FLAGS_memory_quota_mb)} << 20;
  options.server.tls = TlsFilesFromFlags();
  absl::StatusOr<ClientAuth> client_auth = ClientAuthFromFlags(options.name);
  if (client_auth.ok()) {
    options.server.client_auth = *client_auth;
  } else {
    options.config_error = client_auth.status();
  }
  options.health_port = absl::GetFlag(FLAGS_health_port);
  options.drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  options.shutdown_grace_seconds = absl::GetFlag(FLAGS_shutdown_grace_seconds);
  options.tls_expiry_warning = absl::Hours(24 * absl::GetFlag(FLAGS_tls_expiry_warning_days));
  return options;
}

int FailStartup(const std::string& name, const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", name.c_str(), status.ToString().c_str());
  return 1;
}

absl::Status CheckTlsAtStart(const ServiceMainOptions& options, Metrics& metrics) {
  if (!options.server.tls.enabled() || options.server.tls.cert_path.empty()) {
    return absl::OkStatus();
  }
  absl::StatusOr<CertificateInfo> cert = CheckCertificate(options.server.tls, absl::Now());
  if (!cert.ok()) return cert.status();
  const absl::Duration left = cert->not_after - absl::Now();
  if (left < options.tls_expiry_warning) {
    std::fprintf(stderr,
                 "WARNING: %s: %s (%s) expires on %s, in %.1f days (within "
                 "--tls_expiry_warning_days); renew it before clients start failing\n",
                 options.name.c_str(), options.server.tls.cert_path.c_str(), cert->subject.c_str(),
                 FormatCertificateTime(cert->not_after).c_str(), absl::ToDoubleHours(left) / 24);
  }
  metrics.AddCollectable(std::make_shared<FunctionMetric>(
      "gpuadvisor_tls_certificate_expiry_seconds",
      "Seconds until the serving certificate (--tls_cert) expires; 0 once expired.",
      [not_after = cert->not_after] {
        return std::max(0.0, absl::ToDoubleSeconds(not_after - absl::Now()));
      }));
  return absl::OkStatus();
}

namespace {

// Says how the main port is served: a loud warning for plaintext.
void AnnounceTransport(const ServiceMainOptions& options, int port) {
  if (!options.server.tls.enabled()) {
    std::fprintf(
        stderr,
        "WARNING: %s serves PLAINTEXT gRPC on %s:%d (no --tls_cert/--tls_key/--tls_ca): anyone who "
        "can reach the port can read and forge calls, admin token included. Local use only.\n",
        options.name.c_str(), options.server.host.c_str(), port);
    return;
  }
  std::fprintf(stderr, "%s: TLS on %s:%d, client certificates %s\n", options.name.c_str(),
               options.server.host.c_str(), port,
               options.server.client_auth == ClientAuth::kRequire    ? "required"
               : options.server.client_auth == ClientAuth::kOptional ? "verified when presented"
                                                                     : "not requested");
}

// The plaintext health-only port (--health_port), which mirrors the main
// server's health; null when there is none.
absl::StatusOr<std::unique_ptr<grpc::Server>> StartHealthServer(const ServiceMainOptions& options) {
  if (options.health_port < 0) return nullptr;
  ServerOptions health_options;
  health_options.host = options.server.host;
  health_options.port = options.health_port;
  health_options.max_receive_bytes = 4 << 10;
  health_options.max_threads = 8;
  absl::StatusOr<StartedServer> health = StartServer(health_options, {});
  if (!health.ok()) return health.status();
  std::fprintf(stderr, "%s: grpc.health.v1 also on plaintext %s:%d\n", options.name.c_str(),
               options.server.host.c_str(), health->port);
  return std::move(health->server);
}

// SERVING once options.ready() (checked every 0.1 s until then), until
// SIGTERM/SIGINT; then NOT_SERVING for --drain_seconds.
void ServeUntilSignalThenDrain(const ServiceMainOptions& options,
                               const std::function<void(bool)>& set_serving) {
  bool serving = false;
  while (true) {
    if (!serving && (!options.ready || options.ready())) {
      set_serving(true);
      serving = true;
    }
    if (serving ? WaitForTerminationSignal() : WaitForTerminationSignal(0.1)) break;
  }
  set_serving(false);
  if (options.drain_seconds > 0) {
    std::fprintf(stderr, "%s: NOT_SERVING; draining for %.1f s before stopping\n",
                 options.name.c_str(), options.drain_seconds);
    absl::SleepFor(absl::Seconds(options.drain_seconds));
  }
}

}  // namespace

int ServeUntilSignal(const ServiceMainOptions& options, Metrics& metrics,
                     const std::vector<grpc::Service*>& services,
                     const std::function<void()>& before_shutdown) {
  if (!options.config_error.ok()) return FailStartup(options.name, options.config_error);
  if (absl::Status tls = CheckTlsAtStart(options, metrics); !tls.ok()) {
    return FailStartup(options.name, tls);
  }
  // Debian builds Abseil without NDEBUG, so every Mutex keeps the debug-only
  // lock-order graph (about 1% of the gateway's CPU under load). The tests
  // keep that check; a serving process does not pay for it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::StatusOr<StartedServer> server = StartServer(options.server, services);
  if (!server.ok()) return FailStartup(options.name, server.status());
  AnnounceTransport(options, server->port);
  absl::StatusOr<MetricsEndpoint> endpoint =
      ServeMetrics(absl::StrCat(options.server.host, ":", options.metrics_port), metrics);
  if (!endpoint.ok()) {
    ShutdownServer(*server->server, 0);
    return FailStartup(options.name, endpoint.status());
  }
  // A start that fails from here stops what started (the exposer is left to
  // the OS, as at the end).
  const auto fail = [&](const absl::Status& status) {
    ShutdownServer(*server->server, 0);
    (void)endpoint->exposer.release();
    return FailStartup(options.name, status);
  };
  absl::StatusOr<std::unique_ptr<grpc::Server>> health_server = StartHealthServer(options);
  if (!health_server.ok()) return fail(health_server.status());
  std::vector<std::string> extra;
  if (options.on_started) {
    absl::StatusOr<std::vector<std::string>> started = options.on_started(*server->server);
    if (!started.ok()) return fail(started.status());
    extra = *std::move(started);
  }
  AnnounceListening(options.name, options.server.host, server->port, endpoint->port, extra);

  ServeUntilSignalThenDrain(options, [&](bool serving) {
    SetServing(*server->server, options.health_names, serving);
    if (*health_server != nullptr) SetServing(**health_server, options.health_names, serving);
  });
  if (before_shutdown) before_shutdown();
  ShutdownServer(*server->server, options.shutdown_grace_seconds);
  if (*health_server != nullptr) ShutdownServer(**health_server, 0);
  // civetweb's stop joins threads that poll with a one-second timeout. The
  // process is about to exit and the exposer holds only a weak reference to
  // the registry, so let the OS reclaim it instead of waiting.
  (void)endpoint->exposer.release();
  return 0;
}

}  // namespace gpuadvisor
