// Commitment terms through Quote on a real port-0 pricing server, over the
// shipped data (data/pricing/billing.textproto and the offers of
// data/catalog/offers.textproto): the term and upfront rule of every reserved
// quote, the whole-term commitment rule, "up to" figures never quoted, and
// the checks of a term's fields.

#include "services/pricing/commitment.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/grpc/server.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "services/pricing/price_loader.h"
#include "services/pricing/pricing_server_fixture.h"
#include "services/pricing/pricing_service_impl.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::pricing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace cv1 = ::gpuadvisor::catalog::v1;

constexpr char kGcp[] = "gcp/a3-megagpu-8g/us-central1";  // 1-year $63.7923/h, 3-year $40.3542/h
constexpr char kP5[] = "aws/p5.48xlarge/us-east-1";       // Capacity Block $943.92 a day
constexpr char kCrusoe[] = "crusoe/h100-80gb-sxm-ib.1x/global";  // "up to 35% off" only

cv1::CatalogSnapshot ShippedOffers() {
  cv1::OfferList list;
  EXPECT_OK(LoadTextProtoFile(absl::StrCat(GPUADVISOR_SOURCE_DIR, "/data/catalog/offers.textproto"),
                              &list));
  cv1::CatalogSnapshot snapshot;
  *snapshot.mutable_offers() = list.offers();
  return snapshot;
}

// The shipped offers and two refreshed rows.
cv1::CatalogSnapshot WithRefreshedRows() {
  cv1::CatalogSnapshot snapshot = ShippedOffers();
  // A refreshed row: a bare reserved price, its term from the provider's
  // reserved_price_term (Azure) or none (Lambda).
  cv1::Offer* azure = snapshot.add_offers();
  azure->set_id("azure/Standard_ND96amsr_A100_v4/refreshed");
  azure->set_provider("azure");
  azure->set_gpu_model("A100-80GB");
  azure->set_on_demand_usd_per_hour(32.77);
  azure->set_reserved_usd_per_hour(20);
  cv1::Offer* lambda = snapshot.add_offers();
  lambda->set_id("lambda/gpu_8x_h100_sxm5/refreshed");
  lambda->set_provider("lambda");
  lambda->set_gpu_model("H100-SXM");
  lambda->set_on_demand_usd_per_hour(31.92);
  lambda->set_reserved_usd_per_hour(20);
  return snapshot;
}

class CommitmentQuoteTest : public PricingServerTest {
 protected:
  void SetUp() override {
    const cv1::CatalogSnapshot offers = WithRefreshedRows();
    ASSERT_GT(offers.offers_size(), 100);
    StartServing(offers, "t");
  }

  v1::Quote Reserved(const std::string& offer, int nodes, double hours,
                     const v1::CommitmentLimits& limits = {}) {
    grpc::ClientContext context;
    v1::QuoteRequest request;
    v1::QuoteItem* item = request.add_items();
    item->set_offer_id(offer);
    item->set_nodes(nodes);
    item->set_hours(hours);
    item->set_purchase_option(cv1::PURCHASE_OPTION_RESERVED);
    *request.mutable_job()->mutable_commitment() = limits;
    v1::QuoteResponse response;
    const grpc::Status status = stub_->Quote(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.quotes_size(), 1);
    return response.quotes_size() == 1 ? response.quotes(0) : v1::Quote();
  }
};

// A 120 h job on a 1-year committed-use term pays the whole year, and the
// quote says which term, how it is paid and how much of it the job uses.
TEST_F(CommitmentQuoteTest, AShortJobPaysTheWholeTerm) {
  const v1::Quote q = Reserved(kGcp, 2, 120);
  ASSERT_TRUE(q.priced()) << q.unpriced_reason();
  EXPECT_EQ(q.commitment().name(), "1-year committed use");
  EXPECT_EQ(q.commitment().term_hours(), 8760);
  EXPECT_EQ(q.commitment().upfront(), cv1::UPFRONT_PAYMENT_NONE);
  EXPECT_EQ(q.commitment().as_of(), "2024-09-16");
  EXPECT_EQ(q.terms_bought(), 1);
  EXPECT_DOUBLE_EQ(q.committed_hours(), 8760);
  EXPECT_NEAR(q.cost().compute_usd(), 2 * 8760 * 63.7923, 1e-6);
  EXPECT_NEAR(q.cost().usd_per_hour(), 2 * 63.7923, 1e-9);
  EXPECT_DOUBLE_EQ(q.cost().billed_hours(), 8760);
  EXPECT_NEAR(q.cost().expected_hours(), 120, 1e-9);  // the run itself, not the term
  ASSERT_EQ(q.warnings_size(), 1);
  EXPECT_THAT(q.warnings(0), AllOf(HasSubstr("1-year committed use (1 year, no upfront"),
                                   HasSubstr("paid whole whether used or not"),
                                   HasSubstr("1 term = 8760 h per node"),
                                   HasSubstr("this job's 120.0 h (1% used)")));
}

