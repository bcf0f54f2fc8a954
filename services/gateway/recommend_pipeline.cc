#include "services/gateway/recommend_pipeline.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace gpuadvisor::gateway {

void RecommendPipeline::Run(std::shared_ptr<const OfferIndex> index,
                            const v1::RecommendRequest& request, Answer done) {
  done_ = std::move(done);
  index_ = std::move(index);
  absl::StatusOr<RecommendationRun> run = RecommendationRun::Start(
      index_, request, options_->region_groups, options_->overheads, options_->estimate_cache);
  if (!run.ok()) return Reply(run.status());
  run_.emplace(*std::move(run));
  if (!run_->needs_sizing()) return Sized(absl::OkStatus());
  sized_called_ = true;
  backends_.estimate(run_->estimate_request(), &estimates_,
                     [this](absl::Status status) { Sized(std::move(status)); });
}

void RecommendPipeline::Reply(absl::Status status) {
  // The caller may delete this pipeline while `done` runs: nothing of it is
  // touched after.
  Answer done = std::move(done_);
  if (!status.ok()) return done(std::move(status));
  done(answer_);
}

void RecommendPipeline::Release() {
  answer_ = nullptr;
  priced_ = nullptr;
  run_.reset();
  arena_.Reset();
}

void RecommendPipeline::FinishAnswer(const pricing::v1::QuoteResponse& quotes) {
  answer_ = google::protobuf::Arena::CreateMessage<v1::RecommendResponse>(&arena_);
  Reply(run_->Finish(quotes, answer_));
}

void RecommendPipeline::Sized(absl::Status sized) {
  if (!sized.ok()) return Reply(std::move(sized));
  // One snapshot for the whole answer: pricing quotes its version.
  const std::string& catalog_version = index_->catalog().snapshot().version();
  // A current copy of pricing's book quotes in process, and the plan knows it.
  const std::shared_ptr<const pricing::PriceBook> book =
      options_->price_book ? options_->price_book(catalog_version) : nullptr;
  const std::shared_ptr<const QuoteClasses> classes =
      book != nullptr && options_->quote_classes != nullptr
          ? options_->quote_classes->For(*index_, *book)
          : nullptr;
  absl::StatusOr<RecommendationRun::QuotePlan> plan =
      run_->PlanQuote(std::move(estimates_), classes.get());
  if (!plan.ok()) return Reply(plan.status());
  priced_ = google::protobuf::Arena::CreateMessage<pricing::v1::QuoteResponse>(&arena_);
  if (book != nullptr) {
    priced_locally_ = true;
    if (absl::Status quoted = book->Quote(plan->items, plan->job, absl::Now(), priced_);
        !quoted.ok()) {
      // The gateway built the request: a rejection is its own fault.
      return Reply(absl::InternalError(
          absl::StrCat("pricing (in process) rejected the gateway's request: ", quoted.message())));
    }
    return FinishAnswer(*priced_);
  }
  // Quote even with no items: an empty answer still says which price book
  // it was checked against.
  quote_ = plan->ToRequest();
  quote_.set_catalog_version(catalog_version);
  backends_.quote(quote_, priced_, [this](absl::Status status) { Quoted(std::move(status)); });
}

void RecommendPipeline::Quoted(absl::Status status) {
  if (status.ok() && priced_->catalog_version() != quote_.catalog_version()) {
    // An answer never mixes two catalog versions.
    status = absl::UnavailableError(absl::StrCat("pricing backend: quoted catalog version \"",
                                                 priced_->catalog_version(), "\", not \"",
                                                 quote_.catalog_version(), "\" as asked; retry"));
  }
  if (!status.ok()) {
    // With no items, a pricing failure only costs the answer that version.
    if (quote_.items_size() > 0) return Reply(std::move(status));
    priced_->Clear();
  }
  FinishAnswer(*priced_);
}

}  // namespace gpuadvisor::gateway
