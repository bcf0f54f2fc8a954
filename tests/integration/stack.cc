#include "tests/integration/stack.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace gpuadvisor::testing {

std::string BinaryPath(const std::string& service, const std::string& binary) {
  // GPUADVISOR_TEST_BINARY_DIR runs a test against other builds' binaries
  // (e.g. those from before a fix, to see its test fail there).
  const char* other = std::getenv("GPUADVISOR_TEST_BINARY_DIR");
  return absl::StrCat(other != nullptr ? other : GPUADVISOR_BINARY_DIR, "/services/", service, "/",
                      binary);
}

std::string DataDir() { return absl::StrCat(GPUADVISOR_SOURCE_DIR, "/data"); }

double MetricValue(const ServiceProcess& process, const std::string& name) {
  absl::StatusOr<std::string> text = HttpGet(process.metrics_port(), "/metrics");
  if (!text.ok()) return -1;
  std::smatch match;
  if (!std::regex_search(*text, match, std::regex("\n" + name + " (-?[0-9.e+]+)"))) return -1;
  double value = -1;
  return absl::SimpleAtod(match[1].str(), &value) ? value : -1;
}

std::unique_ptr<gateway::v1::GatewayService::Stub> Stack::GatewayStub() const {
  return gateway::v1::GatewayService::NewStub(
      grpc::CreateChannel(gateway->grpc_address(), grpc::InsecureChannelCredentials()));
}

absl::StatusOr<std::unique_ptr<ServiceProcess>> Stack::StartGateway() const {
  std::vector<std::string> args = {"--port=0",
                                   "--metrics_port=0",
                                   "--http_port=0",
                                   "--catalog_address=" + catalog->grpc_address(),
                                   "--sizing_address=" + sizing->grpc_address(),
                                   "--pricing_address=" + pricing->grpc_address(),
                                   "--catalog_cache_file=" + cache_file,
                                   "--backend_timeout_ms=3000",
                                   "--data_dir=" + DataDir()};
  args.insert(args.end(), gateway_args.begin(), gateway_args.end());
  absl::StatusOr<std::unique_ptr<ServiceProcess>> gw =
      ServiceProcess::Start(BinaryPath("gateway", "gateway_server"), args);
  if (!gw.ok()) return gw.status();
  absl::Status serving =
      WaitForServing(grpc::CreateChannel((*gw)->grpc_address(), grpc::InsecureChannelCredentials()),
                     "", absl::Seconds(20));
  if (!serving.ok()) return serving;
  return gw;
}

grpc::Status Stack::UpdatePrice(const pricing::v1::OfferPrice& price,
                                pricing::v1::UpdatePricesResponse* updated) const {
  pricing::v1::UpdatePricesRequest update;
  *update.add_prices() = price;
  update.set_source("integration test");
  grpc::ClientContext admin;
  admin.AddMetadata("authorization", "Bearer " + admin_token);
  return pricing::v1::PricingService::NewStub(
             grpc::CreateChannel(pricing->grpc_address(), grpc::InsecureChannelCredentials()))
      ->UpdatePrices(&admin, update, updated);
}

absl::StatusOr<Stack> Stack::Start(const std::string& admin_token,
                                   const std::vector<std::string>& catalog_args,
                                   const std::vector<std::string>& gateway_args) {
  setenv("GPUADVISOR_ADMIN_TOKEN", admin_token.c_str(), 1);
  Stack stack;
  stack.gateway_args = gateway_args;
  stack.admin_token = admin_token;
  const std::vector<std::string> common = {"--port=0", "--metrics_port=0",
                                           "--data_dir=" + DataDir()};
  struct Spec {
    const char* service;
    const char* binary;
    std::unique_ptr<ServiceProcess>* slot;
  };
  for (const Spec& spec : {Spec{"catalog", "catalog_server", &stack.catalog},
                           Spec{"sizing", "sizing_server", &stack.sizing},
                           Spec{"pricing", "pricing_server", &stack.pricing}}) {
    std::vector<std::string> args = common;
    if (spec.slot == &stack.catalog)
      args.insert(args.end(), catalog_args.begin(), catalog_args.end());
    // Pricing follows the catalog; sizing takes its GPU specs from it.
    if (spec.slot == &stack.pricing || spec.slot == &stack.sizing)
      args.push_back("--catalog_address=" + stack.catalog->grpc_address());
    absl::StatusOr<std::unique_ptr<ServiceProcess>> process =
        ServiceProcess::Start(BinaryPath(spec.service, spec.binary), args);
    if (!process.ok()) return process.status();
    absl::Status serving = WaitForServing(
        grpc::CreateChannel((*process)->grpc_address(), grpc::InsecureChannelCredentials()), "",
        absl::Seconds(20));
    if (!serving.ok())
      return absl::Status(serving.code(), absl::StrCat(spec.service, ": ", serving.message()));
    *spec.slot = *std::move(process);
  }
  stack.dir = ScopedTempDir("gpuadvisor-e2e");
  if (stack.dir.path().empty()) return absl::InternalError("mkdtemp failed");
  stack.cache_file = stack.dir.path() + "/catalog.cache";
  absl::StatusOr<std::unique_ptr<ServiceProcess>> gw = stack.StartGateway();
  if (!gw.ok()) return gw.status();
  stack.gateway = *std::move(gw);
  return stack;
}

Stack* StackTest::stack_ = nullptr;

void StackTest::SetUpTestSuite() {
  absl::StatusOr<Stack> started = Stack::Start();
  ASSERT_TRUE(started.ok()) << started.status();
  stack_ = new Stack(*std::move(started));
}

void StackTest::TearDownTestSuite() {
  delete stack_;
  stack_ = nullptr;
}

grpc::Status StackTest::Recommend(const gateway::v1::RecommendRequest& request,
                                  gateway::v1::RecommendResponse* response) {
  auto stub = stack_->GatewayStub();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return stub->Recommend(&context, request, response);
}

gateway::v1::RecommendResponse StackTest::MustRecommend(
    const gateway::v1::RecommendRequest& request) {
  gateway::v1::RecommendResponse response;
  const grpc::Status status = Recommend(request, &response);
  EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
  return response;
}

}  // namespace gpuadvisor::testing
