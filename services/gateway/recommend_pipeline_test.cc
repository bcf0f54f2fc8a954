// The Recommend pipeline without servers: the real sizing model and price
// book of data/, injected as its backends.

#include "services/gateway/recommend_pipeline.h"

#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog_loader.h"
#include "services/pricing/price_loader.h"
#include "services/sizing/sizing_model.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::gateway {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kData[] = GPUADVISOR_SOURCE_DIR "/data";

// The data of the live stack, in process.
struct World {
  std::shared_ptr<const OfferIndex> index;
  std::shared_ptr<const pricing::PriceBook> book;
  std::unique_ptr<sizing::SizingModel> sizing;
  RegionGroups groups;
  OverheadModel overheads;
  int estimate_calls = 0;
  int quote_calls = 0;
  absl::Status estimate_error;  // answered instead of sizing's answer when not OK
  absl::Status quote_error;
  std::string quoted_version;  // what the quote backend says it quoted ("" = as asked)

  // Backends that answer inline, as an adapter whose callbacks run at once.
  RecommendPipeline::Backends Backends() {
    return {.estimate =
                [this](const sizing::v1::EstimateRequest& request,
                       sizing::v1::EstimateResponse* response, RecommendPipeline::Done done) {
                  ++estimate_calls;
                  if (!estimate_error.ok()) return done(estimate_error);
                  absl::StatusOr<sizing::v1::EstimateResponse> sized = sizing->Estimate(request);
                  if (sized.ok()) *response = *std::move(sized);
                  done(sized.status());
                },
            .quote =
                [this](const pricing::v1::QuoteRequest& request,
                       pricing::v1::QuoteResponse* response, RecommendPipeline::Done done) {
                  ++quote_calls;
                  if (!quote_error.ok()) return done(quote_error);
                  absl::Status quoted = book->Quote(request, absl::Now(), response);
                  response->set_catalog_version(quoted_version.empty() ? request.catalog_version()
                                                                       : quoted_version);
                  done(quoted);
                }};
  }
};

std::unique_ptr<World> LoadWorld() {
  auto world = std::make_unique<World>();
  catalog::CatalogSources sources;
  sources.gpus_path = std::string(kData) + "/catalog/gpus.textproto";
  sources.offer_paths = {std::string(kData) + "/catalog/offers.textproto"};
  absl::StatusOr<catalog::v1::CatalogSnapshot> snapshot = catalog::LoadCatalogSnapshot(sources);
  EXPECT_OK(snapshot);
  snapshot->set_version("v-pipeline");
  absl::StatusOr<std::shared_ptr<const pricing::PriceBook>> book =
      pricing::LoadPriceBook(std::string(kData) + "/pricing/billing.textproto", *snapshot);
  EXPECT_OK(book);
  world->book = *book;
  absl::StatusOr<std::shared_ptr<const catalog::Catalog>> catalog =
      catalog::Catalog::Create(*std::move(snapshot));
  EXPECT_OK(catalog);
  world->index = std::make_shared<const OfferIndex>(*catalog);
  absl::StatusOr<sizing::SizingModel> sizing = sizing::SizingModel::FromDataDir(kData);
  EXPECT_OK(sizing);
  world->sizing = std::make_unique<sizing::SizingModel>(*std::move(sizing));
  absl::StatusOr<RegionGroups> groups =
      RegionGroups::FromFile(std::string(kData) + "/gateway/regions.textproto");
  EXPECT_OK(groups);
  world->groups = *std::move(groups);
  absl::StatusOr<OverheadModel> overheads =
      OverheadModel::FromFile(std::string(kData) + "/gateway/overheads.textproto");
  EXPECT_OK(overheads);
  world->overheads = *std::move(overheads);
  return world;
}

v1::RecommendRequest FineTune() {
  v1::RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_LORA);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  request.mutable_workload()->set_train_tokens(2e8);
  return request;
}

