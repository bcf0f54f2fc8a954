#include "common/validation/field_ranges.h"

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "gpuadvisor/pricing/v1/pricing.pb.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::validation {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Every numeric field reachable from `d` (repeated ones and sub-messages
// included), by full name.
void Numbers(const Descriptor* d, std::set<const Descriptor*>* seen, std::set<std::string>* out) {
  if (!seen->insert(d).second) return;
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (IsNumeric(f)) out->insert(f->full_name());
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) Numbers(f->message_type(), seen, out);
  }
}

// The numeric inputs of every RPC of the four services.
std::set<std::string> RpcInputNumbers() {
  std::set<std::string> numbers;
  std::set<const Descriptor*> seen;
  for (const google::protobuf::FileDescriptor* file :
       {catalog::v1::ListOffersRequest::descriptor()->file(),
        sizing::v1::EstimateRequest::descriptor()->file(),
        pricing::v1::QuoteRequest::descriptor()->file(),
        gateway::v1::RecommendRequest::descriptor()->file()}) {
    for (int s = 0; s < file->service_count(); ++s) {
      for (int m = 0; m < file->service(s)->method_count(); ++m) {
        Numbers(file->service(s)->method(m)->input_type(), &seen, &numbers);
      }
    }
  }
  return numbers;
}

TEST(FieldRanges, EveryNumericInputOfEveryRpcHasARow) {
  const std::set<std::string> numbers = RpcInputNumbers();
  ASSERT_GT(numbers.size(), 60u);
  std::vector<std::string> missing;
  for (const std::string& name : numbers) {
    const FieldDescriptor* f =
        google::protobuf::DescriptorPool::generated_pool()->FindFieldByName(name);
    if (FindRange(f) == nullptr) missing.push_back(name);
  }
  EXPECT_THAT(missing, IsEmpty())
      << "add a row for each to kFieldRanges in common/validation/field_ranges.h";
}

TEST(FieldRanges, EveryRowIsANumericRpcInputWithASaneRange) {
  const std::set<std::string> numbers = RpcInputNumbers();
  std::set<std::string> rows;
  for (const FieldRange& range : kFieldRanges) {
    SCOPED_TRACE(range.field);
    EXPECT_TRUE(rows.insert(std::string(range.field)).second) << "twice";
    EXPECT_EQ(numbers.count(std::string(range.field)), 1u) << "not a numeric RPC input";
    EXPECT_TRUE(std::isfinite(range.min) && std::isfinite(range.max));
    EXPECT_LE(range.min, range.max);
    EXPECT_GE(range.min, 0);
  }
}

TEST(FieldRanges, RangeOfIsAConstant) {
  static_assert(RangeOf("gpuadvisor.pricing.v1.QuoteItem.nodes").min == 1);
  static_assert(RangeOf("gpuadvisor.sizing.v1.Workload.dataset_gb").max == kMaxJobGb);
}

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

TEST(FieldRanges, NamesTheFirstFieldOutOfRangeByItsPath) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    std::string request;  // a gateway RecommendRequest
    std::string error;    // "" = OK
  };
  const std::vector<Case> cases = {
      {"workload { dataset_gb: 5 model { params: 8e9 } } max_results: 3", ""},
      {"workload { dataset_gb: 1.7e308 }",
       "workload.dataset_gb: must be finite, >= 0 and <= 1000000000 GB (got 1.7e+308)"},
      {"workload { model { layers: -1 } }", "workload.model.layers: must be finite, >= 0 and"},
      {"constraints { vram_margin: 0.95 }",
       "constraints.vram_margin: must be finite, >= 0 and <= "
       "0.9 fraction kept free (got 0.95)"},
      {"constraints { vram_margin: 0 }", ""},
      {"max_results: 101", "max_results: must be finite, >= 0 and <= 100 answers (got 101)"},
      // An optional field is checked only when set; then 0 is not "unset".
      {"workload { parallelism { tensor_parallel: 2 } }", ""},
      {"workload { parallelism { expert_parallel: 0 } }",
       "workload.parallelism.expert_parallel: must be finite, >= 1 and <= 65536 GPUs (got 0)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.request);
    const absl::Status s = CheckRanges(Parse<gateway::v1::RecommendRequest>(c.request));
    if (c.error.empty()) {
      EXPECT_TRUE(s.ok()) << s;
    } else {
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)));
    }
  }
  for (double v : {nan, inf, -inf, -1.0, 1e7 + 1}) {
    gateway::v1::RecommendRequest r;
    r.mutable_constraints()->set_deadline_hours(v);
    EXPECT_THAT(CheckRanges(r), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("constraints.deadline_hours: must be finite")))
        << v;
  }
}

TEST(FieldRanges, RepeatedMessagesAreCheckedWithTheirIndex) {
  auto quote = Parse<pricing::v1::QuoteRequest>(R"pb(
    items { offer_id: "a" nodes: 1 hours: 2 }
    items { offer_id: "b" nodes: 0 hours: 2 }
  )pb");
  EXPECT_THAT(CheckRanges(quote),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("items[1].nodes: must be finite, >= 1 and <= 100000 nodes")));
  quote.mutable_items(1)->set_nodes(4);
  EXPECT_TRUE(CheckRanges(quote).ok());
  quote.mutable_job()->set_egress_gb(-1);
  EXPECT_THAT(CheckRanges(quote),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("job.egress_gb")));
  // A prefix for a nested message checked on its own.
  sizing::v1::Model model;
  model.set_params(std::numeric_limits<double>::infinity());
  EXPECT_THAT(CheckRanges(model, "workload.model"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("workload.model.params: must be finite")));
  // Three levels down from the root, and under a caller's prefix.
  gateway::v1::RecommendRequest request;
  *request.mutable_workload()->mutable_model() = model;
  EXPECT_THAT(CheckRanges(request), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("workload.model.params: must be finite")));
  EXPECT_THAT(CheckRanges(request, "requests[2]"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("requests[2].workload.model.params: must be finite")));
}

}  // namespace
}  // namespace gpuadvisor::validation
