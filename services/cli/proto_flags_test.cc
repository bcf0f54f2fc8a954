#include "services/cli/proto_flags.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "gtest/gtest.h"
#include "services/cli/table.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::cli {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::Contains;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

WalkOptions Flat() {
  WalkOptions o;
  o.flatten = {"workload", "constraints"};
  o.docs = {{"workload.sequence_length", {{"seq_len"}, "training sequence length", ""}}};
  return o;
}

const FlagSpec& Find(const std::vector<FlagSpec>& flags, const std::string& name) {
  auto it =
      std::find_if(flags.begin(), flags.end(), [&](const FlagSpec& f) { return f.name == name; });
  if (it == flags.end()) {
    ADD_FAILURE() << "no flag --" << name;
    static const FlagSpec none;
    return none;
  }
  return *it;
}

std::vector<std::string> Names(const std::vector<FlagSpec>& flags) {
  std::vector<std::string> names;
  for (const FlagSpec& f : flags) names.push_back(f.name);
  return names;
}

TEST(WalkFlags, EveryWorkloadAndConstraintsFieldGetsAFlag) {
  const std::vector<FlagSpec> flags =
      WalkFlags(gateway::v1::RecommendRequest::descriptor(), Flat());
  ASSERT_THAT(flags, Not(IsEmpty()));
  // Every scalar field of Workload, Constraints and their sub-messages, by
  // descriptor: a field added later gets a flag too.
  for (const auto* message :
       {sizing::v1::Workload::descriptor(), gateway::v1::Constraints::descriptor()}) {
    for (int i = 0; i < message->field_count(); ++i) {
      const auto* field = message->field(i);
      if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
      EXPECT_THAT(Names(flags), Contains(field->name()));
    }
  }
  EXPECT_THAT(Names(flags), Contains("model.params"));
  EXPECT_THAT(Names(flags), Contains("parallelism.tensor_parallel"));
  EXPECT_THAT(Names(flags), Contains("parallelism.offload"));
  EXPECT_THAT(Names(flags), Contains("max_results"));
  const FlagSpec& seq = Find(flags, "sequence_length");
  EXPECT_EQ(seq.aliases, std::vector<std::string>{"seq_len"});
  EXPECT_EQ(seq.group, "Workload");
  EXPECT_EQ(seq.type_name, "INT");
  EXPECT_EQ(Find(flags, "model.params").group, "Model");
  EXPECT_EQ(Find(flags, "dataset_gb").type_name, "SIZE");
  EXPECT_THAT(Find(flags, "task").type_name, HasSubstr("qlora"));
  EXPECT_TRUE(Find(flags, "single_node").is_bool);
  EXPECT_TRUE(Find(flags, "regions").repeated);
}

TEST(ApplyFlag, SetsNestedFieldsWithSuffixesEnumsAndBools) {
  const std::vector<FlagSpec> flags =
      WalkFlags(gateway::v1::RecommendRequest::descriptor(), Flat());
  gateway::v1::RecommendRequest r;
  ASSERT_OK(ApplyFlag(&r, Find(flags, "model.params"), {"70B"}));
  ASSERT_OK(ApplyFlag(&r, Find(flags, "train_tokens"), {"5e7"}));
  ASSERT_OK(ApplyFlag(&r, Find(flags, "dataset_tokens"), {"1T"}));
  ASSERT_OK(ApplyFlag(&r, Find(flags, "sequence_length"), {"4K"}));
  ASSERT_OK(ApplyFlag(&r, Find(flags, "dataset_gb"), {"1.5TB"}));
  ASSERT_OK(ApplyFlag(&r, Find(flags, "task"), {"QLoRA"}));
  ASSERT_OK(ApplyFlag(&r, Find(flags, "parallelism.offload"), {"optimizer-cpu"}));
  ASSERT_OK(ApplyFlag(&r, Find(flags, "restartable"), {"false"}));
  ASSERT_OK(ApplyFlag(&r, Find(flags, "purchase_options"), {"spot,on_demand", "reserved"}));
  ASSERT_OK(ApplyFlag(&r, Find(flags, "regions"), {"us-east-1,Frankfurt\\, DE"}));
  EXPECT_THAT(r.workload().model().params(), DoubleEq(70e9));
  EXPECT_THAT(r.workload().train_tokens(), DoubleEq(5e7));
  EXPECT_THAT(r.workload().dataset_tokens(), DoubleEq(1e12));
  EXPECT_EQ(r.workload().sequence_length(), 4000);
  EXPECT_THAT(r.workload().dataset_gb(), DoubleEq(1500));
  EXPECT_EQ(r.workload().task(), sizing::v1::TASK_QLORA);
  EXPECT_EQ(r.workload().parallelism().offload(), sizing::v1::OFFLOAD_OPTIMIZER_CPU);
  ASSERT_TRUE(r.workload().has_restartable());  // presence: false was asked for
  EXPECT_FALSE(r.workload().restartable());
  EXPECT_THAT(r.constraints().purchase_options(),
              ElementsAre(catalog::v1::PURCHASE_OPTION_SPOT, catalog::v1::PURCHASE_OPTION_ON_DEMAND,
                          catalog::v1::PURCHASE_OPTION_RESERVED));
  EXPECT_THAT(r.constraints().regions(), ElementsAre("us-east-1", "Frankfurt, DE"));
  // A repeated flag given again replaces, a single one takes the last value.
  ASSERT_OK(ApplyFlag(&r, Find(flags, "regions"), {"eu-west-1"}));
  ASSERT_OK(ApplyFlag(&r, Find(flags, "max_gpus"), {"4", "8"}));
  EXPECT_THAT(r.constraints().regions(), ElementsAre("eu-west-1"));
  EXPECT_EQ(r.constraints().max_gpus(), 8);
}

