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
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "common/validation/field_ranges.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "httplib.h"
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

// Every singular numeric field of `d`, through singular sub-messages (not
// repeated ones, and no message type twice on one path).
void CollectNumbers(const Descriptor* d, FieldPath* prefix, std::vector<FieldPath>* out) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) continue;
    prefix->push_back(f);
    if (validation::IsNumeric(f)) {
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

// Sets the field at `path` of `root` to exactly `value` (a range's bound).
void SetExact(Message* root, const FieldPath& path, double value) {
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
      r->SetInt32(m, f, static_cast<int32_t>(value));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      r->SetInt64(m, f, static_cast<int64_t>(value));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      r->SetUInt32(m, f, static_cast<uint32_t>(value));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      r->SetUInt64(m, f, static_cast<uint64_t>(value));
      break;
    default:
      break;
  }
}

// The set top-level numbers of `request` as query parameters (GET routes).
std::string QueryOf(const Message& request) {
  const Reflection* r = request.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(request, &fields);
  std::vector<std::string> parts;
  for (const FieldDescriptor* f : fields) {
    if (!validation::IsNumeric(f) || f->is_repeated()) continue;
    std::string value;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE:
        value = absl::StrCat(r->GetDouble(request, f));
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        value = absl::StrCat(r->GetInt32(request, f));
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        value = absl::StrCat(r->GetInt64(request, f));
        break;
      default:
        continue;
    }
    parts.push_back(absl::StrCat(f->name(), "=", absl::StrReplaceAll(value, {{"+", "%2B"}})));
  }
  return absl::StrJoin(parts, "&");
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

// The value the field at `path` of `root` holds (after Set's integer mapping).
double Get(const Message& root, const FieldPath& path) {
  const Message* m = &root;
  for (size_t i = 0; i + 1 < path.size(); ++i) m = &m->GetReflection()->GetMessage(*m, path[i]);
  return validation::NumericValue(*m, path.back());
}

// What one call gave: the status and, when OK, the answer.
struct Outcome {
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  std::string message;
  std::unique_ptr<Message> answer;
};
using Call = std::function<Outcome(const Message& request)>;

// Feeds every extreme value, and each range's own bounds, to every numeric
// field of `base` through `call`. Outside the field's row of the shared table
// (common/validation/field_ranges.h) the answer must be INVALID_ARGUMENT
// naming the field's path; inside it, an answer with no NaN or infinite
// number (or NOT_FOUND, or INVALID_ARGUMENT for a rule relating two fields,
// never a range error). Returns the number of calls made.
int FeedExtremes(const std::string& rpc, const Message& base, const Call& call) {
  std::vector<FieldPath> paths;
  FieldPath prefix;
  CollectNumbers(base.GetDescriptor(), &prefix, &paths);
  EXPECT_FALSE(paths.empty()) << rpc;
  int calls = 0;
  for (const FieldPath& path : paths) {
    const std::string name = PathName(path);
    const validation::FieldRange* range = validation::FindRange(path.back());
    if (range == nullptr) {
      ADD_FAILURE() << rpc << " " << name << ": no row in the shared range table";
      continue;
    }
    std::vector<double> values(std::begin(kExtremes), std::end(kExtremes));
    // Both bounds are accepted, and answered with finite numbers.
    values.push_back(range->min);
    values.push_back(range->max);
    for (double value : values) {
      const bool integer = path.back()->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE &&
                           path.back()->cpp_type() != FieldDescriptor::CPPTYPE_FLOAT;
      if (integer && (std::isnan(value) || std::isinf(value))) continue;
      std::unique_ptr<Message> request(base.New());
      request->CopyFrom(base);
      const bool bound = value == range->min || value == range->max;
      if (bound) {
        SetExact(request.get(), path, value);
      } else {
        Set(request.get(), path, value);
      }
      const double sent = Get(*request, path);
      const Outcome outcome = call(*request);
      ++calls;
      SCOPED_TRACE(absl::StrCat(rpc, " ", name, " = ", sent));
      const std::string range_error = absl::StrCat(name, ": must be finite");
      if (!validation::InRange(*range, sent)) {
        EXPECT_EQ(outcome.code, grpc::StatusCode::INVALID_ARGUMENT) << outcome.message;
        EXPECT_THAT(outcome.message, ::testing::HasSubstr(range_error));
      } else if (outcome.code == grpc::StatusCode::OK) {
        std::vector<std::string> bad;
        NonFinite(*outcome.answer, "", &bad);
        EXPECT_THAT(bad, ::testing::IsEmpty()) << "answer fields not finite";
      } else if (outcome.code == grpc::StatusCode::INVALID_ARGUMENT) {
        EXPECT_THAT(outcome.message, ::testing::Not(::testing::HasSubstr(range_error)));
      } else {
        EXPECT_EQ(outcome.code, grpc::StatusCode::NOT_FOUND) << outcome.message;
      }
    }
  }
  return calls;
}

// A gRPC call as an Outcome.
template <typename Response, typename Request, typename Stub>
Call GrpcCall(Stub* stub,
              grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*)) {
  return [stub, method](const Message& request) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    auto response = std::make_unique<Response>();
    const grpc::Status status =
        (stub->*method)(&context, static_cast<const Request&>(request), response.get());
    return Outcome{status.error_code(), status.error_message(), std::move(response)};
  };
}

