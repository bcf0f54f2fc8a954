#ifndef GPUADVISOR_SERVICES_GATEWAY_RECOMMEND_STATE_H_
#define GPUADVISOR_SERVICES_GATEWAY_RECOMMEND_STATE_H_

// Internal to the recommender (recommender.h is the contract): the state one
// Recommend carries through its stages, and the stage functions. Each stage
// lives in its own file, in the order a request meets them:
//
//   recommend_start.cc      validate, apply defaults, settings, name filters
//   recommend_choice.cc     host filters, grouping regions (with the above)
//   recommend_enumerate.cc  units (offer cells passing the filters) and the
//                           configurations to size; the estimate cache
//   recommend_rank.cc       sizing's answers; fitting configurations
//   recommend_prerank.cc    the pre-rank: ObjectiveKey on list prices
//                           (streaming merge), the band, the kind cut
//   recommend_quote.cc      candidates, the job (egress), quote items
//   recommend_finish.cc     price filters, final rank, spread, exclusions
//   recommend_decide.cc     intervals and percentiles, the tie-banded rank,
//                           risk, checks at a confidence, the answer's head
//   recommend_explain.cc    the texts of one recommendation
//   recommend_what_ifs.cc   what-ifs, nearest misses, exclusion details
//
// Single-threaded: one request's run.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "services/gateway/recommender.h"

namespace gpuadvisor::gateway::recommend {

// The standard normal quantile of 0.9: sizing's intervals are P10-P90.
inline constexpr double kZ90 = 1.2815515655446004;
// z with Phi(z) = q, for q in (0, 1) (bisection on erfc; called once per run).
double NormalQuantile(double q);

bool IsTraining(sizing::v1::Task task);
bool IsServing(sizing::v1::Task task);

// The catalog's list price per node at `option`; 0 when not sold that way.
// Reserved falls back to on-demand (in the index): pricing applies the
// provider's discount.
inline double ListPrice(const OfferFacts& offer, catalog::v1::PurchaseOption option) {
  switch (option) {
    case catalog::v1::PURCHASE_OPTION_SPOT:
      return offer.spot_usd_per_hour;
    case catalog::v1::PURCHASE_OPTION_RESERVED:
      return offer.reserved_usd_per_hour;
    default:
      return offer.on_demand_usd_per_hour;
  }
}

// The one objective key: smaller ranks first. The pre-rank passes list
// prices (total = list price x hours), the final rank the quote's figures.
inline double ObjectiveKey(v1::Objective objective, double hours, double tokens_per_second,
                           double usd_per_hour, double total_usd) {
  switch (objective) {
    case v1::OBJECTIVE_FASTEST:
      return hours;
    case v1::OBJECTIVE_BEST_VALUE:
      return -tokens_per_second / std::max(usd_per_hour, 1e-9);
    default:
      return total_usd;
  }
}

// Smaller keys rank first; `key` ties with `anchor` within the band.
inline double TieLimit(double anchor, double band) { return anchor + band * std::abs(anchor); }

// (p90 - p10) / (2 p50) of a sizing interval: its relative half-width; 0
// without one (recommend_decide.cc).
double RelativeHalfWidth(const sizing::v1::Interval& i);

// Whether every number ranking reads from a quote is finite (a NaN makes
// std::sort's comparison inconsistent and the order undefined).
bool RankableQuote(const pricing::v1::Quote& q, const sizing::v1::ConfigurationEstimate& estimate);

// A (offer, nodes, purchase option) that was pre-ranked into the quote.
struct Candidate {
  int offer_index;  // in the catalog snapshot (OfferOf: its proto, read only to explain it)
  int unit;         // index into units_
  int32_t nodes;
  catalog::v1::PurchaseOption option;
  int config;      // index into estimate_request_.configurations
  int quote = -1;  // index into the QuoteRequest items, once quoted
  double list_usd_per_hour = 0;
  int quoted_offer = -1;      // index into quoted_offers_: its offer's
  int32_t spare_nodes = 0;    // a spot endpoint's spare capacity, priced in
  double overhead_hours = 0;  // start-up and downloads in the quoted hours (not the model's)
  bool what_if_only = false;  // quoted for a what-if, never ranked
};

// The candidate that came closest to a constraint it missed.
struct Miss {
  double value = 0;
  int config = -1;
  int candidate = -1;
  int offer_index = -1;
};

// Offers that pass the name filters and share one OfferCell (or, in the
// full-scan reference, one such offer): they reach the same stage, so
// exclusions are kept here, with counts.
struct Unit {
  int cell = 0;    // index into index_->cells()
  int offer = -1;  // full scan: the offer; otherwise -1 (the cell's offers that pass the filters)
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
  // With one kind of name filter: its cell parts (offers that pass),
  // [parts_begin, parts_end) in parts_; empty otherwise.
  int parts_begin = 0, parts_end = 0;
};

// An offer with a quoted candidate: how far its quoted candidates got.
struct Quoted {
  int offer = 0;
  int unit = 0;
  int quoted = 0;  // its candidates in the quote (what-ifs aside)
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

class RunState;

// Another way to make units and pre-rank: the test helper's full scan
// (full_scan_reference.h), which visits every offer and candidate and must
// give the same answer.
class ReferenceScan {
 public:
  virtual ~ReferenceScan() = default;
  // Fills units_ (one per offer passing the names, by offer) and the
  // name-filter counts.
  virtual void MakeUnits(RunState& run) const = 0;
  // The `cap` best candidates by the pre-rank order; `total` = all of them.
  virtual std::vector<Ranked> Select(RunState& run, int cap, int64_t& total) const = 0;
};

// RecommendationRun::Start, with an optional reference scan.
absl::StatusOr<RecommendationRun> StartRun(std::shared_ptr<const OfferIndex> index,
                                           const v1::RecommendRequest& request,
                                           const RegionGroups* groups,
                                           const OverheadModel* overheads,
                                           EstimateCache* estimate_cache,
                                           const ReferenceScan* reference);

// The run's state; members are public to the stage files (this header is
// theirs alone).
class RunState {
 public:
  // ---- recommend_start.cc
  absl::Status Configure(const OverheadModel* overheads);
  void ResolveSpeedFloor(const OverheadModel* overheads);
  // Resolves the name filters into per-id flags; kInvalidArgument for an
  // unknown name.
  absl::Status ResolveFilters(const RegionGroups* groups);
  // Whether an offer passes the provider, region and GPU filters.
  bool PassesNames(int offer) {
    const OfferFacts& f = index_->offers()[offer];
    return (provider_ok_.empty() || provider_ok_[f.provider]) &&
           (gpu_ok_.empty() || gpu_ok_[f.gpu]) &&
           (region_ok_.empty() || region_ok_[f.region] || InRegionGroup(f)) &&
           (!host_filtered_ || (PassesHostTier(f) && PassesReliability(offer)));
  }
  bool InRegionGroup(const OfferFacts& facts);
  // "your min_user_tokens_per_second", "the default min_user_tokens_per_second".
  std::string MinUserTpsName() const;

