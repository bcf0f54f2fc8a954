// Checks the shipped data/pricing/billing.textproto (and, when present, the
// catalog's offers file) through the real loader.

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/pricing/billing_math.h"
#include "services/pricing/price_book.h"
#include "services/pricing/price_loader.h"
#include "services/pricing/price_store.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::pricing {
namespace {

namespace v1 = ::gpuadvisor::pricing::v1;
using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::Not;

const std::string kBillingPath =
    std::string(GPUADVISOR_SOURCE_DIR) + "/data/pricing/billing.textproto";
const std::string kOffersPath =
    std::string(GPUADVISOR_SOURCE_DIR) + "/data/catalog/offers.textproto";

constexpr const char* kProviders[] = {"aws",       "gcp",        "azure",  "lambda",
                                      "coreweave", "nebius",     "runpod", "vast",
                                      "oci",       "hyperstack", "crusoe"};

TEST(BillingData, LoadsAndCoversEveryProvider) {
  auto book = LoadPriceBook(kBillingPath, catalog::v1::CatalogSnapshot());
  ASSERT_OK(book);
  const v1::PriceBook& data = (*book)->data();
  EXPECT_EQ(data.prices_as_of(), "2026-11-29");
  EXPECT_THAT(data.prices(), IsEmpty());
  ASSERT_GT(data.billing_size(), 0);
  ASSERT_GT(data.spot_risks_size(), 0);
  std::set<std::string> providers;
  for (const v1::BillingRule& rule : data.billing()) {
    providers.insert(rule.provider());
    EXPECT_THAT(rule.source(), Not(IsEmpty())) << rule.provider();
  }
  for (const char* provider : kProviders) {
    EXPECT_THAT(providers, Contains(provider)) << provider << " has no billing rule";
  }
  EXPECT_GE(data.default_billing().granularity_seconds(), 1);
  EXPECT_THAT(data.default_billing().source(), Not(IsEmpty()));
  for (const v1::SpotRisk& risk : data.spot_risks()) {
    EXPECT_THAT(risk.source(), Not(IsEmpty())) << risk.provider() << " " << risk.gpu_model();
  }
  // The quote rules' constants, with their source; the values the rules had
  // as C++ constants up to quote rules 2 (answers unchanged by the move).
  ASSERT_TRUE(data.has_quote_constants());
  EXPECT_THAT(data.quote_constants().source(), Not(IsEmpty()));
  EXPECT_EQ(data.quote_constants().hours_per_month(), 730);
  EXPECT_EQ(data.quote_constants().checkpoints_kept(), 2);
  EXPECT_EQ(data.quote_constants().high_risk_rework_fraction(), 0.25);
  EXPECT_EQ(data.quote_constants().max_restarts_per_segment(), 1000);
}

TEST(BillingData, RulesMatchPricesMd) {
  auto book = LoadPriceBook(kBillingPath, catalog::v1::CatalogSnapshot());
  ASSERT_OK(book);
  struct Expected {
    const char* provider;
    int granularity_seconds;
    int minimum_seconds;
  } expected[] = {
      {"aws", 1, 60},       {"gcp", 1, 60},       {"azure", 1, 300}, {"lambda", 60, 0},
      {"coreweave", 60, 0}, {"nebius", 1, 0},     {"runpod", 1, 0},  {"vast", 1, 0},
      {"oci", 1, 60},       {"oci/BM.", 1, 3600},
  };
  for (const Expected& e : expected) {
    bool found = false;
    for (const v1::BillingRule& rule : (*book)->data().billing()) {
      if (rule.provider() != e.provider) continue;
      found = true;
      EXPECT_EQ(rule.granularity_seconds(), e.granularity_seconds) << e.provider;
      EXPECT_EQ(rule.minimum_seconds(), e.minimum_seconds) << e.provider;
    }
    EXPECT_TRUE(found) << e.provider;
  }
}

TEST(BillingData, AwsSpotRatesAreTheDocumentedConversion) {
  auto book = LoadPriceBook(kBillingPath, catalog::v1::CatalogSnapshot());
  ASSERT_OK(book);
  struct Expected {
    const char* gpu_model;
    double fraction;  // upper edge of the Spot Advisor band
  } expected[] = {{"A100", 0.10}, {"H100", 0.20}, {"L4", 0.05}, {"*", 0.15}};
  for (const Expected& e : expected) {
    bool found = false;
    for (const v1::SpotRisk& risk : (*book)->data().spot_risks()) {
      if (risk.provider() != "aws" || risk.gpu_model() != e.gpu_model) continue;
      found = true;
      EXPECT_DOUBLE_EQ(risk.interruption_frequency(), e.fraction) << e.gpu_model;
      EXPECT_EQ(risk.instance_lifetime_hours(), 12) << e.gpu_model;  // not a 730 h month
      EXPECT_EQ(risk.notice_seconds(), 120) << e.gpu_model;          // U5: 2 minutes
    }
    EXPECT_TRUE(found) << e.gpu_model;
  }
  // Notice times as PRICES.md section 4 gives them; unset where undocumented.
  std::map<std::string, const v1::SpotRisk*> any;
  for (const v1::SpotRisk& risk : (*book)->data().spot_risks()) {
    if (risk.gpu_model() == "*") any[risk.provider()] = &risk;
  }
  EXPECT_EQ(any.at("gcp")->notice_seconds(), 30);
  EXPECT_EQ(any.at("azure")->notice_seconds(), 30);
  EXPECT_TRUE(any.at("runpod")->has_notice_seconds());
  EXPECT_EQ(any.at("runpod")->notice_seconds(), 0);
  EXPECT_FALSE(any.at("nebius")->has_notice_seconds());
  EXPECT_FALSE(any.at("*")->has_notice_seconds());
}

// Providers without published interruption data get a conservative stated
// default: no rate given directly (a judgement) is below the highest rate
// derived from a provider's published statistic, and the catch-all entry
// exists, so spot on an unmeasured provider never looks safer than on a
// measured one.
TEST(BillingData, NoJudgementRateIsBelowThePublishedOnes) {
  auto book = LoadPriceBook(kBillingPath, catalog::v1::CatalogSnapshot());
  ASSERT_OK(book);
  double highest_published = 0;
  int judged = 0;
  for (const v1::SpotRisk& risk : (*book)->data().spot_risks()) {
    if (risk.interruption_frequency() > 0) {
      highest_published = std::max(
          highest_published, InterruptionFractionToRatePerHour(risk.interruption_frequency(),
                                                               risk.instance_lifetime_hours()));
    }
  }
  ASSERT_GT(highest_published, 0.018);  // AWS p5: -ln(0.8) / 12 h
  bool catch_all = false;
  for (const v1::SpotRisk& risk : (*book)->data().spot_risks()) {
    if (risk.interruption_frequency() > 0) continue;
    ++judged;
    catch_all |= risk.provider() == "*" && risk.gpu_model() == "*";
    EXPECT_GE(risk.interruptions_per_hour(), highest_published)
        << risk.provider() << " " << risk.gpu_model() << ": " << risk.source();
  }
  EXPECT_GT(judged, 0);
  EXPECT_TRUE(catch_all);
}

// The shipped rules resolve as documented for offers named like the catalog's.
TEST(BillingData, ResolvesRulesAndRisksForRealOfferNames) {
  catalog::v1::CatalogSnapshot catalog;
  auto add = [&catalog](const char* id, const char* provider, const char* gpu, double od,
                        double spot) {
    catalog::v1::Offer* offer = catalog.add_offers();
    offer->set_id(id);
    offer->set_provider(provider);
    offer->set_gpu_model(gpu);
    offer->set_on_demand_usd_per_hour(od);
    offer->set_spot_usd_per_hour(spot);
  };
  add("aws/p5.48xlarge/us-east-1", "aws", "H100-SXM", 55.04, 17.63);
  add("aws/g6e.xlarge/us-east-1", "aws", "L40S", 1.861, 0.92);
  add("oci/BM.GPU.H100.8/us-ashburn-1", "oci", "H100-SXM", 80, 40);
  add("oci/VM.GPU.A10.1/us-ashburn-1", "oci", "A10", 2, 1);
  auto book = LoadPriceBook(kBillingPath, catalog);
  ASSERT_OK(book);

  v1::QuoteRequest request;
  request.mutable_job()->set_restartable(true);
  auto add_item = [&request](const char* id, int nodes, double hours,
                             catalog::v1::PurchaseOption option) {
    v1::QuoteItem* item = request.add_items();
    item->set_offer_id(id);
    item->set_nodes(nodes);
    item->set_hours(hours);
    item->set_purchase_option(option);
  };
  add_item("aws/p5.48xlarge/us-east-1", 4, 100, catalog::v1::PURCHASE_OPTION_SPOT);
  add_item("aws/g6e.xlarge/us-east-1", 1, 1, catalog::v1::PURCHASE_OPTION_SPOT);
  add_item("oci/BM.GPU.H100.8/us-ashburn-1", 1, 0.1, catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  add_item("oci/VM.GPU.A10.1/us-ashburn-1", 1, 0.1, catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  auto response = (*book)->Quote(request, absl::Now());
  ASSERT_OK(response);
  // p5 H100: 4 nodes x -ln(0.8) / 12 h (Spot Advisor 15-20% over a 12 h
  // instance life), 61x the month-long reading of 4 x 3.0568e-4.
  EXPECT_NEAR(response->quotes(0).interruptions_per_hour(), 4 * 0.0185953, 1e-6);
  EXPECT_EQ(response->quotes(0).notice_seconds(), 120);
  // Multi-node capacity risk: restart 10 min x (1 + 0.5 x 3) = 25 min.
  EXPECT_NEAR(response->quotes(0).restart_minutes(), 25, 1e-9);
  EXPECT_THAT(
      response->quotes(0).warnings(),
      Contains(::testing::HasSubstr("spot on 4 nodes: each preemption stops the whole job")));
  // L40S is not "L4": the AWS default band (10-15%).
  EXPECT_NEAR(response->quotes(1).interruptions_per_hour(), 0.0135432, 1e-6);
  EXPECT_NEAR(response->quotes(1).restart_minutes(), 10, 1e-9);
  // OCI bare metal bills its one-hour minimum; VMs bill 6 minutes.
  EXPECT_NEAR(response->quotes(2).cost().compute_usd(), 80.0, 1e-9);
  EXPECT_NEAR(response->quotes(3).cost().compute_usd(), 0.2, 1e-9);
}

TEST(BillingData, LoadsWithTheShippedCatalogOffers) {
  catalog::v1::OfferList offers;
  ASSERT_OK(LoadTextProtoFile(kOffersPath, &offers));
  ASSERT_GT(offers.offers_size(), 0);
  catalog::v1::CatalogSnapshot catalog;
  catalog.set_prices_as_of(offers.prices_as_of());
  catalog.set_source(offers.source());
  *catalog.mutable_offers() = offers.offers();
  auto book = LoadPriceBook(kBillingPath, catalog);
  ASSERT_OK(book);
  EXPECT_EQ((*book)->size(), offers.offers_size());
  // The writer states the quote rules it prices by, and a copy of its book
  // is quoted in process only by a build with the same rules.
  EXPECT_EQ((*book)->quote_rules_version(), kQuoteRulesVersion);
  EXPECT_TRUE((*book)->QuotesLikeThisBuild());

  std::set<std::string> ruled;
  for (const v1::BillingRule& rule : (*book)->data().billing()) ruled.insert(rule.provider());
  v1::QuoteRequest request;
  request.mutable_job()->set_restartable(true);
  request.mutable_job()->set_checkpoint_gb(100);
  for (const v1::OfferPrice& price : (*book)->data().prices()) {
    EXPECT_THAT(ruled, Contains(price.provider())) << price.offer_id();
    v1::QuoteItem* item = request.add_items();
    item->set_offer_id(price.offer_id());
    item->set_nodes(1);
    item->set_hours(10);
    item->set_purchase_option(price.spot_usd_per_hour() > 0
                                  ? catalog::v1::PURCHASE_OPTION_SPOT
                                  : catalog::v1::PURCHASE_OPTION_ON_DEMAND);
  }
  auto response = (*book)->Quote(request, absl::Now());
  ASSERT_OK(response);
  EXPECT_EQ(response->quote_rules_version(), kQuoteRulesVersion);
  ASSERT_EQ(response->quotes_size(), offers.offers_size());
  for (const v1::Quote& quote : response->quotes()) {
    if (!quote.priced()) continue;
    EXPECT_TRUE(std::isfinite(quote.cost().total_usd())) << quote.offer_id();
    EXPECT_GT(quote.cost().total_usd(), 0) << quote.offer_id();
  }
}

}  // namespace
}  // namespace gpuadvisor::pricing
