// The gateway adapter against backends on their own port-0 servers. The
// backends here are small fakes (as in gRPC's own end-to-end tests) because
// the behaviour under test is how the gateway reacts to what a backend says:
// errors, slowness, restarts. The real backends are exercised end to end in
// tests/integration.

#include "services/gateway/gateway_service_impl.h"

#include <atomic>
#include <future>
#include <thread>

#include "absl/time/clock.h"
#include "common/grpc/server.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::gateway {
namespace {

using ::testing::HasSubstr;

catalog::v1::CatalogSnapshot Snapshot(const std::string& version) {
  catalog::v1::CatalogSnapshot s;
  s.set_version(version);
  catalog::v1::Gpu* gpu = s.add_gpus();
  gpu->set_name("H100-SXM");
  gpu->set_memory_bytes(80'000'000'000);
  gpu->set_memory_type(catalog::v1::MEMORY_TYPE_HBM);
  gpu->set_memory_bandwidth_bytes_per_second(3.35e12);
  gpu->set_bf16_flops(989e12);
  gpu->set_supports_bf16(true);
  catalog::v1::Offer* offer = s.add_offers();
  offer->set_id("lambda/gpu_1x_h100_sxm5/us-east-1");
  offer->set_provider("lambda");
  offer->set_instance_type("gpu_1x_h100_sxm5");
  offer->set_region("us-east-1");
  offer->set_gpu_model("H100-SXM");
  offer->set_gpus_per_node(1);
  offer->set_nodes(1);
  offer->set_max_nodes(1);
  offer->set_link(catalog::v1::LINK_TYPE_NONE);
  offer->set_fabric(catalog::v1::FABRIC_TYPE_NONE);
  offer->set_on_demand_usd_per_hour(4.29);
  return s;
}

class FakeCatalog final : public catalog::v1::CatalogService::Service {
 public:
  grpc::Status WatchCatalog(
      grpc::ServerContext* context, const catalog::v1::WatchCatalogRequest* request,
      grpc::ServerWriter<catalog::v1::WatchCatalogResponse>* writer) override {
    context->AddInitialMetadata(catalog::kWatchVersionHeader, "v1");
    writer->SendInitialMetadata();
    if (request->known_version() != "v1") {
      catalog::v1::WatchCatalogResponse update;
      *update.mutable_snapshot() = Snapshot("v1");
      writer->Write(update);
    }
    while (!context->IsCancelled()) absl::SleepFor(absl::Milliseconds(20));
    return grpc::Status::OK;
  }
};

class FakeSizing final : public sizing::v1::SizingService::Service {
 public:
  grpc::Status Estimate(grpc::ServerContext* context, const sizing::v1::EstimateRequest* request,
                        sizing::v1::EstimateResponse* response) override {
    ++calls;
    // Waits out `delay` unless the gateway cancels the call first.
    const absl::Time until = absl::Now() + delay;
    while (absl::Now() < until) {
      if (context->IsCancelled()) {
        ++cancelled;
        return grpc::Status::CANCELLED;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    if (!answer.ok()) return answer;
    for (const auto& config : request->configurations()) {
      sizing::v1::ConfigurationEstimate* e = response->add_estimates();
      *e->mutable_configuration() = config;
      e->set_fits(true);
      e->set_gpu_memory_bytes(80'000'000'000);
      e->set_memory_margin(0.5);
      e->set_estimated_hours(10);
      e->set_tokens_per_second(1000);
    }
    return grpc::Status::OK;
  }
  grpc::Status answer = grpc::Status::OK;
  absl::Duration delay = absl::ZeroDuration();
  std::atomic<int> calls{0};
  std::atomic<int> cancelled{0};  // calls that saw the gateway cancel them
};

class FakePricing final : public pricing::v1::PricingService::Service {
 public:
  grpc::Status Quote(grpc::ServerContext*, const pricing::v1::QuoteRequest* request,
                     pricing::v1::QuoteResponse* response) override {
    if (++calls <= lacking_version) {
      // As pricing answers while it has not built the catalog version yet.
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          absl::StrCat("catalog_version: no price book for catalog version \"",
                                       request->catalog_version(), "\""));
    }
    if (!answer.ok()) return answer;
    response->set_catalog_version(request->catalog_version());
    response->set_price_book_version("prices-1");
    for (const auto& item : request->items()) {
      pricing::v1::Quote* q = response->add_quotes();
      q->set_offer_id(item.offer_id());
      q->set_priced(true);
      q->mutable_cost()->set_total_usd(42.9);
      q->mutable_cost()->set_usd_per_hour(4.29);
      q->mutable_cost()->set_expected_hours(item.hours());
    }
    return grpc::Status::OK;
  }
  grpc::Status answer = grpc::Status::OK;
  std::atomic<int> calls{0};
  std::atomic<int> lacking_version{0};  // the first calls answer FAILED_PRECONDITION
};

class GatewayServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto [service, server, port] :
         {std::tuple<grpc::Service*, std::unique_ptr<grpc::Server>*, int*>{
              &catalog_, &catalog_server_, &catalog_port_},
          {&sizing_, &sizing_server_, &sizing_port_},
          {&pricing_, &pricing_server_, &pricing_port_}}) {
      absl::StatusOr<StartedServer> started = StartServer(ServerOptions(), {service});
      ASSERT_OK(started);
      *server = std::move(started->server);
      *port = started->port;
    }
    replica_ = std::make_unique<catalog::CatalogReplica>(
        catalog::v1::CatalogService::NewStub(Channel(catalog_port_)),
        catalog::CatalogReplica::Options{.cache_path = "",
                                         .retry_interval = absl::Milliseconds(100),
                                         .on_snapshot = nullptr,
                                         .on_rejected = nullptr,
                                         .clock = &clock_});
    replica_->Start();
    ASSERT_TRUE(replica_->WaitUntilLoaded(absl::Seconds(10)));
    StartGateway(DefaultOptions());
  }

  static GatewayServiceImpl::Options DefaultOptions() {
    GatewayServiceImpl::Options options;
    options.backend_timeout = absl::Milliseconds(300);
    return options;
  }

  // (Re)starts the gateway with `options`; its metrics start afresh.
  void StartGateway(GatewayServiceImpl::Options options) {
    if (gateway_server_ != nullptr) gateway_server_->Shutdown();
    gateway_server_.reset();
    service_.reset();
    metrics_ = std::make_unique<Metrics>("gateway");
    service_ = std::make_unique<GatewayServiceImpl>(
        replica_.get(), sizing::v1::SizingService::NewStub(Channel(sizing_port_)),
        pricing::v1::PricingService::NewStub(Channel(pricing_port_)), metrics_.get(), options);
    absl::StatusOr<StartedServer> gateway = StartServer(ServerOptions(), {service_.get()});
    ASSERT_OK(gateway);
    gateway_server_ = std::move(gateway->server);
    gateway_port_ = gateway->port;
    stub_ = v1::GatewayService::NewStub(Channel(gateway->port));
  }

  // The value of one series in the gateway's metrics; -1 if absent.
  double Metric(const std::string& series) const {
    const std::string text = metrics_->Serialize();
    const size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
  }

  // Recommend calls the gateway finished with `code`.
  double RecommendsHandled(const std::string& code) const {
    return std::max(0.0,
                    Metric(absl::StrCat("grpc_server_handled_total{grpc_code=\"", code,
                                        "\",grpc_method=\"Recommend\",grpc_service=\"gpuadvisor."
                                        "gateway.v1.GatewayService\",grpc_type=\"unary\"}")));
  }

  void TearDown() override {
    gateway_server_->Shutdown();
    replica_->Stop();
    for (auto* server : {&catalog_server_, &sizing_server_, &pricing_server_}) {
      if (*server) ShutdownServer(**server, 0.1);
    }
  }

  static std::shared_ptr<grpc::Channel> Channel(int port) {
    return grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                               grpc::InsecureChannelCredentials());
  }

