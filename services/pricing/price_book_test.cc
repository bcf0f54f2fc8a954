#include "services/pricing/price_book.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/pricing/price_loader.h"
#include "services/pricing/price_store.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::pricing {
namespace {

namespace v1 = ::gpuadvisor::pricing::v1;
using ::gpuadvisor::catalog::v1::PURCHASE_OPTION_ON_DEMAND;
using ::gpuadvisor::catalog::v1::PURCHASE_OPTION_RESERVED;
using ::gpuadvisor::catalog::v1::PURCHASE_OPTION_SPOT;
using ::gpuadvisor::catalog::v1::PURCHASE_OPTION_UNSPECIFIED;
using ::gpuadvisor::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

// All test prices are $36/h = $0.01/s per node, so billed seconds read off
// directly as cents.
constexpr char kTestBook[] = R"pb(
  source: "test"
  prices_as_of: "2026-11-29"
  quote_constants {
    hours_per_month: 730
    checkpoints_kept: 2
    high_risk_rework_fraction: 0.25
    max_restarts_per_segment: 1000
  }
  default_billing {
    granularity_seconds: 60
    minimum_seconds: 60
    storage_usd_per_gb_month: 0.10
    egress_usd_per_gb: 0.09
    restart_minutes: 10
    checkpoint_write_gb_per_second: 2
  }
  billing {
    provider: "aws"
    granularity_seconds: 1
    minimum_seconds: 60
    storage_usd_per_gb_month: 0.08
    egress_usd_per_gb: 0.09
    egress_free_gb: 100
    egress_tiers { from_gb: 10000 usd_per_gb: 0.085 }
    egress_tiers { from_gb: 50000 usd_per_gb: 0.07 }
    restart_minutes: 6
  }
  billing { provider: "lambda" granularity_seconds: 60 storage_usd_per_gb_month: 0.2 }
  billing { provider: "hourlyco" granularity_seconds: 3600 minimum_seconds: 3600 }
  billing { provider: "azure" granularity_seconds: 1 minimum_seconds: 300 }
  billing { provider: "oci" granularity_seconds: 1 minimum_seconds: 60 }
  billing { provider: "oci/BM." granularity_seconds: 1 minimum_seconds: 3600 }
  billing {
    provider: "crusoe"
    granularity_seconds: 1
    reserved_discount: 0.35
    reserved_price_term {
      name: "1-year commitment"
      kind: COMMITMENT_KIND_COMMITTED_USE
      term_hours: 8760
      upfront: UPFRONT_PAYMENT_NONE
    }
  }
  spot_risks { provider: "aws" gpu_model: "H100" interruptions_per_hour: 0.01 }
  spot_risks { provider: "aws" gpu_model: "A100" interruptions_per_hour: 0.05 }
  spot_risks { provider: "aws" gpu_model: "L4" interruptions_per_hour: 0.002 }
  spot_risks { provider: "aws" gpu_model: "*" interruptions_per_hour: 0.001 }
  prices {
    offer_id: "aws/p5.48xlarge/us-east-1"
    provider: "aws"
    gpu_model: "H100-SXM"
    on_demand_usd_per_hour: 36
    spot_usd_per_hour: 10
  }
  prices {
    offer_id: "aws/p4d.24xlarge/us-east-1"
    gpu_model: "A100-40GB"
    on_demand_usd_per_hour: 36
    spot_usd_per_hour: 10
  }
  prices {
    offer_id: "aws/g6e.xlarge/us-east-1"
    gpu_model: "L40S"
    on_demand_usd_per_hour: 36
    spot_usd_per_hour: 10
  }
  prices {
    offer_id: "lambda/gpu_1x_h100/us-west-1"
    provider: "lambda"
    gpu_model: "H100-SXM"
    on_demand_usd_per_hour: 36
  }
  prices { offer_id: "hourlyco/big/eu" on_demand_usd_per_hour: 36 }
  prices { offer_id: "azure/ND96isr_H100_v5/eastus" on_demand_usd_per_hour: 36 }
  prices { offer_id: "oci/BM.GPU.H100.8/us-ashburn-1" on_demand_usd_per_hour: 36 }
  prices { offer_id: "oci/VM.GPU.A10.1/us-ashburn-1" on_demand_usd_per_hour: 36 }
  prices { offer_id: "crusoe/h100/us-east1" on_demand_usd_per_hour: 10 }
  prices { offer_id: "crusoe/a100/us-east1" on_demand_usd_per_hour: 10 reserved_usd_per_hour: 7 }
  prices {
    offer_id: "newco/x1/eu"
    gpu_model: "L40S"
    on_demand_usd_per_hour: 36
    spot_usd_per_hour: 18
  }
)pb";

constexpr char kP5[] = "aws/p5.48xlarge/us-east-1";
constexpr char kP4d[] = "aws/p4d.24xlarge/us-east-1";

std::shared_ptr<const PriceBook> TestBook() {
  absl::StatusOr<std::shared_ptr<const PriceBook>> book =
      PriceBook::Create(Parse<v1::PriceBook>(kTestBook));
  EXPECT_TRUE(book.ok()) << book.status();
  return book.ok() ? *book : nullptr;
}

const absl::Time kNow = absl::FromUnixSeconds(1796083200);  // 2026-12-01T00:00:00Z

v1::QuoteItem Item(const std::string& offer_id, int nodes, double hours,
                   catalog::v1::PurchaseOption option = PURCHASE_OPTION_ON_DEMAND) {
  v1::QuoteItem item;
  item.set_offer_id(offer_id);
  item.set_nodes(nodes);
  item.set_hours(hours);
  item.set_purchase_option(option);
  return item;
}

v1::Quote QuoteOne(const PriceBook& book, const v1::QuoteItem& item,
                   const v1::JobProfile& job = {}) {
  v1::QuoteRequest request;
  *request.add_items() = item;
  *request.mutable_job() = job;
  absl::StatusOr<v1::QuoteResponse> response = book.Quote(request, kNow);
  EXPECT_TRUE(response.ok()) << response.status();
  if (!response.ok() || response->quotes_size() != 1) return {};
  return response->quotes(0);
}

// --- Billing rules ----------------------------------------------------------

struct ComputeCase {
  const char* offer_id;
  int nodes;
  double run_seconds;
  double compute_usd;  // hand-computed: nodes x billed seconds x $0.01
};

TEST(PriceBookQuote, EachBillingRuleAgainstHandComputedCompute) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  const ComputeCase cases[] = {
      // AWS per second, 60 s minimum.
      {kP5, 1, 30, 0.60},    // 30 s -> 60 s
      {kP5, 1, 90.5, 0.91},  // 90.5 s -> 91 s
      {kP5, 2, 90.5, 1.82},  // minimum and rounding per node
      // Lambda per minute, no minimum.
      {"lambda/gpu_1x_h100/us-west-1", 1, 60, 0.60},
      {"lambda/gpu_1x_h100/us-west-1", 1, 61, 1.20},
      // Per started hour with an hour minimum.
      {"hourlyco/big/eu", 1, 10, 36.0},
      {"hourlyco/big/eu", 1, 3601, 72.0},
      // Azure per second, 5-minute minimum.
      {"azure/ND96isr_H100_v5/eastus", 1, 61, 3.00},
      {"azure/ND96isr_H100_v5/eastus", 1, 301, 3.01},
      // OCI: bare metal by instance prefix "oci/BM." (1 h minimum), VMs 60 s.
      {"oci/BM.GPU.H100.8/us-ashburn-1", 1, 120, 36.0},
      {"oci/VM.GPU.A10.1/us-ashburn-1", 1, 30, 0.60},
      // Unknown provider: default_billing, per minute with a 60 s minimum.
      {"newco/x1/eu", 1, 61, 1.20},
  };
  for (const ComputeCase& c : cases) {
    const v1::Quote q = QuoteOne(*book, Item(c.offer_id, c.nodes, c.run_seconds / 3600.0));
    SCOPED_TRACE(absl::StrCat(c.offer_id, " nodes=", c.nodes, " s=", c.run_seconds));
    ASSERT_TRUE(q.priced()) << q.unpriced_reason();
    EXPECT_NEAR(q.cost().compute_usd(), c.compute_usd, 1e-9);
    EXPECT_NEAR(q.cost().billed_hours() * 3600 * c.nodes * 0.01, c.compute_usd, 1e-9);
    EXPECT_DOUBLE_EQ(q.cost().usd_per_hour(), 36.0 * c.nodes);
    EXPECT_DOUBLE_EQ(q.cost().total_usd(), q.cost().compute_usd());
    EXPECT_EQ(q.cost().preemption_usd(), 0);
    EXPECT_THAT(q.warnings(), IsEmpty());
  }
}

