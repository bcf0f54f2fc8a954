#include "services/gateway/recommender.h"

#include <utility>

#include "common/status/status_macros.h"
#include "services/gateway/recommend_state.h"

namespace gpuadvisor::gateway {

absl::StatusOr<RecommendationRun> RecommendationRun::Start(
    std::shared_ptr<const catalog::Catalog> catalog, const v1::RecommendRequest& request,
    const RegionGroups* groups, const OverheadModel* overheads, EstimateCache* estimate_cache) {
  return Start(
      catalog == nullptr ? nullptr : std::make_shared<const OfferIndex>(std::move(catalog)),
      request, groups, overheads, estimate_cache);
}

absl::StatusOr<RecommendationRun> RecommendationRun::Start(std::shared_ptr<const OfferIndex> index,
                                                           const v1::RecommendRequest& request,
                                                           const RegionGroups* groups,
                                                           const OverheadModel* overheads,
                                                           EstimateCache* estimate_cache) {
  return recommend::StartRun(std::move(index), request, groups, overheads, estimate_cache,
                             /*reference=*/nullptr);
}

RecommendationRun::RecommendationRun(std::unique_ptr<recommend::RunState> state)
    : state_(std::move(state)) {}
RecommendationRun::RecommendationRun(RecommendationRun&&) noexcept = default;
RecommendationRun& RecommendationRun::operator=(RecommendationRun&&) noexcept = default;
RecommendationRun::~RecommendationRun() = default;

bool RecommendationRun::needs_sizing() const { return state_->needs_sizing_; }

const sizing::v1::EstimateRequest& RecommendationRun::estimate_request() const {
  return state_->estimate_request_;
}

absl::StatusOr<RecommendationRun::QuotePlan> RecommendationRun::PlanQuote(
    sizing::v1::EstimateResponse estimates, const QuoteClasses* quote_classes) {
  return state_->PlanQuote(std::move(estimates), quote_classes);
}

absl::StatusOr<pricing::v1::QuoteRequest> RecommendationRun::ApplyEstimates(
    sizing::v1::EstimateResponse estimates, const QuoteClasses* quote_classes) {
  absl::StatusOr<QuotePlan> plan = PlanQuote(std::move(estimates), quote_classes);
  if (!plan.ok()) return plan.status();
  return plan->ToRequest();
}

absl::StatusOr<v1::RecommendResponse> RecommendationRun::Finish(
    const pricing::v1::QuoteResponse& quotes) {
  v1::RecommendResponse response;
  RETURN_IF_ERROR(state_->Finish(quotes, response));
  return response;
}

absl::Status RecommendationRun::Finish(const pricing::v1::QuoteResponse& quotes,
                                       v1::RecommendResponse* response) {
  response->Clear();
  return state_->Finish(quotes, *response);
}

pricing::v1::QuoteRequest RecommendationRun::QuotePlan::ToRequest() const {
  pricing::v1::QuoteRequest request;
  *request.mutable_job() = job;
  request.mutable_items()->Reserve(static_cast<int>(items.size()));
  for (const pricing::PriceBook::Item& planned : items) {
    pricing::v1::QuoteItem* item = request.add_items();
    item->set_offer_id(planned.offer_id.data(), planned.offer_id.size());
    item->set_nodes(planned.nodes);
    item->set_hours(planned.hours);
    item->set_purchase_option(planned.purchase_option);
  }
  return request;
}

}  // namespace gpuadvisor::gateway
