#ifndef GPUADVISOR_TESTS_TESTING_PROCESS_H_
#define GPUADVISOR_TESTS_TESTING_PROCESS_H_

// Runs a real service binary as a child process for end-to-end tests: it is
// started with --port=0 --metrics_port=0, and its announcement line
// ("<name> listening grpc=HOST:PORT metrics=HOST:PORT") tells the bound ports.
// The destructor sends SIGTERM and reaps it (SIGKILL after a grace period).

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"

namespace gpuadvisor::testing {

class ServiceProcess {
 public:
  // Starts `binary` with `args` and waits up to `timeout` for the announcement.
  static absl::StatusOr<std::unique_ptr<ServiceProcess>> Start(
      const std::string& binary, const std::vector<std::string>& args,
      absl::Duration timeout = absl::Seconds(30));
  ~ServiceProcess();

  const std::string& grpc_address() const { return grpc_address_; }
  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  int http_port() const { return http_port_; }  // 0 when it announced none
  pid_t pid() const { return pid_; }

  // Sends `signal` and waits for exit; returns the exit status (as waitpid).
  int Stop(int signal, absl::Duration grace = absl::Seconds(10));

 private:
  ServiceProcess() = default;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string grpc_address_;
  int grpc_port_ = 0;
  int metrics_port_ = 0;
  int http_port_ = 0;
};

// Polls grpc.health.v1 on `channel` until `service` ("" = overall) is SERVING.
absl::Status WaitForServing(const std::shared_ptr<grpc::Channel>& channel,
                            const std::string& service, absl::Duration timeout);

// GET http://127.0.0.1:<port><path> over a plain socket; the body, or an error.
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

}  // namespace gpuadvisor::testing

#endif  // GPUADVISOR_TESTS_TESTING_PROCESS_H_