TEST(PriceBookQuote, StorageAndEgressWithFreeAllowance) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::JobProfile job;
  job.set_dataset_gb(100);
  job.set_checkpoint_gb(50);
  job.set_egress_gb(250);
  // AWS, 73 h = 0.1 month: storage (100 + 2 x 50) GB x $0.08 x 0.1 = $1.60;
  // egress (250 - 100 free) GB x $0.09 = $13.50; compute 73 h x $36 = $2628.
  v1::Quote q = QuoteOne(*book, Item(kP5, 1, 73), job);
  ASSERT_TRUE(q.priced());
  EXPECT_NEAR(q.cost().storage_usd(), 1.60, 1e-9);
  EXPECT_NEAR(q.cost().egress_usd(), 13.50, 1e-9);
  EXPECT_NEAR(q.cost().compute_usd(), 2628.0, 1e-9);
  EXPECT_NEAR(q.cost().total_usd(), 2643.10, 1e-9);
  EXPECT_DOUBLE_EQ(q.cost().expected_hours(), 73);

  // Storage is shared: two nodes pay it once.
  q = QuoteOne(*book, Item(kP5, 2, 73), job);
  EXPECT_NEAR(q.cost().storage_usd(), 1.60, 1e-9);

  // Inside the free allowance: no egress.
  job.set_egress_gb(50);
  q = QuoteOne(*book, Item(kP5, 1, 73), job);
  EXPECT_EQ(q.cost().egress_usd(), 0);

  // Volume tiers count from the first GB: 60 TB out at AWS = (10000 - 100
  // free) x $0.09 + 40000 x $0.085 + 10000 x $0.07 = 891 + 3400 + 700.
  job.set_egress_gb(60000);
  EXPECT_NEAR(QuoteOne(*book, Item(kP5, 1, 73), job).cost().egress_usd(), 4991.0, 1e-6);
  job.set_egress_gb(10000);
  EXPECT_NEAR(QuoteOne(*book, Item(kP5, 1, 73), job).cost().egress_usd(), 891.0, 1e-6);

  // Default rule: no allowance, 250 GB x $0.09 = $22.50; Lambda egress is free.
  job.set_egress_gb(250);
  EXPECT_NEAR(QuoteOne(*book, Item("newco/x1/eu", 1, 1), job).cost().egress_usd(), 22.5, 1e-9);
  EXPECT_EQ(QuoteOne(*book, Item("lambda/gpu_1x_h100/us-west-1", 1, 1), job).cost().egress_usd(),
            0);
}

// The providers' free allowance and volume tiers are per month (PRICES.md 3:
// AWS "first 100 GB/month free", tiers "up to 10 TB" a month), so a job that
// runs for several months gets the allowance once per month of use, its
// egress spread evenly over its hours.
TEST(PriceBookQuote, EgressAllowanceAndTiersArePerMonthOfUse) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::JobProfile job;
  job.set_egress_gb(250);
  // 3 months (2190 h): 83.3 GB a month, inside each month's 100 GB.
  const v1::Quote three_months = QuoteOne(*book, Item(kP5, 1, 3 * 730), job);
  ASSERT_TRUE(three_months.priced());
  EXPECT_EQ(three_months.cost().egress_usd(), 0);
  // 1.5 months (1095 h): 166.7 GB in the full month (66.7 GB paid) and
  // 83.3 GB in the half month (free): 66.67 x $0.09 = $6.00.
  EXPECT_NEAR(QuoteOne(*book, Item(kP5, 1, 1.5 * 730), job).cost().egress_usd(), 6.0, 1e-9);
  // A job shorter than a month gets one allowance, as before.
  EXPECT_NEAR(QuoteOne(*book, Item(kP5, 1, 100), job).cost().egress_usd(), 13.5, 1e-9);
  // Tiers reset every month: 40 TB over 4 months is 10 TB a month, all in
  // the first paid tier: 4 x (10000 - 100) x $0.09 = $3564.
  job.set_egress_gb(40000);
  EXPECT_NEAR(QuoteOne(*book, Item(kP5, 1, 4 * 730), job).cost().egress_usd(), 3564.0, 1e-6);
}

TEST(PriceBookQuote, ReservedUsesPublishedPriceElseStatedDiscount) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  // The (test) provider states 35% off under a 1-year term: a 10 h job pays
  // the whole term, $10 x 0.65 x 8760 h.
  v1::Quote q = QuoteOne(*book, Item("crusoe/h100/us-east1", 1, 10, PURCHASE_OPTION_RESERVED));
  ASSERT_TRUE(q.priced());
  EXPECT_NEAR(q.cost().compute_usd(), 6.5 * 8760, 1e-6);
  EXPECT_NEAR(q.cost().usd_per_hour(), 6.5, 1e-12);
  EXPECT_EQ(q.purchase_option(), PURCHASE_OPTION_RESERVED);
  EXPECT_EQ(q.commitment().name(), "1-year commitment");
  EXPECT_EQ(q.terms_bought(), 1);
  EXPECT_DOUBLE_EQ(q.committed_hours(), 8760);
  // A published reserved price wins over the discount: $7 x 8760 h.
  q = QuoteOne(*book, Item("crusoe/a100/us-east1", 1, 10, PURCHASE_OPTION_RESERVED));
  EXPECT_NEAR(q.cost().compute_usd(), 7.0 * 8760, 1e-6);
  // AWS: neither a reserved price nor a discount.
  q = QuoteOne(*book, Item(kP5, 1, 10, PURCHASE_OPTION_RESERVED));
  EXPECT_FALSE(q.priced());
  EXPECT_THAT(q.unpriced_reason(), HasSubstr("reserved"));
  EXPECT_FALSE(q.has_cost());
}

TEST(PriceBookQuote, UnspecifiedPurchaseOptionIsOnDemand) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  const v1::Quote q = QuoteOne(*book, Item(kP5, 1, 1, PURCHASE_OPTION_UNSPECIFIED));
  ASSERT_TRUE(q.priced());
  EXPECT_EQ(q.purchase_option(), PURCHASE_OPTION_ON_DEMAND);
  EXPECT_NEAR(q.cost().compute_usd(), 36.0, 1e-9);
}

// --- Spot -------------------------------------------------------------------