TEST(ApplyFlag, BadValuesNameTheFlagAndTheChoices) {
  const std::vector<FlagSpec> flags =
      WalkFlags(gateway::v1::RecommendRequest::descriptor(), Flat());
  gateway::v1::RecommendRequest r;
  EXPECT_THAT(
      ApplyFlag(&r, Find(flags, "task"), {"train"}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("--task: unknown task \"train\"; use one of: pretrain, full_finetune")));
  // A type of several words reads as words.
  EXPECT_THAT(ApplyFlag(&r, Find(flags, "purchase_options"), {"weekly"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown purchase option \"weekly\"; use one of: on_demand")));
  EXPECT_THAT(ApplyFlag(&r, Find(flags, "max_gpus"), {"8x"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--max_gpus: \"8x\": unknown suffix")));
  EXPECT_THAT(ApplyFlag(&r, Find(flags, "max_gpus"), {"1.5"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a whole number")));
  EXPECT_THAT(ApplyFlag(&r, Find(flags, "max_gpus"), {"5B"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out of range")));
  EXPECT_THAT(ApplyFlag(&r, Find(flags, "single_node"), {"maybe"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--single_node")));
  EXPECT_THAT(ApplyFlag(&r, Find(flags, "dataset_gb"), {"40 parsecs"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown size unit")));
}

TEST(ParseEnum, ShortNamesFullNamesAndUniquePrefixes) {
  const auto* task = sizing::v1::Task_descriptor();
  EXPECT_EQ((*ParseEnum(task, "batch"))->number(), sizing::v1::TASK_BATCH_INFERENCE);
  EXPECT_EQ((*ParseEnum(task, "TASK_LORA"))->number(), sizing::v1::TASK_LORA);
  EXPECT_EQ((*ParseEnum(catalog::v1::PurchaseOption_descriptor(), "on-demand"))->number(),
            catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  // "full" is a prefix of full_finetune only; "in" of inference and int8/int4 elsewhere.
  EXPECT_EQ((*ParseEnum(task, "full"))->number(), sizing::v1::TASK_FULL_FINETUNE);
  EXPECT_THAT(ParseEnum(sizing::v1::Precision_descriptor(), "int"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ambiguous precision")));
  EXPECT_THAT(ParseEnum(task, "unspecified"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(EnumChoices(catalog::v1::PurchaseOption_descriptor()),
              ElementsAre("on_demand", "spot", "reserved"));
  EXPECT_EQ(EnumShortName(sizing::v1::Offload_descriptor(),
                          sizing::v1::OFFLOAD_OPTIMIZER_AND_PARAMS_NVME),
            "optimizer_and_params_nvme");
}

TEST(ParseQuantity, CountsAndByteSizes) {
  EXPECT_THAT(*ParseQuantity("100M", Unit::kCount), DoubleEq(1e8));
  EXPECT_THAT(*ParseQuantity("70b", Unit::kCount), DoubleEq(7e10));
  EXPECT_THAT(*ParseQuantity("2.5e3", Unit::kCount), DoubleEq(2500));
  EXPECT_THAT(*ParseQuantity("40GB", Unit::kBytes), DoubleEq(40e9));
  EXPECT_THAT(*ParseQuantity("80GiB", Unit::kBytes), DoubleEq(80.0 * 1024 * 1024 * 1024));
  EXPECT_THAT(*ParseQuantity("500MB", Unit::kGigabytes), DoubleEq(0.5));
  EXPECT_THAT(*ParseQuantity("12", Unit::kGigabytes), DoubleEq(12));
  EXPECT_THAT(ParseQuantity("", Unit::kCount), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseQuantity("GB", Unit::kBytes), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SplitList, EscapedCommasAndBlanks) {
  EXPECT_THAT(SplitList("aws, gcp,,lambda "), ElementsAre("aws", "gcp", "lambda"));
  EXPECT_THAT(SplitList("a\\,b,c"), ElementsAre("a,b", "c"));
  EXPECT_THAT(SplitList(""), IsEmpty());
}

TEST(ParseJson, ProtoOrCamelNamesAndErrorsNameTheFile) {
  gateway::v1::RecommendRequest request;
  ASSERT_OK(ParseJson(R"({"workload": {"task": "TASK_QLORA", "model": {"preset": "llama-3.1-70b"}},
                          "constraints": {"maxUsdPerHour": 20}, "max_results": 3})",
                      "req.json", &request));
  EXPECT_EQ(request.workload().task(), sizing::v1::TASK_QLORA);
  EXPECT_EQ(request.constraints().max_usd_per_hour(), 20);
  EXPECT_EQ(request.max_results(), 3);
  EXPECT_THAT(
      ParseJson(R"({"workload": {"task": "TASK_NOPE"}})", "req.json", &request),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("req.json: not a RecommendRequest")));
}

TEST(Table, ColumnsAlignAndOtherFieldsListWhatIsLeft) {
  EXPECT_EQ(RenderTable({{"A", "BB"}, {"ccc", "d"}}), "A    BB\nccc  d\n");
  sizing::v1::ConfigurationEstimate e;
  e.set_fits(true);
  e.set_prefill_tokens_per_second(12345);
  e.mutable_plan()->set_offload(sizing::v1::OFFLOAD_OPTIMIZER_CPU);
  EXPECT_THAT(OtherFields(e, {"fits"}),
              ElementsAre("plan.offload: optimizer_cpu", "prefill_tokens_per_second: 12345"));
}

}  // namespace
}  // namespace gpuadvisor::cli
