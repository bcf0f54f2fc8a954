#ifndef GPUADVISOR_SERVICES_GATEWAY_RECOMMENDER_H_
#define GPUADVISOR_SERVICES_GATEWAY_RECOMMENDER_H_

// The gateway's domain logic: a catalog snapshot and a RecommendRequest in,
// a ranked, explained RecommendResponse out. No gRPC: the caller makes the
// two backend calls between the steps. The path, one stage file each
// (recommend_state.h holds the run's state):
//
//   Start       recommend_start.cc      validate, defaults, name filters
//               recommend_choice.cc     host filters; one row per offer sold alike (Finish)
//               recommend_enumerate.cc  cells -> configurations to size
//   <sizing Estimate(estimate_request()), unless needs_sizing() is false>
//   PlanQuote   recommend_rank.cc       fitting cluster sizes per unit
//               recommend_prerank.cc    pre-rank by ObjectiveKey on list prices, the tie band
//               recommend_quote.cc      candidates, the job (egress), quote items
//   <pricing Quote(plan), or PriceBook::Quote of the gateway's copy>
//   Finish      recommend_finish.cc     price filters, rank, spread, exclusions
//               recommend_decide.cc     intervals, the tie-banded rank by ObjectiveKey, risk
//               recommend_head.cc       checks at the confidence, cheapest/fastest/cost x time
//               recommend_explain.cc    each recommendation's texts
//               recommend_what_ifs.cc   what-ifs, nearest misses, exclusion details
//
// Candidates are (offer, nodes, purchase option). Offers sharing a GPU
// configuration (GPU model, GPUs per node, nodes, link, fabric) are sized
// once, so the Estimate call carries tens of configurations, not thousands
// of offers. The work is per OfferCell (offer_index.h): offers that share
// shape, largest cluster, availability and purchase options are filtered,
// sized and excluded together, and the pre-rank takes the best candidates
// by a streaming merge of each cell's offers (sorted by list price in the
// index), so a request touches the offers it quotes, not the whole catalog.
// The best max(kMinQuotedCandidates, kQuotedPerResult x max_results) go to
// pricing, with those past them that the tie band could still rank among the
// first max_results (less those their kind outranks); pricing's prices are
// the ones that rank and filter. The tests compare
// the answers with a full scan of every candidate (full_scan_reference.h).
//
// A run is single-threaded; the catalog it holds is immutable and shared.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/io/units.h"
#include "common/validation/field_ranges.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "gpuadvisor/pricing/v1/pricing.pb.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/catalog/catalog.h"
#include "services/gateway/estimate_cache.h"
#include "services/gateway/offer_index.h"
#include "services/gateway/overheads.h"
#include "services/gateway/quote_classes.h"
#include "services/gateway/region_groups.h"
#include "services/pricing/price_book.h"