// Issue 21 item 3 through Quote: exact spot and checkpoint accounting against
// hand-computed values. The book bills per second with no minimum (provider
// "p") or per started hour with a one-hour minimum ("hourly").
TEST(PriceBookQuote, SpotAndCheckpointAccountingTable) {
  absl::StatusOr<std::shared_ptr<const PriceBook>> book =
      PriceBook::Create(Parse<v1::PriceBook>(R"pb(
        quote_constants {
          hours_per_month: 730
          checkpoints_kept: 2
          high_risk_rework_fraction: 0.25
          max_restarts_per_segment: 1000
        }
        default_billing {
          granularity_seconds: 1
          checkpoint_write_gb_per_second: 2
          checkpoint_interval_minutes: 60
        }
        billing {
          provider: "hourly"
          granularity_seconds: 3600
          minimum_seconds: 3600
          restart_minutes: 6
        }
        spot_risks { provider: "*" gpu_model: "*" interruptions_per_hour: 0.005 }
        spot_risks { provider: "hourly" gpu_model: "*" interruptions_per_hour: 0.1 }
        prices { offer_id: "p/x/r" on_demand_usd_per_hour: 10 spot_usd_per_hour: 4 }
        prices { offer_id: "hourly/x/r" on_demand_usd_per_hour: 10 spot_usd_per_hour: 4 }
      )pb"));
  ASSERT_OK(book);
  struct Case {
    const char* what;
    v1::QuoteItem item;
    v1::JobProfile job;
    double checkpoint_hours, expected_hours, expected_interruptions, compute_usd, preemption_usd;
    double tolerance_usd;  // per-second rounding of each launch
  };
  auto job = [](const char* text) { return Parse<v1::JobProfile>(text); };
  const Case cases[] = {
      // Not restartable, 4 nodes x 0.005/h = 0.02/h over 48 h: (e^{0.96} - 1)
      // / 0.02 = 80.585 h expected, e^{0.96} - 1 = 1.612 interruptions;
      // compute 4 x $4 x 48 = $768, preemption 16 x (80.585 - 48) = $521.36.
      {"non-restartable", Item("p/x/r", 4, 48, PURCHASE_OPTION_SPOT), job(""), 0, 80.58482367115589,
       1.6116964734231178, 768, 521.3571787384942, 0.02},
      // Checkpoints per node in parallel: 2048 GB over 32 nodes at 2 GB/s is
      // 32 s a write, hourly by default: 100 writes = 0.889 h, on demand.
      {"on-demand writes", Item("p/x/r", 32, 100), job("checkpoint_gb: 2048"), 100 * 32.0 / 3600,
       100 + 100 * 32.0 / 3600, 0, 32 * 10 * (100 + 100 * 32.0 / 3600), 0, 1e-6},
      // The same writes on spot at the same (the job's) interval count the
      // same: 8 nodes write 2048 / 8 / 2 = 128 s every hour for 10 h.
      {"spot writes", Item("p/x/r", 8, 10, PURCHASE_OPTION_SPOT),
       job("checkpoint_gb: 2048 checkpoint_interval_minutes: 60 restartable: true"),
       10 * 128.0 / 3600, -1, -1, 8 * 4 * (10 + 10 * 128.0 / 3600), -1, 0},
      {"on-demand writes, same box", Item("p/x/r", 8, 10),
       job("checkpoint_gb: 2048 checkpoint_interval_minutes: 60 restartable: true"),
       10 * 128.0 / 3600, 10 + 10 * 128.0 / 3600, 0, 8 * 10 * (10 + 10 * 128.0 / 3600), 0, 1e-6},
      // Restartable, 1 node at 0.005/h, C = 6 min every 2 h over 10 h: W =
      // 10.5 h in 5 segments of 2.1 h; each takes (e^{0.0105} - 1) x 200 h
      // expected: K = 5 x 0.010555 = 0.05278, E = 10.5553 h; preemption $4 x
      // (10.5553 - 10.5).
      {"restartable segments", Item("p/x/r", 1, 10, PURCHASE_OPTION_SPOT),
       job("checkpoint_write_minutes: 6 checkpoint_interval_minutes: 120 restartable: true"), 0.5,
       10.555318445026371, 0.052776592225131855, 42, 4 * (10.555318445026371 - 10.5), 0.01},
      // The minimum charge per relaunch: 1 h at 0.1/h with free checkpoints,
      // K = 0.1, E = 1 + 0.1 x 6 min = 1.01 h; 1.1 launches each billed a
      // started hour = 1.1 h, so preemption $4 x 0.1 h = $0.40 (at per-second
      // billing it would be $0.04).
      {"minimum per relaunch", Item("hourly/x/r", 1, 1, PURCHASE_OPTION_SPOT),
       job("restartable: true"), 0, 1.01, 0.1, 4, 0.4, 1e-6},
  };
  ASSERT_GT(std::size(cases), 0u);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const v1::Quote q = QuoteOne(**book, c.item, c.job);
    ASSERT_TRUE(q.priced()) << q.unpriced_reason();
    EXPECT_NEAR(q.checkpoint_hours(), c.checkpoint_hours, 1e-9);
    if (c.expected_hours >= 0) {
      EXPECT_NEAR(q.cost().expected_hours(), c.expected_hours, 1e-9);
    }
    if (c.expected_interruptions >= 0) {
      EXPECT_NEAR(q.expected_interruptions(), c.expected_interruptions, 1e-9);
    }
    EXPECT_NEAR(q.cost().compute_usd(), c.compute_usd, 1e-6);
    if (c.preemption_usd >= 0) {
      EXPECT_NEAR(q.cost().preemption_usd(), c.preemption_usd, c.tolerance_usd + 1e-6);
    }
  }
}

// A run so long between checkpoints that more than a thousand restarts are
// expected is not priced as if it finished.
TEST(PriceBookQuote, SpotThatIsNotExpectedToFinishIsUnpriced) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  // p4d: 20 nodes x 0.05/h = 1/h over 100 h without restarts: e^{100}.
  const v1::Quote q = QuoteOne(*book, Item(kP4d, 20, 100, PURCHASE_OPTION_SPOT), v1::JobProfile());
  EXPECT_FALSE(q.priced());
  EXPECT_THAT(q.unpriced_reason(), HasSubstr("not expected to finish"));
  EXPECT_FALSE(q.has_cost());
}

TEST(PriceBookQuote, SpotRestartableWithOptimalInterval) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::JobProfile job;
  job.set_restartable(true);
  job.set_checkpoint_gb(10);
  job.set_checkpoint_write_minutes(15);  // C = 0.25 h
  // 2 nodes x 0.01/h = 0.02/h, MTBI 50 h; Young/Daly sqrt(2 x 0.25 x 50) = 5 h.
  // Checkpoint overhead 100 h / 5 h x 0.25 h = 5 h -> W = 105 h, in 20
  // segments of 5.25 h; R = 6 min. Each segment takes (e^{0.105} - 1) x
  // (50 + 0.1) h expected: K = 20 x 0.110711 = 2.2142 interruptions,
  // expected 110.932 h. compute 2 x $10 x 105 h = $2100; preemption 2 x $10
  // x 5.932 h = $118.64 (+ at most a second per relaunch); storage (2 x 10
  // GB) x $0.08 x 110.932 / 730.
  const double expected = 110.93203157641663;
  const v1::Quote q = QuoteOne(*book, Item(kP5, 2, 100, PURCHASE_OPTION_SPOT), job);
  ASSERT_TRUE(q.priced()) << q.unpriced_reason();
  EXPECT_NEAR(q.interruptions_per_hour(), 0.02, 1e-12);
  EXPECT_NEAR(q.optimal_checkpoint_interval_minutes(), 300.0, 1e-9);
  EXPECT_NEAR(q.checkpoint_interval_minutes(), 300.0, 1e-9);
  EXPECT_NEAR(q.checkpoint_hours(), 5.0, 1e-9);
  EXPECT_NEAR(q.expected_interruptions(), 2.2142122071141044, 1e-9);
  EXPECT_NEAR(q.cost().billed_hours(), 105.0, 1e-9);
  EXPECT_NEAR(q.cost().compute_usd(), 2100.0, 1e-6);
  EXPECT_NEAR(q.cost().expected_hours(), expected, 1e-9);
  EXPECT_NEAR(q.cost().preemption_usd(), 118.64063152833268, 0.02);
  const double storage = 20 * 0.08 * expected / 730;
  EXPECT_NEAR(q.cost().storage_usd(), storage, 1e-9);
  EXPECT_NEAR(q.cost().total_usd(), 2100.0 + q.cost().preemption_usd() + storage, 1e-6);
  EXPECT_DOUBLE_EQ(q.cost().usd_per_hour(), 20.0);
  EXPECT_THAT(q.warnings(), IsEmpty());
}

TEST(PriceBookQuote, SpotRestartableWithJobInterval) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::JobProfile job;
  job.set_restartable(true);
  job.set_checkpoint_write_minutes(15);
  job.set_checkpoint_interval_minutes(60);  // tau = 1 h
  // Overhead 100 x 0.25 = 25 h -> W = 125 h in 100 segments of 1.25 h:
  // K = 100 x (e^{0.025} - 1) = 2.5315, expected 2.5315 x 50.1 = 126.829 h.
  const v1::Quote q = QuoteOne(*book, Item(kP5, 2, 100, PURCHASE_OPTION_SPOT), job);
  ASSERT_TRUE(q.priced());
  EXPECT_NEAR(q.optimal_checkpoint_interval_minutes(), 300.0, 1e-9);  // still reported
  EXPECT_NEAR(q.checkpoint_interval_minutes(), 60.0, 1e-9);
  EXPECT_NEAR(q.cost().compute_usd(), 2500.0, 1e-6);
  EXPECT_NEAR(q.cost().preemption_usd(), 36.575076547769925, 0.02);
  EXPECT_NEAR(q.cost().expected_hours(), 126.8287538273885, 1e-9);
}