absl::StatusOr<v1::RecommendResponse> Answer(RecommendPipeline& pipeline, const World& world,
                                             const v1::RecommendRequest& request) {
  absl::StatusOr<v1::RecommendResponse> answer = absl::InternalError("done never called");
  pipeline.Run(world.index, request, [&](absl::StatusOr<v1::RecommendResponse*> a) {
    // A copy: the answer lives on the pipeline's arena.
    answer = a.ok() ? absl::StatusOr<v1::RecommendResponse>(**a) : a.status();
  });
  return answer;
}

// The answer without the ages measured when it was built (the price book's,
// each price's, the oldest and newest price's): two answers a moment apart
// may differ there by a second and nowhere else.
std::string WithoutAges(v1::RecommendResponse answer) {
  answer.clear_price_book_age_seconds();
  answer.clear_oldest_price_age_seconds();
  answer.clear_newest_price_age_seconds();
  for (v1::Recommendation& r : *answer.mutable_recommendations()) {
    r.mutable_price()->clear_age_seconds();
  }
  return answer.DebugString();
}

// Quoted by pricing or from a local copy of its book: the same answer.
TEST(RecommendPipeline, AnswersThroughInjectedBackendsAsFromALocalBook) {
  std::unique_ptr<World> world = LoadWorld();
  RecommendPipeline::Options remote{
      .price_book = nullptr, .region_groups = &world->groups, .overheads = &world->overheads};
  RecommendPipeline by_call(&remote, world->Backends());
  absl::StatusOr<v1::RecommendResponse> called = Answer(by_call, *world, FineTune());
  ASSERT_OK(called);
  ASSERT_THAT(called->recommendations(), Not(IsEmpty()));
  EXPECT_EQ(world->estimate_calls, 1);
  EXPECT_EQ(world->quote_calls, 1);
  EXPECT_TRUE(by_call.sized());
  EXPECT_FALSE(by_call.priced_locally());
  EXPECT_EQ(called->catalog_version(), "v-pipeline");
  EXPECT_EQ(called->price_book_version(), world->book->version());

  RecommendPipeline::Options local = remote;
  local.price_book = [&](const std::string& version) {
    return version == "v-pipeline" ? world->book : nullptr;
  };
  RecommendPipeline in_process(&local, world->Backends());
  absl::StatusOr<v1::RecommendResponse> priced_here = Answer(in_process, *world, FineTune());
  ASSERT_OK(priced_here);
  EXPECT_TRUE(in_process.priced_locally());
  EXPECT_EQ(world->quote_calls, 1);  // not called again
  EXPECT_EQ(WithoutAges(*priced_here), WithoutAges(*called));

  // With the quote classes of the local book, too (the gateway's options).
  QuoteClassCache classes(&world->overheads);
  local.quote_classes = &classes;
  RecommendPipeline with_classes(&local, world->Backends());
  absl::StatusOr<v1::RecommendResponse> by_class = Answer(with_classes, *world, FineTune());
  ASSERT_OK(by_class);
  EXPECT_TRUE(with_classes.priced_locally());
  EXPECT_EQ(WithoutAges(*by_class), WithoutAges(*called));
  const std::shared_ptr<const QuoteClasses> made = classes.For(*world->index, *world->book);
  ASSERT_NE(made, nullptr);
  EXPECT_GT(made->classes(), 0);
  EXPECT_EQ(classes.For(*world->index, *world->book), made);  // made once per pair
}

