#include "services/gateway/http/proto_json.h"

#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::gateway::http {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

TEST(ParseJsonBody, ReadsProtoAndCamelCaseNames) {
  v1::RecommendRequest request;
  ASSERT_OK(ParseJsonBody(R"({"workload": {"task": "TASK_LORA", "model": {"preset": "llama-3.1-8b"},
                                          "trainTokens": 5e7},
                             "constraints": {"vram_margin": 0.2, "purchase_options": ["PURCHASE_OPTION_SPOT"]},
                             "max_results": 3})",
                          &request));
  EXPECT_EQ(request.workload().task(), sizing::v1::TASK_LORA);
  EXPECT_EQ(request.workload().model().preset(), "llama-3.1-8b");
  EXPECT_EQ(request.workload().train_tokens(), 5e7);
  EXPECT_TRUE(request.constraints().has_vram_margin());
  EXPECT_EQ(request.constraints().purchase_options(0), catalog::v1::PURCHASE_OPTION_SPOT);
  EXPECT_EQ(request.max_results(), 3);
}

TEST(ParseJsonBody, EmptyBodyIsAnEmptyMessage) {
  v1::RecommendRequest request;
  request.set_max_results(4);
  ASSERT_OK(ParseJsonBody("  \n", &request));
  EXPECT_EQ(request.max_results(), 0);
}

TEST(ParseJsonBody, ErrorsNameTheField) {
  struct Case {
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {R"({"workload": {"task": "TASK_BOGUS"}})", "workload.task: invalid value"},
      {R"({"workload": {"model": {"params": "abc"}}})", "workload.model.params: invalid value"},
      {R"({"workload": {"nope": 1}})", "workload.nope: unknown field"},
      {R"({"max_results": 1.5})", "max_results: invalid value"},
      {"{not json", "body: not valid JSON"},
  };
  for (const Case& c : cases) {
    v1::RecommendRequest request;
    EXPECT_THAT(ParseJsonBody(c.body, &request),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.body;
  }
}

TEST(ToJson, PrintsEveryFieldWithProtoNamesAndKeepsPresence) {
  v1::RecommendRequest request;
  request.mutable_workload()->mutable_model()->set_params(8e9);
  request.mutable_constraints()->set_max_gpus(8);
  const std::string json = ToJson(request);
  EXPECT_THAT(json, HasSubstr("\"max_results\":0"));
  EXPECT_THAT(json, HasSubstr("\"params\":8000000000"));
  EXPECT_THAT(json, HasSubstr("\"providers\":[]"));
  EXPECT_THAT(json, ::testing::Not(HasSubstr("vram_margin")));  // optional, unset
  v1::RecommendRequest back;
  ASSERT_OK(ParseJsonBody(json, &back));
  EXPECT_EQ(back.workload().model().params(), 8e9);
}

TEST(SetFieldsFromQuery, SetsScalarsEnumsAndLists) {
  catalog::v1::ListOffersRequest request;
  ASSERT_OK(SetFieldsFromQuery({{"gpu_models", "H100,A100"},
                                {"gpu_models", "L4"},
                                {"providers", "aws"},
                                {"minGpus", "2"},
                                {"min_gpu_memory_bytes", "8e10"},
                                {"max_usd_per_hour", "12.5"},
                                {"purchase_option", "spot"},
                                {"links", "LINK_TYPE_NVLINK"},
                                {"page_size", "50"},
                                {"format", "json"}},
                               {"format"}, &request));
  EXPECT_THAT(request.gpu_models(), ::testing::ElementsAre("H100", "A100", "L4"));
  EXPECT_THAT(request.providers(), ::testing::ElementsAre("aws"));
  EXPECT_EQ(request.min_gpus(), 2);
  EXPECT_EQ(request.min_gpu_memory_bytes(), 80000000000);
  EXPECT_EQ(request.max_usd_per_hour(), 12.5);
  EXPECT_EQ(request.purchase_option(), catalog::v1::PURCHASE_OPTION_SPOT);
  EXPECT_EQ(request.links(0), catalog::v1::LINK_TYPE_NVLINK);
  EXPECT_EQ(request.page_size(), 50);
}

TEST(SetFieldsFromQuery, NestedFieldsByDottedPath) {
  v1::RecommendRequest request;
  ASSERT_OK(SetFieldsFromQuery({{"workload.model.preset", "llama-3.1-8b"},
                                {"workload.task", "lora"},
                                {"constraints.vram_margin", "0.15"}},
                               {}, &request));
  EXPECT_EQ(request.workload().model().preset(), "llama-3.1-8b");
  EXPECT_EQ(request.workload().task(), sizing::v1::TASK_LORA);
  EXPECT_TRUE(request.constraints().has_vram_margin());
}

TEST(SetFieldsFromQuery, ErrorsNameTheParameter) {
  struct Case {
    const char* key;
    const char* value;
    const char* message;
  };
  const Case cases[] = {
      {"page_sise", "10", "page_sise: unknown parameter"},
      {"page_size", "ten", "page_size: \"ten\" is not an integer"},
      {"max_usd_per_hour", "cheap", "max_usd_per_hour: \"cheap\" is not a number"},
      {"purchase_option", "sometimes",
       "purchase_option: \"sometimes\" is not a gpuadvisor.catalog.v1.PurchaseOption"},
  };
  for (const Case& c : cases) {
    catalog::v1::ListOffersRequest request;
    EXPECT_THAT(SetFieldsFromQuery({{c.key, c.value}}, {}, &request),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.key;
  }
  v1::RecommendRequest request;
  EXPECT_THAT(SetFieldsFromQuery({{"workload", "x"}}, {}, &request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("workload: a message")));
}

TEST(ErrorJson, IsGoogleRpcStatusWithTheFieldViolation) {
  google::protobuf::Struct parsed;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(
          ErrorJson(absl::InvalidArgumentError("workload.model.params: must be > 0")), &parsed)
          .ok());
  const auto& status = parsed.fields();
  EXPECT_EQ(status.at("code").number_value(), 3);
  EXPECT_EQ(status.at("message").string_value(), "workload.model.params: must be > 0");
  const auto& details = status.at("details").list_value().values();
  ASSERT_EQ(details.size(), 2);
  const auto& bad_request = details[0].struct_value().fields();
  EXPECT_EQ(bad_request.at("@type").string_value(), "type.googleapis.com/google.rpc.BadRequest");
  const auto& violation =
      bad_request.at("field_violations").list_value().values(0).struct_value().fields();
  EXPECT_EQ(violation.at("field").string_value(), "workload.model.params");
  EXPECT_EQ(violation.at("description").string_value(), "must be > 0");
  const auto& info = details[1].struct_value().fields();
  EXPECT_EQ(info.at("@type").string_value(), "type.googleapis.com/google.rpc.ErrorInfo");
  EXPECT_EQ(info.at("reason").string_value(), "INVALID_ARGUMENT");

  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  ErrorJson(absl::UnavailableError("sizing backend: connection refused")), &parsed)
                  .ok());
  EXPECT_EQ(parsed.fields().at("code").number_value(), 14);
  // No field path: only the ErrorInfo.
  ASSERT_EQ(parsed.fields().at("details").list_value().values_size(), 1);
  EXPECT_EQ(parsed.fields()
                .at("details")
                .list_value()
                .values(0)
                .struct_value()
                .fields()
                .at("reason")
                .string_value(),
            "UNAVAILABLE");
}