TEST(PriceBookQuote, SpotDerivesCheckpointWriteTimeAt2GBps) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::JobProfile job;
  job.set_restartable(true);
  job.set_checkpoint_gb(720);  // 720 GB / 2 GB/s = 360 s = 0.1 h
  // p4d A100: 0.05/h, MTBI 20 h; sqrt(2 x 0.1 x 20) = 2 h = 120 min.
  // W = 10 + 10/2 x 0.1 = 10.5 h in 5 segments of 2.1 h: K = 5 x (e^{0.105}
  // - 1) = 0.55355, expected 0.55355 x (20 + 0.1) = 11.1264 h; compute $10 x
  // 10.5 = $105; preemption $10 x 0.6264 h = $6.264.
  const v1::Quote q = QuoteOne(*book, Item(kP4d, 1, 10, PURCHASE_OPTION_SPOT), job);
  ASSERT_TRUE(q.priced());
  EXPECT_NEAR(q.interruptions_per_hour(), 0.05, 1e-12);
  EXPECT_NEAR(q.optimal_checkpoint_interval_minutes(), 120.0, 1e-9);
  EXPECT_NEAR(q.checkpoint_hours(), 0.5, 1e-9);
  EXPECT_NEAR(q.cost().compute_usd(), 105.0, 1e-6);
  EXPECT_NEAR(q.cost().expected_hours(), 11.126416340748376, 1e-9);
  EXPECT_NEAR(q.cost().preemption_usd(), 6.26416340748376, 0.01);
  // Two nodes write their halves at once: C = 0.05 h.
  const v1::Quote two = QuoteOne(*book, Item(kP4d, 2, 10, PURCHASE_OPTION_SPOT), job);
  ASSERT_TRUE(two.priced());
  EXPECT_NEAR(two.optimal_checkpoint_interval_minutes(), 60.0, 1e-9);  // sqrt(2 x 0.05 x 10)
}

TEST(PriceBookQuote, SpotNonRestartableLosesWholeRunWithWarning) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::JobProfile job;  // restartable defaults to false
  // Cluster rate 0.02/h over 50 h, starting over after each interruption:
  // (e^{0.02 x 50} - 1) / 0.02 = 85.914 h expected (not 50 x (1 + P) =
  // 81.6 h), e - 1 = 1.718 interruptions, plus 6 min each: 85.914 + 1.718 x
  // 0.1; compute 2 x $10 x 50 = $1000; preemption 2 x $10 x (86.086 - 50).
  const v1::Quote q = QuoteOne(*book, Item(kP5, 2, 50, PURCHASE_OPTION_SPOT), job);
  ASSERT_TRUE(q.priced());
  const double expected = std::expm1(1.0) * (1 / 0.02 + 0.1);
  EXPECT_NEAR(q.cost().compute_usd(), 1000.0, 1e-6);
  EXPECT_NEAR(q.cost().preemption_usd(), 20 * (expected - 50), 0.02);
  EXPECT_NEAR(q.cost().expected_hours(), expected, 1e-9);
  EXPECT_NEAR(q.expected_interruptions(), std::expm1(1.0), 1e-12);
  EXPECT_NEAR(q.cost().total_usd(), 1000.0 + q.cost().preemption_usd(), 1e-6);
  EXPECT_THAT(q.warnings(),
              ElementsAre(HasSubstr("frequent spot interruptions"),
                          "spot for a non-restartable job: a preemption loses the whole run"));
  // The same job on demand: no warning, no preemption cost.
  const v1::Quote od = QuoteOne(*book, Item(kP5, 2, 50), job);
  EXPECT_THAT(od.warnings(), IsEmpty());
  EXPECT_EQ(od.cost().preemption_usd(), 0);
  EXPECT_EQ(od.interruptions_per_hour(), 0);
}

TEST(PriceBookQuote, SpotAlwaysOnEndpointWarns) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::JobProfile job;
  job.set_restartable(true);
  job.set_always_on(true);
  const v1::Quote q = QuoteOne(*book, Item(kP5, 1, 24, PURCHASE_OPTION_SPOT), job);
  ASSERT_TRUE(q.priced());
  EXPECT_THAT(q.warnings(), ElementsAre(HasSubstr("always-on endpoint")));
}

TEST(PriceBookQuote, SpotRiskMatchesGpuFamilyByPrefix) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::JobProfile job;
  job.set_restartable(true);
  // "A100" covers "A100-40GB"; "L4" must not cover "L40S": AWS "*" instead.
  EXPECT_NEAR(QuoteOne(*book, Item(kP4d, 1, 1, PURCHASE_OPTION_SPOT), job).interruptions_per_hour(),
              0.05, 1e-12);
  EXPECT_NEAR(QuoteOne(*book, Item("aws/g6e.xlarge/us-east-1", 1, 1, PURCHASE_OPTION_SPOT), job)
                  .interruptions_per_hour(),
              0.001, 1e-12);
}

TEST(PriceBookQuote, SpotWithoutKnownRiskWarns) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::JobProfile job;
  job.set_restartable(true);
  const v1::Quote q = QuoteOne(*book, Item("newco/x1/eu", 1, 2, PURCHASE_OPTION_SPOT), job);
  ASSERT_TRUE(q.priced());
  EXPECT_EQ(q.interruptions_per_hour(), 0);
  EXPECT_EQ(q.cost().preemption_usd(), 0);
  EXPECT_NEAR(q.cost().compute_usd(), 36.0, 1e-9);  // $18 x 2 h
  EXPECT_THAT(q.warnings(), ElementsAre(HasSubstr("no spot interruption rate")));
}

TEST(PriceBookQuote, FrequentInterruptionsWarn) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::JobProfile job;
  job.set_restartable(true);
  job.set_checkpoint_interval_minutes(60);  // hourly checkpoints
  // 20 nodes x 0.05/h = 1/h: each hour takes (e - 1) x 1.1 h expected.
  const v1::Quote q = QuoteOne(*book, Item(kP4d, 20, 100, PURCHASE_OPTION_SPOT), job);
  ASSERT_TRUE(q.priced());
  EXPECT_THAT(q.warnings(), ElementsAre(HasSubstr("frequent spot interruptions")));
}

// The rules' constants come from the book: the same job and prices quote
// differently under other quote_constants (checkpoints kept and the month for
// storage, the warning's fraction, the restart limit).
TEST(PriceBookQuote, QuoteReadsTheBooksConstants) {
  v1::PriceBook data = Parse<v1::PriceBook>(kTestBook);
  v1::QuoteConstants& constants = *data.mutable_quote_constants();
  constants.set_checkpoints_kept(3);
  constants.set_hours_per_month(365);
  constants.set_high_risk_rework_fraction(10);
  constants.set_max_restarts_per_segment(std::expm1(101.0));
  absl::StatusOr<std::shared_ptr<const PriceBook>> other = PriceBook::Create(data);
  ASSERT_OK(other);
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::JobProfile job;
  job.set_dataset_gb(100);
  job.set_checkpoint_gb(50);
  // AWS, 73 h: (100 + 3 x 50) GB x $0.08 x 73 / 365 = $4.00 (shipped: $1.60).
  EXPECT_NEAR(QuoteOne(*book, Item(kP5, 1, 73), job).cost().storage_usd(), 1.60, 1e-9);
  EXPECT_NEAR(QuoteOne(**other, Item(kP5, 1, 73), job).cost().storage_usd(), 4.00, 1e-9);
  // 20 nodes x 0.05/h over 100 h without restarts: e^{100} - 1 expected, over
  // 1000 but under e^{101} - 1.
  const v1::QuoteItem spot = Item(kP4d, 20, 100, PURCHASE_OPTION_SPOT);
  EXPECT_FALSE(QuoteOne(*book, spot, v1::JobProfile()).priced());
  EXPECT_TRUE(QuoteOne(**other, spot, v1::JobProfile()).priced());
  // Hourly checkpoints at 1/h add (e - 1) x 1.1 - 1 = 89% to the work: over a
  // quarter, under 10.
  job.set_restartable(true);
  job.set_checkpoint_interval_minutes(60);
  EXPECT_THAT(QuoteOne(*book, spot, job).warnings(),
              ElementsAre(HasSubstr("frequent spot interruptions")));
  EXPECT_THAT(QuoteOne(**other, spot, job).warnings(), IsEmpty());
}

