// The sizing adapter on a real port-0 server, over the real presets and GPU specs.

#include "services/sizing/sizing_service_impl.h"

#include <unistd.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/grpc/server.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog_service_impl.h"
#include "services/catalog/catalog_store.h"
#include "services/sizing/catalog_gpus.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::sizing {
namespace {

class SizingServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<SizingModel> model = SizingModel::FromDataDir(GPUADVISOR_SOURCE_DIR "/data");
    ASSERT_OK(model);
    service_ = std::make_unique<SizingServiceImpl>(
        std::make_shared<const SizingModel>(std::move(*model)), &metrics_);
    absl::StatusOr<StartedServer> started = StartServer(ServerOptions(), {service_.get()});
    ASSERT_OK(started);
    server_ = std::move(started->server);
    stub_ = v1::SizingService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", started->port), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override { ShutdownServer(*server_, 1); }

  Metrics metrics_{"sizing"};
  std::unique_ptr<SizingServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::SizingService::Stub> stub_;
};

TEST_F(SizingServiceTest, EstimatesEachConfigurationInOrder) {
  v1::EstimateRequest request;
  request.mutable_workload()->set_task(v1::TASK_INFERENCE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  request.mutable_workload()->set_context_length(4096);
  request.mutable_workload()->set_concurrent_sequences(1);
  for (const char* gpu : {"L4", "H100-SXM", "T4"}) {
    v1::GpuConfiguration* config = request.add_configurations();
    config->set_gpu_model(gpu);
    config->set_gpus_per_node(1);
    config->set_nodes(1);
  }
  grpc::ClientContext context;
  v1::EstimateResponse response;
  ASSERT_TRUE(stub_->Estimate(&context, request, &response).ok());
  ASSERT_EQ(response.estimates_size(), 3);
  EXPECT_TRUE(response.estimates(1).fits());   // 80 GB
  EXPECT_FALSE(response.estimates(2).fits());  // 16 GB is too small for 16 GB of bf16 weights
  EXPECT_GT(response.totals().weights_bytes(), 15e9);
}

TEST_F(SizingServiceTest, BadWorkloadIsInvalidArgumentNamingTheField) {
  v1::EstimateRequest request;
  request.mutable_workload()->set_task(v1::TASK_PRETRAIN);
  request.mutable_workload()->mutable_model()->set_params(-1);
  v1::GpuConfiguration* config = request.add_configurations();
  config->set_gpu_model("H100-SXM");
  config->set_gpus_per_node(1);
  config->set_nodes(1);
  grpc::ClientContext context;
  v1::EstimateResponse response;
  const grpc::Status status = stub_->Estimate(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("workload.model.params"));
}

TEST_F(SizingServiceTest, ListsThePresets) {
  grpc::ClientContext context;
  v1::ListModelsResponse response;
  ASSERT_TRUE(stub_->ListModels(&context, v1::ListModelsRequest(), &response).ok());
  EXPECT_GE(response.models_size(), 20);
  EXPECT_THAT(metrics_.Serialize(), ::testing::HasSubstr("grpc_method=\"ListModels\""));
}

// Every answer names the model: the same data gives the same fingerprint (in
// Estimate and ListModels); other data (one preset fewer) another.
TEST_F(SizingServiceTest, AnswersNameTheModelByItsDataAndBuild) {
  v1::EstimateRequest request;
  request.mutable_workload()->set_task(v1::TASK_INFERENCE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  v1::GpuConfiguration* config = request.add_configurations();
  config->set_gpu_model("H100-SXM");
  config->set_gpus_per_node(1);
  config->set_nodes(1);
  grpc::ClientContext estimate_context;
  v1::EstimateResponse estimate;
  ASSERT_TRUE(stub_->Estimate(&estimate_context, request, &estimate).ok());
  EXPECT_THAT(estimate.model_fingerprint(), ::testing::MatchesRegex("[0-9a-f]{16}"));
  grpc::ClientContext list_context;
  v1::ListModelsResponse list;
  ASSERT_TRUE(stub_->ListModels(&list_context, v1::ListModelsRequest(), &list).ok());
  EXPECT_EQ(list.model_fingerprint(), estimate.model_fingerprint());

  absl::StatusOr<SizingModel> same = SizingModel::FromDataDir(GPUADVISOR_SOURCE_DIR "/data");
  ASSERT_OK(same);
  EXPECT_EQ(SizingServiceImpl(std::make_shared<const SizingModel>(*same), &metrics_).fingerprint(),
            estimate.model_fingerprint());
  v1::ModelList fewer;
  ASSERT_OK(LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/sizing/models.textproto", &fewer));
  ASSERT_GT(fewer.models_size(), 1);
  fewer.mutable_models()->RemoveLast();
  catalog::v1::GpuList gpus;
  ASSERT_OK(LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/catalog/gpus.textproto", &gpus));
  absl::StatusOr<SizingModel> other = SizingModel::Create(fewer, gpus);
  ASSERT_OK(other);
  EXPECT_NE(other->data_fingerprint(), same->data_fingerprint());
  EXPECT_NE(SizingServiceImpl(std::make_shared<const SizingModel>(*other), &metrics_).fingerprint(),
            estimate.model_fingerprint());
}

// The GPU specs come from a real catalog service (ListGpus over a port-0
// server on the shipped data), not from sizing's own reading of the file:
// the same GPUs, the catalog's spellings resolve, and the answers equal the
// file path's.
TEST(SizingFromCatalog, GpuSpecsComeThroughListGpus) {
  const std::string offers =
      absl::StrCat(::testing::TempDir(), "/sizing_from_catalog.", getpid(), ".textproto");
  ASSERT_OK(WriteFileAtomically(offers, R"pb(
    source: "test"
    prices_as_of: "2026-12-04"
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
  )pb"));
  catalog::CatalogSources sources;
  sources.gpus_path = GPUADVISOR_SOURCE_DIR "/data/catalog/gpus.textproto";
  sources.offer_paths = {offers};
  catalog::CatalogStore store(sources);
  Metrics metrics("catalog");
  catalog::CatalogServiceImpl catalog_service(&store, &metrics,
                                              catalog::CatalogServiceImpl::Options{});
  ASSERT_OK(catalog_service.Reload());
  absl::StatusOr<StartedServer> started = StartServer(ServerOptions(), {&catalog_service});
  ASSERT_OK(started);
  auto stub = catalog::v1::CatalogService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", started->port), grpc::InsecureChannelCredentials()));

  absl::StatusOr<catalog::v1::GpuList> gpus = FetchCatalogGpus(*stub, absl::Seconds(10));
  ASSERT_OK(gpus);
  catalog::v1::GpuList file;
  ASSERT_OK(LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/catalog/gpus.textproto", &file));
  ASSERT_GT(file.gpus_size(), 0);
  EXPECT_EQ(gpus->gpus_size(), file.gpus_size());
  absl::StatusOr<SizingModel> from_catalog =
      SizingModel::FromDataDir(GPUADVISOR_SOURCE_DIR "/data", *gpus);
  ASSERT_OK(from_catalog);
  absl::StatusOr<SizingModel> from_file = SizingModel::FromDataDir(GPUADVISOR_SOURCE_DIR "/data");
  ASSERT_OK(from_file);
  // A spelling only the catalog's resolver knows.
  ASSERT_NE(from_catalog->FindGpu("NVIDIA H100 SXM5"), nullptr);
  EXPECT_EQ(from_catalog->FindGpu("NVIDIA H100 SXM5")->name, "H100-SXM");

  v1::EstimateRequest request;
  request.mutable_workload()->set_task(v1::TASK_INFERENCE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  v1::GpuConfiguration* c = request.add_configurations();
  c->set_gpu_model("H100-SXM");
  c->set_gpus_per_node(1);
  c->set_nodes(1);
  absl::StatusOr<v1::EstimateResponse> a = from_catalog->Estimate(request);
  absl::StatusOr<v1::EstimateResponse> b = from_file->Estimate(request);
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(a->estimates(0).tokens_per_second(), b->estimates(0).tokens_per_second());
  EXPECT_GT(a->estimates(0).tokens_per_second(), 0);

  // No catalog: kUnavailable after the wait, naming the call.
  ShutdownServer(*started->server, 1);
  EXPECT_THAT(FetchCatalogGpus(*stub, absl::Milliseconds(300), absl::Milliseconds(100)),
              ::gpuadvisor::testing::StatusIs(absl::StatusCode::kUnavailable,
                                              ::testing::HasSubstr("ListGpus")));

  // A server waiting without a limit (sizing_server): stopped, it gives up
  // with kCancelled; still waiting when the catalog comes up, it gets the list.
  absl::Notification stopped;
  stopped.Notify();
  EXPECT_THAT(WaitForCatalogGpus(*stub, stopped, absl::Milliseconds(200)),
              ::gpuadvisor::testing::StatusIs(absl::StatusCode::kCancelled));
  absl::Notification never;
  absl::StatusOr<catalog::v1::GpuList> waited;
  std::thread waiter([&] { waited = WaitForCatalogGpus(*stub, never, absl::Milliseconds(200)); });
  ServerOptions same_port;
  same_port.port = started->port;
  absl::StatusOr<StartedServer> restarted = StartServer(same_port, {&catalog_service});
  ASSERT_OK(restarted);
  waiter.join();
  ASSERT_OK(waited);
  EXPECT_EQ(waited->gpus_size(), file.gpus_size());
  ShutdownServer(*restarted->server, 1);
  catalog_service.Shutdown();
}

// Before the catalog has answered, sizing_server's service has no model: its
// calls are UNAVAILABLE (and main() reports NOT_SERVING); once the model is
// set they are answered, with its fingerprint.
TEST(SizingServiceWithoutModel, AnswersUnavailableUntilTheModelIsSet) {
  Metrics metrics("sizing");
  SizingServiceImpl service(nullptr, &metrics);
  EXPECT_FALSE(service.has_model());
  EXPECT_EQ(service.fingerprint(), "");
  absl::StatusOr<StartedServer> started = StartServer(ServerOptions(), {&service});
  ASSERT_OK(started);
  auto stub = v1::SizingService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", started->port), grpc::InsecureChannelCredentials()));
  v1::EstimateRequest request;
  request.mutable_workload()->set_task(v1::TASK_INFERENCE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  v1::GpuConfiguration* c = request.add_configurations();
  c->set_gpu_model("H100-SXM");
  c->set_gpus_per_node(1);
  c->set_nodes(1);
  {
    grpc::ClientContext context;
    v1::EstimateResponse response;
    const grpc::Status s = stub->Estimate(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(s.error_message(), ::testing::HasSubstr("catalog"));
    grpc::ClientContext list_context;
    v1::ListModelsResponse models;
    EXPECT_EQ(stub->ListModels(&list_context, v1::ListModelsRequest(), &models).error_code(),
              grpc::StatusCode::UNAVAILABLE);
  }
  absl::StatusOr<SizingModel> model = SizingModel::FromDataDir(GPUADVISOR_SOURCE_DIR "/data");
  ASSERT_OK(model);
  service.SetModel(std::make_shared<const SizingModel>(*std::move(model)));
  EXPECT_TRUE(service.has_model());
  grpc::ClientContext context;
  v1::EstimateResponse response;
  ASSERT_TRUE(stub->Estimate(&context, request, &response).ok());
  ASSERT_EQ(response.estimates_size(), 1);
  EXPECT_GT(response.estimates(0).tokens_per_second(), 0);
  EXPECT_FALSE(response.model_fingerprint().empty());
  EXPECT_EQ(response.model_fingerprint(), service.fingerprint());
  ShutdownServer(*started->server, 1);
}

}  // namespace
}  // namespace gpuadvisor::sizing