namespace gpuadvisor::gateway {

// Candidates sent to one Quote, after pre-ranking by list price: the best
// max(kMinQuotedCandidates, kQuotedPerResult x max_results), and the tie
// band past them (recommend_prerank.cc). List prices rank
// candidates nearly as the price book does, so this keeps the Quote (and its
// cost, linear in items) small without changing the answer.
inline constexpr int kMinQuotedCandidates = 300;
// Cluster sizes per offer kept for cost objectives: the smallest that fits
// and the next ones up.
inline constexpr int kFittingClusterSizesKept = 3;
inline constexpr int kQuotedPerResult = 20;
inline constexpr int kDefaultMaxResults = 10;
inline constexpr int kMaxMaxResults =
    static_cast<int>(validation::RangeOf("gpuadvisor.gateway.v1.RecommendRequest.max_results").max);
// Cluster sizes considered: powers of two up to each offer's largest cluster
// (Offer.max_nodes), capped by Constraints.max_nodes when given, and never
// above kMaxMaxNodes.
inline constexpr int kMaxMaxNodes =
    static_cast<int>(validation::RangeOf("gpuadvisor.gateway.v1.Constraints.max_nodes").max);
// The longest run pricing quotes (PricingService.Quote items[].hours); a
// longer estimate is excluded as EXCLUSION_REASON_RUNS_TOO_LONG.
inline constexpr double kMaxQuotableHours = 1e6;
// The VRAM margin when the request sets none: kDefaultVramMargin
// (common/io/units.h), the same default sizing applies.
// Deadline and budget checks are made at this percentile of the hours and
// the total cost unless Constraints.confidence says otherwise.
inline constexpr double kDefaultConfidence = 0.8;
// The per-user output speed floor of an interactive endpoint (TASK_INFERENCE)
// when the request sets none is data: OverheadModel::serving_defaults(), from
// data/gateway/overheads.textproto with its source. Stated in the answer when
// applied; min_user_tokens_per_second = 0 lifts it; no overheads, no floor.

namespace recommend {
class RunState;  // recommend_state.h
}  // namespace recommend

class RecommendationRun {
 public:
  // Validates the constraints (kInvalidArgument naming the field, e.g.
  // "constraints.max_usd_per_hour: must be finite and >= 0"), applies the
  // workload defaults rule (workload_defaults.h), resolves provider, region
  // (and region group) and GPU names case-insensitively (an unknown name is
  // kInvalidArgument listing the closest valid ones) and enumerates the
  // candidates. The workload's numbers are validated by the sizing service.
  // `index` is the catalog's OfferIndex (kUnavailable when null: no catalog
  // yet); `groups` may be null (then no region groups).
  // `overheads` may be null (then none are added). `estimate_cache` may be
  // null; with one, only configurations it does not hold are sized, and the
  // new answers are added to it.
  static absl::StatusOr<RecommendationRun> Start(std::shared_ptr<const OfferIndex> index,
                                                 const v1::RecommendRequest& request,
                                                 const RegionGroups* groups = nullptr,
                                                 const OverheadModel* overheads = nullptr,
                                                 EstimateCache* estimate_cache = nullptr);
  // Builds the index first: for callers that run one request per catalog.
  static absl::StatusOr<RecommendationRun> Start(std::shared_ptr<const catalog::Catalog> catalog,
                                                 const v1::RecommendRequest& request,
                                                 const RegionGroups* groups = nullptr,
                                                 const OverheadModel* overheads = nullptr,
                                                 EstimateCache* estimate_cache = nullptr);

  // Whether to call sizing at all: false when the estimate cache held the
  // workload and every configuration (then PlanQuote takes an empty
  // EstimateResponse).
  bool needs_sizing() const;
  // The distinct configurations to size that the estimate cache does not
  // hold (with an unknown workload at least one, so that sizing checks the
  // workload even when no offer passed the filters).
  const sizing::v1::EstimateRequest& estimate_request() const;

  // What to price for Finish: the job, and one item per quoted candidate in
  // the order Finish expects their quotes. Items view offer ids of the run's
  // catalog snapshot (valid while the run lives).
  struct QuotePlan {
    pricing::v1::JobProfile job;
    std::vector<pricing::PriceBook::Item> items;
    // The same as pricing's QuoteRequest (catalog_version left to the caller).
    pricing::v1::QuoteRequest ToRequest() const;
  };
  // Records which configurations fit and plans the quote of the best fitting
  // candidates; with no items, skip pricing and Finish with an empty
  // QuoteResponse. kInternal if the answer does not match the request.
  // `quote_classes`: those of the book that will quote the plan, when the
  // caller quotes in process (else null; must live through the call): the
  // pre-rank's kind cut then counts offers of different providers that
  // quote alike together, and quotes fewer of them, for the same answer;
  // and offers that book prices below their list price (pricing's
  // UpdatePrices) are quoted whatever their list price.
  absl::StatusOr<QuotePlan> PlanQuote(sizing::v1::EstimateResponse estimates,
                                      const QuoteClasses* quote_classes = nullptr);
  // PlanQuote, as pricing's QuoteRequest.
  absl::StatusOr<pricing::v1::QuoteRequest> ApplyEstimates(
      sizing::v1::EstimateResponse estimates, const QuoteClasses* quote_classes = nullptr);

  // Applies prices and hard constraints, ranks by the objective, keeps
  // max_results spread across providers and regions, explains each one.
  // kInternal if the quote does not match the request.
  absl::StatusOr<v1::RecommendResponse> Finish(const pricing::v1::QuoteResponse& quotes);
  // The same answer built in `*response` (cleared first), which may live on
  // an arena: then its messages are allocated there and freed with it, not
  // one by one (the gateway's pipeline does this).
  absl::Status Finish(const pricing::v1::QuoteResponse& quotes, v1::RecommendResponse* response);

  // Made by Start (the state is the stages' own, recommend_state.h).
  explicit RecommendationRun(std::unique_ptr<recommend::RunState> state);
  RecommendationRun(RecommendationRun&&) noexcept;
  RecommendationRun& operator=(RecommendationRun&&) noexcept;
  ~RecommendationRun();

 private:
  std::unique_ptr<recommend::RunState> state_;
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_RECOMMENDER_H_