  static v1::RecommendRequest Request() {
    v1::RecommendRequest request;
    request.mutable_workload()->set_task(sizing::v1::TASK_LORA);
    request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
    request.mutable_workload()->set_train_tokens(5e7);
    return request;
  }

  grpc::Status Recommend(v1::RecommendResponse* response,
                         absl::Duration deadline = absl::Seconds(5)) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    return stub_->Recommend(&context, Request(), response);
  }

  FakeCatalog catalog_;
  FakeSizing sizing_;
  FakePricing pricing_;
  std::unique_ptr<grpc::Server> catalog_server_, sizing_server_, pricing_server_, gateway_server_;
  int catalog_port_ = 0, sizing_port_ = 0, pricing_port_ = 0, gateway_port_ = 0;
  std::unique_ptr<Metrics> metrics_;
  ManualClock clock_;  // the replica's age moves with it
  std::unique_ptr<catalog::CatalogReplica> replica_;
  ResponseCache response_cache_{{.max_entries = 16}};
  std::unique_ptr<GatewayServiceImpl> service_;
  std::unique_ptr<v1::GatewayService::Stub> stub_;
};

TEST_F(GatewayServiceTest, ComposesBackendsIntoARankedAnswer) {
  v1::RecommendResponse response;
  ASSERT_TRUE(Recommend(&response).ok());
  ASSERT_EQ(response.recommendations_size(), 1);
  EXPECT_EQ(response.recommendations(0).offer().id(), "lambda/gpu_1x_h100_sxm5/us-east-1");
  EXPECT_EQ(response.recommendations(0).cost().total_usd(), 42.9);
  EXPECT_EQ(response.catalog_version(), "v1");
  EXPECT_EQ(response.catalog_age_seconds(), 0);
  EXPECT_THAT(metrics_->Serialize(),
              HasSubstr("grpc_client_handled_total{grpc_code=\"OK\",grpc_method=\"Estimate\""));
}

