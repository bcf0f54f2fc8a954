// Two replicas of every service, as real processes on loopback port 0: a
// ReloadCatalog or an UpdatePrices sent to one replica is visible on the other
// (and in the answers of gateways on either side), and survives a restart of
// every catalog and pricing replica. Single writer: catalog and pricing each
// have a writer and a follower (--writer_address) that follows it over the
// watch streams and forwards admin calls to it.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/io/text_proto.h"
#include "gpuadvisor/catalog/v1/catalog.grpc.pb.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/integration/stack.h"
#include "tests/testing/process.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::testing {
namespace {

constexpr char kToken[] = "replicas-token";
constexpr char kBargain[] = "testcloud/h200-bargain/us-test-1";

std::unique_ptr<grpc::ClientContext> Deadline(int seconds = 20) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return context;
}

std::unique_ptr<grpc::ClientContext> Admin() {
  std::unique_ptr<grpc::ClientContext> context = Deadline();
  context->AddMetadata("authorization", absl::StrCat("Bearer ", kToken));
  return context;
}

std::shared_ptr<grpc::Channel> Channel(const std::string& address) {
  return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
}

absl::StatusOr<std::unique_ptr<ServiceProcess>> Serving(const std::string& service,
                                                        const std::string& binary,
                                                        std::vector<std::string> args) {
  args.insert(args.begin(), {"--port=0", "--metrics_port=0"});
  absl::StatusOr<std::unique_ptr<ServiceProcess>> process =
      ServiceProcess::Start(BinaryPath(service, binary), args);
  if (!process.ok()) return process.status();
  if (absl::Status s = WaitForServing(Channel((*process)->grpc_address()), "", absl::Seconds(30));
      !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(binary, ": ", s.message()));
  }
  return process;
}