// With the estimate cache holding the workload, sizing is not called.
// Pricing's UpdatePrices lowers an offer's price in the book under the same
// catalog version. The pre-rank orders by the catalog's list prices, so the
// dearest H100 offer is far outside what it quotes; repriced to a tenth of a
// percent it is the cheapest offer by far, and the answer ranks it first.
TEST(RecommendPipeline, AnOfferTheBookRepricesIsRankedOnTheBooksPrice) {
  std::unique_ptr<World> world = LoadWorld();
  pricing::v1::PriceBook data = world->book->data();
  pricing::v1::OfferPrice* dearest = nullptr;
  for (pricing::v1::OfferPrice& price : *data.mutable_prices()) {
    if (price.gpu_model() != "H100-SXM") continue;
    if (dearest == nullptr || price.on_demand_usd_per_hour() > dearest->on_demand_usd_per_hour())
      dearest = &price;
  }
  ASSERT_NE(dearest, nullptr);
  const std::string target = dearest->offer_id();
  dearest->set_on_demand_usd_per_hour(dearest->on_demand_usd_per_hour() * 1e-3);
  absl::StatusOr<std::shared_ptr<const pricing::PriceBook>> repriced =
      pricing::PriceBook::Create(data);
  ASSERT_OK(repriced);
  ASSERT_EQ((*repriced)->data().catalog_version(), "v-pipeline");
  v1::RecommendRequest request = FineTune();
  request.set_max_results(3);

  RecommendPipeline::Options local{.price_book = [&](const std::string&) { return *repriced; },
                                   .region_groups = &world->groups,
                                   .overheads = &world->overheads};
  auto first = [](const absl::StatusOr<v1::RecommendResponse>& answer) {
    return answer.ok() && answer->recommendations_size() > 0
               ? answer->recommendations(0).offer().id()
               : std::string("none");
  };
  // Without the book's knowledge (no quote classes), the pre-rank never
  // quotes it: the answer misses it.
  RecommendPipeline blind(&local, world->Backends());
  absl::StatusOr<v1::RecommendResponse> missed = Answer(blind, *world, request);
  ASSERT_OK(missed);
  ASSERT_TRUE(blind.priced_locally());
  for (const v1::Recommendation& r : missed->recommendations()) EXPECT_NE(r.offer().id(), target);

  QuoteClassCache classes(&world->overheads);
  local.quote_classes = &classes;
  RecommendPipeline seeing(&local, world->Backends());
  absl::StatusOr<v1::RecommendResponse> answer = Answer(seeing, *world, request);
  ASSERT_OK(answer);
  EXPECT_EQ(first(answer), target);
  ASSERT_THAT(classes.For(*world->index, **repriced)->cheaper_in_book(), Not(IsEmpty()));
  EXPECT_EQ(answer->price_book_version(), (*repriced)->version());
}

// A discount on every offer (a negotiated rate pushed through UpdatePrices)
// adds to the quote only the offers whose new prices make the cut, not every
// offer the book now prices below its list price.
TEST(RecommendPipeline, ADiscountOnEveryOfferQuotesOnlyWhatMakesTheCut) {
  std::unique_ptr<World> world = LoadWorld();
  pricing::v1::PriceBook data = world->book->data();
  for (pricing::v1::OfferPrice& price : *data.mutable_prices()) {
    price.set_on_demand_usd_per_hour(price.on_demand_usd_per_hour() * 0.99);
    price.set_spot_usd_per_hour(price.spot_usd_per_hour() * 0.99);
  }
  absl::StatusOr<std::shared_ptr<const pricing::PriceBook>> discounted =
      pricing::PriceBook::Create(data);
  ASSERT_OK(discounted);
  auto quote_items = [&](const pricing::PriceBook& book) -> size_t {
    const QuoteClasses classes(*world->index, book, &world->overheads);
    absl::StatusOr<RecommendationRun> run =
        RecommendationRun::Start(world->index, FineTune(), &world->groups, &world->overheads);
    EXPECT_OK(run);
    absl::StatusOr<sizing::v1::EstimateResponse> sized =
        world->sizing->Estimate(run->estimate_request());
    EXPECT_OK(sized);
    absl::StatusOr<RecommendationRun::QuotePlan> plan = run->PlanQuote(*std::move(sized), &classes);
    EXPECT_OK(plan);
    return plan.ok() ? plan->items.size() : 0;
  };
  const QuoteClasses all(*world->index, **discounted, &world->overheads);
  ASSERT_GT(all.cheaper_in_book().size(), world->index->offers().size() / 2);
  const size_t listed = quote_items(*world->book);
  ASSERT_GT(listed, 0u);
  EXPECT_LE(quote_items(**discounted), listed + listed / 10);  // 303 -> 306 here; 389 unbounded
}

