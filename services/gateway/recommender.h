#ifndef GPUADVISOR_SERVICES_GATEWAY_RECOMMENDER_H_
#define GPUADVISOR_SERVICES_GATEWAY_RECOMMENDER_H_

// The gateway's domain logic: from a catalog snapshot and a RecommendRequest
// to a ranked, explained RecommendResponse. No gRPC here: the adapter makes
// the two backend calls between the steps.
//
//   absl::StatusOr<RecommendationRun> run = RecommendationRun::Start(catalog, request);
//   EstimateResponse sized = <SizingService.Estimate(run->estimate_request())>  // if
//   needs_sizing() absl::StatusOr<QuoteRequest> quote = run->ApplyEstimates(sized); QuoteResponse
//   priced = <PricingService.Quote(*quote)>   // skipped if no items
//   absl::StatusOr<RecommendResponse> answer = run->Finish(priced);
//
// Candidates are (offer, nodes, purchase option). Offers sharing a GPU
// configuration (GPU model, GPUs per node, nodes, link, fabric) are sized
// once, so the Estimate call carries tens of configurations, not thousands
// of offers. Candidates that fit are pre-ranked with the catalog's list
// prices and at most max(kMinQuotedCandidates, kQuotedPerResult x
// max_results) go to pricing, whose prices are the ones that rank and
// filter.
//
// The work is per OfferCell (offer_index.h), not per offer: offers that share
// shape, largest cluster, availability and the purchase options they are sold
// at are filtered, sized and excluded together (exclusions are counted per
// cell), and the pre-ranking takes the best candidates by a streaming merge
// of each cell's offers, already sorted by list price in the index, so a
// request touches the offers it quotes, not the whole catalog. Providers
// only or regions only (GPUs may join) stream the index's share of each cell
// for those names (CellPart), never visiting other offers; other name
// filters visit only the offers of the providers, GPUs or regions asked for
// (a region group visits every offer). Scan::kFullScan visits every offer and
// candidate instead; it gives the same answer and is kept as the reference
// the tests compare with.
//
// A run is single-threaded; the catalog it holds is immutable and shared.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "gpuadvisor/pricing/v1/pricing.pb.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/catalog/catalog.h"
#include "services/gateway/estimate_cache.h"
#include "services/gateway/offer_index.h"
#include "services/gateway/overheads.h"
#include "services/gateway/region_groups.h"
#include "services/pricing/price_book.h"

namespace gpuadvisor::gateway {

// Candidates sent to one Quote, after pre-ranking by list price: at most
// max(kMinQuotedCandidates, kQuotedPerResult x max_results). List prices rank
// candidates nearly as the price book does, so this keeps the Quote (and its
// cost, linear in items) small without changing the answer.
inline constexpr int kMinQuotedCandidates = 300;
// Cluster sizes per offer kept for cost objectives: the smallest that fits
// and the next ones up.
inline constexpr int kFittingClusterSizesKept = 3;
inline constexpr int kQuotedPerResult = 20;
inline constexpr int kDefaultMaxResults = 10;
inline constexpr int kMaxMaxResults = 100;
// Cluster sizes considered: powers of two up to each offer's largest cluster
// (Offer.max_nodes), capped by Constraints.max_nodes when given, and never
// above kMaxMaxNodes.
inline constexpr int kMaxMaxNodes = 1024;
// The longest run pricing quotes (PricingService.Quote items[].hours); a
// longer estimate is excluded as EXCLUSION_REASON_RUNS_TOO_LONG.
inline constexpr double kMaxQuotableHours = 1e6;
inline constexpr double kDefaultVramMargin = 0.1;
// The per-user output speed floor of an interactive endpoint (TASK_INFERENCE)
// when the request sets none is data: OverheadModel::serving_defaults(), from
// data/gateway/overheads.textproto with its source. Stated in the answer when
// applied; min_user_tokens_per_second = 0 lifts it; no overheads, no floor.

class RecommendationRun {
 public:
  enum class Scan { kTopK, kFullScan };

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
                                                 EstimateCache* estimate_cache = nullptr,
                                                 Scan scan = Scan::kTopK);
  // Builds the index first: for callers that run one request per catalog.
  static absl::StatusOr<RecommendationRun> Start(std::shared_ptr<const catalog::Catalog> catalog,
                                                 const v1::RecommendRequest& request,
                                                 const RegionGroups* groups = nullptr,
                                                 const OverheadModel* overheads = nullptr,
                                                 EstimateCache* estimate_cache = nullptr);