// --- Unpriced items and request validation ----------------------------------

TEST(PriceBookQuote, UnpricedItemsAreNotErrors) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::QuoteRequest request;
  *request.add_items() = Item("nope/x/y", 1, 1);
  *request.add_items() = Item("lambda/gpu_1x_h100/us-west-1", 1, 1, PURCHASE_OPTION_SPOT);
  *request.add_items() = Item(kP5, 1, 1);
  absl::StatusOr<v1::QuoteResponse> response = book->Quote(request, kNow);
  ASSERT_OK(response);
  ASSERT_EQ(response->quotes_size(), 3);
  EXPECT_EQ(response->quotes(0).offer_id(), "nope/x/y");
  EXPECT_FALSE(response->quotes(0).priced());
  EXPECT_EQ(response->quotes(0).unpriced_reason(), "unknown offer id");
  EXPECT_FALSE(response->quotes(1).priced());
  EXPECT_EQ(response->quotes(1).unpriced_reason(), "not sold as spot");
  EXPECT_FALSE(response->quotes(1).has_cost());
  EXPECT_TRUE(response->quotes(2).priced());
  EXPECT_EQ(response->price_book_version(), book->version());
  EXPECT_EQ(response->prices_as_of(), "2026-11-29");
  EXPECT_EQ(response->price_book_age_seconds(), 2 * 86400);  // 2026-11-29 -> 2026-12-01
}

// The form that writes into the caller's message (the gRPC handler's, or one
// on an arena) answers as the returning one, replacing whatever it held.
TEST(PriceBookQuote, IntoACallersMessageOnAnArena) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::QuoteRequest request;
  *request.add_items() = Item("nope/x/y", 1, 1);
  *request.add_items() = Item(kP5, 2, 10, PURCHASE_OPTION_SPOT);
  *request.add_items() = Item(kP5, 1, 3);
  absl::StatusOr<v1::QuoteResponse> returned = book->Quote(request, kNow);
  ASSERT_OK(returned);
  ASSERT_EQ(returned->quotes_size(), 3);
  google::protobuf::Arena arena;
  auto* response = google::protobuf::Arena::CreateMessage<v1::QuoteResponse>(&arena);
  response->add_quotes()->set_offer_id("left over");
  response->set_catalog_version("left over");
  ASSERT_OK(book->Quote(request, kNow, response));
  EXPECT_EQ(response->SerializeAsString(), returned->SerializeAsString());
  request.mutable_items(1)->set_nodes(0);
  EXPECT_THAT(book->Quote(request, kNow, response), StatusIs(absl::StatusCode::kInvalidArgument));
}

// The in-process overload (the gateway's): the same quotes as the request,
// with the offer ids left to the caller, and the same errors.
TEST(PriceBookQuote, InProcessItemsQuoteLikeTheRequest) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::QuoteRequest request;
  *request.add_items() = Item("nope/x/y", 1, 1);
  *request.add_items() = Item(kP5, 2, 10, PURCHASE_OPTION_SPOT);
  *request.add_items() = Item(kP4d, 1, 3, PURCHASE_OPTION_RESERVED);
  *request.add_items() = Item(kP5, 3, 0.2, catalog::v1::PURCHASE_OPTION_UNSPECIFIED);
  request.mutable_job()->set_restartable(true);
  request.mutable_job()->set_checkpoint_gb(40);
  request.mutable_job()->set_egress_gb(300);
  absl::StatusOr<v1::QuoteResponse> expected = book->Quote(request, kNow);
  ASSERT_OK(expected);
  ASSERT_EQ(expected->quotes_size(), 4);
  std::vector<PriceBook::Item> items;
  for (const v1::QuoteItem& item : request.items()) {
    items.push_back({item.offer_id(), item.nodes(), item.hours(), item.purchase_option()});
  }
  v1::QuoteResponse in_process;
  in_process.set_catalog_version("left over");
  ASSERT_OK(book->Quote(items, request.job(), kNow, &in_process));
  for (v1::Quote& quote : *expected->mutable_quotes()) {
    EXPECT_FALSE(quote.offer_id().empty());
    quote.clear_offer_id();
  }
  EXPECT_EQ(in_process.SerializeAsString(), expected->SerializeAsString())
      << in_process.ShortDebugString() << "\n"
      << expected->ShortDebugString();
  // Where the caller expects each offer in the book (Item::book_index): its
  // own position, another offer's, none, or past the end give the same
  // quotes (a wrong hint falls back to the id).
  const int p4d = book->OfferIndex(kP4d);
  ASSERT_GE(p4d, 0);
  ASSERT_NE(book->OfferIndex(kP5), p4d);
  for (int other : {-2, -1, p4d, book->size(), 1 << 30}) {  // -2: each item's own position
    for (PriceBook::Item& item : items) {
      item.book_index = other == -2 ? book->OfferIndex(item.offer_id) : other;
    }
    v1::QuoteResponse hinted;
    ASSERT_OK(book->Quote(items, request.job(), kNow, &hinted));
    EXPECT_EQ(hinted.SerializeAsString(), expected->SerializeAsString()) << "hint " << other;
  }
  items[1].hours = -1;
  EXPECT_THAT(
      book->Quote(items, request.job(), kNow, &in_process),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("items[1].hours: must be finite")));
}

TEST(PriceBookQuote, InvalidRequestsNameTheField) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    v1::QuoteItem bad_item;
    const char* message;
  } cases[] = {
      {Item(kP5, 0, 1), "items[2].nodes: must be finite, >= 1 and <= 100000"},
      {Item(kP5, 1, -1), "items[2].hours: must be finite"},
      {Item(kP5, 1, nan), "items[2].hours: must be finite"},
      {Item(kP5, 1, std::numeric_limits<double>::infinity()), "items[2].hours: must be finite"},
      {Item(kP5, 1, 1, static_cast<catalog::v1::PurchaseOption>(7)),
       "items[2].purchase_option: unknown value 7"},
  };
  for (const Case& c : cases) {
    v1::QuoteRequest request;
    *request.add_items() = Item(kP5, 1, 1);
    *request.add_items() = Item("unknown/x/y", 1, 1);
    *request.add_items() = c.bad_item;
    EXPECT_THAT(book->Quote(request, kNow),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
  }
  v1::QuoteRequest request;
  *request.add_items() = Item(kP5, 1, 1);
  request.mutable_job()->set_checkpoint_gb(-1);
  EXPECT_THAT(book->Quote(request, kNow),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("job.checkpoint_gb: must be finite, >= 0 and <= 1000000000 GB")));
  // Physical ranges, so no total overflows: a dataset of 1.7e308 GB.
  request.mutable_job()->set_checkpoint_gb(1);
  request.mutable_job()->set_dataset_gb(1.7e308);
  EXPECT_THAT(book->Quote(request, kNow),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("job.dataset_gb")));
  request.mutable_job()->set_dataset_gb(1e9);  // an exabyte: the largest accepted
  ASSERT_OK(book->Quote(request, kNow));
  EXPECT_TRUE(std::isfinite(book->Quote(request, kNow)->quotes(0).cost().total_usd()));
  request.clear_items();
  *request.add_items() = Item(kP5, 100'001, 1);
  EXPECT_THAT(book->Quote(request, kNow),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("items[0].nodes")));
  *request.mutable_items(0) = Item(kP5, 1, 1);
  request.mutable_job()->set_checkpoint_gb(1);
  request.mutable_job()->set_egress_gb(nan);
  EXPECT_THAT(book->Quote(request, kNow),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("job.egress_gb")));
}

// --- PriceBook::Create validation ------------------------------------------

