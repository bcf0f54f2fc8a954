// GatewayService.ListOffers / ListGpus / ListModels against the four real
// binaries: the gateway alone answers what the catalog and sizing answer, and
// keeps listing offers from its replica after the catalog service dies.

#include <csignal>
#include <string>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gpuadvisor/catalog/v1/catalog.grpc.pb.h"
#include "gpuadvisor/sizing/v1/sizing.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "tests/integration/stack.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::testing {
namespace {

using ::testing::IsEmpty;
using ::testing::Not;

std::unique_ptr<grpc::ClientContext> Deadline(int seconds = 20) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return context;
}

std::shared_ptr<grpc::Channel> Channel(const ServiceProcess& process) {
  return grpc::CreateChannel(process.grpc_address(), grpc::InsecureChannelCredentials());
}

catalog::v1::ListOffersRequest H100Offers() {
  catalog::v1::ListOffersRequest request;
  request.add_gpu_models("h100");
  request.set_page_size(1000);
  return request;
}

std::vector<std::string> Ids(const catalog::v1::ListOffersResponse& response) {
  std::vector<std::string> ids;
  for (const auto& offer : response.offers()) ids.push_back(offer.id());
  return ids;
}

TEST(GatewayPassThrough, ListsWhatTheCatalogAndSizingList) {
  absl::StatusOr<Stack> stack = Stack::Start();
  ASSERT_OK(stack);
  auto gateway = stack->GatewayStub();
  auto catalog = catalog::v1::CatalogService::NewStub(Channel(*stack->catalog));
  auto sizing = sizing::v1::SizingService::NewStub(Channel(*stack->sizing));

  catalog::v1::ListOffersResponse direct, via;
  ASSERT_TRUE(catalog->ListOffers(Deadline().get(), H100Offers(), &direct).ok());
  ASSERT_TRUE(gateway->ListOffers(Deadline().get(), H100Offers(), &via).ok());
  ASSERT_THAT(direct.offers(), Not(IsEmpty()));
  EXPECT_EQ(Ids(via), Ids(direct));
  EXPECT_EQ(via.total_size(), direct.total_size());
  EXPECT_EQ(via.catalog_version(), direct.catalog_version());

  catalog::v1::ListGpusResponse gpus_direct, gpus_via;
  ASSERT_TRUE(catalog->ListGpus(Deadline().get(), {}, &gpus_direct).ok());
  ASSERT_TRUE(gateway->ListGpus(Deadline().get(), {}, &gpus_via).ok());
  ASSERT_THAT(gpus_direct.gpus(), Not(IsEmpty()));
  EXPECT_EQ(gpus_via.SerializeAsString(), gpus_direct.SerializeAsString());

  sizing::v1::ListModelsResponse models_direct, models_via;
  ASSERT_TRUE(sizing->ListModels(Deadline().get(), {}, &models_direct).ok());
  ASSERT_TRUE(gateway->ListModels(Deadline().get(), {}, &models_via).ok());
  ASSERT_THAT(models_direct.models(), Not(IsEmpty()));
  EXPECT_EQ(models_via.SerializeAsString(), models_direct.SerializeAsString());

  // The catalog's own validation reaches the caller unchanged.
  catalog::v1::ListOffersRequest bad;
  bad.set_page_token("not-a-token");
  const grpc::Status status = gateway->ListOffers(Deadline().get(), bad, &via);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
}

TEST(GatewayPassThrough, OffersAndGpusOutliveTheCatalogModelsNeedSizing) {
  absl::StatusOr<Stack> stack = Stack::Start();
  ASSERT_OK(stack);
  auto gateway = stack->GatewayStub();
  catalog::v1::ListOffersResponse before, after;
  ASSERT_TRUE(gateway->ListOffers(Deadline().get(), H100Offers(), &before).ok());
  ASSERT_THAT(before.offers(), Not(IsEmpty()));

  stack->catalog->Stop(SIGTERM);
  ASSERT_TRUE(gateway->ListOffers(Deadline().get(), H100Offers(), &after).ok());
  EXPECT_EQ(Ids(after), Ids(before));
  catalog::v1::ListGpusResponse gpus;
  ASSERT_TRUE(gateway->ListGpus(Deadline().get(), {}, &gpus).ok());
  EXPECT_THAT(gpus.gpus(), Not(IsEmpty()));

  stack->sizing->Stop(SIGKILL);
  sizing::v1::ListModelsResponse models;
  const grpc::Status status = gateway->ListModels(Deadline(10).get(), {}, &models);
  EXPECT_THAT(status.error_code(),
              ::testing::AnyOf(grpc::StatusCode::UNAVAILABLE, grpc::StatusCode::DEADLINE_EXCEEDED));
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("sizing"));
}

}  // namespace
}  // namespace gpuadvisor::testing