TEST(ParseJsonBody, TakesEnumsInTheCliShortForms) {
  v1::RecommendRequest request;
  ASSERT_TRUE(ParseJsonBody(R"({"workload": {"task": "lora", "precision": "bf16"},
                                "constraints": {"purchase_options": ["on-demand", "Spot"]}})",
                            &request)
                  .ok());
  EXPECT_EQ(request.workload().task(), sizing::v1::TASK_LORA);
  EXPECT_EQ(request.workload().precision(), sizing::v1::PRECISION_BF16);
  ASSERT_EQ(request.constraints().purchase_options_size(), 2);
  EXPECT_EQ(request.constraints().purchase_options(0), catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  ASSERT_TRUE(ParseJsonBody(R"({"workload": {"task": "full"}})", &request).ok());
  EXPECT_EQ(request.workload().task(), sizing::v1::TASK_FULL_FINETUNE);
  // Unknown and ambiguous values still name the field.
  EXPECT_THAT(ParseJsonBody(R"({"workload": {"task": "napping"}})", &request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("workload.task")));
  EXPECT_THAT(ParseJsonBody(R"({"workload": {"precision": "int"}})", &request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("workload.precision")));
}

TEST(HttpStatusFor, FollowsGoogleRpcCodeMapping) {
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kOk), 200);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInternal), 500);
}

TEST(FieldOf, OnlyFieldPaths) {
  EXPECT_EQ(FieldOf("constraints.providers[0]: unknown provider"), "constraints.providers[0]");
  EXPECT_EQ(FieldOf("sizing backend: connection refused"), "");
  EXPECT_EQ(FieldOf("no colon here"), "");
}

}  // namespace
}  // namespace gpuadvisor::gateway::http