// Polls `condition` for up to 20 s.
bool Eventually(const std::function<bool()>& condition) {
  for (int i = 0; i < 200; ++i) {
    if (condition()) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return false;
}

std::string CatalogVersion(const std::string& address) {
  auto stub = catalog::v1::CatalogService::NewStub(Channel(address));
  catalog::v1::ListGpusResponse response;
  if (!stub->ListGpus(Deadline().get(), catalog::v1::ListGpusRequest(), &response).ok()) return "";
  return response.catalog_version();
}

// The bargain offer's on-demand price in a pricing replica's book; -1 if absent.
double BookPrice(const std::string& address) {
  auto stub = pricing::v1::PricingService::NewStub(Channel(address));
  pricing::v1::GetPriceBookResponse response;
  if (!stub->GetPriceBook(Deadline().get(), pricing::v1::GetPriceBookRequest(), &response).ok())
    return -1;
  for (const auto& price : response.price_book().prices()) {
    if (price.offer_id() == kBargain) return price.on_demand_usd_per_hour();
  }
  return -1;
}

gateway::v1::RecommendRequest QLora70B() {
  gateway::v1::RecommendRequest request;
  sizing::v1::Workload* w = request.mutable_workload();
  w->set_task(sizing::v1::TASK_QLORA);
  w->mutable_model()->set_preset("llama-3.1-70b");
  w->set_precision(sizing::v1::PRECISION_NF4);
  w->set_train_tokens(50e6);
  w->set_sequence_length(2048);
  w->set_micro_batch_size(1);
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  request.set_max_results(10);
  return request;
}

// The bargain offer's USD per hour in a gateway's answer; -1 if not recommended.
double AnsweredPrice(const std::string& gateway_address, std::string* catalog_version = nullptr) {
  auto stub = gateway::v1::GatewayService::NewStub(Channel(gateway_address));
  gateway::v1::RecommendResponse response;
  if (!stub->Recommend(Deadline().get(), QLora70B(), &response).ok()) return -1;
  if (catalog_version != nullptr) *catalog_version = response.catalog_version();
  for (const auto& r : response.recommendations()) {
    if (r.offer().id() == kBargain) return r.cost().usd_per_hour();
  }
  return -1;
}

struct Replicas {
  std::string offers, updates, cache;
  std::unique_ptr<ServiceProcess> catalog_writer, catalog_follower, pricing_writer,
      pricing_follower;
  std::unique_ptr<ServiceProcess> sizing[2], gateway[2];

  // Catalog and pricing, writers first (followers need their addresses).
  absl::Status StartStateful() {
    absl::StatusOr<std::unique_ptr<ServiceProcess>> p =
        Serving("catalog", "catalog_server", {"--data_dir=" + DataDir(), "--offers=" + offers});
    if (!p.ok()) return p.status();
    catalog_writer = *std::move(p);
    p = Serving("catalog", "catalog_server",
                {"--data_dir=" + DataDir(), "--writer_address=" + catalog_writer->grpc_address(),
                 "--catalog_cache_file=" + cache});
    if (!p.ok()) return p.status();
    catalog_follower = *std::move(p);
    // The pricing writer follows the catalog follower: any catalog replica will do.
    p = Serving("pricing", "pricing_server",
                {"--data_dir=" + DataDir(), "--catalog_address=" + catalog_follower->grpc_address(),
                 "--price_updates_file=" + updates});
    if (!p.ok()) return p.status();
    pricing_writer = *std::move(p);
    p = Serving("pricing", "pricing_server",
                {"--data_dir=" + DataDir(), "--writer_address=" + pricing_writer->grpc_address()});
    if (!p.ok()) return p.status();
    pricing_follower = *std::move(p);
    return absl::OkStatus();
  }

  // Gateway 0 uses the writers, gateway 1 the followers.
  absl::Status StartGateways() {
    for (int i = 0; i < 2; ++i) {
      const ServiceProcess& catalog = i == 0 ? *catalog_writer : *catalog_follower;
      const ServiceProcess& pricing = i == 0 ? *pricing_writer : *pricing_follower;
      gateway[i].reset();
      absl::StatusOr<std::unique_ptr<ServiceProcess>> p =
          Serving("gateway", "gateway_server",
                  {"--catalog_address=" + catalog.grpc_address(),
                   "--sizing_address=" + sizing[i]->grpc_address(),
                   "--pricing_address=" + pricing.grpc_address(), "--data_dir=" + DataDir(),
                   "--http_port=-1", "--rate_limit_per_second=0", "--response_cache_entries=0",
                   "--backend_timeout_ms=5000"});
      if (!p.ok()) return p.status();
      gateway[i] = *std::move(p);
    }
    return absl::OkStatus();
  }

  void StopStateful() {
    for (auto* p : {&pricing_follower, &pricing_writer, &catalog_follower, &catalog_writer}) {
      (*p)->Stop(SIGTERM);
      p->reset();
    }
  }
};

TEST(Replicas, UpdatesSentToOneReplicaReachTheOtherAndSurviveRestarts) {
  setenv("GPUADVISOR_ADMIN_TOKEN", kToken, 1);
  const std::string dir = absl::StrCat(::testing::TempDir(), "/replicas.", getpid());
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  Replicas r;
  r.offers = dir + "/offers.textproto";
  r.updates = dir + "/price_updates.textproto";
  r.cache = dir + "/catalog.cache";
  absl::StatusOr<std::string> original = ReadFile(DataDir() + "/catalog/offers.textproto");
  ASSERT_OK(original);
  ASSERT_OK(WriteFileAtomically(r.offers, *original));
  ASSERT_OK(r.StartStateful());
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::unique_ptr<ServiceProcess>> sizing =
        Serving("sizing", "sizing_server", {"--data_dir=" + DataDir()});
    ASSERT_OK(sizing);
    r.sizing[i] = *std::move(sizing);
  }
  ASSERT_OK(r.StartGateways());
  const std::string before = CatalogVersion(r.catalog_writer->grpc_address());
  ASSERT_NE(before, "");
  EXPECT_EQ(CatalogVersion(r.catalog_follower->grpc_address()), before);
  // Followers export how far behind their writer they are (0: in step).
  for (const ServiceProcess* follower : {r.catalog_follower.get(), r.pricing_follower.get()}) {
    EXPECT_TRUE(Eventually([&] {
      absl::StatusOr<std::string> page = HttpGet(follower->metrics_port(), "/metrics");
      return page.ok() &&
             page->find("\ngpuadvisor_follower_writer_age_seconds 0\n") != std::string::npos;
    })) << follower->grpc_address();
  }

  // 1. A reload sent to the catalog *follower* is done by the writer and
  // served by both (and by the gateways of both sides).
  ASSERT_OK(WriteFileAtomically(r.offers, *original + R"pb(
    offers {
      id: "testcloud/h200-bargain/us-test-1"
      provider: "testcloud"
      instance_type: "h200-bargain"
      region: "us-test-1"
      gpu_model: "H200"
      gpus_per_node: 1
      nodes: 1
      max_nodes: 1
      link: LINK_TYPE_NONE
      fabric: FABRIC_TYPE_NONE
      availability: AVAILABILITY_AVAILABLE
      on_demand_usd_per_hour: 0.80
      source: "replicas test"
    }
  )pb"));
  catalog::v1::ReloadCatalogResponse reloaded;
  const grpc::Status reload =
      catalog::v1::CatalogService::NewStub(Channel(r.catalog_follower->grpc_address()))
          ->ReloadCatalog(Admin().get(), catalog::v1::ReloadCatalogRequest(), &reloaded);
  ASSERT_TRUE(reload.ok()) << reload.error_message();
  const std::string after = reloaded.catalog_version();
  EXPECT_NE(after, before);
  EXPECT_EQ(CatalogVersion(r.catalog_follower->grpc_address()),
            after);  // answered once it serves it
  EXPECT_EQ(CatalogVersion(r.catalog_writer->grpc_address()), after);
  for (int i = 0; i < 2; ++i) {
    std::string version;
    EXPECT_TRUE(Eventually([&] {
      return AnsweredPrice(r.gateway[i]->grpc_address(), &version) == 0.80;
    })) << "gateway "
        << i << " at " << version;
    EXPECT_EQ(version, after) << "gateway " << i;
  }

  // 2. A price update sent to the pricing *follower* is applied (and
  // persisted) by the writer and quoted by both.
  pricing::v1::UpdatePricesRequest update;
  update.add_prices()->set_offer_id(kBargain);
  update.mutable_prices(0)->set_on_demand_usd_per_hour(0.42);
  pricing::v1::UpdatePricesResponse updated;
  const grpc::Status status =
      pricing::v1::PricingService::NewStub(Channel(r.pricing_follower->grpc_address()))
          ->UpdatePrices(Admin().get(), update, &updated);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_DOUBLE_EQ(BookPrice(r.pricing_follower->grpc_address()),
                   0.42);  // answered once it quotes it
  EXPECT_DOUBLE_EQ(BookPrice(r.pricing_writer->grpc_address()), 0.42);
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(Eventually([&] { return AnsweredPrice(r.gateway[i]->grpc_address()) == 0.42; }))
        << i;
  }

  // 3. Every catalog and pricing replica restarts: the reloaded catalog and
  // the update are still there, on both replicas and in both gateways.
  r.StopStateful();
  ASSERT_OK(r.StartStateful());
  ASSERT_OK(r.StartGateways());
  EXPECT_NE(CatalogVersion(r.catalog_follower->grpc_address()), "");
  EXPECT_DOUBLE_EQ(BookPrice(r.pricing_writer->grpc_address()), 0.42);
  EXPECT_TRUE(Eventually([&] { return BookPrice(r.pricing_follower->grpc_address()) == 0.42; }));
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(Eventually([&] { return AnsweredPrice(r.gateway[i]->grpc_address()) == 0.42; }))
        << i;
  }
}

}  // namespace
}  // namespace gpuadvisor::testing