// Over three years the 3-year term is cheaper than three 1-year terms; with
// terms limited to one year, three 1-year terms are bought.
TEST_F(CommitmentQuoteTest, ALongJobTakesTheCheapestTermWithinTheLimit) {
  const double hours = 3 * 8760;
  v1::Quote q = Reserved(kGcp, 1, hours);
  ASSERT_TRUE(q.priced()) << q.unpriced_reason();
  EXPECT_EQ(q.commitment().name(), "3-year committed use");
  EXPECT_EQ(q.terms_bought(), 1);
  EXPECT_NEAR(q.cost().compute_usd(), 26280 * 40.3542, 1e-6);

  v1::CommitmentLimits one_year;
  one_year.set_max_term_hours(8760);
  q = Reserved(kGcp, 1, hours, one_year);
  ASSERT_TRUE(q.priced()) << q.unpriced_reason();
  EXPECT_EQ(q.commitment().name(), "1-year committed use");
  EXPECT_EQ(q.terms_bought(), 3);
  EXPECT_DOUBLE_EQ(q.committed_hours(), 3 * 8760);
  EXPECT_NEAR(q.cost().compute_usd(), 3 * 8760 * 63.7923, 1e-6);
  EXPECT_THAT(q.warnings(0), HasSubstr("3 terms = 26280 h per node"));
}

// Limits that leave no term: unpriced, and the reason names the limits and
// the shortest term the offer has.
TEST_F(CommitmentQuoteTest, LimitsThatLeaveNoTermGiveAReason) {
  v1::CommitmentLimits none;
  none.set_max_term_hours(0);  // set: no commitment at all
  v1::Quote q = Reserved(kGcp, 1, 100, none);
  EXPECT_FALSE(q.priced());
  EXPECT_THAT(q.unpriced_reason(),
              AllOf(HasSubstr("no commitment term within the limits asked (no commitment term)"),
                    HasSubstr("committed use is 1 year, no upfront")));
  v1::CommitmentLimits all_upfront;
  all_upfront.add_upfront(cv1::UPFRONT_PAYMENT_ALL);
  q = Reserved(kGcp, 1, 100, all_upfront);
  EXPECT_FALSE(q.priced());
  EXPECT_THAT(q.unpriced_reason(), HasSubstr("all upfront"));
}

// AWS Capacity Blocks: whole days paid up front; the price keeps its own date
// (the U2 rates from before the June 2025 cut), not the row's.
TEST_F(CommitmentQuoteTest, CapacityBlocksAreWholeDaysPaidUpFront) {
  const v1::Quote q = Reserved(kP5, 1, 30);
  ASSERT_TRUE(q.priced()) << q.unpriced_reason();
  EXPECT_EQ(q.commitment().kind(), cv1::COMMITMENT_KIND_CAPACITY_BLOCK);
  EXPECT_EQ(q.commitment().upfront(), cv1::UPFRONT_PAYMENT_ALL);
  EXPECT_EQ(q.commitment().as_of(), "2024-12-31");
  EXPECT_EQ(q.terms_bought(), 2);
  EXPECT_NEAR(q.cost().compute_usd(), 2 * 943.92, 1e-9);
  EXPECT_NEAR(q.cost().usd_per_hour(), 39.33, 1e-9);
  EXPECT_THAT(q.warnings(0), HasSubstr("(1 day, all upfront ($943.92)"));
}