  // ---- recommend_choice.cc
  // Settles host_tier_ (the endpoint default stated), min_host_reliability_
  // and group_regions_; kInvalidArgument for a reliability outside [0, 1].
  absl::Status ResolveHostFilter();
  bool PassesHostTier(bool community_host) const {
    return host_tier_ == v1::HOST_TIER_CHOICE_DATACENTER  ? !community_host
           : host_tier_ == v1::HOST_TIER_CHOICE_COMMUNITY ? community_host
                                                          : true;
  }
  bool PassesHostTier(const OfferFacts& f) const { return PassesHostTier(f.community_host); }
  // An offer without a figure passes (its recommendation says so).
  bool PassesReliability(int offer) const {
    return min_host_reliability_ <= 0 || index_->host_reliability(offer) < 0 ||
           index_->host_reliability(offer) >= min_host_reliability_;
  }
  // Counts the offers the host filters leave out (with the name filters'
  // count, FILTERED), for the detail.
  void CountHostFiltered();
  // Why an offer was EXCLUSION_REASON_FILTERED, and how many the host
  // filters left out.
  std::string FilteredDetail(int offer) const;
  std::string HostTierText() const;
  // The survivors less the offers sold alike in another region (chained in
  // next_alike_), when group_regions_.
  std::vector<int> GroupRegions(const std::vector<int>& survivors,
                                const pricing::v1::QuoteResponse& quotes);
  // also_in_regions and the host notes of a recommendation.
  void ExplainChoice(int candidate_index, v1::Recommendation& r) const;

