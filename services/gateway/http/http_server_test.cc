#include "services/gateway/http/http_server.h"

#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "common/grpc/server.h"
#include "common/status/grpc_status.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace gpuadvisor::gateway::http {
namespace {

using ::testing::HasSubstr;

// A GatewayService on a real port-0 server: answers from the request so the
// test sees what reached it, and fails the way the real one does.
class FakeGateway final : public v1::GatewayService::Service {
 public:
  grpc::Status Recommend(grpc::ServerContext* context, const v1::RecommendRequest* request,
                         v1::RecommendResponse* response) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      for (const auto& [key, value] : context->client_metadata()) {
        metadata[std::string(key.data(), key.size())] = std::string(value.data(), value.size());
      }
    }
    return Answer(*request, response);
  }
  // Recommend in process (HttpServer::Options::recommend): what the call
  // carries is kept as the gRPC call's metadata would be.
  absl::StatusOr<v1::RecommendResponse> RecommendLocal(const HttpServer::Options::LocalCall& call,
                                                       const v1::RecommendRequest& request) {
    {
      std::lock_guard<std::mutex> lock(mu);
      metadata["x-gpuadvisor-client"] = call.client_key;
      metadata["x-request-id"] = call.request_id;
      deadline = call.deadline;
    }
    v1::RecommendResponse response;
    const grpc::Status status = Answer(request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }
  grpc::Status Answer(const v1::RecommendRequest& req, v1::RecommendResponse* response) {
    const v1::RecommendRequest* request = &req;
    int code = 0;
    if (absl::SimpleAtoi(absl::StripPrefix(request->workload().model().preset(), "code-"), &code)) {
      return grpc::Status(static_cast<grpc::StatusCode>(code), "failed as asked");
    }
    if (request->workload().model().params() < 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "workload.model.params: must be > 0");
    }
    if (request->workload().model().preset() == "slow-backend") {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "sizing backend: connection refused");
    }
    for (int rank = 1; rank <= std::max(1, request->max_results()); ++rank) {
      v1::Recommendation* r = response->add_recommendations();
      r->set_rank(rank);
      r->mutable_offer()->set_provider("aws");
      r->mutable_offer()->set_instance_type(rank == 1 ? "p5.48xlarge" : "p4d.24xlarge");
      r->mutable_offer()->set_region("us-east-1");
      r->mutable_offer()->set_gpus_per_node(8);
      r->mutable_offer()->set_nodes(1);
      r->mutable_memory()->set_weights_bytes(16000000000);
      r->mutable_cost()->set_total_usd(100.0 * rank);
    }
    response->set_catalog_version(request->workload().model().preset());
    return grpc::Status::OK;
  }
  // Echoes the filters it received, so the test sees the query parameters land.
  grpc::Status ListOffers(grpc::ServerContext*, const catalog::v1::ListOffersRequest* request,
                          catalog::v1::ListOffersResponse* response) override {
    for (int i = 0; i < request->page_size(); ++i) {
      catalog::v1::Offer* offer = response->add_offers();
      offer->set_provider(request->providers(i % std::max(1, request->providers_size())));
      offer->set_gpu_model(request->gpu_models_size() > 0 ? request->gpu_models(0) : "any");
      offer->set_spot_usd_per_hour(
          request->purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT ? 1 : 0);
    }
    response->set_total_size(request->min_gpus());
    return grpc::Status::OK;
  }
  grpc::Status Estimate(grpc::ServerContext*, const v1::EstimateRequest* request,
                        v1::EstimateResponse* response) override {
    response->mutable_estimates()->Add()->set_fits(request->configurations_size() > 0);
    return grpc::Status::OK;
  }
  std::string Metadata(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu);
    return metadata.count(key) > 0 ? metadata.at(key) : "";
  }
  std::mutex mu;
  std::map<std::string, std::string> metadata;  // of the last Recommend
  absl::Time deadline;                          // of the last in-process Recommend
};

