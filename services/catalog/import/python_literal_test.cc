#include "services/catalog/import/python_literal.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

TEST(PythonLiteral, SkyPilotGpuInfoWithJsonNull) {
  // Hyperstack's GpuInfo: a Python dict holding JSON null.
  absl::StatusOr<PyValue> v = ParsePythonLiteral(
      "{'Gpus': [{'Name': 'A100', 'Manufacturer': null, 'Count': 8.0, "
      "'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 655360, 'ok': True, "
      "'t': (1, 2,), \"dq\": 'it\\'s'}");
  ASSERT_OK(v);
  ASSERT_EQ(v->kind, PyValue::Kind::kDict);
  const PyValue* gpus = v->Get("Gpus");
  ASSERT_NE(gpus, nullptr);
  ASSERT_EQ(gpus->kind, PyValue::Kind::kList);
  ASSERT_EQ(gpus->items.size(), 1u);
  const PyValue& gpu = gpus->items[0];
  EXPECT_EQ(gpu.Get("Name")->str, "A100");
  EXPECT_EQ(gpu.Get("Manufacturer")->kind, PyValue::Kind::kNone);
  EXPECT_EQ(gpu.Get("Count")->number, 8.0);
  EXPECT_EQ(gpu.Get("MemoryInfo")->Get("SizeInMiB")->number, 81920);
  EXPECT_EQ(v->Get("ok")->kind, PyValue::Kind::kBool);
  EXPECT_EQ(v->Get("ok")->number, 1);
  EXPECT_EQ(v->Get("t")->items.size(), 2u);
  EXPECT_EQ(v->Get("dq")->str, "it's");
  EXPECT_EQ(v->Get("absent"), nullptr);
  EXPECT_EQ(gpu.Get("Name")->Get("x"), nullptr);  // not a dict
}

TEST(PythonLiteral, RejectsMalformedText) {
  EXPECT_THAT(ParsePythonLiteral("{'a': 1"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParsePythonLiteral("{'a': nan}"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown word")));
  EXPECT_THAT(ParsePythonLiteral("'open"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unterminated string")));
  EXPECT_THAT(ParsePythonLiteral("[1] 2"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("trailing characters")));
  EXPECT_THAT(ParsePythonLiteral("{1: 2}"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("dict key")));
  EXPECT_THAT(ParsePythonLiteral(std::string(40, '[') + std::string(40, ']')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nested too deeply")));
}

}  // namespace
}  // namespace gpuadvisor::catalog
