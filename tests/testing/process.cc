#include "tests/testing/process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"

namespace gpuadvisor::testing {

absl::StatusOr<std::unique_ptr<ServiceProcess>> ServiceProcess::Start(
    const std::string& binary, const std::vector<std::string>& args, absl::Duration timeout) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return absl::InternalError("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    // Test runners block signals in some threads; the service must not inherit that.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::unique_ptr<ServiceProcess> process(new ServiceProcess());
  process->pid_ = pid;
  process->stdout_fd_ = pipe_fds[0];

  // Read until the announcement line.
  const absl::Time deadline = absl::Now() + timeout;
  std::string output;
  static const std::regex kAnnouncement(
      R"((\S+) listening grpc=(\S+):(\d+) metrics=\S+:(\d+)([^\n]*)\n)");
  static const std::regex kHttp(R"( http=\S+:(\d+))");
  while (absl::Now() < deadline) {
    pollfd fd{process->stdout_fd_, POLLIN, 0};
    const int ready = poll(&fd, 1, 100);
    if (ready > 0) {
      char buffer[512];
      const ssize_t n = read(process->stdout_fd_, buffer, sizeof(buffer));
      if (n <= 0) break;  // the child exited
      output.append(buffer, static_cast<size_t>(n));
      std::smatch match;
      if (std::regex_search(output, match, kAnnouncement)) {
        process->grpc_port_ = std::stoi(match[3]);
        process->metrics_port_ = std::stoi(match[4]);
        const std::string rest = match[5].str();
        std::smatch http;
        if (std::regex_search(rest, http, kHttp)) process->http_port_ = std::stoi(http[1]);
        process->grpc_address_ = absl::StrCat(match[2].str(), ":", process->grpc_port_);
        return process;
      }
    }
  }
  return absl::UnavailableError(
      absl::StrCat(binary, " did not announce its ports; stdout: ", output));
}

int ServiceProcess::Stop(int signal, absl::Duration grace) {
  if (pid_ <= 0) return 0;
  kill(pid_, signal);
  const absl::Time deadline = absl::Now() + grace;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (absl::Now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  pid_ = -1;
  return status;
}

ServiceProcess::~ServiceProcess() {
  Stop(SIGTERM);
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

absl::Status WaitForServing(const std::shared_ptr<grpc::Channel>& channel,
                            const std::string& service, absl::Duration timeout) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  const absl::Time deadline = absl::Now() + timeout;
  std::string last = "no answer";
  while (absl::Now() < deadline) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    const grpc::Status status = stub->Check(&context, request, &response);
    if (status.ok() && response.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
      return absl::OkStatus();
    }
    last = status.ok() ? "NOT_SERVING" : status.error_message();
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::DeadlineExceededError(absl::StrCat("not SERVING in time: ", last));
}

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("connect to port ", port, " failed"));
  }
  const std::string request =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  if (write(fd, request.data(), request.size()) < 0) {
    close(fd);
    return absl::UnavailableError("write failed");
  }
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0)
    response.append(buffer, static_cast<size_t>(n));
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (body == std::string::npos) return absl::UnavailableError("malformed HTTP response");
  return response.substr(body + 4);
}

}  // namespace gpuadvisor::testing
