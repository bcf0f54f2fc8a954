// The pricing adapter on a real port-0 server, over the real billing data.

#include "services/pricing/pricing_service_impl.h"

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc/server.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "services/pricing/price_loader.h"
#include "services/pricing/pricing_server_fixture.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::pricing {
namespace {

catalog::v1::CatalogSnapshot Offers() {
  catalog::v1::CatalogSnapshot snapshot;
  catalog::v1::Offer* offer = snapshot.add_offers();
  offer->set_id("aws/p5.48xlarge/us-east-1");
  offer->set_provider("aws");
  offer->set_instance_type("p5.48xlarge");
  offer->set_region("us-east-1");
  offer->set_gpu_model("H100-SXM");
  offer->set_gpus_per_node(8);
  offer->set_on_demand_usd_per_hour(55.04);
  offer->set_spot_usd_per_hour(20.0);
  return snapshot;
}

class PricingServiceTest : public PricingServerTest {
 protected:
  void SetUp() override { StartServing(Offers(), "secret"); }

  grpc::Status Update(const std::string& token, double price, v1::UpdatePricesResponse* response) {
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    v1::UpdatePricesRequest request;
    v1::OfferPrice* p = request.add_prices();
    p->set_offer_id("aws/p5.48xlarge/us-east-1");
    p->set_provider("aws");
    p->set_gpu_model("H100-SXM");
    p->set_on_demand_usd_per_hour(price);
    p->set_spot_usd_per_hour(18.0);
    return stub_->UpdatePrices(&context, request, response);
  }