// Every test runs twice: Recommend over the in-process gRPC channel, and
// Recommend called in process (Options::recommend, as the gateway does),
// answered on the event-loop thread for one call and on another thread for
// the next.
class HttpServerTest : public ::testing::TestWithParam<bool> {
 protected:
  bool InProcess() const { return GetParam(); }
  // Options::recommend over fake_: the answer at once, or from a thread.
  HttpServer::Options::RecommendFn LocalRecommend() {
    return [this](const HttpServer::Options::LocalCall& call, v1::RecommendRequest request,
                  absl::AnyInvocable<void(absl::StatusOr<const v1::RecommendResponse*>)> done) {
      auto answer = std::make_shared<absl::StatusOr<v1::RecommendResponse>>(
          fake_.RecommendLocal(call, request));
      auto send = [answer, done = std::move(done)]() mutable {
        if (!answer->ok()) return done(answer->status());
        done(&**answer);
      };
      std::lock_guard<std::mutex> lock(threads_mu_);
      if (++local_calls_ % 2 == 1) return send();
      threads_.emplace_back(std::move(send));
    };
  }
  void JoinThreads() {
    std::lock_guard<std::mutex> lock(threads_mu_);
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

  void SetUp() override {
    absl::StatusOr<StartedServer> started = StartServer(ServerOptions{}, {&fake_});
    ASSERT_TRUE(started.ok()) << started.status();
    grpc_ = std::move(started->server);
    HttpServer::Options options;
    options.limits.max_body_bytes = 4096;
    options.cors_origins = {"https://ui.example.com"};
    options.trusted_proxies = {"127.0.0.0/8"};
    options.registry = &registry_;
    if (InProcess()) options.recommend = LocalRecommend();
    absl::StatusOr<std::unique_ptr<HttpServer>> http =
        HttpServer::Start(grpc_->InProcessChannel(grpc::ChannelArguments()), options);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = *std::move(http);
    ASSERT_GT(http_->port(), 0);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", http_->port());
  }
  void TearDown() override {
    http_->Stop();
    JoinThreads();
    grpc_->Shutdown();
  }

  static google::protobuf::Struct Json(const std::string& body) {
    google::protobuf::Struct s;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(body, &s).ok()) << body;
    return s;
  }
  // google.rpc.Status JSON, flattened for the checks: "code" (gRPC),
  // "message", "status" (ErrorInfo.reason) and "field" (the BadRequest's).
  static google::protobuf::Struct Error(const std::string& body) {
    google::protobuf::Struct status = Json(body);
    google::protobuf::Struct flat;
    auto& out = *flat.mutable_fields();
    out["grpc_code"] = status.fields().at("code");
    out["message"] = status.fields().at("message");
    for (const auto& detail : status.fields().at("details").list_value().values()) {
      const auto& d = detail.struct_value().fields();
      if (d.count("reason")) out["status"] = d.at("reason");
      if (d.count("field_violations")) {
        out["field"] =
            d.at("field_violations").list_value().values(0).struct_value().fields().at("field");
      }
    }
    return flat;
  }

  prometheus::Registry registry_;
  FakeGateway fake_;
  std::mutex threads_mu_;
  int local_calls_ = 0;
  std::vector<std::thread> threads_;  // answering in-process Recommends
  std::unique_ptr<grpc::Server> grpc_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_P(HttpServerTest, RecommendRoundTripsProtoJson) {
  auto res = client_->Post(
      "/v1/recommend", R"({"workload": {"model": {"preset": "llama-3.1-8b"}}, "max_results": 2})",
      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("application/json"));
  v1::RecommendResponse response;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(res->body, &response).ok()) << res->body;
  ASSERT_EQ(response.recommendations_size(), 2);
  EXPECT_EQ(response.recommendations(1).rank(), 2);
  EXPECT_EQ(response.catalog_version(), "llama-3.1-8b");
  // int64 as a string, proto field names, zeros present.
  EXPECT_THAT(res->body, HasSubstr("\"weights_bytes\":\"16000000000\""));
  EXPECT_THAT(res->body, HasSubstr("\"candidates_considered\":0"));
}

