// Hardening of the real binaries, each started alone or in pairs: receive
// limits, per-client rate limits, admin bodies refused before they are read,
// watch memory that does not grow with watchers, slow watchers dropped, and a
// hung (SIGSTOP'd) catalog shown as a rising replica age.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gpuadvisor/catalog/v1/catalog.grpc.pb.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "grpc/grpc.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/byte_buffer.h"
#include "gtest/gtest.h"
#include "tests/integration/stack.h"
#include "tests/testing/process.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::testing {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<grpc::ClientContext> Deadline(int seconds = 20) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return context;
}

std::shared_ptr<grpc::Channel> Channel(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);
  args.SetMaxReceiveMessageSize(-1);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

// A unary call with raw bytes as the request body.
grpc::Status CallRaw(const std::string& address, const std::string& method,
                     const std::string& payload, const std::string& token = "") {
  grpc::GenericStub stub(Channel(address));
  std::unique_ptr<grpc::ClientContext> context = Deadline();
  if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
  grpc::Slice slice(payload);
  grpc::ByteBuffer request(&slice, 1), response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(context.get(), method, grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

// Resident memory of a process, in bytes.
int64_t RssBytes(pid_t pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream in(line.substr(6));
      int64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
  }
  return -1;
}

// The value of an unlabelled series in a /metrics page; nullopt if absent.
std::optional<double> MetricValue(int metrics_port, const std::string& name) {
  absl::StatusOr<std::string> page = HttpGet(metrics_port, "/metrics");
  if (!page.ok()) return std::nullopt;
  std::istringstream lines(*page);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(name + " ", 0) == 0) {
      double value = 0;
      if (absl::SimpleAtod(line.substr(name.size() + 1), &value)) return value;
    }
  }
  return std::nullopt;
}

std::string TempPath(const std::string& leaf) {
  return absl::StrCat(::testing::TempDir(), "/hardening_",
                      ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".",
                      getpid(), ".", leaf);
}

absl::StatusOr<std::unique_ptr<ServiceProcess>> StartServing(const std::string& service,
                                                             const std::string& binary,
                                                             std::vector<std::string> args) {
  args.insert(args.begin(), {"--port=0", "--metrics_port=0"});
  absl::StatusOr<std::unique_ptr<ServiceProcess>> process =
      ServiceProcess::Start(BinaryPath(service, binary), args);
  if (!process.ok()) return process.status();
  absl::Status serving = WaitForServing(Channel((*process)->grpc_address()), "", absl::Seconds(30));
  if (!serving.ok()) return serving;
  return process;
}

