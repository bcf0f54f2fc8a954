// One catalog version per answer, through the real binaries: the catalog is
// reloaded over and over between two offer files whose list prices differ,
// while Recommends run concurrently; every priced recommendation must carry
// the list price of the catalog version its answer names. Before, the gateway
// and pricing followed the catalog independently and a share of the answers
// mixed one version's offers with another version's quotes.

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/io/text_proto.h"
#include "gpuadvisor/catalog/v1/catalog.grpc.pb.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/integration/stack.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::testing {
namespace {

std::unique_ptr<grpc::ClientContext> Deadline(int seconds = 20) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return context;
}

// The offers file with every on-demand list price times `factor`.
std::string ScalePrices(const std::string& text, double factor) {
  static const std::regex kPrice(R"(on_demand_usd_per_hour: ([0-9.eE+-]+))");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), kPrice);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    out.append(text, last, it->position() - last);
    absl::StrAppend(&out, "on_demand_usd_per_hour: ", std::stod((*it)[1].str()) * factor);
    last = it->position() + it->length();
  }
  out.append(text, last, std::string::npos);
  return out;
}

// Offer id -> on-demand list price, as the catalog serves version `version`.
using PriceMap = std::map<std::string, double>;

absl::StatusOr<PriceMap> ListPrices(catalog::v1::CatalogService::Stub& stub, std::string* version) {
  PriceMap prices;
  catalog::v1::ListOffersRequest request;
  request.set_page_size(1000);
  while (true) {
    catalog::v1::ListOffersResponse page;
    const grpc::Status status = stub.ListOffers(Deadline().get(), request, &page);
    if (!status.ok()) return absl::UnknownError(status.error_message());
    if (version->empty()) *version = page.catalog_version();
    if (page.catalog_version() != *version) return absl::AbortedError("version moved while paging");
    for (const catalog::v1::Offer& offer : page.offers())
      prices[offer.id()] = offer.on_demand_usd_per_hour();
    if (page.next_page_token().empty()) return prices;
    request.set_page_token(page.next_page_token());
  }
}

gateway::v1::RecommendRequest Serve8B() {
  gateway::v1::RecommendRequest request;
  sizing::v1::Workload* w = request.mutable_workload();
  w->set_task(sizing::v1::TASK_INFERENCE);
  w->mutable_model()->set_preset("llama-3.1-8b");
  w->set_precision(sizing::v1::PRECISION_BF16);
  w->set_context_length(8192);
  w->set_concurrent_sequences(8);
  request.mutable_constraints()->add_purchase_options(catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  request.set_max_results(20);
  return request;
}

TEST(OneVersionPerAnswer, ReloadsUnderConcurrentRecommendsNeverMixVersions) {
  const std::string offers =
      absl::StrCat(::testing::TempDir(), "/versions_offers.", getpid(), ".textproto");
  absl::StatusOr<std::string> original = ReadFile(DataDir() + "/catalog/offers.textproto");
  ASSERT_OK(original);
  // Two catalogs that differ only in their list prices (x1.5 is inside the
  // load guards' ranges; the reloads are forced anyway).
  const std::string files[2] = {*original, ScalePrices(*original, 1.5)};
  ASSERT_NE(files[0], files[1]);
  ASSERT_OK(WriteFileAtomically(offers, files[0]));
  // No rate limit and no response cache: every Recommend is computed.
  absl::StatusOr<Stack> stack =
      Stack::Start("test-token", {"--offers=" + offers},
                   {"--rate_limit_per_second=0", "--response_cache_entries=0"});
  ASSERT_OK(stack);
  auto catalog_stub = catalog::v1::CatalogService::NewStub(
      grpc::CreateChannel(stack->catalog->grpc_address(), grpc::InsecureChannelCredentials()));

  absl::Mutex mu;
  std::map<std::string, PriceMap> prices_by_version;  // every version the catalog served
  {
    std::string version;
    absl::StatusOr<PriceMap> prices = ListPrices(*catalog_stub, &version);
    ASSERT_OK(prices);
    ASSERT_FALSE(prices->empty());
    prices_by_version[version] = *prices;
  }

  std::atomic<bool> reloading{true};
  std::vector<gateway::v1::RecommendResponse> answers;
  std::atomic<int> failed{0};
  std::string failure;  // the first failed call's status
  std::vector<std::thread> clients;
  for (int t = 0; t < 3; ++t) {
    clients.emplace_back([&] {
      auto stub = stack->GatewayStub();
      while (reloading) {
        gateway::v1::RecommendResponse response;
        const grpc::Status status = stub->Recommend(Deadline().get(), Serve8B(), &response);
        if (!status.ok()) {
          ++failed;
          absl::MutexLock lock(&mu);
          if (failure.empty())
            failure = absl::StrCat(status.error_code(), ": ", status.error_message());
          continue;
        }
        absl::MutexLock lock(&mu);
        answers.push_back(std::move(response));
      }
    });
  }
  std::string reload_error;
  for (int i = 1; i <= 40 && reload_error.empty(); ++i) {
    if (absl::Status s = WriteFileAtomically(offers, files[i % 2]); !s.ok()) {
      reload_error = s.ToString();
      break;
    }
    catalog::v1::ReloadCatalogRequest request;
    request.set_force(true);
    catalog::v1::ReloadCatalogResponse reloaded;
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer test-token");
    const grpc::Status status = catalog_stub->ReloadCatalog(&context, request, &reloaded);
    if (!status.ok()) {
      reload_error = status.error_message();
      break;
    }
    std::string version;
    absl::StatusOr<PriceMap> prices = ListPrices(*catalog_stub, &version);
    if (!prices.ok() || version != reloaded.catalog_version()) {
      reload_error = "could not list the reloaded version";
      break;
    }
    absl::MutexLock lock(&mu);
    prices_by_version[version] = *prices;
    absl::SleepFor(absl::Milliseconds(60));
  }
  reloading = false;
  for (std::thread& client : clients) client.join();
  ASSERT_EQ(reload_error, "");
  ASSERT_GE(prices_by_version.size(), 2u);

  int checked = 0, mixed = 0;
  std::string example;
  for (const gateway::v1::RecommendResponse& answer : answers) {
    auto versioned = prices_by_version.find(answer.catalog_version());
    ASSERT_NE(versioned, prices_by_version.end()) << "unknown version " << answer.catalog_version();
    for (const gateway::v1::Recommendation& r : answer.recommendations()) {
      auto listed = versioned->second.find(r.offer().id());
      ASSERT_NE(listed, versioned->second.end()) << r.offer().id();
      const double expected = listed->second * r.offer().nodes();
      ++checked;
      if (std::abs(r.cost().usd_per_hour() - expected) > 1e-6 * expected) {
        ++mixed;
        if (example.empty()) {
          example = absl::StrCat(r.offer().id(), " at catalog ", answer.catalog_version(), ": ",
                                 r.cost().usd_per_hour(), " USD/h quoted, ", expected, " listed");
        }
      }
    }
  }
  std::printf("answers=%zu recommendations checked=%d mixed=%d failed calls=%d versions=%zu %s\n",
              answers.size(), checked, mixed, failed.load(), prices_by_version.size(),
              failure.c_str());
  ASSERT_GT(checked, 0);
  EXPECT_EQ(mixed, 0) << "e.g. " << example;
}

}  // namespace
}  // namespace gpuadvisor::testing
