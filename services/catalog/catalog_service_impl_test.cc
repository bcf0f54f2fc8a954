// The catalog adapter on a real port-0 server, over real files.

#include "services/catalog/catalog_service_impl.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/grpc/server.h"
#include "common/grpc/tls.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/byte_buffer.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::testing::HasSubstr;

constexpr char kOffers[] = R"pb(
  source: "test"
  prices_as_of: "2026-11-29"
  offers {
    id: "lambda/gpu_1x_h100_sxm5/us-east-1"
    provider: "lambda"
    instance_type: "gpu_1x_h100_sxm5"
    region: "us-east-1"
    gpu_model: "H100-SXM"
    gpus_per_node: 1
    nodes: 1
    max_nodes: 1
    link: LINK_TYPE_NONE
    fabric: FABRIC_TYPE_NONE
    on_demand_usd_per_hour: 4.29
    availability: AVAILABILITY_AVAILABLE
    source: "test"
  }
  offers {
    id: "gcp/g2-standard-4/us-central1"
    provider: "gcp"
    instance_type: "g2-standard-4"
    region: "us-central1"
    gpu_model: "L4"
    gpus_per_node: 1
    nodes: 1
    max_nodes: 1
    link: LINK_TYPE_NONE
    fabric: FABRIC_TYPE_NONE
    on_demand_usd_per_hour: 0.71
    spot_usd_per_hour: 0.28
    availability: AVAILABILITY_AVAILABLE
    source: "test"
  }
)pb";

class CatalogServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One file per test: ctest runs the tests of this fixture in parallel.
    offers_path_ = absl::StrCat(::testing::TempDir(), "/catalog_service_test_",
                                ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                                ".", getpid(), ".textproto");
    ASSERT_OK(WriteFileAtomically(offers_path_, kOffers));
    CatalogSources sources;
    sources.gpus_path = absl::StrCat(GPUADVISOR_SOURCE_DIR, "/data/catalog/gpus.textproto");
    sources.offer_paths = {offers_path_};
    store_ = std::make_unique<CatalogStore>(sources);
    service_ = std::make_unique<CatalogServiceImpl>(
        store_.get(), &metrics_,
        CatalogServiceImpl::Options{
            .admin_token = "secret",
            .watch = {.max_watchers = 3, .slow_watcher = absl::Seconds(30)}});
    ASSERT_OK(service_->Reload());
    absl::StatusOr<StartedServer> started = StartServer(ServerOptions(), {service_.get()});
    ASSERT_OK(started);
    server_ = std::move(started->server);
    port_ = started->port;
    stub_ = v1::CatalogService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", started->port), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (service_ != nullptr) service_->Shutdown();
    if (server_ != nullptr) ShutdownServer(*server_, 1);
  }

  grpc::Status Reload(const std::string& token, v1::ReloadCatalogResponse* response) {
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    return stub_->ReloadCatalog(&context, v1::ReloadCatalogRequest(), response);
  }

  int port_ = 0;
  std::string offers_path_;
  Metrics metrics_{"catalog"};
  std::unique_ptr<CatalogStore> store_;
  std::unique_ptr<CatalogServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::CatalogService::Stub> stub_;
};

