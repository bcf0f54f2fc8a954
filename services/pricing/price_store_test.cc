#include "services/pricing/price_store.h"

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/pricing/price_book.h"
#include "services/pricing/price_loader.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::pricing {
namespace {

namespace v1 = ::gpuadvisor::pricing::v1;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

std::shared_ptr<const PriceBook> SmallBook() {
  v1::PriceBook data;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        quote_constants {
          hours_per_month: 730
          checkpoints_kept: 2
          high_risk_rework_fraction: 0.25
          max_restarts_per_segment: 1000
        }
        prices_as_of: "2026-11-29"
        default_billing { granularity_seconds: 1 }
        prices { offer_id: "aws/a/r" on_demand_usd_per_hour: 10 }
        prices { offer_id: "aws/b/r" on_demand_usd_per_hour: 20 }
      )pb",
      &data));
  auto book = PriceBook::Create(std::move(data));
  EXPECT_TRUE(book.ok()) << book.status();
  return *book;
}

v1::UpdatePricesRequest PriceUpdate(const std::string& offer_id, double on_demand) {
  v1::UpdatePricesRequest update;
  v1::OfferPrice* price = update.add_prices();
  price->set_offer_id(offer_id);
  price->set_on_demand_usd_per_hour(on_demand);
  return update;
}

double OnDemand(const PriceBook& book, int index) {
  return book.data().prices(index).on_demand_usd_per_hour();
}

TEST(PriceStore, EmptyUntilSet) {
  PriceStore store;
  EXPECT_EQ(store.Current(), nullptr);
  EXPECT_THAT(store.Update(PriceUpdate("aws/a/r", 1)), StatusIs(absl::StatusCode::kUnavailable));
  auto book = SmallBook();
  store.Set(book);
  EXPECT_EQ(store.Current(), book);
}

TEST(PriceStore, UpdateSwapsAndRejectedUpdateKeepsOldBook) {
  PriceStore store;
  store.Set(SmallBook());
  const std::shared_ptr<const PriceBook> before = store.Current();

  auto updated = store.Update(PriceUpdate("aws/a/r", 11));
  ASSERT_OK(updated);
  EXPECT_EQ(store.Current(), *updated);
  EXPECT_NE((*updated)->version(), before->version());
  EXPECT_DOUBLE_EQ(OnDemand(*store.Current(), 0), 11);
  EXPECT_DOUBLE_EQ(OnDemand(*before, 0), 10);  // holders of the old book are unaffected

  v1::UpdatePricesRequest bad = PriceUpdate("aws/a/r", 12);
  v1::OfferPrice* negative = bad.add_prices();
  negative->set_offer_id("aws/b/r");
  negative->set_on_demand_usd_per_hour(-1);
  EXPECT_THAT(store.Update(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("prices[1].on_demand_usd_per_hour")));
  EXPECT_EQ(store.Current(), *updated);  // all or nothing
  EXPECT_DOUBLE_EQ(OnDemand(*store.Current(), 0), 11);
}

TEST(PriceStore, WaitForChangeReturnsAtOnceWhenVersionDiffers) {
  PriceStore store;
  store.Set(SmallBook());
  const absl::Time start = absl::Now();
  auto book = store.WaitForChange("some-old-version", absl::Now() + absl::Seconds(10));
  EXPECT_EQ(book, store.Current());
  EXPECT_EQ(store.WaitForChange("", absl::Now() + absl::Seconds(10)), store.Current());
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
}

TEST(PriceStore, WaitForChangeTimesOutWithTheSameBook) {
  PriceStore store;
  EXPECT_EQ(store.WaitForChange("", absl::Now() + absl::Milliseconds(20)), nullptr);
  store.Set(SmallBook());
  const std::string version = store.Current()->version();
  const absl::Time start = absl::Now();
  auto book = store.WaitForChange(version, absl::Now() + absl::Milliseconds(50));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(45));
  ASSERT_NE(book, nullptr);
  EXPECT_EQ(book->version(), version);
}

TEST(PriceStore, WaitForChangeWakesOnUpdate) {
  PriceStore store;
  store.Set(SmallBook());
  const std::string version = store.Current()->version();
  std::shared_ptr<const PriceBook> seen;
  std::thread waiter([&] { seen = store.WaitForChange(version, absl::Now() + absl::Seconds(30)); });
  while (store.waiters() == 0) std::this_thread::yield();  // the waiter is blocked
  auto updated = store.Update(PriceUpdate("aws/b/r", 21));
  ASSERT_OK(updated);
  waiter.join();
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->version(), (*updated)->version());
}