TEST_P(HttpServerTest, ServiceErrorsKeepCodeMessageAndField) {
  auto res = client_->Post("/v1/recommend", R"({"workload": {"model": {"params": -1}}})",
                           "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  google::protobuf::Struct error = Error(res->body);
  EXPECT_EQ(error.fields().at("status").string_value(), "INVALID_ARGUMENT");
  EXPECT_EQ(error.fields().at("grpc_code").number_value(), 3);
  EXPECT_EQ(error.fields().at("field").string_value(), "workload.model.params");

  res = client_->Post("/v1/recommend", R"({"workload": {"model": {"preset": "slow-backend"}}})",
                      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(Error(res->body).fields().at("status").string_value(), "UNAVAILABLE");
}

TEST_P(HttpServerTest, BadBodiesAreRejectedBeforeTheCall) {
  auto res = client_->Post("/v1/recommend", R"({"workload": {"task": "TASK_NAPPING"}})",
                           "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(Error(res->body).fields().at("field").string_value(), "workload.task");

  res = client_->Post("/v1/recommend?max_results=3", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(Error(res->body).fields().at("field").string_value(), "max_results");

  res = client_->Post("/v1/recommend", "workload=x", "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(Error(res->body).fields().at("message").string_value(),
              HasSubstr("body: not valid JSON"));
}

TEST_P(HttpServerTest, JsonBodyIsReadWhateverItsContentType) {
  // curl -d labels bodies application/x-www-form-urlencoded.
  auto res =
      client_->Post("/v1/recommend", R"({"max_results": 2})", "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
}

TEST_P(HttpServerTest, BodySizeIsBounded) {
  const std::string big =
      R"({"workload": {"model": {"name": ")" + std::string(8192, 'x') + R"("}}})";
  auto res = client_->Post("/v1/recommend", big, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(Error(res->body).fields().at("status").string_value(), "RESOURCE_EXHAUSTED");
}

TEST_P(HttpServerTest, ExportsByFormat) {
  auto res =
      client_->Post("/v1/recommend?format=skypilot",
                    R"({"workload": {"model": {"preset": "llama-3.1-8b"}}, "max_results": 2})",
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("yaml"));
  EXPECT_THAT(res->body, HasSubstr("ordered:"));
  EXPECT_LT(res->body.find("p5.48xlarge"), res->body.find("p4d.24xlarge"));
  EXPECT_EQ(res->get_header_value("X-Export-Alternatives"), "1");

  res = client_->Post("/v1/recommend?format=skypilot&alternative=0", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(Error(res->body).fields().at("field").string_value(), "alternative");

  res = client_->Post("/v1/recommend?format=terraform", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(Error(res->body).fields().at("field").string_value(), "format");
}

TEST_P(HttpServerTest, EstimatePassesThrough) {
  auto res = client_->Post("/v1/estimate",
                           R"({"configurations": [{"gpu_model": "H100", "gpus_per_node": 8}]})",
                           "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("\"fits\":true"));
}

TEST_P(HttpServerTest, GetRoutesTakeQueryParameters) {
  auto res = client_->Get(
      "/v1/"
      "offers?providers=aws,lambda&gpu_models=H100&page_size=3&purchase_option=spot&min_gpus=8");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  catalog::v1::ListOffersResponse response;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(res->body, &response).ok()) << res->body;
  ASSERT_EQ(response.offers_size(), 3);
  EXPECT_EQ(response.offers(0).provider(), "aws");
  EXPECT_EQ(response.offers(1).provider(), "lambda");
  EXPECT_EQ(response.offers(0).gpu_model(), "H100");
  EXPECT_EQ(response.offers(0).spot_usd_per_hour(), 1);
  EXPECT_EQ(response.total_size(), 8);

  res = client_->Get("/v1/offers?page_size=ten");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(Error(res->body).fields().at("field").string_value(), "page_size");

  // A method the service does not implement keeps gRPC's code.
  res = client_->Get("/v1/gpus");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 501);
  EXPECT_EQ(Error(res->body).fields().at("status").string_value(), "UNIMPLEMENTED");
}

TEST_P(HttpServerTest, HealthFollowsTheGrpcHealthService) {
  auto res = client_->Get("/v1/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  SetServing(*grpc_, {"gpuadvisor.gateway.v1.GatewayService"}, true);
  res = client_->Get("/v1/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(Json(res->body).fields().at("status").string_value(), "SERVING");
}

TEST_P(HttpServerTest, ServesOpenApiAndThePage) {
  auto res = client_->Get("/v1/openapi.json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(Json(res->body).fields().at("paths").struct_value().fields().count("/v1/recommend"));
  res = client_->Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("text/html"));
  EXPECT_THAT(res->body, HasSubstr("GPU Advisor"));
}

TEST_P(HttpServerTest, UnknownPathIsAJsonNotFound) {
  auto res = client_->Get("/v1/nothing-here");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(Error(res->body).fields().at("status").string_value(), "NOT_FOUND");
}

// Each gRPC code reaches HTTP with grpc-gateway's status and the code in the
// google.rpc.Status body.
TEST_P(HttpServerTest, EveryGrpcCodeGetsGrpcGatewaysHttpStatus) {
  const std::pair<int, int> kCodes[] = {
      {1, 499}, {2, 500},  {3, 400},  {4, 504},  {5, 404},  {6, 409},  {7, 403},  {8, 429},
      {9, 400}, {10, 409}, {11, 400}, {12, 501}, {13, 500}, {14, 503}, {15, 500}, {16, 401}};
  for (const auto& [code, http_status] : kCodes) {
    auto res =
        client_->Post("/v1/recommend",
                      absl::StrCat(R"({"workload": {"model": {"preset": "code-)", code, R"("}}})"),
                      "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, http_status) << "gRPC code " << code;
    EXPECT_EQ(Error(res->body).fields().at("grpc_code").number_value(), code);
  }
}

TEST_P(HttpServerTest, WrongMethodIs405WithAllow) {
  auto res = client_->Get("/v1/recommend");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->get_header_value("Allow"), "POST, OPTIONS");
  EXPECT_EQ(Error(res->body).fields().at("status").string_value(), "UNIMPLEMENTED");
  res = client_->Post("/v1/offers", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->get_header_value("Allow"), "GET, HEAD, OPTIONS");
  res = client_->Options("/v1/recommend");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
  EXPECT_EQ(res->get_header_value("Allow"), "POST, OPTIONS");
  res = client_->Head("/v1/openapi.json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_P(HttpServerTest, CorsOnlyForTheAllowedOrigins) {
  auto res = client_->Get("/v1/health", {{"Origin", "https://ui.example.com"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "https://ui.example.com");
  EXPECT_EQ(res->get_header_value("Vary"), "Origin");
  res = client_->Get("/v1/health", {{"Origin", "https://evil.example.com"}});
  ASSERT_TRUE(res);
  EXPECT_FALSE(res->has_header("Access-Control-Allow-Origin"));
  // A preflight from the allowed origin.
  res = client_->Options("/v1/recommend", {{"Origin", "https://ui.example.com"},
                                           {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
  EXPECT_THAT(res->get_header_value("Access-Control-Allow-Methods"), HasSubstr("POST"));
  EXPECT_THAT(res->get_header_value("Access-Control-Allow-Headers"), HasSubstr("Content-Type"));
}

TEST_P(HttpServerTest, RequestIdIsEchoedAndSentOnToTheCall) {
  auto res =
      client_->Post("/v1/recommend", {{"X-Request-Id", "trace-42.a_b"}}, "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("X-Request-Id"), "trace-42.a_b");
  EXPECT_EQ(fake_.Metadata("x-request-id"), "trace-42.a_b");
  // An id with anything but plain characters is replaced by a made one.
  res = client_->Post("/v1/recommend", {{"X-Request-Id", "bad id!"}}, "{}", "application/json");
  ASSERT_TRUE(res);
  const std::string made = res->get_header_value("X-Request-Id");
  EXPECT_EQ(made.size(), 16u);
  EXPECT_EQ(fake_.Metadata("x-request-id"), made);
}

// The per-client key the rate limiter sees: the TCP peer, or the client a
// trusted proxy (here 127.0.0.0/8) names in X-Forwarded-For / Forwarded.
TEST_P(HttpServerTest, CallsCarryTheClientKey) {
  ASSERT_TRUE(client_->Post("/v1/recommend", "{}", "application/json"));
  EXPECT_EQ(fake_.Metadata("x-gpuadvisor-client"), "127.0.0.1");
  ASSERT_TRUE(client_->Post("/v1/recommend", {{"X-Forwarded-For", "203.0.113.7, 127.0.0.9"}}, "{}",
                            "application/json"));
  EXPECT_EQ(fake_.Metadata("x-gpuadvisor-client"), "203.0.113.7");
  ASSERT_TRUE(client_->Post("/v1/recommend", {{"Forwarded", "for=\"[2001:db8::1]:4711\""}}, "{}",
                            "application/json"));
  EXPECT_EQ(fake_.Metadata("x-gpuadvisor-client"), "2001:db8::1");
}

TEST_P(HttpServerTest, RequestsAreCountedByRouteAndStatus) {
  ASSERT_TRUE(client_->Post("/v1/recommend", "{}", "application/json"));
  ASSERT_TRUE(client_->Get("/v1/recommend"));
  ASSERT_TRUE(client_->Get("/v1/nothing-here"));
  const std::string text = prometheus::TextSerializer().Serialize(registry_.Collect());
  EXPECT_THAT(text,
              HasSubstr(R"(gpuadvisor_http_requests_total{code="200",route="/v1/recommend"} 1)"));
  EXPECT_THAT(text,
              HasSubstr(R"(gpuadvisor_http_requests_total{code="405",route="/v1/recommend"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(gpuadvisor_http_requests_total{code="404",route="other"} 1)"));
}

// The in-process Recommend gets the call's deadline (now + call_timeout).
INSTANTIATE_TEST_SUITE_P(Recommend, HttpServerTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "InProcess" : "OverTheChannel";
                         });

// The in-process call only (over the channel, the deadline is gRPC's own).
class InProcessHttpServerTest : public HttpServerTest {};

TEST_P(InProcessHttpServerTest, RecommendCarriesTheDeadline) {
  ASSERT_TRUE(InProcess());
  const absl::Time before = absl::Now();
  ASSERT_TRUE(client_->Post("/v1/recommend", "{}", "application/json"));
  std::lock_guard<std::mutex> lock(fake_.mu);
  EXPECT_GE(fake_.deadline, before + HttpServer::Options().call_timeout);
  EXPECT_LE(fake_.deadline, absl::Now() + HttpServer::Options().call_timeout);
}

INSTANTIATE_TEST_SUITE_P(Recommend, InProcessHttpServerTest, ::testing::Values(true),
                         [](const ::testing::TestParamInfo<bool>&) { return "InProcess"; });

TEST(HttpServer, BusyPortIsUnavailable) {
  httplib::Server holder;
  const int port = holder.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  HttpServer::Options options;
  options.port = port;
  absl::StatusOr<std::unique_ptr<HttpServer>> http = HttpServer::Start(
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()), options);
  EXPECT_EQ(http.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace gpuadvisor::gateway::http