TEST_F(CatalogServiceTest, ListsGpusAndFilteredOffers) {
  grpc::ClientContext gpus_context;
  v1::ListGpusResponse gpus;
  ASSERT_TRUE(stub_->ListGpus(&gpus_context, v1::ListGpusRequest(), &gpus).ok());
  EXPECT_GT(gpus.gpus_size(), 10);

  grpc::ClientContext context;
  v1::ListOffersRequest request;
  request.set_min_gpu_memory_bytes(40'000'000'000);
  v1::ListOffersResponse offers;
  ASSERT_TRUE(stub_->ListOffers(&context, request, &offers).ok());
  ASSERT_EQ(offers.offers_size(), 1);
  EXPECT_EQ(offers.offers(0).gpu_model(), "H100-SXM");
  EXPECT_FALSE(offers.catalog_version().empty());
}

TEST_F(CatalogServiceTest, ReloadNeedsTheAdminToken) {
  v1::ReloadCatalogResponse response;
  EXPECT_EQ(Reload("", &response).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Reload("wrong", &response).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Reload("secret", &response).ok());
  EXPECT_EQ(response.offers(), 2);
}

TEST_F(CatalogServiceTest, BadFileIsRejectedAndTheOldCatalogKeepsServing) {
  const std::string before = store_->Current()->snapshot().version();
  // Half-written: the file ends inside an offer.
  const std::string text = kOffers;
  ASSERT_OK(WriteFileAtomically(offers_path_, text.substr(0, text.size() / 2)));
  v1::ReloadCatalogResponse response;
  const grpc::Status status = Reload("secret", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr(offers_path_));
  EXPECT_THAT(status.error_message(), HasSubstr("previous catalog still serving"));
  EXPECT_EQ(store_->Current()->snapshot().version(), before);
  EXPECT_THAT(metrics_.Serialize(),
              HasSubstr("gpuadvisor_data_loads_total{result=\"rejected\",service=\"catalog\"} 1"));

  grpc::ClientContext context;
  v1::ListOffersResponse offers;
  ASSERT_TRUE(stub_->ListOffers(&context, v1::ListOffersRequest(), &offers).ok());
  EXPECT_EQ(offers.offers_size(), 2);
}

TEST_F(CatalogServiceTest, WatchStreamsTheCurrentSnapshotThenEachReload) {
  grpc::ClientContext context;
  auto reader = stub_->WatchCatalog(&context, v1::WatchCatalogRequest());
  reader->WaitForInitialMetadata();
  EXPECT_EQ(context.GetServerInitialMetadata().count(kWatchVersionHeader), 1u);
  v1::WatchCatalogResponse first;
  ASSERT_TRUE(reader->Read(&first));
  EXPECT_EQ(first.snapshot().offers_size(), 2);

  std::string text = kOffers;
  text.replace(text.find("4.29"), 4, "3.99");
  ASSERT_OK(WriteFileAtomically(offers_path_, text));
  v1::ReloadCatalogResponse reloaded;
  ASSERT_TRUE(Reload("secret", &reloaded).ok());

  v1::WatchCatalogResponse second;
  ASSERT_TRUE(reader->Read(&second));
  EXPECT_EQ(second.snapshot().version(), reloaded.catalog_version());
  EXPECT_NE(second.snapshot().version(), first.snapshot().version());
  context.TryCancel();
}

TEST_F(CatalogServiceTest, WatchMethodIndexFollowsTheProto) {
  EXPECT_EQ(MethodIndex("gpuadvisor.catalog.v1.CatalogService", "WatchCatalog"), 2);
  EXPECT_EQ(MethodIndex("gpuadvisor.catalog.v1.CatalogService", "ReloadCatalog"), 3);
  EXPECT_EQ(MethodIndex("gpuadvisor.catalog.v1.CatalogService", "Nope"), -1);
}

// The token is checked before the body is read: a body that is not even a
// valid message gets UNAUTHENTICATED, not a parse error (it is never decoded).
TEST_F(CatalogServiceTest, ReloadChecksTheTokenBeforeReadingTheBody) {
  auto channel =
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  const std::string garbage(100'000, '\xff');
  auto call = [&](const std::string& token) {
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    grpc::Slice slice(garbage);
    grpc::ByteBuffer request(&slice, 1), response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, "/gpuadvisor.catalog.v1.CatalogService/ReloadCatalog",
                   grpc::StubOptions(), &request, &response,
                   [&](grpc::Status s) { done.set_value(std::move(s)); });
    return done.get_future().get();
  };
  EXPECT_EQ(call("").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(call("wrong").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  // Authenticated, the body is read and found bad.
  EXPECT_EQ(call("secret").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(CatalogServiceTest, WatchersAreCappedAndShareOneEncodingPerVersion) {
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::WatchCatalogResponse>>> readers;
  for (int i = 0; i < 3; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    readers.push_back(stub_->WatchCatalog(contexts.back().get(), v1::WatchCatalogRequest()));
    v1::WatchCatalogResponse first;
    ASSERT_TRUE(readers.back()->Read(&first));
    EXPECT_EQ(first.snapshot().offers_size(), 2);
  }
  EXPECT_EQ(service_->watch_hub().watchers(), 3);
  // Three watchers of one version: one encoding.
  EXPECT_EQ(WatchHub::live_encodings(), 1);

  grpc::ClientContext fourth_context;
  auto fourth = stub_->WatchCatalog(&fourth_context, v1::WatchCatalogRequest());
  v1::WatchCatalogResponse unused;
  EXPECT_FALSE(fourth->Read(&unused));
  const grpc::Status refused = fourth->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("too many watchers"));

  for (auto& context : contexts) context->TryCancel();
  for (auto& reader : readers) reader->Finish();
}

TEST_F(CatalogServiceTest, WatchSendsHeartbeatsWhenAsked) {
  grpc::ClientContext context;
  v1::WatchCatalogRequest request;
  request.set_heartbeat_interval_millis(100);
  auto reader = stub_->WatchCatalog(&context, request);
  reader->WaitForInitialMetadata();
  auto header = context.GetServerInitialMetadata().find(kWatchHeartbeatHeader);
  ASSERT_NE(header, context.GetServerInitialMetadata().end());
  EXPECT_EQ(std::string(header->second.data(), header->second.size()), "100");
  v1::WatchCatalogResponse first;
  ASSERT_TRUE(reader->Read(&first));
  EXPECT_TRUE(first.has_snapshot());
  v1::WatchCatalogResponse beat;
  ASSERT_TRUE(reader->Read(&beat));
  EXPECT_FALSE(beat.has_snapshot());
  EXPECT_GT(beat.heartbeat_unix_millis(), 0);
  context.TryCancel();
}

TEST_F(CatalogServiceTest, WatchWithoutHeartbeatsStaysQuiet) {
  grpc::ClientContext context;
  auto reader = stub_->WatchCatalog(&context, v1::WatchCatalogRequest());
  reader->WaitForInitialMetadata();
  EXPECT_EQ(context.GetServerInitialMetadata().count(kWatchHeartbeatHeader), 0u);
  context.TryCancel();
}

// TLS with optional client certificates: anyone with the CA may read, but an
// admin change needs a verified client certificate as well as the token, and
// each attempt is written as an AUDIT line naming the certificate.
TEST_F(CatalogServiceTest, AdminOverTlsNeedsAClientCertificateAndIsAudited) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/catalog_tls_", getpid());
  ASSERT_EQ(
      std::system(absl::StrCat("bash ", GPUADVISOR_SOURCE_DIR, "/tests/testing/make_certs.sh ", dir)
                      .c_str()),
      0);
  ServerOptions options;
  options.tls = {dir + "/server.pem", dir + "/server.key", dir + "/ca.pem"};
  options.client_auth = ClientAuth::kOptional;
  absl::StatusOr<StartedServer> tls_server = StartServer(options, {service_.get()});
  ASSERT_OK(tls_server);
  const std::string address = absl::StrCat("127.0.0.1:", tls_server->port);
  auto stub_with = [&](const TlsFiles& files) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        ChannelCredentialsFor(files);
    EXPECT_OK(credentials);
    return v1::CatalogService::NewStub(grpc::CreateChannel(address, *credentials));
  };
  auto reload = [](v1::CatalogService::Stub& stub) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    context.AddMetadata("authorization", "Bearer secret");
    v1::ReloadCatalogResponse response;
    return stub.ReloadCatalog(&context, v1::ReloadCatalogRequest(), &response);
  };
  // Plaintext cannot talk to a TLS port.
  auto plaintext =
      v1::CatalogService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  EXPECT_EQ(reload(*plaintext).error_code(), grpc::StatusCode::UNAVAILABLE);
  // Server-verified TLS without a client certificate: reads work, admin does not.
  TlsFiles ca_only;
  ca_only.ca_path = dir + "/ca.pem";
  auto anonymous = stub_with(ca_only);
  grpc::ClientContext list_context;
  v1::ListGpusResponse gpus;
  EXPECT_TRUE(anonymous->ListGpus(&list_context, v1::ListGpusRequest(), &gpus).ok());
  ::testing::internal::CaptureStderr();
  const grpc::Status denied = reload(*anonymous);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(denied.error_message(), HasSubstr("client certificate"));
  // With the admin's certificate: allowed, and audited with its identity.
  auto admin = stub_with({dir + "/client.pem", dir + "/client.key", dir + "/ca.pem"});
  EXPECT_TRUE(reload(*admin).ok());
  const std::string audit = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(audit, HasSubstr("rpc=ReloadCatalog caller=\"unauthenticated peer"));
  EXPECT_THAT(audit, HasSubstr("outcome=denied"));
  EXPECT_THAT(audit, HasSubstr("caller=\"CN=admin-ops"));
  EXPECT_THAT(audit, HasSubstr("outcome=ok"));
  ShutdownServer(*tls_server->server, 0);
}

}  // namespace
}  // namespace gpuadvisor::catalog