TEST_F(GatewayServiceTest, SizingRejectionOfTheWorkloadPassesThrough) {
  sizing_.answer =
      grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "workload.model.params: must be > 0");
  v1::RecommendResponse response;
  const grpc::Status status = Recommend(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "workload.model.params: must be > 0");
}

TEST_F(GatewayServiceTest, PricingRejectingTheGatewaysRequestIsInternal) {
  pricing_.answer =
      grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "items[0].hours: must be >= 0");
  v1::RecommendResponse response;
  const grpc::Status status = Recommend(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(status.error_message(), HasSubstr("pricing"));
}

TEST_F(GatewayServiceTest, SlowSizingIsDeadlineExceededWithinTheBackendTimeout) {
  sizing_.delay = absl::Seconds(2);
  v1::RecommendResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status status = Recommend(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(absl::Now() - start, absl::Seconds(1.5));
  EXPECT_THAT(status.error_message(), HasSubstr("sizing"));
}

TEST_F(GatewayServiceTest, PricingDownIsUnavailable) {
  ShutdownServer(*pricing_server_, 0);
  pricing_server_.reset();
  v1::RecommendResponse response;
  const grpc::Status status = Recommend(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(GatewayServiceTest, ReplicaServesAndAgesWhenTheCatalogGoesAway) {
  ShutdownServer(*catalog_server_, 0.1);
  catalog_server_.reset();
  // Time passes on the replica's clock; its age counts from the moment it
  // saw the stream end, which on a loaded machine can come after an advance,
  // so the clock moves on until the age rises.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (replica_->AgeSeconds() < 1.0 && absl::Now() < deadline) {
    clock_.Advance(absl::Seconds(2));
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_GE(replica_->AgeSeconds(), 1.0);
  v1::RecommendResponse response;
  ASSERT_TRUE(Recommend(&response).ok());
  EXPECT_EQ(response.recommendations_size(), 1);
  EXPECT_GE(response.catalog_age_seconds(), 1);
  metrics_->AddCollectable(std::make_shared<CatalogAgeCollector>(replica_.get()));
  EXPECT_THAT(metrics_->Serialize(),
              ::testing::ContainsRegex("gpuadvisor_gateway_catalog_age_seconds [1-9]"));
}

TEST_F(GatewayServiceTest, RepeatedRequestIsAnsweredFromTheResponseCache) {
  GatewayServiceImpl::Options options = DefaultOptions();
  options.response_cache = &response_cache_;
  options.price_book_version = [] { return std::string("prices-1"); };
  StartGateway(options);
  v1::RecommendResponse computed, cached;
  ASSERT_TRUE(Recommend(&computed).ok());
  ASSERT_TRUE(Recommend(&cached).ok());
  ASSERT_EQ(cached.recommendations_size(), 1);
  EXPECT_EQ(cached.SerializeAsString(), computed.SerializeAsString());
  EXPECT_EQ(pricing_.calls.load(), 1);  // the second answer made no backend call
  EXPECT_EQ(Metric("gpuadvisor_gateway_response_cache_hits_total"), 1);
  EXPECT_EQ(Metric("gpuadvisor_gateway_response_cache_misses_total"), 1);
  EXPECT_EQ(Metric("gpuadvisor_gateway_recommendations_total{outcome=\"ok\"}"), 2);
  EXPECT_EQ(RecommendsHandled("OK"), 2);
}

// Starts identical Recommends at once, one per deadline, and waits for all of
// them; the statuses in the same order.
std::vector<grpc::Status> RecommendAtOnce(v1::GatewayService::Stub* stub,
                                          const v1::RecommendRequest& request,
                                          const std::vector<absl::Duration>& deadlines) {
  const size_t n = deadlines.size();
  std::vector<grpc::ClientContext> contexts(n);
  std::vector<v1::RecommendResponse> responses(n);
  std::vector<grpc::Status> statuses(n);
  std::atomic<size_t> done{0};
  for (size_t i = 0; i < n; ++i) {
    contexts[i].set_deadline(absl::ToChronoTime(absl::Now() + deadlines[i]));
    stub->async()->Recommend(&contexts[i], &request, &responses[i], [&, i](grpc::Status status) {
      if (status.ok()) {
        EXPECT_EQ(responses[i].recommendations_size(), 1);
      }
      statuses[i] = std::move(status);
      ++done;
    });
  }
  for (int i = 0; i < 2000 && done < n; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(done.load(), n);
  return statuses;
}

TEST_F(GatewayServiceTest, IdenticalRequestsInFlightAreComputedOnce) {
  GatewayServiceImpl::Options options = DefaultOptions();
  options.backend_timeout = absl::Seconds(5);
  options.response_cache = &response_cache_;
  options.price_book_version = [] { return std::string("prices-1"); };
  StartGateway(options);
  sizing_.delay = absl::Milliseconds(300);  // the others arrive while the first is computed
  const std::vector<grpc::Status> statuses =
      RecommendAtOnce(stub_.get(), Request(), std::vector<absl::Duration>(5, absl::Seconds(10)));
  ASSERT_EQ(statuses.size(), 5u);
  for (const grpc::Status& status : statuses) EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(sizing_.calls.load(), 1);
  EXPECT_EQ(pricing_.calls.load(), 1);
  EXPECT_EQ(Metric("gpuadvisor_gateway_response_cache_misses_total"), 1);
  EXPECT_EQ(Metric("gpuadvisor_gateway_response_cache_hits_total"), 4);
  EXPECT_EQ(RecommendsHandled("OK"), 5);
}

TEST_F(GatewayServiceTest, WhenTheFirstOfIdenticalRequestsFailsTheOthersComputeTheirOwn) {
  GatewayServiceImpl::Options options = DefaultOptions();
  options.backend_timeout = absl::Seconds(5);
  options.response_cache = &response_cache_;
  options.price_book_version = [] { return std::string("prices-1"); };
  StartGateway(options);
  sizing_.delay = absl::Milliseconds(600);
  // The first call's deadline passes while sizing works on it; the others,
  // parked on it, then size and price for themselves.
  grpc::ClientContext first;
  first.set_deadline(absl::ToChronoTime(absl::Now() + absl::Milliseconds(300)));
  const v1::RecommendRequest request = Request();
  v1::RecommendResponse first_response;
  std::atomic<bool> first_done{false};
  grpc::Status first_status;
  stub_->async()->Recommend(&first, &request, &first_response, [&](grpc::Status status) {
    first_status = std::move(status);
    first_done = true;
  });
  for (int i = 0; i < 500 && sizing_.calls == 0; ++i) absl::SleepFor(absl::Milliseconds(2));
  ASSERT_EQ(sizing_.calls.load(), 1);  // the first call is being computed
  const std::vector<grpc::Status> statuses =
      RecommendAtOnce(stub_.get(), request, std::vector<absl::Duration>(3, absl::Seconds(10)));
  for (int i = 0; i < 500 && !first_done; ++i) absl::SleepFor(absl::Milliseconds(10));
  ASSERT_TRUE(first_done);
  EXPECT_EQ(first_status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  ASSERT_EQ(statuses.size(), 3u);
  for (const grpc::Status& status : statuses) EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(sizing_.calls.load(), 4);  // the first, then each parked call for itself
  EXPECT_EQ(RecommendsHandled("OK"), 3);
}

TEST_F(GatewayServiceTest, UnparsableRequestIsRejectedAndTheGatewayKeepsAnswering) {
  // Recommend reads its request bytes itself (a raw method): bytes that are
  // no RecommendRequest get the status a generated method gives them.
  grpc::GenericStub generic(Channel(gateway_port_));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  const char garbage[] = "\xff\xff\xff\xff";
  grpc::Slice slice(garbage, sizeof(garbage) - 1);
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::atomic<bool> done{false};
  grpc::Status status;
  generic.UnaryCall(&context, "/gpuadvisor.gateway.v1.GatewayService/Recommend",
                    grpc::StubOptions(), &request, &response, [&](grpc::Status s) {
                      status = std::move(s);
                      done = true;
                    });
  for (int i = 0; i < 500 && !done; ++i) absl::SleepFor(absl::Milliseconds(10));
  ASSERT_TRUE(done);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(sizing_.calls.load(), 0);
  v1::RecommendResponse answer;
  ASSERT_TRUE(Recommend(&answer).ok());
  EXPECT_EQ(answer.recommendations_size(), 1);
}

TEST_F(GatewayServiceTest, PricingBehindOnTheCatalogVersionIsAskedAgain) {
  pricing_.lacking_version = 2;
  v1::RecommendResponse response;
  ASSERT_TRUE(Recommend(&response).ok());
  EXPECT_EQ(pricing_.calls.load(), 3);
  ASSERT_EQ(response.recommendations_size(), 1);
  EXPECT_EQ(response.catalog_version(), "v1");
}

TEST_F(GatewayServiceTest, PricingThatNeverHoldsTheVersionIsUnavailableNamingIt) {
  GatewayServiceImpl::Options options = DefaultOptions();
  options.quote_version_wait = absl::Milliseconds(100);
  StartGateway(options);
  pricing_.lacking_version = 1000;
  v1::RecommendResponse response;
  const grpc::Status status = Recommend(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("does not hold catalog version \"v1\""));
  EXPECT_GE(pricing_.calls.load(), 2);  // asked again at least once before giving up
}

TEST_F(GatewayServiceTest, CallersDeadlineEndsTheBackendCallInFlight) {
  sizing_.delay = absl::Seconds(5);
  GatewayServiceImpl::Options options = DefaultOptions();
  options.backend_timeout = absl::Seconds(10);  // the caller's deadline is the earlier one
  StartGateway(options);
  v1::RecommendResponse response;
  EXPECT_EQ(Recommend(&response, absl::Milliseconds(200)).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  // Sizing sees the cancellation (its own 5 s would otherwise run out).
  for (int i = 0; i < 400 && sizing_.cancelled == 0; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(sizing_.cancelled.load(), 1);
  // The gateway finished the call and still answers.
  sizing_.delay = absl::ZeroDuration();
  ASSERT_TRUE(Recommend(&response).ok());
  EXPECT_EQ(response.recommendations_size(), 1);
}

TEST_F(GatewayServiceTest, CancellingEndsTheRetryWait) {
  GatewayServiceImpl::Options options = DefaultOptions();
  options.quote_version_wait = absl::Seconds(60);  // far longer than the test waits
  StartGateway(options);
  pricing_.lacking_version = 1'000'000;
  grpc::ClientContext context;
  v1::RecommendResponse response;
  grpc::Status status;
  std::atomic<bool> done{false};
  const v1::RecommendRequest request = Request();
  stub_->async()->Recommend(&context, &request, &response, [&](grpc::Status s) {
    status = std::move(s);
    done = true;
  });
  for (int i = 0; i < 500 && pricing_.calls < 2; ++i) absl::SleepFor(absl::Milliseconds(10));
  ASSERT_GE(pricing_.calls.load(), 2);  // retrying
  context.TryCancel();
  // CANCELLED if a Quote was in flight (gRPC cancels it), UNAVAILABLE if the
  // call was waiting to ask again. The metric names CANCELLED as
  // go-grpc-prometheus does: "Canceled".
  const auto ended = [&] {
    return RecommendsHandled("Canceled") + RecommendsHandled("Unavailable");
  };
  for (int i = 0; i < 1000 && ended() != 1; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(ended(), 1) << metrics_->Serialize();  // the gateway ended it, not the 60 s wait
  const int calls = pricing_.calls;
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(pricing_.calls.load(), calls);  // and asks pricing no more
  for (int i = 0; i < 500 && !done; ++i) absl::SleepFor(absl::Milliseconds(10));
  ASSERT_TRUE(done);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
}

// RecommendLocal (the HTTP front end's in-process Recommend), waited for.
absl::StatusOr<v1::RecommendResponse> RecommendLocal(GatewayServiceImpl& service,
                                                     const std::string& client_key,
                                                     v1::RecommendRequest request,
                                                     absl::Duration deadline = absl::Seconds(5)) {
  std::promise<absl::StatusOr<v1::RecommendResponse>> answered;
  service.RecommendLocal({.client_key = client_key, .deadline = absl::Now() + deadline},
                         std::move(request),
                         [&answered](absl::StatusOr<const v1::RecommendResponse*> answer) {
                           // A copy: the answer lives while this runs.
                           if (!answer.ok()) return answered.set_value(answer.status());
                           answered.set_value(**answer);
                         });
  return answered.get_future().get();
}

TEST_F(GatewayServiceTest, InProcessRecommendAnswersAsTheGrpcMethodAndSharesItsCache) {
  GatewayServiceImpl::Options options = DefaultOptions();
  options.response_cache = &response_cache_;
  options.price_book_version = [] { return std::string("prices-1"); };
  StartGateway(options);
  absl::StatusOr<v1::RecommendResponse> local = RecommendLocal(*service_, "203.0.113.7", Request());
  ASSERT_OK(local);
  ASSERT_EQ(local->recommendations_size(), 1);
  EXPECT_EQ(local->recommendations(0).offer().id(), "lambda/gpu_1x_h100_sxm5/us-east-1");
  // The gRPC call is answered from the cache the in-process one filled, the
  // same answer; and the other way round.
  v1::RecommendResponse over_grpc;
  ASSERT_TRUE(Recommend(&over_grpc).ok());
  EXPECT_EQ(over_grpc.SerializeAsString(), local->SerializeAsString());
  absl::StatusOr<v1::RecommendResponse> cached =
      RecommendLocal(*service_, "203.0.113.7", Request());
  ASSERT_OK(cached);
  EXPECT_EQ(cached->SerializeAsString(), local->SerializeAsString());
  EXPECT_EQ(pricing_.calls.load(), 1);
  EXPECT_EQ(Metric("gpuadvisor_gateway_response_cache_hits_total"), 2);
  EXPECT_EQ(Metric("gpuadvisor_gateway_response_cache_misses_total"), 1);
  EXPECT_EQ(RecommendsHandled("OK"), 3);  // the gRPC server metrics count every one
}

TEST_F(GatewayServiceTest, InProcessRecommendIsRateLimitedPerNamedClient) {
  GatewayServiceImpl::Options options = DefaultOptions();
  options.rate_limit = {.per_second = 0.001, .burst = 1};
  StartGateway(options);
  ASSERT_OK(RecommendLocal(*service_, "203.0.113.7", Request()));
  absl::StatusOr<v1::RecommendResponse> limited =
      RecommendLocal(*service_, "203.0.113.7", Request());
  EXPECT_EQ(limited.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(limited.status().message(), HasSubstr("rate limit"));
  EXPECT_OK(
      RecommendLocal(*service_, "cert:CN=other", Request()));  // another client, its own bucket
  EXPECT_EQ(RecommendsHandled("ResourceExhausted"), 1);
}

TEST_F(GatewayServiceTest, InProcessRecommendEndsAtItsDeadline) {
  sizing_.delay = absl::Seconds(5);
  GatewayServiceImpl::Options options = DefaultOptions();
  options.backend_timeout = absl::Seconds(10);  // the caller's deadline is the earlier one
  StartGateway(options);
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::RecommendResponse> late =
      RecommendLocal(*service_, "203.0.113.7", Request(), absl::Milliseconds(200));
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

}  // namespace
}  // namespace gpuadvisor::gateway
