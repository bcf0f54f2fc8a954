#include "common/metrics/metrics.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuadvisor {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Metrics, RpcScopeCountsStartedHandledAndLatency) {
  Metrics metrics("test");
  {
    RpcScope scope(&metrics, "gpuadvisor.x.v1.XService", "Get");
    scope.Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "no"));
  }
  { RpcScope scope(&metrics, "gpuadvisor.x.v1.XService", "Get"); }  // never finished
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("grpc_server_started_total{grpc_method=\"Get\","
                              "grpc_service=\"gpuadvisor.x.v1.XService\",grpc_type=\"unary\"} 2"));
  EXPECT_THAT(text, HasSubstr("grpc_code=\"NotFound\""));
  EXPECT_THAT(text, HasSubstr("grpc_code=\"Unknown\""));
  EXPECT_THAT(text, HasSubstr("grpc_server_handling_seconds_count{grpc_method=\"Get\""));
}

TEST(Metrics, MethodHandlesRecordTheSameSeriesAsPerCallLookups) {
  Metrics metrics("test");
  MethodMetrics& server = metrics.ServerMethod("gpuadvisor.x.v1.XService", "Get");
  EXPECT_EQ(&server,
            &metrics.ServerMethod("gpuadvisor.x.v1.XService", "Get"));  // one handle per method
  MethodMetrics& client = metrics.ClientMethod("gpuadvisor.y.v1.YService", "Put");
  std::string text = metrics.Serialize();
  // Created at zero: started, latency and OK.
  EXPECT_THAT(text, HasSubstr("grpc_server_started_total{grpc_method=\"Get\","
                              "grpc_service=\"gpuadvisor.x.v1.XService\",grpc_type=\"unary\"} 0"));
  EXPECT_THAT(text, HasSubstr("grpc_client_handled_total{grpc_code=\"OK\",grpc_method=\"Put\","
                              "grpc_service=\"gpuadvisor.y.v1.YService\",grpc_type=\"unary\"} 0"));
  EXPECT_THAT(text, Not(HasSubstr("grpc_code=\"NotFound\"")));
  { RpcScope scope(&server); }  // never finished: UNKNOWN
  {
    RpcScope scope(&server);
    scope.Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "no"));
  }
  RpcScope(&metrics, "gpuadvisor.x.v1.XService", "Get")
      .Finish(grpc::Status::OK);  // the same series
  client.Handled(grpc::StatusCode::UNAVAILABLE, 0.001);
  client.Handled(grpc::StatusCode::UNAVAILABLE, 0.001);
  text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("grpc_server_started_total{grpc_method=\"Get\","
                              "grpc_service=\"gpuadvisor.x.v1.XService\",grpc_type=\"unary\"} 3"));
  for (const char* code : {"OK", "NotFound", "Unknown"}) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat(
                          "grpc_server_handled_total{grpc_code=\"", code,
                          "\",grpc_method=\"Get\",grpc_service=\"gpuadvisor.x.v1.XService\","
                          "grpc_type=\"unary\"} 1")));
  }
  EXPECT_THAT(text, HasSubstr("grpc_server_handling_seconds_count{grpc_method=\"Get\","
                              "grpc_service=\"gpuadvisor.x.v1.XService\",grpc_type=\"unary\"} 3"));
  EXPECT_THAT(text,
              HasSubstr("grpc_client_handled_total{grpc_code=\"Unavailable\",grpc_method=\"Put\","
                        "grpc_service=\"gpuadvisor.y.v1.YService\",grpc_type=\"unary\"} 2"));
  EXPECT_THAT(text,
              Not(HasSubstr("grpc_server_started_total{grpc_method=\"Put\"")));  // a client method
}

TEST(Metrics, DataLoadsCountRejectedSeparately) {
  Metrics metrics("catalog");
  metrics.DataLoaded(true, 1700000000);
  metrics.DataLoaded(false, 0);
  metrics.DataLoaded(false, 0);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text,
              HasSubstr("gpuadvisor_data_loads_total{result=\"rejected\",service=\"catalog\"} 2"));
  EXPECT_THAT(text, HasSubstr("gpuadvisor_data_loads_total{result=\"ok\",service=\"catalog\"} 1"));
  EXPECT_THAT(
      text,
      HasSubstr("gpuadvisor_data_last_load_timestamp_seconds{service=\"catalog\"} 1700000000"));
}

}  // namespace
}  // namespace gpuadvisor