  // ---- recommend_enumerate.cc
  absl::Status Enumerate(const RegionGroups* groups);
  void ChoosePurchaseOptions();
  void UnitsFromCells();
  void UnitsFromParts();
  void UnitsByVisiting();
  void CountFilteredByName(int passing);
  void AddConfigurations();
  // Whether sizing models the unit's accelerator: TPUs, Trainium and Gaudi
  // (Gpu.accelerator_kind) are listed but not modelled. Cached per GPU id.
  bool Modelled(const Unit& unit);
  // Looks the configurations up in the estimate cache and builds the
  // EstimateRequest for the rest.
  void PrepareSizing();
  // The cluster-size cap for an offer, and what sets it.
  int NodeCap(int32_t max_nodes) const { return std::min(max_nodes_, max_nodes); }
  std::string NodeCapText(const OfferFacts& facts) const;

  // ---- recommend_rank.cc
  // Stores sizing's answers (and caches them); kInternal on a count mismatch.
  absl::Status RecordEstimates(sizing::v1::EstimateResponse estimates);
  // Keeps each unit's fitting (step, configuration) pairs; excludes the rest.
  void KeepFitting();
  // The exclusion a fitting-stage check gives a unit's configuration, or
  // UNSPECIFIED when it passes (tracking the nearest miss).
  // `fit_multi_node`: by GPU id, whether it fits spread over nodes.
  v1::ExclusionReason CheckConfiguration(const Unit& unit, int config,
                                         const std::vector<char>& fit_multi_node);

  // ---- recommend_prerank.cc
  // The pre-ranked candidates to quote (`cap`, and the band past it; see
  // PreRankCut), in order, by a streaming merge per unit (or the reference
  // scan). `total` receives how many candidates there were.
  std::vector<Ranked> SelectCandidates(int cap, int64_t& total);
  // A pre-ranked candidate's list price per node-hour (the merge's, else the
  // offer's at its option).
  double ListPriceOf(const Ranked& r) const {
    return r.list_usd_per_hour >= 0 ? r.list_usd_per_hour
                                    : ListPrice(index_->offers()[r.offer], options_[r.option_pos]);
  }
  double PreRankKeyOf(int config, double list_usd_per_hour) const {
    const sizing::v1::ConfigurationEstimate& e = Est(config);
    return ObjectiveKey(objective_, e.estimated_hours(), e.tokens_per_second(), list_usd_per_hour,
                        list_usd_per_hour * e.estimated_hours());
  }
  // A spot endpoint keeps serving through a preemption only with spare
  // capacity: one more node, priced in.
  int32_t SpareOf(catalog::v1::PurchaseOption option) const {
    return always_on_ && option == catalog::v1::PURCHASE_OPTION_SPOT ? 1 : 0;
  }

  // The upper bound of the tie band the pre-rank extends its cut by.
  double PreRankBand() const;
  // The pre-rank's cut of `sorted` (pre-rank order, every candidate or the
  // merge's first ones): the first `cap`, and every candidate tied (within
  // PreRankBand) with the max_results-th (PreRankKeep) that no cheaper
  // candidate of its kind already in the cut outranks (DropOutranked).
  void PreRankCut(std::vector<Ranked>& sorted, size_t cap) const;
  size_t PreRankKeep(const std::vector<Ranked>& sorted, size_t cap) const;
  void DropOutranked(std::vector<Ranked>& kept, size_t cap) const;
  std::vector<char> Outranked(const std::vector<Ranked>& kept, size_t cap) const;
  int64_t GroupKey(const Ranked& r) const;
  // Adds to the cut every candidate of an offer the book quoting in process
  // prices below its list price (QuoteClasses::cheaper_in_book) that passes
  // the filters, keyed on the book's price, unless the offer is in the cut.
  void AddCheaperInBook(std::vector<Ranked>& ranked);

  // ---- recommend_quote.cc
  absl::StatusOr<RecommendationRun::QuotePlan> PlanQuote(sizing::v1::EstimateResponse estimates,
                                                         const QuoteClasses* quote_classes);
  void MakeCandidates(const std::vector<Ranked>& ranked);
  void PlanJob(pricing::v1::JobProfile& job);
  // What leaves the cloud (the caller's figure or a stated derivation).
  double PlanEgressGb();
  void AddReservedWhatIfs();
  RunData RunOf(const Candidate& candidate) const;
  // The overhead rule of the candidate's provider (nullptr without a model).
  const v1::OverheadRule* OverheadRuleOf(const Candidate& candidate) const {
    return overhead_rules_[index_->offers()[candidate.offer_index].provider];
  }

