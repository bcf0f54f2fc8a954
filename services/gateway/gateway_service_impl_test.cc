// The gateway adapter against backends on their own port-0 servers. The
// backends here are small fakes (as in gRPC's own end-to-end tests) because
// the behaviour under test is how the gateway reacts to what a backend says:
// errors, slowness, restarts. The real backends are exercised end to end in
// tests/integration.

#include "services/gateway/gateway_service_impl.h"

#include <atomic>
#include <thread>

#include "absl/time/clock.h"
#include "common/grpc/server.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
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
  grpc::Status WatchCatalog(grpc::ServerContext* context, const catalog::v1::WatchCatalogRequest* request,
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
  grpc::Status Estimate(grpc::ServerContext*, const sizing::v1::EstimateRequest* request,
                        sizing::v1::EstimateResponse* response) override {
    absl::SleepFor(delay);
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
};

class FakePricing final : public pricing::v1::PricingService::Service {
 public:
  grpc::Status Quote(grpc::ServerContext*, const pricing::v1::QuoteRequest* request,
                     pricing::v1::QuoteResponse* response) override {
    if (!answer.ok()) return answer;
    response->set_catalog_version(request->catalog_version());
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
};

class GatewayServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto [service, server, port] : {std::tuple<grpc::Service*, std::unique_ptr<grpc::Server>*, int*>{
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
        catalog::CatalogReplica::Options{.cache_path = "", .retry_interval = absl::Milliseconds(100), .on_snapshot = nullptr, .on_rejected = nullptr});
    replica_->Start();
    ASSERT_TRUE(replica_->WaitUntilLoaded(absl::Seconds(10)));
    GatewayServiceImpl::Options options;
    options.backend_timeout = absl::Milliseconds(300);
    service_ = std::make_unique<GatewayServiceImpl>(
        replica_.get(), sizing::v1::SizingService::NewStub(Channel(sizing_port_)),
        pricing::v1::PricingService::NewStub(Channel(pricing_port_)), &metrics_, options);
    absl::StatusOr<StartedServer> gateway = StartServer(ServerOptions(), {service_.get()});
    ASSERT_OK(gateway);
    gateway_server_ = std::move(gateway->server);
    stub_ = v1::GatewayService::NewStub(Channel(gateway->port));
  }

  void TearDown() override {
    gateway_server_->Shutdown();
    replica_->Stop();
    for (auto* server : {&catalog_server_, &sizing_server_, &pricing_server_}) {
      if (*server) ShutdownServer(**server, 0.1);
    }
  }

  static std::shared_ptr<grpc::Channel> Channel(int port) {
    return grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
  }

  grpc::Status Recommend(v1::RecommendResponse* response) {
    v1::RecommendRequest request;
    request.mutable_workload()->set_task(sizing::v1::TASK_LORA);
    request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
    request.mutable_workload()->set_train_tokens(5e7);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return stub_->Recommend(&context, request, response);
  }

  FakeCatalog catalog_;
  FakeSizing sizing_;
  FakePricing pricing_;
  std::unique_ptr<grpc::Server> catalog_server_, sizing_server_, pricing_server_, gateway_server_;
  int catalog_port_ = 0, sizing_port_ = 0, pricing_port_ = 0;
  Metrics metrics_{"gateway"};
  std::unique_ptr<catalog::CatalogReplica> replica_;
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
  EXPECT_THAT(metrics_.Serialize(), HasSubstr("grpc_client_handled_total{grpc_code=\"OK\",grpc_method=\"Estimate\""));
}

TEST_F(GatewayServiceTest, SizingRejectionOfTheWorkloadPassesThrough) {
  sizing_.answer = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "workload.model.params: must be > 0");
  v1::RecommendResponse response;
  const grpc::Status status = Recommend(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "workload.model.params: must be > 0");
}

TEST_F(GatewayServiceTest, PricingRejectingTheGatewaysRequestIsInternal) {
  pricing_.answer = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "items[0].hours: must be >= 0");
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
  absl::SleepFor(absl::Milliseconds(1200));
  EXPECT_GE(replica_->AgeSeconds(), 1.0);
  v1::RecommendResponse response;
  ASSERT_TRUE(Recommend(&response).ok());
  EXPECT_EQ(response.recommendations_size(), 1);
  EXPECT_GE(response.catalog_age_seconds(), 1);
  metrics_.AddCollectable(std::make_shared<CatalogAgeCollector>(replica_.get()));
  EXPECT_THAT(metrics_.Serialize(), ::testing::ContainsRegex("gpuadvisor_gateway_catalog_age_seconds [1-9]"));
}

}  // namespace
}  // namespace gpuadvisor::gateway