// A gateway with no backends reachable: enough for limits, which act first.
absl::StatusOr<std::unique_ptr<ServiceProcess>> LoneGateway(std::vector<std::string> extra) {
  std::vector<std::string> args = {"--port=0",
                                   "--metrics_port=0",
                                   "--catalog_address=127.0.0.1:1",
                                   "--sizing_address=127.0.0.1:1",
                                   "--pricing_address=127.0.0.1:1",
                                   "--backend_timeout_ms=200",
                                   "--data_dir=" + DataDir(),
                                   "--http_port=-1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return ServiceProcess::Start(BinaryPath("gateway", "gateway_server"), args);
}

TEST(Hardening, PublicGatewayRefusesRequestsLargerThanItsContract) {
  absl::StatusOr<std::unique_ptr<ServiceProcess>> gateway = LoneGateway({});
  ASSERT_OK(gateway);
  auto stub = gateway::v1::GatewayService::NewStub(Channel((*gateway)->grpc_address()));
  gateway::v1::RecommendRequest request;
  request.mutable_constraints()->add_providers(std::string(2 << 20, 'a'));  // 2 MB
  gateway::v1::RecommendResponse response;
  const grpc::Status status = stub->Recommend(Deadline().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
}

TEST(Hardening, PublicGatewayRateLimitsEachClient) {
  absl::StatusOr<std::unique_ptr<ServiceProcess>> gateway =
      LoneGateway({"--rate_limit_per_second=0.01", "--rate_limit_burst=3"});
  ASSERT_OK(gateway);
  auto stub = gateway::v1::GatewayService::NewStub(Channel((*gateway)->grpc_address()));
  std::vector<grpc::StatusCode> codes;
  for (int i = 0; i < 5; ++i) {
    gateway::v1::EstimateResponse response;
    codes.push_back(
        stub->Estimate(Deadline().get(), gateway::v1::EstimateRequest(), &response).error_code());
  }
  ASSERT_EQ(codes.size(), 5u);
  for (int i = 0; i < 3; ++i) EXPECT_NE(codes[i], grpc::StatusCode::RESOURCE_EXHAUSTED) << i;
  EXPECT_EQ(codes[3], grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(codes[4], grpc::StatusCode::RESOURCE_EXHAUSTED);
}

// An unauthenticated UpdatePrices is refused before its body is read: a body
// that is not even a valid message gets UNAUTHENTICATED, not a parse error,
// and one near the receive limit is refused just the same.
TEST(Hardening, PricingRefusesAdminBodiesBeforeAuthentication) {
  setenv("GPUADVISOR_ADMIN_TOKEN", "hardening-token", 1);
  absl::StatusOr<std::unique_ptr<ServiceProcess>> catalog =
      StartServing("catalog", "catalog_server", {"--data_dir=" + DataDir()});
  ASSERT_OK(catalog);
  absl::StatusOr<std::unique_ptr<ServiceProcess>> pricing =
      StartServing("pricing", "pricing_server",
                   {"--data_dir=" + DataDir(), "--catalog_address=" + (*catalog)->grpc_address()});
  ASSERT_OK(pricing);
  const std::string method = "/gpuadvisor.pricing.v1.PricingService/UpdatePrices";
  const std::string garbage(7 << 20, '\xff');
  EXPECT_EQ(CallRaw((*pricing)->grpc_address(), method, garbage).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(CallRaw((*pricing)->grpc_address(), method, garbage, "wrong").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Over the contract's size, even with the token: refused by size.
  EXPECT_EQ(
      CallRaw((*pricing)->grpc_address(), method, std::string(20 << 20, 'x'), "hardening-token")
          .error_code(),
      grpc::StatusCode::RESOURCE_EXHAUSTED);
  // With the token the body is read, and garbage is the caller's error.
  const grpc::Status read = CallRaw((*pricing)->grpc_address(), method, garbage, "hardening-token");
  EXPECT_EQ(read.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << read.error_message();
}

// A large catalog and many watchers that never read: before, each watcher
// held its own copy of the snapshot (and a thread), so memory grew by about
// two snapshots per watcher; now they share one encoding, and a watcher that
// does not drain is dropped with RESOURCE_EXHAUSTED.
TEST(Hardening, CatalogWatchMemoryDoesNotGrowWithWatchers) {
  const std::string offers = TempPath("offers.textproto");
  ASSERT_EQ(std::system(absl::StrCat("/usr/bin/python3 ", GPUADVISOR_SOURCE_DIR,
                                     "/bench/make_catalog.py 40000 ", DataDir(),
                                     "/catalog/offers.textproto > ", offers)
                            .c_str()),
            0);
  // GPUADVISOR_HARDENING_LEGACY=1 runs the measurement against a catalog
  // binary from before this change (which has neither flag), for the figures
  // in docs/reliability.md; the assertions then fail, as they should.
  const bool legacy = std::getenv("GPUADVISOR_HARDENING_LEGACY") != nullptr;
  std::vector<std::string> args = {"--data_dir=" + DataDir(), "--offers=" + offers};
  if (!legacy) args.insert(args.end(), {"--watch_slow_seconds=4", "--max_watchers=200"});
  absl::StatusOr<std::unique_ptr<ServiceProcess>> catalog =
      StartServing("catalog", "catalog_server", args);
  ASSERT_OK(catalog);
  const std::string address = (*catalog)->grpc_address();

  // One watcher that reads, to learn the snapshot's size and warm the encoding.
  auto reading_stub = catalog::v1::CatalogService::NewStub(Channel(address));
  grpc::ClientContext reading_context;
  auto reading = reading_stub->WatchCatalog(&reading_context, catalog::v1::WatchCatalogRequest());
  catalog::v1::WatchCatalogResponse first;
  ASSERT_TRUE(reading->Read(&first));
  const int64_t snapshot_bytes = static_cast<int64_t>(first.snapshot().ByteSizeLong());
  ASSERT_GT(snapshot_bytes, 4 << 20) << "the catalog must be large for this test to mean anything";
  absl::SleepFor(absl::Milliseconds(500));
  const int64_t before = RssBytes((*catalog)->pid());
  ASSERT_GT(before, 0);

  // 60 watchers that never read, over 6 connections (100 streams each at most),
  // with a small flow-control window so their writes stall.
  constexpr int kWatchers = 60;
  std::vector<std::unique_ptr<catalog::v1::CatalogService::Stub>> stubs;
  for (int c = 0; c < 6; ++c) {
    grpc::ChannelArguments channel_args;
    channel_args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    channel_args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 64 << 10);
    channel_args.SetMaxReceiveMessageSize(-1);
    channel_args.SetInt("gpuadvisor.test.connection", c);  // a connection of its own
    stubs.push_back(catalog::v1::CatalogService::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), channel_args)));
  }
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<catalog::v1::WatchCatalogResponse>>> idle;
  for (int i = 0; i < kWatchers; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    idle.push_back(stubs[i % stubs.size()]->WatchCatalog(contexts.back().get(),
                                                         catalog::v1::WatchCatalogRequest()));
    idle.back()->WaitForInitialMetadata();
  }
  ASSERT_EQ(idle.size(), static_cast<size_t>(kWatchers));
  absl::SleepFor(absl::Seconds(1));  // let every first write start
  const int64_t during = RssBytes((*catalog)->pid());
  const int64_t growth = during - before;
  // Before the fix: ~2 snapshots per watcher (60 x 2 x >4 MB > 480 MB).
  EXPECT_LT(growth, 10 * snapshot_bytes)
      << "RSS " << before << " -> " << during << " with " << kWatchers << " idle watchers of a "
      << snapshot_bytes << "-byte snapshot";
  std::printf("catalog RSS %.1f MB -> %.1f MB with %d idle watchers of a %.1f MB snapshot\n",
              before / 1e6, during / 1e6, kWatchers, snapshot_bytes / 1e6);
  if (legacy) {
    for (auto& context : contexts) context->TryCancel();
    reading_context.TryCancel();
    return;
  }

  // They never drain: after --watch_slow_seconds they are dropped.
  std::optional<double> dropped;
  for (int i = 0; i < 300; ++i) {
    dropped = MetricValue((*catalog)->metrics_port(), "gpuadvisor_catalog_watchers_dropped_total");
    if (dropped.has_value() && *dropped >= kWatchers) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(dropped.has_value());
  EXPECT_GE(*dropped, kWatchers);
  // A dropped watcher that finally reads gets the snapshot it was sent, then
  // RESOURCE_EXHAUSTED (or CANCELLED once the server gave up on it).
  catalog::v1::WatchCatalogResponse late;
  while (idle[0]->Read(&late)) {
  }
  const grpc::Status ended = idle[0]->Finish();
  EXPECT_TRUE(ended.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ||
              ended.error_code() == grpc::StatusCode::CANCELLED)
      << ended.error_code() << " " << ended.error_message();
  for (auto& context : contexts) context->TryCancel();
  reading_context.TryCancel();
}

// A hung catalog (SIGSTOP) must show as a rising replica age on the gateway
// within seconds; before, the watch stream had no heartbeat or deadline and
// the age stayed 0 forever.
TEST(Hardening, HungCatalogShowsARisingReplicaAge) {
  absl::StatusOr<std::unique_ptr<ServiceProcess>> catalog =
      StartServing("catalog", "catalog_server", {"--data_dir=" + DataDir()});
  ASSERT_OK(catalog);
  absl::StatusOr<std::unique_ptr<ServiceProcess>> gateway = ServiceProcess::Start(
      BinaryPath("gateway", "gateway_server"),
      {"--port=0", "--metrics_port=0", "--catalog_address=" + (*catalog)->grpc_address(),
       "--sizing_address=127.0.0.1:1", "--pricing_address=127.0.0.1:1", "--data_dir=" + DataDir(),
       "--http_port=-1"});
  ASSERT_OK(gateway);
  ASSERT_OK(WaitForServing(Channel((*gateway)->grpc_address()), "", absl::Seconds(30)));
  const std::string age_metric = "gpuadvisor_gateway_catalog_age_seconds";
  std::optional<double> age = MetricValue((*gateway)->metrics_port(), age_metric);
  ASSERT_TRUE(age.has_value());
  EXPECT_EQ(*age, 0);

  ASSERT_EQ(kill((*catalog)->pid(), SIGSTOP), 0);
  const absl::Time stopped = absl::Now();
  bool rising = false;
  for (int i = 0; i < 200 && !rising; ++i) {  // up to 20 s
    absl::SleepFor(absl::Milliseconds(100));
    age = MetricValue((*gateway)->metrics_port(), age_metric);
    rising = age.has_value() && *age >= 3;
  }
  const double detected_after = absl::ToDoubleSeconds(absl::Now() - stopped);
  ASSERT_EQ(kill((*catalog)->pid(), SIGCONT), 0);
  EXPECT_TRUE(rising) << "age stayed " << (age ? *age : -1) << " for " << detected_after << " s";
  std::printf("replica age reached %.1f s %.1f s after SIGSTOP\n", age ? *age : -1, detected_after);

  // Resumed, the gateway reconnects and the age returns to 0.
  bool fresh = false;
  for (int i = 0; i < 300 && !fresh; ++i) {  // up to 30 s (reconnect backoff)
    absl::SleepFor(absl::Milliseconds(100));
    age = MetricValue((*gateway)->metrics_port(), age_metric);
    fresh = age.has_value() && *age == 0;
  }
  EXPECT_TRUE(fresh) << "age " << (age ? *age : -1) << " after SIGCONT";
}

// SIGTERM: NOT_SERVING first, calls still answered during --drain_seconds,
// then the process exits. Before, the server stopped at once.
TEST(Hardening, ShutdownReportsNotServingThenDrains) {
  absl::StatusOr<std::unique_ptr<ServiceProcess>> sizing =
      StartServing("sizing", "sizing_server", {"--data_dir=" + DataDir(), "--drain_seconds=3"});
  ASSERT_OK(sizing);
  auto channel = Channel((*sizing)->grpc_address());
  const pid_t pid = (*sizing)->pid();
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  // Health says NOT_SERVING while the server still answers.
  grpc::GenericStub stub(channel);
  bool not_serving = false;
  for (int i = 0; i < 50 && !not_serving; ++i) {
    not_serving =
        WaitForServing(channel, "", absl::Milliseconds(50)).code() != absl::StatusCode::kOk;
  }
  EXPECT_TRUE(not_serving);
  const grpc::Status during = CallRaw((*sizing)->grpc_address(), "/no.Such/Method", "x");
  EXPECT_EQ(during.error_code(), grpc::StatusCode::UNIMPLEMENTED)
      << "the server stopped without draining";
  const int status =
      (*sizing)->Stop(0, absl::Seconds(20));  // wait for the exit it is already making
  EXPECT_TRUE(WIFEXITED(status)) << status;
}

// mTLS between services: a catalog that requires client certificates, and a
// gateway that follows it with the service certificate. A plaintext or
// certificate-less caller is refused.
TEST(Hardening, ServicesTalkMutualTls) {
  const std::string dir = TempPath("certs");
  ASSERT_EQ(
      std::system(absl::StrCat("bash ", GPUADVISOR_SOURCE_DIR, "/tests/testing/make_certs.sh ", dir)
                      .c_str()),
      0);
  const std::vector<std::string> tls = {"--tls_cert=" + dir + "/server.pem",
                                        "--tls_key=" + dir + "/server.key",
                                        "--tls_ca=" + dir + "/ca.pem"};
  std::vector<std::string> catalog_args = {"--port=0", "--metrics_port=0",
                                           "--data_dir=" + DataDir()};
  catalog_args.insert(catalog_args.end(), tls.begin(), tls.end());
  absl::StatusOr<std::unique_ptr<ServiceProcess>> catalog =
      ServiceProcess::Start(BinaryPath("catalog", "catalog_server"), catalog_args);
  ASSERT_OK(catalog);
  // Plaintext is refused by the TLS port.
  EXPECT_FALSE(WaitForServing(Channel((*catalog)->grpc_address()), "", absl::Seconds(2)).ok());

  std::vector<std::string> gateway_args = {"--port=0",
                                           "--metrics_port=0",
                                           "--catalog_address=" + (*catalog)->grpc_address(),
                                           "--sizing_address=127.0.0.1:1",
                                           "--pricing_address=127.0.0.1:1",
                                           "--data_dir=" + DataDir(),
                                           "--http_port=-1"};
  gateway_args.insert(gateway_args.end(), tls.begin(), tls.end());
  absl::StatusOr<std::unique_ptr<ServiceProcess>> gateway =
      ServiceProcess::Start(BinaryPath("gateway", "gateway_server"), gateway_args);
  ASSERT_OK(gateway);
  // The gateway's public port takes TLS without a client certificate.
  grpc::SslCredentialsOptions ca_only;
  absl::StatusOr<std::string> ca = ReadFile(dir + "/ca.pem");
  ASSERT_OK(ca);
  ca_only.pem_root_certs = *ca;
  auto client = grpc::CreateChannel((*gateway)->grpc_address(), grpc::SslCredentials(ca_only));
  // SERVING means its replica came over mTLS from the catalog.
  EXPECT_OK(WaitForServing(client, "", absl::Seconds(30)));
}

// Accepted price updates survive a restart (before: memory only).
TEST(Hardening, PriceUpdatesSurviveARestart) {
  setenv("GPUADVISOR_ADMIN_TOKEN", "hardening-token", 1);
  const std::string updates = TempPath("price_updates.textproto");
  absl::StatusOr<std::unique_ptr<ServiceProcess>> catalog =
      StartServing("catalog", "catalog_server", {"--data_dir=" + DataDir()});
  ASSERT_OK(catalog);
  const std::vector<std::string> args = {"--data_dir=" + DataDir(),
                                         "--price_updates_file=" + updates,
                                         "--catalog_address=" + (*catalog)->grpc_address()};
  absl::StatusOr<std::unique_ptr<ServiceProcess>> pricing =
      StartServing("pricing", "pricing_server", args);
  ASSERT_OK(pricing);
  auto stub = pricing::v1::PricingService::NewStub(Channel((*pricing)->grpc_address()));
  pricing::v1::GetPriceBookResponse book;
  ASSERT_TRUE(stub->GetPriceBook(Deadline().get(), pricing::v1::GetPriceBookRequest(), &book).ok());
  ASSERT_GT(book.price_book().prices_size(), 0);
  const std::string offer_id = book.price_book().prices(0).offer_id();
  const double price = book.price_book().prices(0).on_demand_usd_per_hour() + 1.25;

  pricing::v1::UpdatePricesRequest update;
  update.add_prices()->set_offer_id(offer_id);
  update.mutable_prices(0)->set_on_demand_usd_per_hour(price);
  std::unique_ptr<grpc::ClientContext> context = Deadline();
  context->AddMetadata("authorization", "Bearer hardening-token");
  pricing::v1::UpdatePricesResponse updated;
  const grpc::Status status = stub->UpdatePrices(context.get(), update, &updated);
  ASSERT_TRUE(status.ok()) << status.error_message();

  (*pricing)->Stop(SIGTERM);
  pricing = StartServing("pricing", "pricing_server", args);
  ASSERT_OK(pricing);
  stub = pricing::v1::PricingService::NewStub(Channel((*pricing)->grpc_address()));
  ASSERT_TRUE(stub->GetPriceBook(Deadline().get(), pricing::v1::GetPriceBookRequest(), &book).ok());
  bool found = false;
  for (const auto& p : book.price_book().prices()) {
    if (p.offer_id() != offer_id) continue;
    found = true;
    EXPECT_DOUBLE_EQ(p.on_demand_usd_per_hour(), price);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace gpuadvisor::testing