// Crusoe publishes only "up to 35% off": never quoted as a price; the
// reason shows the ceiling as a bound.
TEST_F(CommitmentQuoteTest, UpToFiguresAreNeverQuoted) {
  const v1::Quote q = Reserved(kCrusoe, 1, 5000);
  EXPECT_FALSE(q.priced());
  EXPECT_FALSE(q.has_cost());
  EXPECT_THAT(q.unpriced_reason(),
              AllOf(HasSubstr("only an \"up to 35% off\" figure is published"),
                    HasSubstr("a ceiling, not a price, so not quoted"), HasSubstr("at best $")));
}

// A refreshed bare reserved price is quoted under its provider's stated
// term; without one it is not quoted at all.
TEST_F(CommitmentQuoteTest, BareReservedPricesNeedTheProvidersTerm) {
  v1::Quote q = Reserved("azure/Standard_ND96amsr_A100_v4/refreshed", 1, 100);
  ASSERT_TRUE(q.priced()) << q.unpriced_reason();
  EXPECT_EQ(q.commitment().name(), "1-year reservation");
  EXPECT_NEAR(q.cost().compute_usd(), 20.0 * 8760, 1e-6);
  q = Reserved("lambda/gpu_8x_h100_sxm5/refreshed", 1, 100);
  EXPECT_FALSE(q.priced());
  EXPECT_THAT(q.unpriced_reason(), HasSubstr("published without its term"));
}

// Every shipped row with terms gives their source and date, and its
// reserved_usd_per_hour is the effective hourly price of its shortest term.
TEST(ShippedCommitments, ReservedPriceIsTheShortestTerms) {
  const cv1::CatalogSnapshot offers = ShippedOffers();
  int with_terms = 0;
  for (const cv1::Offer& offer : offers.offers()) {
    if (offer.commitments_size() == 0) {
      // A curated reserved price always comes with its terms.
      EXPECT_EQ(offer.reserved_usd_per_hour(), 0) << offer.id();
      continue;
    }
    ++with_terms;
    const cv1::CommitmentTerm* shortest = nullptr;
    for (const cv1::CommitmentTerm& t : offer.commitments()) {
      SCOPED_TRACE(offer.id() + " " + t.name());
      EXPECT_FALSE(t.source().empty());
      EXPECT_FALSE(t.as_of().empty());
      EXPECT_EQ(t.bound(), cv1::PRICE_BOUND_EXACT);
      if (shortest == nullptr || t.term_hours() < shortest->term_hours()) shortest = &t;
    }
    EXPECT_NEAR(offer.reserved_usd_per_hour(),
                TermUsd(*shortest, offer.on_demand_usd_per_hour()) / shortest->term_hours(), 1e-9)
        << offer.id();
  }
  EXPECT_GE(with_terms, 12);
}

TEST(CommitmentChecks, TermFieldsAreCheckedWithTheirPath) {
  const std::vector<PathElement> base = {{"prices", 3}, {"commitments", 0}};
  cv1::CommitmentTerm t;
  t.set_name("x");
  t.set_term_hours(8760);
  t.set_upfront(cv1::UPFRONT_PAYMENT_NONE);
  t.set_usd_per_hour(10);
  EXPECT_FALSE(ValidateTerm(t, base, false, false).has_value());
  t.set_upfront_usd(5);  // NONE with an upfront amount
  auto e = ValidateTerm(t, base, false, false);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(FormatPath(e->path), "prices[3].commitments[0].upfront_usd");
  cv1::CommitmentTerm up_to;
  up_to.set_name("y");
  up_to.set_bound(cv1::PRICE_BOUND_UP_TO);
  up_to.set_discount_fraction(0.35);
  EXPECT_FALSE(ValidateTerm(up_to, base, true, false).has_value());
  up_to.set_usd_per_hour(3);  // an "up to" figure given as a price
  e = ValidateTerm(up_to, base, true, false);
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(e->message, HasSubstr("states only its ceiling"));
  cv1::CommitmentTerm dated = t;
  dated.clear_upfront_usd();
  dated.set_as_of("last year");
  e = ValidateTerm(dated, base, false, false);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(FormatPath(e->path), "prices[3].commitments[0].as_of");
}

}  // namespace
}  // namespace gpuadvisor::pricing