// The same RPC through the gateway's HTTP/JSON front end: POST `path` with
// the request as JSON (GET with query parameters when `get`), the answer
// parsed back into `Response`, an error from its google.rpc.Status body.
template <typename Response>
Call HttpCall(int port, const std::string& path, bool get) {
  return [port, path, get](const Message& request) {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(20, 0);
    std::string body;
    google::protobuf::util::JsonPrintOptions print;
    print.preserve_proto_field_names = true;
    EXPECT_TRUE(google::protobuf::util::MessageToJsonString(request, &body, print).ok());
    httplib::Result result = get ? client.Get(absl::StrCat(path, "?", QueryOf(request)))
                                 : client.Post(path, body, "application/json");
    Outcome outcome;
    if (!result) {
      outcome.message = absl::StrCat("no HTTP answer: ", httplib::to_string(result.error()));
      return outcome;
    }
    if (result->status == 200) {
      auto response = std::make_unique<Response>();
      google::protobuf::util::JsonParseOptions parse;
      parse.ignore_unknown_fields = true;
      const auto parsed =
          google::protobuf::util::JsonStringToMessage(result->body, response.get(), parse);
      EXPECT_TRUE(parsed.ok()) << parsed.ToString();
      outcome.code = grpc::StatusCode::OK;
      outcome.answer = std::move(response);
      return outcome;
    }
    google::protobuf::Struct status;  // google.rpc.Status as JSON
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(result->body, &status).ok())
        << result->status << " " << result->body;
    const auto& fields = status.fields();
    if (fields.count("code") > 0) {
      outcome.code = static_cast<grpc::StatusCode>(fields.at("code").number_value());
    }
    if (fields.count("message") > 0) outcome.message = fields.at("message").string_value();
    return outcome;
  };
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

using RecommendRequest = gateway::v1::RecommendRequest;
using RecommendResponse = gateway::v1::RecommendResponse;
using EstimateResponse = gateway::v1::EstimateResponse;
using OffersResponse = catalog::v1::ListOffersResponse;
using GatewayStub = gateway::v1::GatewayService::Stub;

const char kTraining[] = R"pb(
  workload {
    task: TASK_LORA
    model { preset: "llama-3.1-8b" }
    train_tokens: 1e8
    dataset_gb: 5
  }
  max_results: 3
)pb";
const char kServing[] = R"pb(
  workload {
    task: TASK_INFERENCE
    model { preset: "llama-3.1-8b" }
    context_length: 8192
    concurrent_sequences: 16
  }
  max_results: 3
)pb";
const char kEstimate[] = R"pb(
  workload {
    task: TASK_LORA
    model { preset: "llama-3.1-8b" }
    train_tokens: 1e8
  }
  configurations { gpu_model: "H100-SXM" gpus_per_node: 8 nodes: 1 }
)pb";

TEST_F(FiniteEverywhere, Recommend) {
  auto stub = stack_->GatewayStub();
  EXPECT_GT(FeedExtremes("Recommend", Parse<RecommendRequest>(kTraining),
                         GrpcCall(stub.get(), &GatewayStub::Recommend)),
            100);
}

TEST_F(FiniteEverywhere, RecommendOverHttp) {
  ASSERT_GT(stack_->gateway->http_port(), 0);
  EXPECT_GT(FeedExtremes(
                "POST /v1/recommend", Parse<RecommendRequest>(kTraining),
                HttpCall<RecommendResponse>(stack_->gateway->http_port(), "/v1/recommend", false)),
            100);
}

TEST_F(FiniteEverywhere, RecommendServing) {
  auto stub = stack_->GatewayStub();
  EXPECT_GT(FeedExtremes("Recommend(serving)", Parse<RecommendRequest>(kServing),
                         GrpcCall(stub.get(), &GatewayStub::Recommend)),
            100);
}

TEST_F(FiniteEverywhere, RecommendServingOverHttp) {
  ASSERT_GT(stack_->gateway->http_port(), 0);
  EXPECT_GT(FeedExtremes(
                "POST /v1/recommend (serving)", Parse<RecommendRequest>(kServing),
                HttpCall<RecommendResponse>(stack_->gateway->http_port(), "/v1/recommend", false)),
            100);
}

TEST_F(FiniteEverywhere, Estimate) {
  auto stub = stack_->GatewayStub();
  EXPECT_GT(FeedExtremes("Estimate", Parse<gateway::v1::EstimateRequest>(kEstimate),
                         GrpcCall(stub.get(), &GatewayStub::Estimate)),
            50);
}

TEST_F(FiniteEverywhere, EstimateOverHttp) {
  ASSERT_GT(stack_->gateway->http_port(), 0);
  EXPECT_GT(
      FeedExtremes("POST /v1/estimate", Parse<gateway::v1::EstimateRequest>(kEstimate),
                   HttpCall<EstimateResponse>(stack_->gateway->http_port(), "/v1/estimate", false)),
      50);
}

TEST_F(FiniteEverywhere, ListOffers) {
  auto stub = stack_->GatewayStub();
  EXPECT_GT(FeedExtremes("ListOffers", Parse<catalog::v1::ListOffersRequest>("page_size: 5"),
                         GrpcCall(stub.get(), &GatewayStub::ListOffers)),
            5);
}

TEST_F(FiniteEverywhere, ListOffersOverHttp) {
  ASSERT_GT(stack_->gateway->http_port(), 0);
  EXPECT_GT(
      FeedExtremes("GET /v1/offers", Parse<catalog::v1::ListOffersRequest>("page_size: 5"),
                   HttpCall<OffersResponse>(stack_->gateway->http_port(), "/v1/offers", true)),
      5);
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
  const int calls = FeedExtremes(
      "Quote", base, GrpcCall(pricing.get(), &pricing::v1::PricingService::Stub::Quote));
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