TEST(PriceStore, ShutdownWakesWaiters) {
  PriceStore store;
  store.Set(SmallBook());
  const std::string version = store.Current()->version();
  const absl::Time start = absl::Now();
  std::thread waiter([&] { store.WaitForChange(version, absl::Now() + absl::Seconds(30)); });
  while (store.waiters() == 0) std::this_thread::yield();  // the waiter is blocked
  store.Shutdown();
  waiter.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  // After shutdown, waits return at once.
  EXPECT_NE(store.WaitForChange(version, absl::InfiniteFuture()), nullptr);
}

TEST(PriceStore, ConcurrentUpdatesAreNotLost) {
  PriceStore store;
  store.Set(SmallBook());
  constexpr int kUpdates = 50;
  std::vector<std::thread> writers;
  for (const char* offer : {"aws/a/r", "aws/b/r"}) {
    writers.emplace_back([&store, offer] {
      for (int i = 1; i <= kUpdates; ++i) {
        ASSERT_OK(store.Update(PriceUpdate(offer, 100 + i)));
      }
    });
  }
  std::thread reader([&store] {
    for (int i = 0; i < 200; ++i) ASSERT_NE(store.Current(), nullptr);
  });
  for (std::thread& t : writers) t.join();
  reader.join();
  EXPECT_DOUBLE_EQ(OnDemand(*store.Current(), 0), 100 + kUpdates);
  EXPECT_DOUBLE_EQ(OnDemand(*store.Current(), 1), 100 + kUpdates);
}

TEST(PriceStore, RebaseKeepsLiveUpdatesOnTopOfNewListPrices) {
  PriceStore store;
  store.Set(SmallBook());
  ASSERT_OK(store.Update(PriceUpdate("aws/a/r", 7)));

  // A new catalog snapshot: b's list price moved, and a's update must stay.
  v1::PriceBook data;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        quote_constants {
          hours_per_month: 730
          checkpoints_kept: 2
          high_risk_rework_fraction: 0.25
          max_restarts_per_segment: 1000
        }
        prices_as_of: "2026-11-30"
        default_billing { granularity_seconds: 1 }
        prices { offer_id: "aws/a/r" on_demand_usd_per_hour: 11 }
        prices { offer_id: "aws/b/r" on_demand_usd_per_hour: 25 }
      )pb",
      &data));
  absl::StatusOr<std::shared_ptr<const PriceBook>> rebased = PriceBook::Create(std::move(data));
  ASSERT_OK(rebased);
  ASSERT_OK(store.Rebase(*rebased));
  std::map<std::string, double> prices;
  for (const auto& p : store.Current()->data().prices())
    prices[p.offer_id()] = p.on_demand_usd_per_hour();
  EXPECT_EQ(prices["aws/a/r"], 7);
  EXPECT_EQ(prices["aws/b/r"], 25);
  EXPECT_THAT(store.Rebase(nullptr), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(prices.size(), 2u);
}

}  // namespace
}  // namespace gpuadvisor::pricing

