// Clients as hostile as real ones, on loopback and bounded in time: slowloris
// headers and bodies, a thousand idle connections, an endless chunked body,
// oversized header sets, more connections than the cap. In each, normal HTTP
// and gRPC calls keep answering, every hostile connection gets its 4xx or a
// close within its deadline, and memory stays bounded. The limits are set
// small (a 1 s header deadline, ...) so each test takes a few seconds.

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/grpc/server.h"
#include "gmock/gmock.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "services/gateway/http/http_server.h"

namespace gpuadvisor::gateway::http {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

class QuickGateway final : public v1::GatewayService::Service {
 public:
  grpc::Status Recommend(grpc::ServerContext* context, const v1::RecommendRequest*,
                         v1::RecommendResponse* response) override {
    auto key = context->client_metadata().find("x-gpuadvisor-client");
    if (key != context->client_metadata().end()) {
      std::lock_guard<std::mutex> lock(mu);
      client_key.assign(key->second.data(), key->second.size());
    }
    response->add_recommendations()->set_rank(1);
    return grpc::Status::OK;
  }
  std::mutex mu;
  std::string client_key;  // of the last call
};

// Resident memory of this process (server and clients), bytes.
int64_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// What the server did to one hostile connection: its answer (if any) and
// when it closed, in seconds from `start`.
struct Outcome {
  std::string answer;
  double closed_after = -1;  // -1: still open when we stopped watching
};

// Reads whatever arrives until the server closes or `limit` passes.
Outcome ReadUntilClosed(int fd, Clock::time_point start, double limit) {
  Outcome outcome;
  char buffer[4096];
  while (Seconds(Clock::now() - start) < limit) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) {
      outcome.closed_after = Seconds(Clock::now() - start);
      break;
    }
    outcome.answer.append(buffer, static_cast<size_t>(n));
  }
  return outcome;
}

class HostileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<StartedServer> started = StartServer(ServerOptions{}, {&gateway_});
    ASSERT_TRUE(started.ok()) << started.status();
    grpc_ = std::move(started->server);
    grpc_port_ = started->port;
    options_.limits.header_timeout = absl::Seconds(1);
    options_.limits.body_timeout = absl::Seconds(1);
    options_.limits.idle_timeout = absl::Seconds(1);
    options_.limits.max_body_bytes = 64 << 10;
    options_.limits.max_header_bytes = 8 << 10;
    options_.limits.max_header_count = 50;
    options_.registry = &registry_;
  }
  void StartHttp() {
    absl::StatusOr<std::unique_ptr<HttpServer>> http =
        HttpServer::Start(grpc_->InProcessChannel(grpc::ChannelArguments()), options_);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
  }
  void TearDown() override {
    if (http_) http_->Stop();
    grpc_->Shutdown();
  }

  // A normal POST /v1/recommend on a fresh connection: its latency, or -1.
  double NormalHttpCall() {
    httplib::Client client("127.0.0.1", http_->port());
    client.set_connection_timeout(5);
    client.set_read_timeout(5);
    const Clock::time_point start = Clock::now();
    auto res = client.Post("/v1/recommend", "{}", "application/json");
    if (!res || res->status != 200) return -1;
    return Seconds(Clock::now() - start);
  }
  // A normal gRPC Recommend over TCP: its latency, or -1.
  double NormalGrpcCall() {
    auto stub = v1::GatewayService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", grpc_port_), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::RecommendRequest request;
    v1::RecommendResponse response;
    const Clock::time_point start = Clock::now();
    if (!stub->Recommend(&context, request, &response).ok()) return -1;
    return Seconds(Clock::now() - start);
  }
  // Normal calls while hostile clients are connected: all answer, fast.
  void ExpectNormalCallsAnswer() {
    for (int i = 0; i < 5; ++i) {
      const double http = NormalHttpCall();
      const double grpc = NormalGrpcCall();
      EXPECT_GE(http, 0) << "HTTP call " << i << " failed";
      EXPECT_LT(http, 0.5) << "HTTP call " << i;
      EXPECT_GE(grpc, 0) << "gRPC call " << i << " failed";
      EXPECT_LT(grpc, 0.5) << "gRPC call " << i;
    }
  }
  std::string MetricsText() { return prometheus::TextSerializer().Serialize(registry_.Collect()); }
  // Waits (up to 5 s) until the server holds `n` open connections (its
  // gpuadvisor_http_connections gauge): accepted, or closed and released.
  void WaitForOpenConnections(int n) {
    const std::string want = absl::StrCat("\ngpuadvisor_http_connections ", n, "\n");
    const Clock::time_point start = Clock::now();
    while (!absl::StrContains(MetricsText(), want) && Seconds(Clock::now() - start) < 5) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_THAT(MetricsText(), HasSubstr(want)) << "open connections never reached " << n;
  }

  QuickGateway gateway_;
  std::unique_ptr<grpc::Server> grpc_;
  int grpc_port_ = 0;
  prometheus::Registry registry_;
  HttpServer::Options options_;
  std::unique_ptr<HttpServer> http_;
};

