// Finite everywhere (issue 24 item 3): every numeric field of each unary RPC's
// request, set to an extreme value (NaN, +-infinity, +-1.7e308, -1, the
// integer limits), gives either an answer with no NaN or infinite number in
// it, or INVALID_ARGUMENT naming the field; never another error or a crash.
// The gateway's RPCs are the ones its HTTP/JSON front end calls (through an
// in-process channel), so the same checks hold there. Pricing's Quote is
// called directly as well: the gateway never sends it a user's number.

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/integration/stack.h"

namespace gpuadvisor::testing {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// A numeric field reached from the request root: the fields on the way.
using FieldPath = std::vector<const FieldDescriptor*>;

std::string PathName(const FieldPath& path) {
  std::string name;
  for (const FieldDescriptor* f : path) absl::StrAppend(&name, name.empty() ? "" : ".", f->name());
  return name;
}

bool IsNumber(const FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return true;
    default:
      return false;
  }
}

// Every singular numeric field of `d`, through singular sub-messages (not
// repeated ones, and no message type twice on one path).
void CollectNumbers(const Descriptor* d, FieldPath* prefix, std::vector<FieldPath>* out) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) continue;
    prefix->push_back(f);
    if (IsNumber(f)) {
      out->push_back(*prefix);
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      bool cycle = f->message_type() == d;
      for (const FieldDescriptor* p : *prefix) cycle |= p->containing_type() == f->message_type();
      if (!cycle && prefix->size() < 4) CollectNumbers(f->message_type(), prefix, out);
    }
    prefix->pop_back();
  }
}

// Sets the field at `path` of `root` to `value` (integers: the limits, -1).
void Set(Message* root, const FieldPath& path, double value) {
  Message* m = root;
  for (size_t i = 0; i + 1 < path.size(); ++i) m = m->GetReflection()->MutableMessage(m, path[i]);
  const FieldDescriptor* f = path.back();
  const Reflection* r = m->GetReflection();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      r->SetDouble(m, f, value);
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      r->SetFloat(m, f, static_cast<float>(value));
      break;
    case FieldDescriptor::CPPTYPE_INT32:
      r->SetInt32(m, f,
                  value > 0 ? std::numeric_limits<int32_t>::max()
                            : (value < -1 ? std::numeric_limits<int32_t>::min() : -1));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      r->SetInt64(m, f,
                  value > 0 ? std::numeric_limits<int64_t>::max()
                            : (value < -1 ? std::numeric_limits<int64_t>::min() : -1));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      r->SetUInt32(m, f, std::numeric_limits<uint32_t>::max());
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      r->SetUInt64(m, f, std::numeric_limits<uint64_t>::max());
      break;
    default:
      break;
  }
}

// The path of every double or float in `m` that is NaN or infinite.
void NonFinite(const Message& m, const std::string& at, std::vector<std::string>* out) {
  const Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    const std::string name = absl::StrCat(at, at.empty() ? "" : ".", f->name());
    const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      const std::string item = f->is_repeated() ? absl::StrCat(name, "[", i, "]") : name;
      double v = 0;
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_DOUBLE:
          v = f->is_repeated() ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f);
          break;
        case FieldDescriptor::CPPTYPE_FLOAT:
          v = f->is_repeated() ? r->GetRepeatedFloat(m, f, i) : r->GetFloat(m, f);
          break;
        case FieldDescriptor::CPPTYPE_MESSAGE:
          NonFinite(f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f), item,
                    out);
          break;
        default:
          break;
      }
      if (!std::isfinite(v)) out->push_back(item);
    }
  }
}

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kExtremes[] = {
    std::numeric_limits<double>::quiet_NaN(), kInf, -kInf, 1.7e308, -1.7e308, -1};

// Feeds every extreme value to every numeric field of `base` through `call`
// and checks the outcome; returns the number of calls made.
template <typename Request, typename Response>
int FeedExtremes(const std::string& rpc, const Request& base,
                 const std::function<grpc::Status(const Request&, Response*)>& call) {
  std::vector<FieldPath> paths;
  FieldPath prefix;
  CollectNumbers(Request::descriptor(), &prefix, &paths);
  EXPECT_FALSE(paths.empty()) << rpc;
  int calls = 0;
  for (const FieldPath& path : paths) {
    const std::string name = PathName(path);
    for (double value : kExtremes) {
      const bool integer = path.back()->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE &&
                           path.back()->cpp_type() != FieldDescriptor::CPPTYPE_FLOAT;
      if (integer && (std::isnan(value) || std::isinf(value))) continue;
      Request request = base;
      Set(&request, path, value);
      Response response;
      const grpc::Status status = call(request, &response);
      ++calls;
      SCOPED_TRACE(absl::StrCat(rpc, " ", name, " = ", value));
      if (status.ok()) {
        std::vector<std::string> bad;
        NonFinite(response, "", &bad);
        EXPECT_THAT(bad, ::testing::IsEmpty()) << "answer fields not finite";
      } else if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
        EXPECT_TRUE(absl::StrContains(status.error_message(), path.back()->name()))
            << "INVALID_ARGUMENT does not name the field: " << status.error_message();
      } else {
        EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND)
            << status.error_code() << ": " << status.error_message();
      }
    }
  }
  return calls;
}