namespace gpuadvisor::pricing {
namespace {

// Before: accepted updates lived in memory only. Now a persist step sees
// every accepted update (newest per offer) before the new book goes live,
// and a failed persist changes nothing.
TEST(PriceStore, UpdatesAreDurableBeforeTheyGoLive) {
  PriceStore store;
  store.Set(SmallBook());
  std::vector<v1::UpdatePricesRequest> persisted;
  auto persist = [&](const v1::UpdatePricesRequest& all) {
    persisted.push_back(all);
    return absl::OkStatus();
  };
  ASSERT_OK(store.Update(PriceUpdate("aws/a/r", 11), persist));
  ASSERT_OK(store.Update(PriceUpdate("aws/b/r", 21), persist));
  ASSERT_OK(store.Update(PriceUpdate("aws/a/r", 12), persist));
  ASSERT_EQ(persisted.size(), 3u);
  ASSERT_EQ(persisted.back().prices_size(), 2);  // newest per offer
  EXPECT_DOUBLE_EQ(persisted.back().prices(0).on_demand_usd_per_hour(), 12);
  EXPECT_DOUBLE_EQ(persisted.back().prices(1).on_demand_usd_per_hour(), 21);

  const std::shared_ptr<const PriceBook> before = store.Current();
  auto broken = [](const v1::UpdatePricesRequest&) { return absl::UnavailableError("disk full"); };
  EXPECT_THAT(store.Update(PriceUpdate("aws/a/r", 13), broken),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("disk full")));
  EXPECT_EQ(store.Current(), before);
  EXPECT_DOUBLE_EQ(OnDemand(*store.Current(), 0), 12);
}

// An update of an offer a reloaded catalog no longer has is dropped on
// rebase instead of blocking every later catalog.
TEST(PriceStore, RebaseDropsUpdatesOfVanishedOffers) {
  PriceStore store;
  store.Set(SmallBook());
  ASSERT_OK(store.Update(PriceUpdate("aws/b/r", 21)));
  v1::PriceBook data = SmallBook()->data();
  data.mutable_prices()->DeleteSubrange(1, 1);  // aws/b/r is gone
  auto smaller = PriceBook::Create(data);
  ASSERT_OK(smaller);
  EXPECT_OK(store.Rebase(*smaller));
  EXPECT_EQ(store.Current()->size(), 1);
  EXPECT_FALSE(store.Current()->HasOffer("aws/b/r"));
}

TEST(PriceStore, KeepsTheBooksOfTheLastCatalogVersions) {
  PriceStore store;
  EXPECT_EQ(store.ForCatalog("c0"), nullptr);
  std::vector<std::shared_ptr<const PriceBook>> books;
  for (int i = 0; i <= PriceStore::kKeptCatalogVersions; ++i) {
    v1::PriceBook data = SmallBook()->data();
    data.set_catalog_version(absl::StrCat("c", i));
    absl::StatusOr<std::shared_ptr<const PriceBook>> book = PriceBook::Create(data);
    ASSERT_TRUE(book.ok()) << book.status();
    books.push_back(*book);
    store.Set(*book);
  }
  ASSERT_FALSE(books.empty());
  EXPECT_EQ(store.ForCatalog("c0"), nullptr);  // the oldest fell out
  for (int i = 1; i <= PriceStore::kKeptCatalogVersions; ++i) {
    EXPECT_EQ(store.ForCatalog(absl::StrCat("c", i)), books[i]) << i;
  }
  EXPECT_EQ(store.ForCatalog(""), store.Current());
  // An update replaces the current version's book, not an older one's.
  v1::UpdatePricesRequest update;
  *update.add_prices() = books.back()->data().prices(0);
  update.mutable_prices(0)->set_on_demand_usd_per_hour(update.prices(0).on_demand_usd_per_hour() +
                                                       1);
  absl::StatusOr<std::shared_ptr<const PriceBook>> updated = store.Update(update);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(store.ForCatalog(books.back()->data().catalog_version()), *updated);
  EXPECT_EQ(store.ForCatalog("c1"), books[1]);
}

// A copy of the writer's book is quoted in process only when the book says
// it is priced by this build's quote rules; otherwise (another version, or
// none stated) the caller asks the writer.
TEST(PriceBooks, LocalQuotesOnlyUnderThisBuildsRules) {
  PriceBooks books;
  EXPECT_EQ(BookForLocalQuotes(books, ""), nullptr);
  v1::PriceBook data = SmallBook()->data();
  data.set_catalog_version("c1");

  data.set_quote_rules_version(kQuoteRulesVersion);
  auto same = PriceBook::Create(data);
  ASSERT_OK(same);
  books.Set(*same);
  EXPECT_EQ(BookForLocalQuotes(books, "c1"), *same);
  EXPECT_EQ(BookForLocalQuotes(books, ""), *same);
  EXPECT_EQ(BookForLocalQuotes(books, "c0"), nullptr);  // not held

  for (const std::string& other :
       std::vector<std::string>{"", "0", absl::StrCat(kQuoteRulesVersion, "+1")}) {
    data.set_quote_rules_version(other);
    auto book = PriceBook::Create(data);
    ASSERT_OK(book);
    EXPECT_FALSE((*book)->QuotesLikeThisBuild()) << other;
    // The rules are part of the book's content: another version is another book.
    EXPECT_NE((*book)->version(), (*same)->version()) << other;
    books.Set(*book);
    EXPECT_EQ(books.ForCatalog("c1"), *book);
    EXPECT_EQ(BookForLocalQuotes(books, "c1"), nullptr) << other;
  }
}

TEST(PriceStore, UpdatesKeepTheBooksQuoteRules) {
  v1::PriceBook data = SmallBook()->data();
  data.set_quote_rules_version(kQuoteRulesVersion);
  auto book = PriceBook::Create(data);
  ASSERT_OK(book);
  auto next = WithUpdates(**book, PriceUpdate("aws/a/r", 12));
  ASSERT_OK(next);
  EXPECT_EQ((*next)->quote_rules_version(), kQuoteRulesVersion);
  EXPECT_NE((*next)->version(), (*book)->version());
}

}  // namespace
}  // namespace gpuadvisor::pricing