  // Whether to call sizing at all: false when the estimate cache held the
  // workload and every configuration (then ApplyEstimates takes an empty
  // EstimateResponse).
  bool needs_sizing() const { return needs_sizing_; }
  // The distinct configurations to size that the estimate cache does not
  // hold (with an unknown workload at least one, so that sizing checks the
  // workload even when no offer passed the filters).
  const sizing::v1::EstimateRequest& estimate_request() const { return estimate_request_; }

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
  absl::StatusOr<QuotePlan> PlanQuote(sizing::v1::EstimateResponse estimates);
  // PlanQuote, as pricing's QuoteRequest.
  absl::StatusOr<pricing::v1::QuoteRequest> ApplyEstimates(sizing::v1::EstimateResponse estimates);

  // Applies prices and hard constraints, ranks by the objective, keeps
  // max_results spread across providers and regions, explains each one.
  // kInternal if the quote does not match the request.
  absl::StatusOr<v1::RecommendResponse> Finish(const pricing::v1::QuoteResponse& quotes);

 private:
  struct Candidate {
    int offer_index;  // in the catalog snapshot (OfferOf: its proto, read only to explain it)
    int unit;         // index into units_
    int32_t nodes;
    catalog::v1::PurchaseOption option;
    int config;      // index into estimate_request_.configurations
    int quote = -1;  // index into the QuoteRequest items, once quoted
    double list_usd_per_hour = 0;
    double pre_rank = 0;        // objective estimated from list prices
    int32_t spare_nodes = 0;    // a spot endpoint's spare capacity, priced in
    bool what_if_only = false;  // quoted for a what-if, never ranked
  };

  const catalog::v1::Offer& OfferOf(const Candidate& candidate) const {
    return catalog_->snapshot().offers(candidate.offer_index);
  }

  // The candidate that came closest to a constraint it missed.
  struct Miss {
    double value = 0;
    int config = -1;
    int candidate = -1;
    int offer_index = -1;
  };

  // Offers that pass the name filters and share one OfferCell (kTopK), or
  // one such offer (kFullScan): they reach the same stage, so exclusions are
  // kept here, with counts.
  struct Unit {
    int cell = 0;    // index into index_->cells()
    int offer = -1;  // kFullScan: the offer; kTopK: -1 (the cell's offers that pass the filters)
    int count = 0;   // offers
    int first = -1;  // the lowest offer index (the example of an exclusion)
    int steps = 0;   // cluster sizes considered (1, 2, 4, ... nodes)
    // Furthest exclusion reached before pricing, and the configuration that
    // reached it.
    v1::ExclusionReason reason = v1::EXCLUSION_REASON_UNSPECIFIED;
    int config = -1;
    // The (step, configuration) pairs that yield candidates:
    // fitting_[fitting_begin, fitting_end).
    int fitting_begin = 0, fitting_end = 0;
    int candidates_per_offer = 0;
    // kTopK with one kind of name filter: its cell parts (offers that pass),
    // [parts_begin, parts_end) in parts_; empty otherwise.
    int parts_begin = 0, parts_end = 0;
  };
  // An offer with a quoted candidate: how far its quoted candidates got.
  struct Quoted {
    int unit = 0;
    int quoted = 0;  // its candidates in the quote (what-ifs aside)
    bool survived = false;
    v1::ExclusionReason reason = v1::EXCLUSION_REASON_UNSPECIFIED;
    int config = -1, candidate = -1;
  };
  // A pre-ranked candidate before it is made: the merge order is the key,
  // then offer, cluster size and option (the full scan's order).
  struct Ranked {
    double key;
    int offer, step, option_pos;
    // Not part of the order: what making the candidate needs, so it reads no
    // offer facts again.
    int unit = -1, config = -1;
    double list_usd_per_hour = 0;  // per node at the option; < 0: not read (the fastest objective)
    bool operator<(const Ranked& o) const {
      return key != o.key       ? key < o.key
             : offer != o.offer ? offer < o.offer
             : step != o.step   ? step < o.step
                                : option_pos < o.option_pos;
    }
  };