// 200 connections send their headers a byte every 100 ms: each gets 408 and
// is closed once the 1 s header deadline passes, although every byte would
// have renewed a per-read timeout.
TEST_F(HostileTest, SlowlorisHeadersGet408AtTheTotalDeadline) {
  StartHttp();
  const std::string request =
      "POST /v1/recommend HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(200, 'a') + "\r\n\r\n{}";
  std::vector<int> fds;
  for (int i = 0; i < 200; ++i) {
    fds.push_back(Connect(http_->port()));
    ASSERT_GE(fds.back(), 0);
  }
  const Clock::time_point start = Clock::now();
  std::vector<Outcome> outcomes(fds.size());
  std::thread dribble([&] {
    for (size_t byte = 0; byte < request.size() && Seconds(Clock::now() - start) < 4; ++byte) {
      for (int fd : fds) (void)send(fd, &request[byte], 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  WaitForOpenConnections(200);
  ExpectNormalCallsAnswer();
  for (size_t i = 0; i < fds.size(); ++i) outcomes[i] = ReadUntilClosed(fds[i], start, 4);
  dribble.join();
  int answered_408 = 0;
  for (size_t i = 0; i < fds.size(); ++i) {
    EXPECT_GE(outcomes[i].closed_after, 0.8) << i;
    EXPECT_LT(outcomes[i].closed_after, 2.5) << i;
    answered_408 += absl::StartsWith(outcomes[i].answer, "HTTP/1.1 408") ? 1 : 0;
    close(fds[i]);
  }
  EXPECT_EQ(answered_408, 200);
  EXPECT_THAT(MetricsText(),
              HasSubstr("gpuadvisor_http_connections_closed_total{reason=\"header_timeout\"} 200"));
}

// Headers on time, then a body a byte every 100 ms: 408 at the 1 s body
// deadline.
TEST_F(HostileTest, SlowlorisBodyGets408AtTheTotalDeadline) {
  StartHttp();
  std::vector<int> fds;
  for (int i = 0; i < 50; ++i) {
    fds.push_back(Connect(http_->port()));
    ASSERT_TRUE(SendAll(fds.back(),
                        "POST /v1/recommend HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"));
  }
  const Clock::time_point start = Clock::now();
  std::thread dribble([&] {
    while (Seconds(Clock::now() - start) < 3) {
      for (int fd : fds) (void)send(fd, " ", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  ExpectNormalCallsAnswer();
  for (int fd : fds) {
    const Outcome outcome = ReadUntilClosed(fd, start, 4);
    EXPECT_THAT(outcome.answer, HasSubstr("HTTP/1.1 408"));
    EXPECT_THAT(outcome.answer, HasSubstr("body: not received within 1s"));
    EXPECT_GE(outcome.closed_after, 0.9);
    EXPECT_LT(outcome.closed_after, 2.5);
    close(fd);
  }
  dribble.join();
}

// A thousand connections that send nothing: normal calls keep answering,
// each idle one is closed (no answer: it asked nothing) at the header
// deadline, and memory stays bounded.
TEST_F(HostileTest, AThousandIdleConnectionsAreClosedAndStarveNobody) {
  StartHttp();
  const int64_t rss_before = RssBytes();
  std::vector<int> fds;
  for (int i = 0; i < 1000; ++i) {
    fds.push_back(Connect(http_->port()));
    ASSERT_GE(fds.back(), 0) << i;
  }
  const Clock::time_point start = Clock::now();
  ExpectNormalCallsAnswer();
  const int64_t rss_during = RssBytes();
  int closed = 0;
  double last_close = 0;
  for (int fd : fds) {
    const Outcome outcome = ReadUntilClosed(fd, start, 4);
    EXPECT_EQ(outcome.answer, "");
    if (outcome.closed_after >= 0) {
      ++closed;
      last_close = std::max(last_close, outcome.closed_after);
    }
    close(fd);
  }
  EXPECT_EQ(closed, 1000);
  EXPECT_LT(last_close, 2.5);
  // A connection waiting for its request holds a socket, a parser and a
  // buffer: far under 64 kB each.
  EXPECT_LT(rss_during - rss_before, 64 << 20);
  std::printf("1000 idle connections: RSS +%.1f MB, all closed by %.2f s\n",
              static_cast<double>(rss_during - rss_before) / (1 << 20), last_close);
}

// A chunked body that never ends is cut at --http_max_body_bytes with 413,
// as a plain body over the limit is.
TEST_F(HostileTest, EndlessChunkedBodyGets413) {
  StartHttp();
  const int fd = Connect(http_->port());
  ASSERT_TRUE(
      SendAll(fd, "POST /v1/recommend HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"));
  const Clock::time_point start = Clock::now();
  std::atomic<bool> stop{false};
  size_t sent = 0;
  std::thread flood([&] {
    const std::string chunk = "1000\r\n" + std::string(0x1000, ' ') + "\r\n";
    while (!stop && Seconds(Clock::now() - start) < 5) {
      if (send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) <= 0) break;
      sent += chunk.size();
    }
  });
  const Outcome outcome = ReadUntilClosed(fd, start, 5);
  stop = true;
  flood.join();
  close(fd);
  EXPECT_THAT(outcome.answer, HasSubstr("HTTP/1.1 413"));
  EXPECT_THAT(outcome.answer, HasSubstr("RESOURCE_EXHAUSTED"));
  EXPECT_GE(outcome.closed_after, 0);
  EXPECT_LT(outcome.closed_after, 2.5);
  EXPECT_GT(sent, size_t{64} << 10);
  ExpectNormalCallsAnswer();
}

TEST_F(HostileTest, OversizedHeaderSetsGet431) {
  StartHttp();
  struct Case {
    std::string name;
    std::string headers;
  };
  std::string many, huge = "X-Huge: " + std::string(20000, 'h') + "\r\n";
  for (int i = 0; i < 2000; ++i) absl::StrAppend(&many, "X-", i, ": 1\r\n");
  std::string just_over;  // 51 fields under the byte limit
  for (int i = 0; i < 50; ++i) absl::StrAppend(&just_over, "X-", i, ": 1\r\n");
  for (const Case& c : std::vector<Case>{{"2000 fields", many},
                                         {"one 20 kB field", huge},
                                         {"51 fields (Host + 50)", just_over}}) {
    const int fd = Connect(http_->port());
    const Clock::time_point start = Clock::now();
    (void)SendAll(fd, "GET /v1/health HTTP/1.1\r\nHost: x\r\n" + c.headers + "\r\n");
    const Outcome outcome = ReadUntilClosed(fd, start, 3);
    close(fd);
    EXPECT_THAT(outcome.answer, HasSubstr("HTTP/1.1 431")) << c.name;
    EXPECT_GE(outcome.closed_after, 0) << c.name;
    EXPECT_LT(outcome.closed_after, 1.5) << c.name;
  }
  ExpectNormalCallsAnswer();
}

// Past --http_max_connections a new connection is refused at once (503 and
// closed), not queued behind the open ones; once they go, calls get in again.
TEST_F(HostileTest, ConnectionsPastTheCapAreRefusedAtOnce) {
  options_.limits.max_connections = 50;
  options_.limits.header_timeout = absl::Seconds(2);
  StartHttp();
  std::vector<int> fds;
  for (int i = 0; i < 50; ++i) fds.push_back(Connect(http_->port()));
  WaitForOpenConnections(50);
  const int extra = Connect(http_->port());
  const Clock::time_point start = Clock::now();
  const Outcome refused = ReadUntilClosed(extra, start, 2);
  close(extra);
  EXPECT_THAT(refused.answer, HasSubstr("HTTP/1.1 503"));
  EXPECT_GE(refused.closed_after, 0);
  EXPECT_LT(refused.closed_after, 0.5);
  EXPECT_THAT(MetricsText(), HasSubstr("gpuadvisor_http_connections_refused_total 1"));
  for (int fd : fds) close(fd);
  WaitForOpenConnections(0);
  EXPECT_GE(NormalHttpCall(), 0);
}

// The transport's own answers carry the request id and the CORS headers of
// every other answer, from what was read of the request: whole headers
// (408 for a body, 413, 431 by count), the complete lines before a deadline
// or a size limit cut them (408 for headers, 431 by bytes), and the head an
// over-cap connection sent (503).
TEST_F(HostileTest, TransportAnswersCarryTheRequestIdAndCors) {
  options_.cors_origins = {"https://ui.example"};
  options_.limits.max_connections = 3;
  StartHttp();
  const std::string head =
      "POST /v1/recommend HTTP/1.1\r\nHost: x\r\nOrigin: https://ui.example\r\n"
      "X-Request-Id: hostile-1\r\n";
  std::string fields;
  for (int i = 0; i < 60; ++i) absl::StrAppend(&fields, "X-", i, ": 1\r\n");
  struct Case {
    std::string name;
    std::string sent;
    std::string status;
  };
  const std::vector<Case> cases = {
      {"headers never end", head, "HTTP/1.1 408"},
      {"body never comes", head + "Content-Length: 10\r\n\r\n", "HTTP/1.1 408"},
      {"body over the limit", head + "Content-Length: 100000\r\n\r\n", "HTTP/1.1 413"},
      {"too many fields", head + fields + "\r\n", "HTTP/1.1 431"},
      {"headers too large", head + "X-Huge: " + std::string(20000, 'h') + "\r\n\r\n",
       "HTTP/1.1 431"},
  };
  for (const Case& c : cases) {
    const int fd = Connect(http_->port());
    (void)SendAll(fd, c.sent);
    const Outcome outcome = ReadUntilClosed(fd, Clock::now(), 3);
    close(fd);
    EXPECT_THAT(outcome.answer, HasSubstr(c.status)) << c.name;
    EXPECT_THAT(outcome.answer, HasSubstr("X-Request-Id: hostile-1")) << c.name;
    EXPECT_THAT(outcome.answer, HasSubstr("Access-Control-Allow-Origin: https://ui.example"))
        << c.name;
  }
  // Over the cap: 503 with Retry-After, the id and CORS, within the moment
  // the server waits for the request's head. (First let the connections
  // above finish draining: each holds its slot up to 1 s after its answer.)
  WaitForOpenConnections(0);
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) held.push_back(Connect(http_->port()));
  WaitForOpenConnections(3);
  const int extra = Connect(http_->port());
  const Clock::time_point start = Clock::now();
  (void)SendAll(extra, head + "Content-Length: 2\r\n\r\n{}");
  const Outcome refused = ReadUntilClosed(extra, start, 2);
  close(extra);
  for (int fd : held) close(fd);
  EXPECT_THAT(refused.answer, HasSubstr("HTTP/1.1 503"));
  EXPECT_THAT(refused.answer, HasSubstr("Retry-After: 1"));
  EXPECT_THAT(refused.answer, HasSubstr("X-Request-Id: hostile-1"));
  EXPECT_THAT(refused.answer, HasSubstr("Access-Control-Allow-Origin: https://ui.example"));
  EXPECT_GE(refused.closed_after, 0);
  EXPECT_LT(refused.closed_after, 0.5);
  // A connection that sends nothing is still refused at once, with an id.
  WaitForOpenConnections(0);
  for (int i = 0; i < 3; ++i) held[static_cast<size_t>(i)] = Connect(http_->port());
  WaitForOpenConnections(3);
  const int silent = Connect(http_->port());
  const Outcome quiet = ReadUntilClosed(silent, Clock::now(), 2);
  close(silent);
  for (int fd : held) close(fd);
  EXPECT_THAT(quiet.answer, HasSubstr("HTTP/1.1 503"));
  EXPECT_THAT(quiet.answer, HasSubstr("X-Request-Id: "));
  EXPECT_LT(quiet.closed_after, 0.5);
}

// A client that asks and never reads: once the socket buffers are full the
// answer cannot be written, and the connection is closed at the write
// deadline instead of holding the server's buffers for ever.
TEST_F(HostileTest, AClientThatNeverReadsIsClosedAtTheWriteDeadline) {
  options_.limits.write_timeout = absl::Seconds(1);
  StartHttp();
  const int fd = Connect(http_->port());
  const int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  std::string pipelined;
  for (int i = 0; i < 400; ++i) pipelined += "GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n";
  const Clock::time_point start = Clock::now();
  (void)send(fd, pipelined.data(), pipelined.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  // Never read; wait for the server's close (RST or FIN) by polling the metric.
  double closed_after = -1;
  while (Seconds(Clock::now() - start) < 10) {
    if (absl::StrContains(MetricsText(),
                          "gpuadvisor_http_connections_closed_total{reason=\"write_timeout\"} 1")) {
      closed_after = Seconds(Clock::now() - start);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  close(fd);
  EXPECT_GE(closed_after, 0.9) << "the write deadline never closed the connection";
  EXPECT_LT(closed_after, 5.0);
  ExpectNormalCallsAnswer();
  std::printf("a client that never reads: closed at the write deadline after %.2f s\n",
              closed_after);
}

// A kept-alive connection is closed after the idle timeout, and after
// --http_max_requests_per_connection answers.
TEST_F(HostileTest, KeepAliveIsBoundedInTimeAndRequests) {
  options_.limits.max_requests_per_connection = 3;
  StartHttp();
  const int fd = Connect(http_->port());
  const std::string get = "GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_TRUE(SendAll(fd, get + get + get + get));
  const Outcome outcome = ReadUntilClosed(fd, Clock::now(), 3);
  close(fd);
  size_t answers = 0;
  for (size_t at = outcome.answer.find("HTTP/1.1 200"); at != std::string::npos;
       at = outcome.answer.find("HTTP/1.1 200", at + 1)) {
    ++answers;
  }
  EXPECT_EQ(answers, 3u);  // the fourth request is never read
  EXPECT_THAT(outcome.answer, HasSubstr("Connection: close"));

  const int idle = Connect(http_->port());
  ASSERT_TRUE(SendAll(idle, get));
  const Clock::time_point start = Clock::now();
  const Outcome idled = ReadUntilClosed(idle, start, 3);
  close(idle);
  EXPECT_THAT(idled.answer, HasSubstr("HTTP/1.1 200"));
  EXPECT_GE(idled.closed_after, 0.9);
  EXPECT_LT(idled.closed_after, 2);
}

// HTTPS with client certificates required: a plaintext client and a client
// whose certificate another CA signed are closed within the header deadline
// with nothing served, while HTTPS calls with the right certificate and gRPC
// calls keep answering.
class HostileTlsTest : public HostileTest {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(absl::StrCat(::testing::TempDir(), "/http_tls_", getpid()));
    const std::string script = absl::StrCat(
        "set -e; bash ", GPUADVISOR_SOURCE_DIR, "/tests/testing/make_certs.sh ", *dir_, "; cd ",
        *dir_, "; openssl req -newkey rsa:2048 -nodes -subj /CN=stray -keyout stray.key",
        " -out stray.csr 2>/dev/null; openssl x509 -req -in stray.csr -CA other-ca.pem",
        " -CAkey other-ca.key -CAcreateserial -days 2 -out stray.pem 2>/dev/null");
    ASSERT_EQ(std::system(script.c_str()), 0);
  }
  static std::string File(const std::string& name) { return *dir_ + "/" + name; }
  void SetUp() override {
    HostileTest::SetUp();
    options_.tls = {File("server.pem"), File("server.key"), File("ca.pem")};
    options_.client_auth = ClientAuth::kRequire;
  }
  // GET /v1/openapi.json over HTTPS with `cert`/`key` ("" = none): status or -1.
  int HttpsGet(const std::string& cert, const std::string& key) {
    httplib::SSLClient client("127.0.0.1", http_->port(), cert, key);
    client.set_ca_cert_path(File("ca.pem").c_str());
    client.enable_server_certificate_verification(true);
    client.set_connection_timeout(3);
    client.set_read_timeout(3);
    auto res = client.Get("/v1/openapi.json");
    return res ? res->status : -1;
  }
  static std::string* dir_;
};
std::string* HostileTlsTest::dir_ = nullptr;

TEST_F(HostileTlsTest, PlaintextAndWrongCaClientsAreClosedAndOthersServed) {
  StartHttp();
  EXPECT_EQ(HttpsGet(File("client.pem"), File("client.key")), 200);
  {
    // Under mTLS the certificate's identity is the client's rate-limit key.
    httplib::SSLClient client("127.0.0.1", http_->port(), File("client.pem"), File("client.key"));
    client.set_ca_cert_path(File("ca.pem").c_str());
    client.enable_server_certificate_verification(true);
    auto res = client.Post("/v1/recommend", "{}", "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    std::lock_guard<std::mutex> lock(gateway_.mu);
    EXPECT_EQ(gateway_.client_key, "cert:CN=admin-ops,SAN=admin-ops");
  }
  EXPECT_EQ(HttpsGet("", ""), -1);                                // no certificate
  EXPECT_EQ(HttpsGet(File("stray.pem"), File("stray.key")), -1);  // another CA's

  // 50 plaintext clients and 50 that send nothing after connecting.
  std::vector<int> plaintext, silent;
  for (int i = 0; i < 50; ++i) {
    plaintext.push_back(Connect(http_->port()));
    ASSERT_TRUE(SendAll(plaintext.back(), "GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n"));
    silent.push_back(Connect(http_->port()));
  }
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(HttpsGet(File("client.pem"), File("client.key")), 200);
    const double grpc = NormalGrpcCall();
    EXPECT_GE(grpc, 0);
    EXPECT_LT(grpc, 0.5);
  }
  for (int fd : plaintext) {
    const Outcome outcome = ReadUntilClosed(fd, start, 3);
    EXPECT_THAT(outcome.answer, ::testing::Not(HasSubstr("openapi")));
    EXPECT_GE(outcome.closed_after, 0);
    EXPECT_LT(outcome.closed_after, 0.5);  // the handshake fails at the first bytes
    close(fd);
  }
  for (int fd : silent) {
    const Outcome outcome = ReadUntilClosed(fd, start, 3);
    EXPECT_EQ(outcome.answer, "");
    EXPECT_GE(outcome.closed_after, 0.5);
    EXPECT_LT(outcome.closed_after, 2.5);  // the 1 s header deadline covers the handshake
    close(fd);
  }
  EXPECT_THAT(MetricsText(),
              HasSubstr("gpuadvisor_http_connections_closed_total{reason=\"tls_handshake\"}"));
}

// The gateway's HTTPS port verifies client certificates when presented. A
// browser resumes the first connection's TLS session on the next ones (the
// page's script and style load in parallel); each resumption must succeed.
TEST_F(HostileTlsTest, ResumedSessionsAreServed) {
  options_.client_auth = ClientAuth::kOptional;
  StartHttp();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(ctx, nullptr);
  ASSERT_EQ(SSL_CTX_load_verify_locations(ctx, File("ca.pem").c_str(), nullptr), 1);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL_SESSION* session = nullptr;
  int resumed = 0;
  for (int i = 0; i < 4; ++i) {
    const int fd = Connect(http_->port());
    ASSERT_GE(fd, 0);
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (session != nullptr) SSL_set_session(ssl, session);
    ASSERT_EQ(SSL_connect(ssl), 1) << "connection " << i << ": the handshake failed";
    const std::string request = "GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_EQ(SSL_write(ssl, request.data(), static_cast<int>(request.size())),
              static_cast<int>(request.size()));
    char buffer[4096];
    const int n = SSL_read(ssl, buffer, sizeof(buffer));  // TLS 1.3: the ticket came first
    ASSERT_GT(n, 0) << "connection " << i;
    EXPECT_THAT(std::string(buffer, n), HasSubstr("HTTP/1.1 200")) << "connection " << i;
    if (i > 0 && SSL_session_reused(ssl) == 1) ++resumed;
    if (session != nullptr) SSL_SESSION_free(session);
    session = SSL_get1_session(ssl);
    SSL_shutdown(ssl);
    SSL_free(ssl);
    close(fd);
  }
  if (session != nullptr) SSL_SESSION_free(session);
  SSL_CTX_free(ctx);
  EXPECT_EQ(resumed, 3) << "the later connections resume the first one's session";
}

// A reply owed past Stop()'s grace (an asynchronous route still waiting on its
// backend at shutdown) is waited for: Stop() returns only after it came, so
// the late reply never writes into a freed transport. Before, Stop() returned
// after the grace and a late reply used the destroyed event loop.
TEST(TransportShutdown, StopWaitsForAReplyOwedPastTheGrace) {
  std::mutex mu;
  std::condition_variable taken;
  HttpTransport::Reply owed;
  absl::StatusOr<std::unique_ptr<HttpTransport>> transport = HttpTransport::Start(
      HttpTransport::Options(), [](const HttpRequest&) { return HttpResponse(); },
      [&](std::shared_ptr<const HttpRequest>, const HttpTransport::Reply& reply) {
        std::lock_guard<std::mutex> lock(mu);
        owed = reply;
        taken.notify_all();
        return true;
      });
  ASSERT_TRUE(transport.ok()) << transport.status();
  std::thread client([port = (*transport)->port()] {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10);
    c.Get("/slow");  // answered late or closed by Stop(): either is fine here
  });
  bool was_taken = false;
  {
    std::unique_lock<std::mutex> lock(mu);
    was_taken = taken.wait_for(lock, std::chrono::seconds(5), [&] { return owed != nullptr; });
  }
  EXPECT_TRUE(was_taken) << "the request never reached the asynchronous handler";
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    (*transport)->Stop(absl::Milliseconds(20));
    stopped = true;
  });
  // Well past the grace: Stop() must still be waiting for the owed reply.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(stopped.load()) << "Stop() returned while a reply was still owed";
  HttpTransport::Reply late;
  {
    std::lock_guard<std::mutex> lock(mu);
    late = std::move(owed);
  }
  if (late) late(HttpResponse());
  stopper.join();
  EXPECT_TRUE(stopped.load());
  transport->reset();
  client.join();
}

}  // namespace
}  // namespace gpuadvisor::gateway::http