  // ---- recommend_finish.cc
  // Fills `response` (empty; it may live on an arena).
  absl::Status Finish(const pricing::v1::QuoteResponse& quotes, v1::RecommendResponse& response);
  std::vector<int> Survivors(const pricing::v1::QuoteResponse& quotes);
  void PreferSeenAvailable(std::vector<int>& survivors, absl::Time now);
  std::vector<int> ChooseSpread(const std::vector<int>& survivors) const;
  void AddExclusions(const std::vector<int>& survivors, const pricing::v1::QuoteResponse& quotes,
                     v1::RecommendResponse& response);
  // Records how far an offer's candidate got; an offer that never survives
  // is reported with the furthest stage any of its candidates reached, and
  // the configuration or candidate that got there (for Exclusion.detail).
  static void Exclude(v1::ExclusionReason& current, int& current_config, int* current_candidate,
                      v1::ExclusionReason reason, int config, int candidate);
  void ExcludeUnit(Unit& unit, v1::ExclusionReason reason, int config = -1) {
    Exclude(unit.reason, unit.config, nullptr, reason, config, -1);
  }
  void ExcludeQuoted(const Candidate& candidate, int candidate_index, v1::ExclusionReason reason);
  // Keeps `miss` if it is closer than what `slot` holds (`lower` = smaller
  // values are closer).
  static void Track(std::map<std::string, Miss>& misses, const std::string& key, Miss miss,
                    bool lower);

  // ---- recommend_decide.cc
  // The percentile at standard-normal quantile z (0 = P50, kZ90 = P90,
  // confidence_z_ = the checks') of the configuration's run hours, from
  // sizing's P10-P90 interval (log-normal between the percentiles); the
  // estimate itself without an interval.
  double RunHoursAt(const sizing::v1::ConfigurationEstimate& e, double z) const;
  // The same percentile of the candidate's expected hours and total cost: the
  // model's run hours at q carried through the quote (overheads fixed,
  // checkpoints and preemption losses in proportion), and the cost's
  // hours-dependent part scaled with them (egress fixed).
  double ExpectedHoursAt(const Candidate& candidate, const pricing::v1::Quote& quote,
                         double z) const;
  double TotalUsdAt(const Candidate& candidate, const pricing::v1::Quote& quote, double z) const;
  // Orders the survivors: ties within the band (objective measure, then the
  // next measure), then risk, then identity. Sets tie_band_ (stated).
  void RankTied(std::vector<int>& survivors, const pricing::v1::QuoteResponse& quotes);
  double DefaultBand(int best, const pricing::v1::QuoteResponse& quotes);
  v1::Assumption MakeTieAssumption(double band, const std::string& measure,
                                   absl::string_view offer) const;
  // The candidate's GPU spec (cached per GPU id; null when unknown).
  const catalog::v1::Gpu* GpuOf(const Candidate& candidate) const;
  // Risk factors of a candidate (texts appended when `texts` is not null):
  // the hardware's, the quote's warnings, sizing's warnings, the host's.
  // Without texts, the parts the configuration decides are counted once per
  // configuration (config_risk_).
  int RiskOf(const Candidate& candidate, const pricing::v1::Quote& quote,
             std::vector<std::string>* texts) const;
  // Those parts: precision, links and VRAM margin; sizing's warnings; the
  // host's tier and availability.
  bool PcieBound(const Candidate& candidate) const;
  int HardwareRisk(const Candidate& candidate, std::vector<std::string>* texts) const;
  int SizingRisk(const Candidate& candidate, std::vector<std::string>* texts) const;
  int HostRisk(const Candidate& candidate, std::vector<std::string>* texts) const;
  // Intervals, deadline and budget checks of one recommendation.
  void ExplainUncertainty(const Candidate& candidate, const pricing::v1::Quote& quote,
                          v1::Recommendation& r) const;
  // ---- recommend_head.cc
  // Each deadline and budget check at confidence_ (Recommendation.checks and
  // a reason line each).
  void AddChecks(const Candidate& candidate, const pricing::v1::Quote& quote,
                 v1::Recommendation& r) const;
  void AddHead(const std::vector<int>& survivors, const std::vector<int>& chosen,
               const pricing::v1::QuoteResponse& quotes, v1::RecommendResponse& response) const;
  // Why `top` ranks first; `anchor` is the first survivor in rank order with
  // the best objective measure.
  std::string WhyFirst(int top, int anchor, const pricing::v1::QuoteResponse& quotes) const;

