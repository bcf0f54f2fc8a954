#include "services/cli/workload_flags.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::cli {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(WorkloadFlags, ParsesEnumNamesCaseInsensitively) {
  EXPECT_EQ(*ParseTask("QLoRA"), sizing::v1::TASK_QLORA);
  EXPECT_EQ(*ParseTask("serve"), sizing::v1::TASK_INFERENCE);
  EXPECT_EQ(*ParsePrecision("nf4"), sizing::v1::PRECISION_NF4);
  EXPECT_EQ(*ParseObjective("value"), gateway::v1::OBJECTIVE_BEST_VALUE);
  EXPECT_EQ(*ParsePurchaseOption("spot"), catalog::v1::PURCHASE_OPTION_SPOT);
  EXPECT_EQ(*ParseLink("pcie"), catalog::v1::LINK_TYPE_PCIE);
}

TEST(WorkloadFlags, UnknownNameListsTheChoices) {
  EXPECT_THAT(ParseTask("train"), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("unknown task \"train\"; use one of: pretrain")));
}

TEST(WorkloadFlags, SplitsListsSkippingBlanks) {
  EXPECT_THAT(SplitList("aws, gcp,,lambda "), ElementsAre("aws", "gcp", "lambda"));
  EXPECT_TRUE(SplitList("").empty());
}

TEST(WorkloadFlags, ParsesRequestJsonWithProtoOrCamelNames) {
  absl::StatusOr<gateway::v1::RecommendRequest> request = ParseRequestJson(
      R"({"workload": {"task": "TASK_QLORA", "model": {"preset": "llama-3.1-70b"}},
          "constraints": {"maxUsdPerHour": 20, "purchase_options": ["PURCHASE_OPTION_SPOT"]},
          "max_results": 3})",
      "req.json");
  ASSERT_OK(request);
  EXPECT_EQ(request->workload().task(), sizing::v1::TASK_QLORA);
  EXPECT_EQ(request->workload().model().preset(), "llama-3.1-70b");
  EXPECT_EQ(request->constraints().max_usd_per_hour(), 20);
  EXPECT_EQ(request->constraints().purchase_options(0), catalog::v1::PURCHASE_OPTION_SPOT);
  EXPECT_EQ(request->max_results(), 3);
}

TEST(WorkloadFlags, BadJsonNamesTheFile) {
  EXPECT_THAT(ParseRequestJson(R"({"workload": {"task": "TASK_NOPE"}})", "req.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("req.json")));
}

TEST(WorkloadFlags, TableColumnsAlign) {
  EXPECT_EQ(RenderTable({{"A", "BB"}, {"ccc", "d"}}), "A    BB\nccc  d\n");
}

}  // namespace
}  // namespace gpuadvisor::cli