TEST(RecommendPipeline, EstimateCacheSkipsSizing) {
  std::unique_ptr<World> world = LoadWorld();
  EstimateCache cache{EstimateCache::Options{}};
  RecommendPipeline::Options options{.price_book = nullptr,
                                     .region_groups = &world->groups,
                                     .overheads = &world->overheads,
                                     .estimate_cache = &cache};
  RecommendPipeline first(&options, world->Backends());
  absl::StatusOr<v1::RecommendResponse> cold = Answer(first, *world, FineTune());
  ASSERT_OK(cold);
  RecommendPipeline second(&options, world->Backends());
  absl::StatusOr<v1::RecommendResponse> warm = Answer(second, *world, FineTune());
  ASSERT_OK(warm);
  EXPECT_EQ(world->estimate_calls, 1);
  EXPECT_FALSE(second.sized());
  EXPECT_EQ(WithoutAges(*warm), WithoutAges(*cold));

  // Another sizing model drops the cached estimates: sized again.
  ASSERT_TRUE(cache.SetModel("another-model"));
  RecommendPipeline third(&options, world->Backends());
  ASSERT_OK(Answer(third, *world, FineTune()));
  EXPECT_TRUE(third.sized());
  EXPECT_EQ(world->estimate_calls, 2);
}

TEST(RecommendPipeline, BackendFailuresAndVersionMismatchAreTheAnswer) {
  std::unique_ptr<World> world = LoadWorld();
  RecommendPipeline::Options options{.price_book = nullptr, .region_groups = &world->groups};
  world->estimate_error = absl::InvalidArgumentError("workload.model.params: must be > 0");
  RecommendPipeline sizing_fails(&options, world->Backends());
  EXPECT_THAT(Answer(sizing_fails, *world, FineTune()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("workload.model.params")));
  EXPECT_EQ(world->quote_calls, 0);

  world->estimate_error = absl::OkStatus();
  world->quote_error = absl::UnavailableError("pricing backend: down");
  RecommendPipeline pricing_fails(&options, world->Backends());
  EXPECT_THAT(Answer(pricing_fails, *world, FineTune()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("down")));

  world->quote_error = absl::OkStatus();
  world->quoted_version = "v-other";
  RecommendPipeline mixed(&options, world->Backends());
  EXPECT_THAT(Answer(mixed, *world, FineTune()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("v-other")));

  // No catalog yet.
  RecommendPipeline no_catalog(&options, world->Backends());
  absl::StatusOr<v1::RecommendResponse> answer = absl::InternalError("done never called");
  no_catalog.Run(nullptr, FineTune(), [&](absl::StatusOr<v1::RecommendResponse*> a) {
    answer = a.ok() ? absl::StatusOr<v1::RecommendResponse>(**a) : a.status();
  });
  EXPECT_THAT(answer, StatusIs(absl::StatusCode::kUnavailable));
}

// Nothing to quote: a pricing failure costs only the price-book version.
TEST(RecommendPipeline, NothingToQuoteStillAnswersWhenPricingFails) {
  std::unique_ptr<World> world = LoadWorld();
  RecommendPipeline::Options options{.price_book = nullptr, .region_groups = &world->groups};
  world->quote_error = absl::UnavailableError("pricing backend: down");
  v1::RecommendRequest request = FineTune();
  request.mutable_workload()->set_task(sizing::v1::TASK_FULL_FINETUNE);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-405b");
  request.mutable_constraints()->set_max_gpus(1);
  RecommendPipeline pipeline(&options, world->Backends());
  absl::StatusOr<v1::RecommendResponse> answer = Answer(pipeline, *world, request);
  ASSERT_OK(answer);
  EXPECT_THAT(answer->recommendations(), IsEmpty());
  EXPECT_THAT(answer->excluded(), Not(IsEmpty()));
  EXPECT_EQ(answer->price_book_version(), "");
  EXPECT_EQ(world->quote_calls, 1);
}

}  // namespace
}  // namespace gpuadvisor::gateway