class FiniteEverywhere : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Many calls from one client in a burst: no per-client rate limit.
    absl::StatusOr<Stack> started = Stack::Start("test-token", {}, {"--rate_limit_per_second=0"});
    ASSERT_TRUE(started.ok()) << started.status();
    stack_ = new Stack(*std::move(started));
  }
  static void TearDownTestSuite() {
    delete stack_;
    stack_ = nullptr;
  }
  static std::unique_ptr<grpc::ClientContext> Context() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    return context;
  }
  static Stack* stack_;
};
Stack* FiniteEverywhere::stack_ = nullptr;

TEST_F(FiniteEverywhere, Recommend) {
  auto stub = stack_->GatewayStub();
  const auto base = Parse<gateway::v1::RecommendRequest>(R"pb(
    workload {
      task: TASK_LORA
      model { preset: "llama-3.1-8b" }
      train_tokens: 1e8
      dataset_gb: 5
    }
    max_results: 3
  )pb");
  const int calls = FeedExtremes<gateway::v1::RecommendRequest, gateway::v1::RecommendResponse>(
      "Recommend", base, [&](const auto& request, auto* response) {
        return stub->Recommend(Context().get(), request, response);
      });
  EXPECT_GT(calls, 100);
}

TEST_F(FiniteEverywhere, RecommendServing) {
  auto stub = stack_->GatewayStub();
  const auto base = Parse<gateway::v1::RecommendRequest>(R"pb(
    workload {
      task: TASK_INFERENCE
      model { preset: "llama-3.1-8b" }
      context_length: 8192
      concurrent_sequences: 16
    }
    max_results: 3
  )pb");
  const int calls = FeedExtremes<gateway::v1::RecommendRequest, gateway::v1::RecommendResponse>(
      "Recommend(serving)", base, [&](const auto& request, auto* response) {
        return stub->Recommend(Context().get(), request, response);
      });
  EXPECT_GT(calls, 100);
}

TEST_F(FiniteEverywhere, Estimate) {
  auto stub = stack_->GatewayStub();
  const auto base = Parse<gateway::v1::EstimateRequest>(R"pb(
    workload {
      task: TASK_LORA
      model { preset: "llama-3.1-8b" }
      train_tokens: 1e8
    }
    configurations { gpu_model: "H100-SXM" gpus_per_node: 8 nodes: 1 }
  )pb");
  const int calls = FeedExtremes<gateway::v1::EstimateRequest, gateway::v1::EstimateResponse>(
      "Estimate", base, [&](const auto& request, auto* response) {
        return stub->Estimate(Context().get(), request, response);
      });
  EXPECT_GT(calls, 50);
}

TEST_F(FiniteEverywhere, ListOffers) {
  auto stub = stack_->GatewayStub();
  const auto base = Parse<catalog::v1::ListOffersRequest>("page_size: 5");
  const int calls = FeedExtremes<catalog::v1::ListOffersRequest, catalog::v1::ListOffersResponse>(
      "ListOffers", base, [&](const auto& request, auto* response) {
        return stub->ListOffers(Context().get(), request, response);
      });
  EXPECT_GT(calls, 5);
}

TEST_F(FiniteEverywhere, PricingQuote) {
  auto pricing = pricing::v1::PricingService::NewStub(
      grpc::CreateChannel(stack_->pricing->grpc_address(), grpc::InsecureChannelCredentials()));
  pricing::v1::GetPriceBookResponse book;
  ASSERT_TRUE(pricing->GetPriceBook(Context().get(), {}, &book).ok());
  ASSERT_GT(book.price_book().prices_size(), 0);
  pricing::v1::QuoteRequest base;
  pricing::v1::QuoteItem* item = base.add_items();
  item->set_offer_id(book.price_book().prices(0).offer_id());
  item->set_nodes(2);
  item->set_hours(10);
  base.mutable_job()->set_dataset_gb(10);
  base.mutable_job()->set_checkpoint_gb(20);
  base.mutable_job()->set_restartable(true);
  // The job's numbers through the generic walk; the item's (a repeated
  // message) by hand below.
  const int calls = FeedExtremes<pricing::v1::QuoteRequest, pricing::v1::QuoteResponse>(
      "Quote", base, [&](const auto& request, auto* response) {
        return pricing->Quote(Context().get(), request, response);
      });
  EXPECT_GT(calls, 10);
  for (double hours : kExtremes) {
    pricing::v1::QuoteRequest request = base;
    request.mutable_items(0)->set_hours(hours);
    request.mutable_items(0)->set_purchase_option(catalog::v1::PURCHASE_OPTION_SPOT);
    pricing::v1::QuoteResponse response;
    const grpc::Status status = pricing->Quote(Context().get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << hours;
    EXPECT_THAT(status.error_message(), ::testing::HasSubstr("items[0].hours")) << hours;
  }
  for (int32_t nodes : {0, -1, std::numeric_limits<int32_t>::max()}) {
    pricing::v1::QuoteRequest request = base;
    request.mutable_items(0)->set_nodes(nodes);
    pricing::v1::QuoteResponse response;
    const grpc::Status status = pricing->Quote(Context().get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << nodes;
    EXPECT_THAT(status.error_message(), ::testing::HasSubstr("items[0].nodes")) << nodes;
  }
  // The case of the issue: a dataset of 1.7e308 GB.
  pricing::v1::QuoteRequest huge = base;
  huge.mutable_job()->set_dataset_gb(1.7e308);
  pricing::v1::QuoteResponse response;
  const grpc::Status status = pricing->Quote(Context().get(), huge, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("job.dataset_gb"));
}

}  // namespace
}  // namespace gpuadvisor::testing