TEST(PriceBookCreate, ErrorsNameTheFieldPath) {
  struct Case {
    const char* name;
    void (*mutate)(v1::PriceBook*);
    const char* message;
  } cases[] = {
      {"negative spot", [](v1::PriceBook* b) { b->mutable_prices(3)->set_spot_usd_per_hour(-1); },
       "prices[3].spot_usd_per_hour: must be finite and >= 0"},
      {"nan on demand",
       [](v1::PriceBook* b) { b->mutable_prices(0)->set_on_demand_usd_per_hour(std::nan("")); },
       "prices[0].on_demand_usd_per_hour: must be finite and >= 0"},
      {"inf reserved",
       [](v1::PriceBook* b) {
         b->mutable_prices(1)->set_reserved_usd_per_hour(std::numeric_limits<double>::infinity());
       },
       "prices[1].reserved_usd_per_hour: must be finite and >= 0"},
      {"duplicate offer", [](v1::PriceBook* b) { b->mutable_prices(4)->set_offer_id(kP5); },
       "prices[4].offer_id: duplicate \"aws/p5.48xlarge/us-east-1\" (first at prices[0])"},
      {"empty offer id", [](v1::PriceBook* b) { b->mutable_prices(2)->clear_offer_id(); },
       "prices[2].offer_id: must not be empty"},
      {"granularity 0", [](v1::PriceBook* b) { b->mutable_billing(1)->set_granularity_seconds(0); },
       "billing[1].granularity_seconds: must be >= 1"},
      {"negative minimum", [](v1::PriceBook* b) { b->mutable_billing(0)->set_minimum_seconds(-1); },
       "billing[0].minimum_seconds: must be >= 0"},
      {"discount 1", [](v1::PriceBook* b) { b->mutable_billing(6)->set_reserved_discount(1); },
       "billing[6].reserved_discount: must be finite, >= 0 and < 1"},
      {"negative storage",
       [](v1::PriceBook* b) { b->mutable_billing(2)->set_storage_usd_per_gb_month(-0.1); },
       "billing[2].storage_usd_per_gb_month: must be finite and >= 0"},
      {"egress tiers out of order",
       [](v1::PriceBook* b) { b->mutable_billing(0)->mutable_egress_tiers(1)->set_from_gb(5000); },
       "billing[0].egress_tiers[1].from_gb: must be finite and > 10000"},
      {"negative tier rate",
       [](v1::PriceBook* b) { b->mutable_billing(0)->mutable_egress_tiers(0)->set_usd_per_gb(-1); },
       "billing[0].egress_tiers[0].usd_per_gb: must be finite and >= 0"},
      {"duplicate provider", [](v1::PriceBook* b) { b->mutable_billing(3)->set_provider("AWS"); },
       "billing[3].provider: duplicate \"AWS\" (first at billing[0])"},
      {"bad provider key", [](v1::PriceBook* b) { b->mutable_billing(3)->set_provider("a/b/c"); },
       "billing[3].provider: must be \"<provider>\" or \"<provider>/<instance type prefix>\""},
      {"default granularity",
       [](v1::PriceBook* b) { b->mutable_default_billing()->set_granularity_seconds(0); },
       "default_billing.granularity_seconds: must be >= 1"},
      {"inf risk",
       [](v1::PriceBook* b) {
         b->mutable_spot_risks(1)->set_interruptions_per_hour(
             std::numeric_limits<double>::infinity());
       },
       "spot_risks[1].interruptions_per_hour: must be finite and >= 0"},
      {"duplicate risk", [](v1::PriceBook* b) { b->mutable_spot_risks(1)->set_gpu_model("h100"); },
       "spot_risks[1].gpu_model: duplicate"},
      {"bad date", [](v1::PriceBook* b) { b->set_prices_as_of("last week"); },
       "prices_as_of: must be an ISO date"},
      {"no quote constants", [](v1::PriceBook* b) { b->clear_quote_constants(); },
       "quote_constants: must be set"},
      {"month of 0 h",
       [](v1::PriceBook* b) { b->mutable_quote_constants()->set_hours_per_month(0); },
       "quote_constants.hours_per_month: must be finite and > 0"},
      {"negative checkpoints kept",
       [](v1::PriceBook* b) { b->mutable_quote_constants()->set_checkpoints_kept(-1); },
       "quote_constants.checkpoints_kept: must be finite and >= 0"},
      {"NaN warning fraction",
       [](v1::PriceBook* b) {
         b->mutable_quote_constants()->set_high_risk_rework_fraction(
             std::numeric_limits<double>::quiet_NaN());
       },
       "quote_constants.high_risk_rework_fraction: must be finite and > 0"},
      {"restart limit below 1",
       [](v1::PriceBook* b) { b->mutable_quote_constants()->set_max_restarts_per_segment(0.5); },
       "quote_constants.max_restarts_per_segment: must be finite and >= 1"},
  };
  for (const Case& c : cases) {
    v1::PriceBook data = Parse<v1::PriceBook>(kTestBook);
    c.mutate(&data);
    EXPECT_THAT(PriceBook::Create(data),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.name;
  }
}

// Spot warnings are formatted once per request and reused: each quote of a
// mixed request carries exactly the warnings it gets when quoted alone.
TEST(PriceBookQuote, RepeatedSpotWarningsMatchQuotingEachItemAlone) {
  v1::PriceBook data;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        quote_constants {
          hours_per_month: 730
          checkpoints_kept: 2
          high_risk_rework_fraction: 0.25
          max_restarts_per_segment: 1000
        }
        billing { provider: "p" granularity_seconds: 1 restart_minutes: 6 }
        default_billing { provider: "*" granularity_seconds: 1 restart_minutes: 10 }
        spot_risks {
          provider: "p"
          gpu_model: "*"
          interruptions_per_hour: 0.05
          capacity_restart_factor: 0.5
        }
        prices { offer_id: "p/x/r1" provider: "p" gpu_model: "H100" spot_usd_per_hour: 10 }
        prices { offer_id: "p/x/r2" provider: "p" gpu_model: "H100" spot_usd_per_hour: 12 }
      )pb",
      &data));
  absl::StatusOr<std::shared_ptr<const PriceBook>> book = PriceBook::Create(data);
  ASSERT_TRUE(book.ok()) << book.status();
  v1::QuoteRequest request;
  request.mutable_job()->set_restartable(true);
  request.mutable_job()->set_checkpoint_interval_minutes(300);
  for (int nodes : {2, 20, 2, 4, 20, 1}) {
    for (const char* id : {"p/x/r1", "p/x/r2"})
      *request.add_items() = Item(id, nodes, 100, PURCHASE_OPTION_SPOT);
  }
  absl::StatusOr<v1::QuoteResponse> all = (*book)->Quote(request, kNow);
  ASSERT_OK(all);
  ASSERT_EQ(all->quotes_size(), request.items_size());
  int warnings = 0;
  for (int i = 0; i < request.items_size(); ++i) {
    const v1::Quote alone = QuoteOne(**book, request.items(i), request.job());
    EXPECT_THAT(all->quotes(i).warnings(), ::testing::ElementsAreArray(alone.warnings()))
        << "item " << i;
    warnings += all->quotes(i).warnings_size();
  }
  EXPECT_THAT(all->quotes(2).warnings(),
              ElementsAre(HasSubstr("spot on 20 nodes"), HasSubstr("frequent")));
  EXPECT_THAT(all->quotes(0).warnings(),
              ElementsAre(HasSubstr("spot on 2 nodes"), HasSubstr("every 10.0 h on 2")));
  // 20 segments of 5 h at 0.1/h, 9 min a restart: 20 x (e^{0.5} - 1) x 10.15 h.
  EXPECT_NEAR(all->quotes(0).cost().expected_hours(), 20 * std::expm1(0.5) * 10.15, 1e-9);
  EXPECT_GT(warnings, 10);
}