  double QuoteOnDemandPerHour() {
    grpc::ClientContext context;
    v1::QuoteRequest request;
    v1::QuoteItem* item = request.add_items();
    item->set_offer_id("aws/p5.48xlarge/us-east-1");
    item->set_nodes(2);
    item->set_hours(10);
    item->set_purchase_option(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
    v1::QuoteResponse response;
    EXPECT_TRUE(stub_->Quote(&context, request, &response).ok());
    EXPECT_EQ(response.quotes_size(), 1);
    EXPECT_TRUE(response.quotes(0).priced());
    return response.quotes(0).cost().usd_per_hour();
  }
};

TEST_F(PricingServiceTest, QuotesAWholeJob) { EXPECT_DOUBLE_EQ(QuoteOnDemandPerHour(), 2 * 55.04); }

TEST_F(PricingServiceTest, UpdatesNeedTheTokenAndAreAllOrNothing) {
  v1::UpdatePricesResponse response;
  EXPECT_EQ(Update("", 50, &response).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Update("nope", 50, &response).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Update("secret", -3, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_DOUBLE_EQ(QuoteOnDemandPerHour(), 2 * 55.04);  // the old book still serves

  const std::string before = store_.Current()->data().version();
  ASSERT_TRUE(Update("secret", 50, &response).ok());
  EXPECT_NE(response.price_book_version(), before);
  EXPECT_DOUBLE_EQ(QuoteOnDemandPerHour(), 100);
  EXPECT_THAT(metrics_.Serialize(),
              ::testing::HasSubstr(
                  "gpuadvisor_data_loads_total{result=\"rejected\",service=\"pricing\"} 1"));
}

TEST_F(PricingServiceTest, WatchSeesEachNewBook) {
  grpc::ClientContext context;
  auto reader = stub_->WatchPrices(&context, v1::WatchPricesRequest());
  v1::WatchPricesResponse first;
  ASSERT_TRUE(reader->Read(&first));
  v1::UpdatePricesResponse updated;
  ASSERT_TRUE(Update("secret", 48, &updated).ok());
  v1::WatchPricesResponse second;
  ASSERT_TRUE(reader->Read(&second));
  EXPECT_EQ(second.price_book().version(), updated.price_book_version());
  context.TryCancel();
}

int ProcessThreads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// WatchPrices on the shared watch design: watchers that never read hold no
// thread each (before: a sync handler thread per stream), and a watcher that
// asks for heartbeats gets them while nothing changes.
TEST_F(PricingServiceTest, WatchersShareTheHubAndGetHeartbeats) {
  const int threads_before = ProcessThreads();
  ASSERT_GT(threads_before, 0);
  constexpr int kWatchers = 40;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::WatchPricesResponse>>> readers;
  for (int i = 0; i < kWatchers; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    readers.push_back(stub_->WatchPrices(contexts.back().get(), v1::WatchPricesRequest()));
  }
  ASSERT_EQ(readers.size(), static_cast<size_t>(kWatchers));
  for (int i = 0; i < 100 && service_->watch_hub().watchers() < kWatchers; ++i) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(service_->watch_hub().watchers(), kWatchers);
  EXPECT_LT(ProcessThreads() - threads_before, kWatchers / 2);

  grpc::ClientContext context;
  v1::WatchPricesRequest request;
  request.set_heartbeat_interval_millis(100);
  auto reader = stub_->WatchPrices(&context, request);
  v1::WatchPricesResponse first, heartbeat;
  ASSERT_TRUE(reader->Read(&first));
  EXPECT_TRUE(first.has_price_book());
  ASSERT_TRUE(reader->Read(&heartbeat));
  EXPECT_FALSE(heartbeat.has_price_book());
  EXPECT_GT(heartbeat.heartbeat_unix_millis(), 0);
  context.TryCancel();
  for (auto& c : contexts) c->TryCancel();
}

TEST_F(PricingServiceTest, UpdatesOfUnknownOffersOrAbsurdPricesAreRejected) {
  v1::UpdatePricesResponse response;
  EXPECT_EQ(Update("secret", 1.7e308, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer secret");
  v1::UpdatePricesRequest request;
  request.add_prices()->set_offer_id("made/up/offer");
  request.mutable_prices(0)->set_provider("made");
  request.mutable_prices(0)->set_on_demand_usd_per_hour(1);
  const grpc::Status status = stub_->UpdatePrices(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("unknown offer"));
  EXPECT_EQ(store_.Current()->size(), 1);  // the book did not grow
  EXPECT_DOUBLE_EQ(QuoteOnDemandPerHour(), 2 * 55.04);
}

// A quote names the catalog version its caller used: the book of that
// version prices it, even after a newer catalog arrived; a version pricing
// does not hold is FAILED_PRECONDITION, never another version's prices.
TEST_F(PricingServiceTest, QuotesTheCatalogVersionTheCallerUsed) {
  catalog::v1::CatalogSnapshot v1_offers = Offers();
  v1_offers.set_version("catalog-v1");
  catalog::v1::CatalogSnapshot v2_offers = Offers();
  v2_offers.set_version("catalog-v2");
  v2_offers.mutable_offers(0)->set_on_demand_usd_per_hour(60);
  const std::string billing =
      absl::StrCat(GPUADVISOR_SOURCE_DIR, "/data/pricing/billing.textproto");
  absl::StatusOr<std::shared_ptr<const PriceBook>> v1_book = LoadPriceBook(billing, v1_offers);
  absl::StatusOr<std::shared_ptr<const PriceBook>> v2_book = LoadPriceBook(billing, v2_offers);
  ASSERT_OK(v1_book);
  ASSERT_OK(v2_book);
  store_.Set(*v1_book);
  store_.Set(*v2_book);

  auto quote = [&](const std::string& version, v1::QuoteResponse* response) {
    grpc::ClientContext context;
    v1::QuoteRequest request;
    request.set_catalog_version(version);
    v1::QuoteItem* item = request.add_items();
    item->set_offer_id("aws/p5.48xlarge/us-east-1");
    item->set_nodes(1);
    item->set_hours(1);
    return stub_->Quote(&context, request, response);
  };
  v1::QuoteResponse response;
  ASSERT_TRUE(quote("catalog-v1", &response).ok());
  EXPECT_EQ(response.catalog_version(), "catalog-v1");
  EXPECT_DOUBLE_EQ(response.quotes(0).cost().usd_per_hour(), 55.04);
  ASSERT_TRUE(quote("catalog-v2", &response).ok());
  EXPECT_EQ(response.catalog_version(), "catalog-v2");
  EXPECT_DOUBLE_EQ(response.quotes(0).cost().usd_per_hour(), 60);
  const grpc::Status unknown = quote("catalog-v3", &response);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(unknown.error_message(), ::testing::HasSubstr("catalog-v3"));
}

TEST_F(PricingServiceTest, ExportsWhenThePricesWereTaken) {
  ASSERT_NE(store_.Current()->prices_as_of(), absl::InfinitePast());
  const double as_of = absl::ToDoubleSeconds(store_.Current()->prices_as_of() - absl::UnixEpoch());
  EXPECT_THAT(metrics_.Serialize(), ::testing::HasSubstr(absl::StrCat(
                                        "gpuadvisor_pricing_prices_as_of_timestamp_seconds ",
                                        static_cast<int64_t>(as_of))));
}

}  // namespace
}  // namespace gpuadvisor::pricing