  RecommendationRun() = default;
  absl::Status Enumerate(const RegionGroups* groups);
  // Whether an offer passes the provider, region and GPU filters.
  bool PassesNames(int offer);
  // The pre-ranked candidates to quote (at most `cap`), in order: by a
  // streaming merge per unit (kTopK) or by ranking every candidate
  // (kFullScan). `total` receives how many candidates there were.
  std::vector<Ranked> SelectCandidates(int cap, int64_t& total);
  double PreRankKeyOf(int config, double list_usd_per_hour) const;
  // Looks the configurations up in the estimate cache and builds the
  // EstimateRequest for the rest.
  void PrepareSizing();
  const sizing::v1::ConfigurationEstimate& Est(int config) const { return *estimates_[config]; }
  // Resolves the name filters into per-id flags; kInvalidArgument for an
  // unknown name.
  absl::Status ResolveFilters(const RegionGroups* groups);
  bool RegionPasses(const OfferFacts& facts);
  // Records how far an offer's candidate got; an offer that never survives
  // is reported with the furthest stage any of its candidates reached, and
  // the configuration or candidate that got there (for Exclusion.detail).
  static void Exclude(v1::ExclusionReason& current, int& current_config, int* current_candidate,
                      v1::ExclusionReason reason, int config, int candidate);
  void ExcludeUnit(Unit& unit, v1::ExclusionReason reason, int config = -1);
  void ExcludeQuoted(const Candidate& candidate, int candidate_index, v1::ExclusionReason reason);
  // The detail for an excluded offer (the example of its reason).
  std::string ExclusionDetail(int offer_index, v1::ExclusionReason reason, int config,
                              int candidate, const pricing::v1::QuoteResponse& quotes) const;
  // The cluster-size cap for an offer, and what sets it.
  int NodeCap(int32_t max_nodes) const;
  std::string NodeCapText(const OfferFacts& facts) const;
  double PreRankKey(const Candidate& candidate) const;
  // Fills `r` (empty, already in the answer: built in place, never copied).
  void Explain(const Candidate& candidate, const pricing::v1::Quote& quote,
               v1::Recommendation& r) const;
  v1::Overheads OverheadsOf(const Candidate& candidate) const;
  // The overhead rule of the candidate's provider (nullptr without a model),
  // and what the candidate's run downloads and writes.
  const v1::OverheadRule* OverheadRuleOf(const Candidate& candidate) const;
  RunData RunOf(const Candidate& candidate) const;
  // Serving numbers of a configuration, from sizing's ServingEstimate (all
  // zero for training). The SLO filters read these same numbers.
  v1::ServingEstimate Serving(const sizing::v1::ConfigurationEstimate& e, int32_t spare_nodes,
                              double usd_per_hour) const;
  void AddWhatIfs(int top, const std::vector<int>& survivors,
                  const pricing::v1::QuoteResponse& quotes, v1::RecommendResponse& response) const;
  void AddNearestMisses(const pricing::v1::QuoteResponse& quotes,
                        v1::RecommendResponse& response) const;
  // Keeps `miss` if it is closer than what `slot` holds (`lower` = smaller
  // values are closer).
  static void Track(std::map<std::string, Miss>& misses, const std::string& key, Miss miss,
                    bool lower);