// Notice times and multi-node capacity risk, hand computed.
TEST(PriceBookQuote, SpotNoticeSavesTheWorkAndCapacityRiskGrowsTheRestart) {
  v1::PriceBook data;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        quote_constants {
          hours_per_month: 730
          checkpoints_kept: 2
          high_risk_rework_fraction: 0.25
          max_restarts_per_segment: 1000
        }
        billing { provider: "p" granularity_seconds: 1 minimum_seconds: 0 restart_minutes: 6 }
        default_billing { provider: "*" granularity_seconds: 1 restart_minutes: 10 }
        spot_risks {
          provider: "p"
          gpu_model: "*"
          interruption_frequency: 0.2
          instance_lifetime_hours: 12
          notice_seconds: 120
          capacity_restart_factor: 0.5
        }
        spot_risks { provider: "q" gpu_model: "*" interruptions_per_hour: 0.01 }
        prices { offer_id: "p/x/r" provider: "p" gpu_model: "H100" spot_usd_per_hour: 10 }
        prices { offer_id: "q/x/r" provider: "q" gpu_model: "H100" spot_usd_per_hour: 10 }
      )pb",
      &data));
  absl::StatusOr<std::shared_ptr<const PriceBook>> book = PriceBook::Create(data);
  ASSERT_TRUE(book.ok()) << book.status();
  v1::QuoteRequest request;
  request.mutable_job()->set_restartable(true);
  request.mutable_job()->set_checkpoint_write_minutes(1);  // C = 1 min, fits the 2-min notice
  for (const char* id : {"p/x/r", "q/x/r"}) {
    v1::QuoteItem* item = request.add_items();
    item->set_offer_id(id);
    item->set_nodes(3);
    item->set_hours(10);
    item->set_purchase_option(catalog::v1::PURCHASE_OPTION_SPOT);
  }
  absl::StatusOr<v1::QuoteResponse> response = (*book)->Quote(request, absl::Now());
  ASSERT_TRUE(response.ok()) << response.status();
  const v1::Quote& p = response->quotes(0);
  const double rate = 3 * -std::log(0.8) / 12;  // cluster
  EXPECT_NEAR(p.interruptions_per_hour(), rate, 1e-12);
  EXPECT_EQ(p.notice_seconds(), 120);
  EXPECT_NEAR(p.restart_minutes(), 6 * (1 + 0.5 * 2), 1e-9);  // 12 min for 3 nodes
  // Saved at the notice: loss = C + R = 1/60 + 12/60 h per interruption.
  const double c = 1.0 / 60;
  const double tau = std::sqrt(2 * c / rate);
  const double w = 10 + 10 / tau * c;
  const double rework = rate * w * (c + 12.0 / 60);
  EXPECT_NEAR(p.cost().expected_hours(), w + rework, 1e-6);
  EXPECT_NEAR(p.cost().preemption_usd(), 3 * 10 * rework, 0.02);  // whole seconds a launch
  // No documented notice, no capacity factor: an interrupted interval starts
  // over; 10 / tau segments of tau + C, each (e^{rate (tau + C)} - 1) x
  // (1 / rate + R) expected.
  const v1::Quote& q = response->quotes(1);
  EXPECT_FALSE(q.has_notice_seconds());
  EXPECT_NEAR(q.restart_minutes(), 10, 1e-9);  // the default rule's restart
  const double rate_q = 0.03, tau_q = std::sqrt(2 * c / rate_q);
  const double segments = 10 / tau_q;
  EXPECT_NEAR(q.cost().expected_hours(),
              segments * std::expm1(rate_q * (tau_q + c)) * (1 / rate_q + 10.0 / 60), 1e-6);
}

TEST(PriceBookCreate, VersionIsAStableContentHash) {
  v1::PriceBook data = Parse<v1::PriceBook>(kTestBook);
  data.set_version("ignored");
  auto a = PriceBook::Create(data);
  auto b = PriceBook::Create(Parse<v1::PriceBook>(kTestBook));
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_THAT((*a)->version(), MatchesRegex("[0-9a-f]{16}"));
  EXPECT_EQ((*a)->version(), (*b)->version());
  data.mutable_prices(0)->set_spot_usd_per_hour(11);
  auto c = PriceBook::Create(data);
  ASSERT_OK(c);
  EXPECT_NE((*c)->version(), (*a)->version());
  // The provider is taken from the offer id when empty.
  EXPECT_EQ((*a)->data().prices(1).provider(), "aws");
}

TEST(PricesFromOffers, CopiesIdsProvidersAndPrices) {
  catalog::v1::CatalogSnapshot catalog = Parse<catalog::v1::CatalogSnapshot>(R"pb(
    offers {
      id: "aws/p5.48xlarge/us-east-1"
      provider: "aws"
      instance_type: "p5.48xlarge"
      region: "us-east-1"
      gpu_model: "H100-SXM"
      on_demand_usd_per_hour: 55.04
      spot_usd_per_hour: 17.63
    }
    offers {
      provider: "Lambda"
      instance_type: "gpu_8x_h100_sxm5"
      region: "us-east-1"
      gpu_model: "H100-SXM"
      on_demand_usd_per_hour: 31.92
      reserved_usd_per_hour: 20
    }
  )pb");
  std::vector<v1::OfferPrice> prices = PricesFromOffers(catalog);
  ASSERT_EQ(prices.size(), 2u);
  EXPECT_EQ(prices[0].offer_id(), "aws/p5.48xlarge/us-east-1");
  EXPECT_EQ(prices[0].provider(), "aws");
  EXPECT_EQ(prices[0].gpu_model(), "H100-SXM");
  EXPECT_DOUBLE_EQ(prices[0].on_demand_usd_per_hour(), 55.04);
  EXPECT_DOUBLE_EQ(prices[0].spot_usd_per_hour(), 17.63);
  EXPECT_EQ(prices[1].offer_id(), "lambda/gpu_8x_h100_sxm5/us-east-1");
  EXPECT_EQ(prices[1].provider(), "lambda");
  EXPECT_DOUBLE_EQ(prices[1].reserved_usd_per_hour(), 20);
}

// --- WithUpdates ------------------------------------------------------------

TEST(PriceBookWithUpdates, ReplacesAndBumpsVersion) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::UpdatePricesRequest update = Parse<v1::UpdatePricesRequest>(R"pb(
    source: "live feed"
    prices_as_of: "2026-11-30"
    prices {
      offer_id: "aws/p5.48xlarge/us-east-1"
      on_demand_usd_per_hour: 36
      spot_usd_per_hour: 12
    }
  )pb");
  auto next = WithUpdates(*book, update);
  ASSERT_OK(next);
  const PriceBook& updated = **next;
  EXPECT_NE(updated.version(), book->version());
  EXPECT_EQ(updated.size(), book->size());
  EXPECT_EQ(updated.data().source(), "live feed");
  EXPECT_EQ(updated.data().prices_as_of(), "2026-11-30");
  // Replaced whole, but the empty provider / gpu_model keep the old values.
  EXPECT_EQ(updated.data().prices(0).provider(), "aws");
  EXPECT_EQ(updated.data().prices(0).gpu_model(), "H100-SXM");
  EXPECT_DOUBLE_EQ(updated.data().prices(0).spot_usd_per_hour(), 12);
  // Quotes use the new price; the old book still serves the old one.
  v1::JobProfile job;
  job.set_restartable(true);
  EXPECT_NEAR(QuoteOne(updated, Item(kP5, 1, 1, PURCHASE_OPTION_SPOT), job).cost().usd_per_hour(),
              12, 1e-12);
  EXPECT_NEAR(QuoteOne(*book, Item(kP5, 1, 1, PURCHASE_OPTION_SPOT), job).cost().usd_per_hour(), 10,
              1e-12);
}

// Before: unknown ids were added (5,000 made-up ids grew a 130-offer book to
// 5,130) and 1.7e308 was accepted, so totals overflowed to inf and NaN.
TEST(PriceBookWithUpdates, RejectsUnknownOffersAndImplausiblePrices) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::UpdatePricesRequest update;
  v1::OfferPrice* price = update.add_prices();
  price->set_offer_id("gcp/a3-highgpu-8g/us-central1");
  price->set_on_demand_usd_per_hour(43);
  EXPECT_THAT(WithUpdates(*book, update), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr("prices[0].offer_id: unknown offer")));
  price->set_offer_id(kP5);
  for (double bad : {1.7e308, 10'001.0, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN(), -1.0}) {
    price->set_on_demand_usd_per_hour(bad);
    EXPECT_THAT(WithUpdates(*book, update), StatusIs(absl::StatusCode::kInvalidArgument,
                                                     HasSubstr("prices[0].on_demand_usd_per_hour")))
        << bad;
  }
  price->set_on_demand_usd_per_hour(40);
  price->set_spot_usd_per_hour(1e300);
  EXPECT_THAT(WithUpdates(*book, update), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr("prices[0].spot_usd_per_hour")));
  price->set_spot_usd_per_hour(12);
  EXPECT_OK(WithUpdates(*book, update));
}