  // ---- recommend_explain.cc
  // Fills `r` (empty, already in the answer: built in place, never copied).
  void Explain(const Candidate& candidate, const pricing::v1::Quote& quote,
               v1::Recommendation& r) const;
  void ExplainReasons(const Candidate& candidate, const pricing::v1::Quote& quote,
                      v1::Recommendation& r) const;
  void ExplainServing(const Candidate& candidate, const pricing::v1::Quote& quote,
                      v1::Recommendation& r) const;
  void ExplainWarnings(const Candidate& candidate, const pricing::v1::Quote& quote,
                       v1::Recommendation& r) const;
  v1::Overheads OverheadsOf(const Candidate& candidate) const;
  // Serving numbers of a configuration, from sizing's ServingEstimate (all
  // zero for training). The SLO filters read these same numbers.
  v1::ServingEstimate Serving(const sizing::v1::ConfigurationEstimate& e, int32_t spare_nodes,
                              double usd_per_hour) const;

  // ---- recommend_what_ifs.cc
  void AddWhatIfs(int top, const std::vector<int>& survivors,
                  const pricing::v1::QuoteResponse& quotes, v1::RecommendResponse& response) const;
  std::vector<int> WhatIfOrder(const std::vector<int>& survivors,
                               const std::vector<char>& qualifies,
                               const pricing::v1::QuoteResponse& quotes) const;
  void AddWhatIf(const std::string& axis, int index, int top_index, bool qualifies,
                 const pricing::v1::QuoteResponse& quotes, v1::RecommendResponse& response) const;
  void AddNearestMisses(v1::RecommendResponse& response) const;
  void DescribeMiss(const std::string& key, const Miss& miss, const std::string& who,
                    const sizing::v1::ConfigurationEstimate* e, v1::NearestMiss* m) const;
  // The detail for an excluded offer (the example of its reason).
  std::string ExclusionDetail(int offer_index, v1::ExclusionReason reason, int config,
                              int candidate, const pricing::v1::QuoteResponse& quotes) const;
  std::string TooSlowDetail(const sizing::v1::ConfigurationEstimate& e,
                            const std::string& at) const;

  const catalog::v1::Offer& OfferOf(const Candidate& candidate) const {
    return catalog_->snapshot().offers(candidate.offer_index);
  }
  const sizing::v1::ConfigurationEstimate& Est(int config) const { return *estimates_[config]; }
  // Configuration index by (shape, cluster size step).
  int ShapeConfig(int shape, int step) const {
    return shape_configs_[static_cast<size_t>(shape) * kMaxSteps + step];
  }

  // The request and its settings.
  std::shared_ptr<const OfferIndex> index_;
  const catalog::Catalog* catalog_ = nullptr;  // index_->catalog()
  v1::RecommendRequest request_;               // with the workload defaults applied
  std::vector<v1::Assumption> assumptions_;
  v1::Objective objective_ = v1::OBJECTIVE_CHEAPEST;
  int max_results_ = kDefaultMaxResults;
  int max_nodes_ = kMaxMaxNodes;
  double vram_margin_ = kDefaultVramMargin;
  // The confidence of deadline and budget checks, and the tie band (the
  // request's, or -1 until the rank derives it).
  double confidence_ = kDefaultConfidence;
  double confidence_z_ = 0.8416212335729143;  // NormalQuantile(confidence_)
  mutable std::vector<std::pair<bool, const catalog::v1::Gpu*>> gpu_specs_;  // by GPU id
  // HardwareRisk + SizingRisk by configuration (candidates of one
  // configuration share its shape: GPU, GPUs per node, link, fabric); -1 =
  // not counted yet.
  mutable std::vector<int> config_risk_;
  double tie_band_ = -1;
  double tie_band_used_ = 0;
  mutable double pre_rank_band_ = -1;  // PreRankBand(), once computed
  // The quote classes of the book that will quote this run, when the quote
  // is in process (else null): the kind cut counts by class.
  const QuoteClasses* quote_classes_ = nullptr;
  // The per-user speed floor in force (0 = none), and the field it comes
  // from ("" = the default).
  double min_user_tps_ = 0;
  std::string min_user_tps_field_;
  double egress_gb_ = 0;  // what the quote prices as egress
  bool always_on_ = false;
  bool restartable_ = true;
  bool training_ = false;
  bool serving_ = false;
  const OverheadModel* overheads_ = nullptr;
  std::vector<const v1::OverheadRule*> overhead_rules_;  // by provider id; empty without a model
  const ReferenceScan* reference_ = nullptr;             // the test helper's full scan, or none
  // Per constraint ("deadline", "total_usd", ...): the closest miss.
  std::map<std::string, Miss> misses_;
  std::vector<catalog::v1::PurchaseOption> options_;