  std::shared_ptr<const OfferIndex> index_;
  const catalog::Catalog* catalog_ = nullptr;  // index_->catalog()
  v1::RecommendRequest request_;               // with the workload defaults applied
  std::vector<v1::Assumption> assumptions_;
  v1::Objective objective_ = v1::OBJECTIVE_CHEAPEST;
  int max_results_ = kDefaultMaxResults;
  int max_nodes_ = kMaxMaxNodes;
  double vram_margin_ = kDefaultVramMargin;
  // The per-user speed floor in force (0 = none), and the field it comes
  // from ("" = the default).
  double min_user_tps_ = 0;
  std::string min_user_tps_field_;
  // "your min_user_tokens_per_second", "the default min_user_tokens_per_second".
  std::string MinUserTpsName() const;
  double egress_gb_ = 0;  // what the quote prices as egress
  bool always_on_ = false;
  bool restartable_ = true;
  bool training_ = false;
  bool serving_ = false;
  const OverheadModel* overheads_ = nullptr;
  std::vector<const v1::OverheadRule*> overhead_rules_;  // by provider id; empty without a model
  // Per constraint ("deadline", "total_usd", ...): the closest miss.
  std::map<std::string, Miss> misses_;

  std::vector<catalog::v1::PurchaseOption> options_;
  Scan scan_ = Scan::kTopK;
  bool name_filtered_ = false;
  std::vector<Unit> units_;  // by first offer
  // kTopK, when the name filters are providers only or regions only (no
  // region group; GPUs may join, checked per cell): the index's cell parts
  // of the names asked for, by cell. Their offers all pass the filters.
  bool part_mode_ = false;
  bool parts_by_region_ = false;
  std::vector<const CellPart*> parts_;
  int filtered_by_name_ = 0, first_filtered_by_name_ = -1;
  absl::flat_hash_map<int, Quoted> quoted_offers_;  // by offer index
  // Configuration index by (shape, cluster size step): shape_configs_[shape
  // * kMaxSteps + step], for the first shape_steps_[shape] steps. Flat: one
  // allocation per request, not one per shape.
  static constexpr int kMaxSteps = 11;  // 1, 2, 4, ... kMaxMaxNodes nodes
  static_assert((1 << (kMaxSteps - 1)) == kMaxMaxNodes,
                "a step per power of two up to kMaxMaxNodes");
  int ShapeConfig(int shape, int step) const {
    return shape_configs_[static_cast<size_t>(shape) * kMaxSteps + step];
  }
  std::vector<int> shape_configs_;
  std::vector<int> shape_steps_;
  std::vector<std::pair<int, int>>
      fitting_;  // every unit's (step, configuration) pairs, unit by unit
  std::vector<std::pair<int, int32_t>> configs_;  // by configuration index: shape, nodes
  EstimateCache* estimate_cache_ = nullptr;
  std::string workload_key_;                      // "" without a cache
  sizing::v1::EstimateRequest estimate_request_;  // the configurations in missing_
  std::vector<int> missing_;                      // configuration indexes sizing is asked for
  bool needs_sizing_ = true;
  std::vector<EstimateCache::Estimate> estimates_;  // by configuration index
  EstimateCache::Totals sized_;                     // the workload's totals and model
  std::vector<Candidate> candidates_;
  std::vector<int> quoted_;  // candidate indexes, in QuoteRequest item order
  // Name filters by id; empty = no filter.
  std::vector<char> provider_ok_, region_ok_, gpu_ok_;
  const RegionGroups* groups_ = nullptr;
  std::vector<const RegionGroups::Group*> region_groups_;  // asked for
  absl::flat_hash_map<int64_t, bool>
      group_member_;  // (provider, region) id pair -> in a group asked for
  int candidates_considered_ = 0;
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_RECOMMENDER_H_
