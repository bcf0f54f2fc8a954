#ifndef GPUADVISOR_TESTS_INTEGRATION_STACK_H_
#define GPUADVISOR_TESTS_INTEGRATION_STACK_H_

// The four real service binaries on ephemeral loopback ports, with the
// embedded data, for end-to-end tests. Start() returns once all four report
// SERVING through grpc.health.v1.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "grpcpp/channel.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"
#include "tests/testing/temp_dir.h"

namespace gpuadvisor::testing {

struct Stack {
  // Declared first, so removed after the services have stopped.
  ScopedTempDir dir;  // the gateway's catalog replica cache lives here
  std::unique_ptr<ServiceProcess> catalog, sizing, pricing, gateway;
  std::string cache_file;                 // the gateway's catalog replica cache
  std::vector<std::string> gateway_args;  // added to the gateway's command line
  std::string admin_token;                // catalog's and pricing's

  // Builds a gateway stub with its own channel.
  std::unique_ptr<gateway::v1::GatewayService::Stub> GatewayStub() const;
  // Replaces one offer's prices through pricing's UpdatePrices, as an admin.
  grpc::Status UpdatePrice(const pricing::v1::OfferPrice& price,
                           pricing::v1::UpdatePricesResponse* updated) const;

  // Starts all four; `admin_token` goes to catalog and pricing, and
  // `catalog_args` / `gateway_args` are added to those command lines.
  static absl::StatusOr<Stack> Start(const std::string& admin_token = "test-token",
                                     const std::vector<std::string>& catalog_args = {},
                                     const std::vector<std::string>& gateway_args = {});

  // Starts a gateway against the running backends (after a restart).
  absl::StatusOr<std::unique_ptr<ServiceProcess>> StartGateway() const;
};

// A fixture with one Stack shared by the tests of a suite (ctest runs each
// test in its own process, so in practice one stack per test).
class StackTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  // A Recommend to the stack's gateway with a 60 s deadline.
  static grpc::Status Recommend(const gateway::v1::RecommendRequest& request,
                                gateway::v1::RecommendResponse* response);
  // The same, failing the test (not stopping it) unless the call is OK.
  static gateway::v1::RecommendResponse MustRecommend(const gateway::v1::RecommendRequest& request);
  static Stack* stack_;
};

std::string BinaryPath(const std::string& service, const std::string& binary);
std::string DataDir();

// The value of an unlabelled metric on `process`'s /metrics; -1 if absent.
double MetricValue(const ServiceProcess& process, const std::string& name);

}  // namespace gpuadvisor::testing

#endif  // GPUADVISOR_TESTS_INTEGRATION_STACK_H_