TEST(PriceBookWithUpdates, OneBadEntryRejectsTheWholeUpdate) {
  auto book = TestBook();
  ASSERT_NE(book, nullptr);
  v1::UpdatePricesRequest update = Parse<v1::UpdatePricesRequest>(R"pb(
    prices { offer_id: "aws/p5.48xlarge/us-east-1" on_demand_usd_per_hour: 1 }
    prices { offer_id: "aws/p4d.24xlarge/us-east-1" spot_usd_per_hour: -3 }
  )pb");
  EXPECT_THAT(WithUpdates(*book, update),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "prices[1].spot_usd_per_hour: must be finite and >= 0"));
  update.mutable_prices(1)->set_spot_usd_per_hour(3);
  update.mutable_prices(1)->set_offer_id(kP5);
  EXPECT_THAT(WithUpdates(*book, update), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr("prices[1].offer_id: duplicate")));
  EXPECT_THAT(WithUpdates(*book, v1::UpdatePricesRequest()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("prices: must not be empty")));
  update.mutable_prices(1)->set_offer_id(kP4d);
  update.set_prices_as_of("soon");
  EXPECT_THAT(WithUpdates(*book, update),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("prices_as_of")));
  // The book itself never changes.
  EXPECT_DOUBLE_EQ(book->data().prices(0).on_demand_usd_per_hour(), 36);
}

// --- LoadPriceBook ----------------------------------------------------------

std::string WriteTemp(const std::string& name, const std::string& contents) {
  // The pid keeps parallel runs (ctest -j, two checkouts) apart.
  const std::string path = ::testing::TempDir() + "/" + std::to_string(getpid()) + "." + name;
  std::ofstream(path) << contents;
  return path;
}

// Line numbers matter to the tests below, so no raw string (formatters reflow those).
constexpr char kBillingFile[] =
    "source: \"file\"\n"                             // line 1
    "prices_as_of: \"2026-11-29\"\n"                 // line 2
    "default_billing { granularity_seconds: 60 }\n"  // line 3
    "billing {\n"                                    // line 4
    "  provider: \"aws\"\n"                          // line 5
    "  granularity_seconds: 1\n"                     // line 6
    "  minimum_seconds: 60\n"                        // line 7
    "}\n"                                            // line 8
    "quote_constants { hours_per_month: 730 checkpoints_kept: 2 high_risk_rework_fraction: 0.25 "
    "max_restarts_per_segment: 1000 }\n";

catalog::v1::CatalogSnapshot TwoOfferCatalog() {
  return Parse<catalog::v1::CatalogSnapshot>(R"pb(
    source: "catalog"
    prices_as_of: "2026-11-28"
    offers {
      id: "aws/p5.48xlarge/us-east-1"
      provider: "aws"
      gpu_model: "H100-SXM"
      on_demand_usd_per_hour: 55.04
    }
    offers {
      id: "lambda/gpu_1x_a10/us-east-1"
      provider: "lambda"
      gpu_model: "A10"
      on_demand_usd_per_hour: 1.29
    }
  )pb");
}

TEST(LoadPriceBook, MergesBillingFileWithCatalogPrices) {
  const std::string path = WriteTemp("billing_ok.textproto", kBillingFile);
  auto book = LoadPriceBook(path, TwoOfferCatalog());
  ASSERT_OK(book);
  EXPECT_EQ((*book)->size(), 2);
  EXPECT_EQ((*book)->data().prices_as_of(), "2026-11-28");  // the catalog's
  EXPECT_EQ((*book)->data().source(), "file; offer prices: catalog");
  EXPECT_FALSE((*book)->version().empty());
  // Lambda has no rule here: default_billing (per minute) applies.
  const v1::Quote q = QuoteOne(**book, Item("lambda/gpu_1x_a10/us-east-1", 1, 61.0 / 3600));
  EXPECT_NEAR(q.cost().billed_hours(), 2.0 / 60, 1e-12);
}

TEST(LoadPriceBook, InvalidValueNamesFileLineAndField) {
  std::string text = kBillingFile;
  text.replace(text.find("granularity_seconds: 1\n"), 23, "granularity_seconds: 0\n");
  const std::string path = WriteTemp("billing_bad_value.textproto", text);
  // granularity_seconds of billing[0] is on line 6, column 3.
  EXPECT_THAT(LoadPriceBook(path, TwoOfferCatalog()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       absl::StrCat(path, ":6:3: billing[0].granularity_seconds: must be >= 1")));
}

TEST(LoadPriceBook, MissingFieldPointsAtEnclosingMessage) {
  const std::string path = WriteTemp("billing_missing.textproto",
                                     "default_billing { granularity_seconds: 60 }\n"
                                     "billing { provider: \"aws\" }\n");
  EXPECT_THAT(LoadPriceBook(path, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       absl::StrCat(path, ":2:1: billing[0].granularity_seconds: must be >= 1")));
}

TEST(LoadPriceBook, MissingQuoteConstantsAreNamed) {
  const std::string path =
      WriteTemp("billing_no_constants.textproto", "default_billing { granularity_seconds: 60 }\n");
  EXPECT_THAT(LoadPriceBook(path, {}), StatusIs(absl::StatusCode::kInvalidArgument,
                                                HasSubstr("quote_constants: must be set")));
}

TEST(LoadPriceBook, SyntaxErrorNamesFileLineColumn) {
  const std::string path =
      WriteTemp("billing_syntax.textproto", "source: \"x\"\nbilling { granularity_secs: 1 }\n");
  EXPECT_THAT(LoadPriceBook(path, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(absl::StrCat(path, ":2:"))));
}

TEST(LoadPriceBook, BadCatalogPriceNamesTheOffer) {
  const std::string path = WriteTemp("billing_ok2.textproto", kBillingFile);
  catalog::v1::CatalogSnapshot catalog = TwoOfferCatalog();
  catalog.mutable_offers(1)->set_spot_usd_per_hour(-1);
  EXPECT_THAT(LoadPriceBook(path, catalog),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "catalog offer \"lambda/gpu_1x_a10/us-east-1\": spot_usd_per_hour: must be "
                       "finite and >= 0"));
}

TEST(LoadPriceBook, MissingFileIsNotFound) {
  EXPECT_THAT(LoadPriceBook(::testing::TempDir() + "/no_such_billing.textproto", {}),
              StatusIs(absl::StatusCode::kNotFound));
}

// --- Scale (the speed: bench/catalog_pricing_bench.cc) -----------------------

TEST(PriceBookQuote, TwoThousandItemsInOneQuote) {
  v1::PriceBook data = Parse<v1::PriceBook>(kTestBook);
  data.clear_prices();
  const char* providers[] = {"aws", "lambda", "azure", "oci", "newco"};
  for (int i = 0; i < 2000; ++i) {
    v1::OfferPrice* p = data.add_prices();
    p->set_offer_id(absl::StrCat(providers[i % 5], "/type-", i, "/region-", i % 7));
    p->set_gpu_model(i % 2 ? "H100-SXM" : "A100-80GB");
    p->set_on_demand_usd_per_hour(1 + i % 50);
    p->set_spot_usd_per_hour(0.5 + i % 20);
  }
  auto book = PriceBook::Create(data);
  ASSERT_OK(book);
  v1::QuoteRequest request;
  request.mutable_job()->set_restartable(true);
  request.mutable_job()->set_checkpoint_gb(140);
  request.mutable_job()->set_dataset_gb(500);
  request.mutable_job()->set_egress_gb(200);
  for (int i = 0; i < 2000; ++i) {
    *request.add_items() = Item(data.prices(i).offer_id(), 1 + i % 4, 10 + i % 100,
                                i % 3 == 0 ? PURCHASE_OPTION_SPOT : PURCHASE_OPTION_ON_DEMAND);
  }
  absl::StatusOr<v1::QuoteResponse> response = (*book)->Quote(request, kNow);
  ASSERT_OK(response);
  ASSERT_EQ(response->quotes_size(), 2000);
  for (int i = 0; i < 2000; ++i) {
    EXPECT_TRUE(response->quotes(i).priced()) << i;
    EXPECT_GT(response->quotes(i).cost().total_usd(), 0) << i;
  }
}

}  // namespace
}  // namespace gpuadvisor::pricing
