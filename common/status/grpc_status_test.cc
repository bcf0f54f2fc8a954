#include "common/status/grpc_status.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuadvisor {
namespace {

using ::testing::SizeIs;

TEST(GrpcStatus, EveryCodeRoundTrips) {
  for (int code = 0; code <= 16; ++code) {
    const absl::Status original(static_cast<absl::StatusCode>(code), code == 0 ? "" : "why");
    const grpc::Status wire = ToGrpcStatus(original);
    EXPECT_EQ(static_cast<int>(wire.error_code()), code);
    EXPECT_EQ(FromGrpcStatus(wire), original) << "code " << code;
  }
}

TEST(GrpcStatus, KeepsMessageAndCapsLongOnes) {
  EXPECT_EQ(ToGrpcStatus(absl::InvalidArgumentError("workload.model.params: must be > 0"))
                .error_message(),
            "workload.model.params: must be > 0");
  const grpc::Status capped = ToGrpcStatus(absl::InternalError(std::string(5000, 'x')));
  EXPECT_THAT(capped.error_message(), SizeIs(kMaxStatusMessageLength));
}

TEST(GrpcStatus, CodeLabelsUseGoGrpcPrometheusSpelling) {
  EXPECT_STREQ(GrpcCodeLabel(grpc::StatusCode::OK), "OK");
  EXPECT_STREQ(GrpcCodeLabel(grpc::StatusCode::NOT_FOUND), "NotFound");
  EXPECT_STREQ(GrpcCodeLabel(grpc::StatusCode::DEADLINE_EXCEEDED), "DeadlineExceeded");
  EXPECT_STREQ(GrpcCodeLabel(grpc::StatusCode::UNAVAILABLE), "Unavailable");
}

}  // namespace
}  // namespace gpuadvisor