  // Name filters by id; empty = no filter.
  std::vector<char> provider_ok_, region_ok_, gpu_ok_;
  std::vector<signed char> gpu_modelled_;  // by GPU id: -1 unknown yet, 0 no, 1 yes
  // Offers are checked one by one (PassesNames): a name filter, or a host
  // reliability filter. The host tier alone keeps or drops whole cells.
  bool name_filtered_ = false;
  // Host filters (recommend_choice.cc); host_filtered_ = some offer fails
  // them; reliability_filters_offers_ = the reliability filter applies.
  v1::HostTierChoice host_tier_ = v1::HOST_TIER_CHOICE_ANY;
  double min_host_reliability_ = 0;
  bool host_filtered_ = false;
  bool reliability_filters_offers_ = false;
  bool group_regions_ = true;
  int host_tier_filtered_ = 0, reliability_filtered_ = 0;
  // By candidate index: the next survivor in rank order sold alike in
  // another region (a chain from each kept one), -1 at the end; empty
  // unless grouped.
  std::vector<int> next_alike_;
  std::vector<const RegionGroups::Group*> region_groups_;  // asked for
  // (provider, region) id pair -> in a group asked for
  absl::flat_hash_map<int64_t, bool> group_member_;

  // Enumeration: units, by first offer.
  std::vector<Unit> units_;
  // When the name filters are providers only or regions only (no region
  // group; GPUs may join, checked per cell): the index's cell parts of the
  // names asked for, by cell. Their offers all pass the filters.
  bool part_mode_ = false;
  bool parts_by_region_ = false;
  std::vector<const CellPart*> parts_;
  int filtered_by_name_ = 0, first_filtered_by_name_ = -1;
  int candidates_considered_ = 0;
  // Configuration index by (shape, cluster size step): shape_configs_[shape
  // * kMaxSteps + step], for the first shape_steps_[shape] steps. Flat: one
  // allocation per request, not one per shape.
  static constexpr int kMaxSteps = 11;  // 1, 2, 4, ... kMaxMaxNodes nodes
  static_assert((1 << (kMaxSteps - 1)) == kMaxMaxNodes,
                "a step per power of two up to kMaxMaxNodes");
  std::vector<int> shape_configs_;
  std::vector<int> shape_steps_;
  std::vector<std::pair<int, int32_t>> configs_;  // by configuration index: shape, nodes

  // Sizing.
  EstimateCache* estimate_cache_ = nullptr;
  std::string workload_key_;                      // "" without a cache
  sizing::v1::EstimateRequest estimate_request_;  // the configurations in missing_
  std::vector<int> missing_;                      // configuration indexes sizing is asked for
  bool needs_sizing_ = true;
  std::vector<EstimateCache::Estimate> estimates_;  // by configuration index
  EstimateCache::Totals sized_;                     // the workload's totals and model

  // Pre-rank and quote.
  std::vector<std::pair<int, int>> fitting_;  // every unit's (step, configuration) pairs
  std::vector<Candidate> candidates_;
  std::vector<int> quoted_;  // candidate indexes, in QuoteRequest item order
  // One per offer with a quoted candidate (Candidate.quoted_offer): a
  // vector, so the exclusions read it without a lookup per candidate.
  std::vector<Quoted> quoted_offers_;
};

}  // namespace gpuadvisor::gateway::recommend

#endif  // GPUADVISOR_SERVICES_GATEWAY_RECOMMEND_STATE_H_
