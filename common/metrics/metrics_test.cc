#include "common/metrics/metrics.h"

#include <string>

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

TEST(Metrics, DataLoadsCountRejectedSeparately) {
  Metrics metrics("catalog");
  metrics.DataLoaded(true, 1700000000);
  metrics.DataLoaded(false, 0);
  metrics.DataLoaded(false, 0);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("gpuadvisor_data_loads_total{result=\"rejected\",service=\"catalog\"} 2"));
  EXPECT_THAT(text, HasSubstr("gpuadvisor_data_loads_total{result=\"ok\",service=\"catalog\"} 1"));
  EXPECT_THAT(text, HasSubstr("gpuadvisor_data_last_load_timestamp_seconds{service=\"catalog\"} 1700000000"));
}

}  // namespace
}  // namespace gpuadvisor
