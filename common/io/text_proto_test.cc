#include "common/io/text_proto.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

TEST(TextProto, ParsesValidText) {
  catalog::v1::GpuList gpus;
  ASSERT_OK(ParseTextProto("gpus { name: \"H100-SXM\" memory_bytes: 80000000000 }", "x", &gpus));
  ASSERT_EQ(gpus.gpus_size(), 1);
  EXPECT_EQ(gpus.gpus(0).memory_bytes(), 80000000000);
}

TEST(TextProto, ErrorNamesFileLineAndField) {
  catalog::v1::GpuList gpus;
  const absl::Status status =
      ParseTextProto("gpus {\n  name: \"A\"\n  memory_gigabytes: 3\n}\n", "gpus.textproto", &gpus);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gpus.textproto:3:")));
  EXPECT_THAT(std::string(status.message()), HasSubstr("memory_gigabytes"));
}

TEST(TextProto, TruncatedFileIsRejected) {
  catalog::v1::GpuList gpus;
  EXPECT_THAT(ParseTextProto("gpus { name: \"A\" memory_by", "f", &gpus),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(TextProto, MissingFileIsNotFound) {
  catalog::v1::GpuList gpus;
  EXPECT_THAT(LoadTextProtoFile("/nonexistent/gpus.textproto", &gpus),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/gpus.textproto")));
}

TEST(TextProto, AtomicWriteThenLoad) {
  const std::string path =
      ::testing::TempDir() + "/atomic." + std::to_string(getpid()) + ".textproto";
  ASSERT_OK(WriteFileAtomically(path, "gpus { name: \"L4\" }"));
  catalog::v1::GpuList gpus;
  ASSERT_OK(LoadTextProtoFile(path, &gpus));
  EXPECT_EQ(gpus.gpus(0).name(), "L4");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace gpuadvisor
