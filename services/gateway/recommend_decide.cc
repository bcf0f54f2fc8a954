// Stage 4b: decide. The numbers a planner signs (docs/gateway.md,
// "Objectives" and "Intervals"): each estimate's P10-P90 interval carried
// into the hours and the cost, deadline and budget checks at a stated
// confidence, the tie-banded rank (the objective's measure, then the next
// measure, then risk) and the answer's head (the cheapest, the fastest and
// the best cost x time, with their deltas).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/validation/field_ranges.h"
#include "services/gateway/recommend_state.h"
#include "services/gateway/recommend_text.h"

namespace gpuadvisor::gateway::recommend {
namespace {

bool HasInterval(const sizing::v1::Interval& i) {
  return i.p10() > 0 && i.p50() > 0 && i.p90() > 0 && std::isfinite(i.p10()) &&
         std::isfinite(i.p90());
}

// The percentile at standard-normal quantile z of an interval (sizing.v1.
// Interval's rule: log-normal from p50 towards p90 above, towards p10 below).
double At(const sizing::v1::Interval& i, double z) {
  if (z == 0) return i.p50();
  if (z == kZ90) return i.p90();
  if (z == -kZ90) return i.p10();
  const double edge = z > 0 ? i.p90() : i.p10();
  return i.p50() * std::pow(edge / i.p50(), std::abs(z) / kZ90);
}

// (p90 - p10) / (2 p50): the interval's relative half-width; 0 without one.
double RelativeHalfWidth(double p10, double p50, double p90) {
  return p50 > 0 && p90 >= p10 ? (p90 - p10) / (2 * p50) : 0;
}

void SetInterval(double p10, double p50, double p90, const std::string& basis,
                 sizing::v1::Interval* i) {
  i->set_p10(p10);
  i->set_p50(p50);
  i->set_p90(p90);
  i->set_basis(basis);
}

// One survivor's place in the rank.
struct Row {
  double primary, secondary;
  // The offer's place in id order (OfferIndex::id_rank), the nodes and the
  // option in one number: compares as (offer id, nodes, option).
  uint64_t identity;
  int risk;  // -1 until a tie needs it
  int index;
};

uint64_t Identity(int32_t id_rank, int32_t nodes, int option) {
  static_assert(kMaxMaxNodes < (1 << 24), "nodes fit between the id and the option");
  return static_cast<uint64_t>(static_cast<uint32_t>(id_rank)) << 32 |
         static_cast<uint64_t>(static_cast<uint32_t>(nodes)) << 8 |
         static_cast<uint64_t>(option & 0xff);
}

// The strict order inside a tie: risk, then the primary measure, then the
// secondary, then identity.
struct ByRisk {
  bool operator()(const Row& a, const Row& b) const {
    return std::tie(a.risk, a.primary, a.secondary, a.identity) <
           std::tie(b.risk, b.primary, b.secondary, b.identity);
  }
};

// Splits rows [begin, end) into bands by `measure` (each starts at the
// smallest measure not yet banded and holds every row within `band` of it),
// in measure order, and calls order(band_begin, band_end) for each band of
// two or more rows. Which rows share a band depends only on their values:
// the first bands are split off by a pass each (a tie band usually holds
// most rows), the rest by sorting.
template <typename Measure, typename Order>
void ForEachBand(std::vector<Row>& rows, size_t begin, size_t end, double band, Measure measure,
                 Order order) {
  constexpr int kBandsByPass = 3;
  auto by_measure = [&](const Row& a, const Row& b) { return measure(a) < measure(b); };
  const auto first = rows.begin();
  for (int pass = 0; pass < kBandsByPass && begin < end; ++pass) {
    const double limit =
        TieLimit(measure(*std::min_element(first + begin, first + end, by_measure)), band);
    const size_t split = std::partition(first + begin, first + end,
                                        [&](const Row& r) { return measure(r) <= limit; }) -
                         first;
    if (split - begin > 1) order(begin, split);
    begin = split;
  }
  std::sort(first + begin, first + end, by_measure);
  for (size_t i = begin, j = begin; i < end; i = j) {
    const double limit = TieLimit(measure(rows[i]), band);
    while (j < end && measure(rows[j]) <= limit) ++j;
    if (j - i > 1) order(i, j);
  }
}

}  // namespace

double RelativeHalfWidth(const sizing::v1::Interval& i) {
  return HasInterval(i) ? RelativeHalfWidth(i.p10(), i.p50(), i.p90()) : 0;
}

double RunState::RunHoursAt(const sizing::v1::ConfigurationEstimate& e, double z) const {
  const sizing::v1::Interval& i = e.estimated_hours_interval();
  return HasInterval(i) ? At(i, z) : e.estimated_hours();
}

double RunState::ExpectedHoursAt(const Candidate& candidate, const pricing::v1::Quote& quote,
                                 double z) const {
  const sizing::v1::ConfigurationEstimate& e = Est(candidate.config);
  const double expected = quote.cost().expected_hours();
  const double run = e.estimated_hours();
  const double fixed = candidate.overhead_hours;
  if (!(run > 0) || !(expected > fixed)) return expected;
  return fixed + (expected - fixed) * RunHoursAt(e, z) / run;
}

double RunState::TotalUsdAt(const Candidate& candidate, const pricing::v1::Quote& quote,
                            double z) const {
  const pricing::v1::CostBreakdown& cost = quote.cost();
  const double expected = cost.expected_hours();
  if (!(expected > 0)) return cost.total_usd();
  const double hours = ExpectedHoursAt(candidate, quote, z);
  const double fixed = cost.egress_usd();
  const double term = quote.commitment().term_hours();
  if (quote.terms_bought() <= 0 || !(term > 0)) {
    return fixed + (cost.total_usd() - fixed) * hours / expected;
  }
  // Reserved: the compute is whole terms (pricing's rule: at least one, paid
  // whether used or not), so it moves only where the hours cross a term.
  const double terms = std::max(1.0, std::ceil(hours / term - 1e-9));
  const double compute = cost.compute_usd() * terms / quote.terms_bought();
  return fixed + compute + (cost.total_usd() - fixed - cost.compute_usd()) * hours / expected;
}

int RunState::RiskOf(const Candidate& candidate, const pricing::v1::Quote& quote,
                     std::vector<std::string>* texts) const {
  if (texts == nullptr) {
    // Ranking counts; only the explanation builds the texts (no string per
    // survivor in the rank).
    if (config_risk_.empty()) config_risk_.assign(configs_.size(), -1);
    int& config_risk = config_risk_[candidate.config];
    if (config_risk < 0)
      config_risk = HardwareRisk(candidate, nullptr) + SizingRisk(candidate, nullptr);
    return config_risk + quote.warnings_size() + HostRisk(candidate, nullptr);
  }
  int risk = HardwareRisk(candidate, texts);
  for (const std::string& warning : quote.warnings()) {
    ++risk;
    texts->push_back(absl::StrCat("hazard: ", warning));
  }
  risk += SizingRisk(candidate, texts);
  return risk + HostRisk(candidate, texts);
}

namespace {

// Counts a present risk factor, and appends its text when `texts` is not null.
template <typename Text>
int Factor(bool present, const Text& text, std::vector<std::string>* texts) {
  if (!present) return 0;
  if (texts != nullptr) texts->push_back(text());
  return 1;
}

auto Literal(const char* t) {
  return [t] { return std::string(t); };
}

}  // namespace

bool RunState::PcieBound(const Candidate& candidate) const {
  const OfferShape& shape = index_->shapes()[index_->offers()[candidate.offer_index].shape];
  return shape.gpus_per_node * candidate.nodes > 1 && shape.link == catalog::v1::LINK_TYPE_PCIE &&
         (training_ || Est(candidate.config).plan().tensor_parallel() > 1);
}

int RunState::HardwareRisk(const Candidate& candidate, std::vector<std::string>* texts) const {
  const OfferShape& shape = index_->shapes()[index_->offers()[candidate.offer_index].shape];
  const catalog::v1::Gpu* gpu = GpuOf(candidate);
  const sizing::v1::Precision precision = request_.workload().precision();
  int risk = Factor(
      gpu != nullptr && ((precision == sizing::v1::PRECISION_BF16 && !gpu->supports_bf16()) ||
                         (precision == sizing::v1::PRECISION_FP8 && !gpu->supports_fp8())),
      [&] {
        return absl::StrCat("GPU without the job's precision (",
                            sizing::v1::Precision_Name(precision).substr(10), ")");
      },
      texts);
  risk += Factor(PcieBound(candidate), Literal("hazard: PCIe-only multi-GPU"), texts);
  // A multi-node candidate's shape has the offer's fabric (single-node shapes say NONE).
  risk += Factor(candidate.nodes > 1 && shape.fabric == catalog::v1::FABRIC_TYPE_ETHERNET,
                 Literal("hazard: multi-node over Ethernet"), texts);
  risk += Factor(Est(candidate.config).memory_margin() < vram_margin_ + 0.05,
                 Literal("hazard: VRAM margin tight"), texts);
  return risk;
}

int RunState::SizingRisk(const Candidate& candidate, std::vector<std::string>* texts) const {
  const bool pcie_bound = PcieBound(candidate);
  int risk = 0;
  for (const sizing::v1::Note& note : Est(candidate.config).structured_notes()) {
    if (note.severity() != sizing::v1::NOTE_SEVERITY_WARNING) continue;
    const bool covered =
        note.code() == "no_bf16" || note.code() == "no_fp8" ||
        (pcie_bound && (note.code() == "pcie_allreduce" || note.code() == "tp_over_pcie"));
    risk += Factor(
        !covered, [&] { return absl::StrCat("hazard: ", note.code()); }, texts);
  }
  return risk;
}

int RunState::HostRisk(const Candidate& candidate, std::vector<std::string>* texts) const {
  const OfferFacts& offer = index_->offers()[candidate.offer_index];
  return Factor(offer.community_host, Literal("marketplace (community) host"), texts) +
         Factor(offer.availability == catalog::v1::AVAILABILITY_LIMITED,
                Literal("limited availability"), texts) +
         Factor(offer.availability == catalog::v1::AVAILABILITY_UNSPECIFIED,
                Literal("availability unconfirmed"), texts);
}

const catalog::v1::Gpu* RunState::GpuOf(const Candidate& candidate) const {
  const int id = index_->offers()[candidate.offer_index].gpu;
  if (gpu_specs_.empty()) gpu_specs_.assign(index_->gpus(), {false, nullptr});
  auto& [known, gpu] = gpu_specs_[id];
  if (!known) gpu = catalog_->FindGpu(OfferOf(candidate).gpu_model());
  known = true;
  return gpu;
}

// Bands of the primary measure, bands of the secondary inside each, then a
// strict order (risk first) inside each of those: which rows share a band
// depends only on the measures' values, so only that last order is a full
// sort, and risk is counted only for rows that tie.
void RunState::RankTied(std::vector<int>& survivors, const pricing::v1::QuoteResponse& quotes) {
  std::vector<Row> rows;
  rows.reserve(survivors.size());
  for (int index : survivors) {
    const Candidate& candidate = candidates_[index];
    const pricing::v1::CostBreakdown& cost = quotes.quotes(candidate.quote).cost();
    const double primary =
        ObjectiveKey(objective_, cost.expected_hours(), Est(candidate.config).tokens_per_second(),
                     cost.usd_per_hour(), cost.total_usd());
    const double secondary =
        objective_ == v1::OBJECTIVE_FASTEST ? cost.total_usd() : cost.expected_hours();
    rows.push_back({primary, secondary,
                    Identity(index_->id_rank(candidate.offer_index), candidate.nodes,
                             static_cast<int>(candidate.option)),
                    -1, index});
  }
  if (rows.empty()) {
    tie_band_used_ = std::max(tie_band_, 0.0);
    return;
  }
  // The best row by the primary measure (then the secondary, then identity).
  const Row& best = *std::min_element(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.primary, a.secondary, a.identity) <
           std::tie(b.primary, b.secondary, b.identity);
  });
  tie_band_used_ = tie_band_ >= 0 ? tie_band_ : DefaultBand(best.index, quotes);
  auto primary = [](const Row& r) { return r.primary; };
  auto secondary = [](const Row& r) { return r.secondary; };
  ForEachBand(rows, 0, rows.size(), tie_band_used_, primary, [&](size_t begin, size_t end) {
    ForEachBand(rows, begin, end, tie_band_used_, secondary, [&](size_t from, size_t to) {
      for (size_t k = from; k < to; ++k) {
        const Candidate& candidate = candidates_[rows[k].index];
        rows[k].risk = RiskOf(candidate, quotes.quotes(candidate.quote), nullptr);
      }
      std::sort(rows.begin() + from, rows.begin() + to, ByRisk());
    });
  });
  for (size_t i = 0; i < rows.size(); ++i) survivors[i] = rows[i].index;
}

// The relative half-width of the best candidate's interval of the measure
// the objective ranks by, stated as an assumption.
double RunState::DefaultBand(int best, const pricing::v1::QuoteResponse& quotes) {
  const Candidate& c = candidates_[best];
  const pricing::v1::Quote& q = quotes.quotes(c.quote);
  double band = 0;
  std::string measure;
  if (objective_ == v1::OBJECTIVE_FASTEST) {
    band = RelativeHalfWidth(ExpectedHoursAt(c, q, -kZ90), ExpectedHoursAt(c, q, 0),
                             ExpectedHoursAt(c, q, kZ90));
    measure = "expected hours of the fastest";
  } else if (objective_ == v1::OBJECTIVE_BEST_VALUE) {
    band = RelativeHalfWidth(Est(c.config).tokens_per_second_interval());
    measure = "tokens/s (so tokens/s per USD/h) of the best value";
  } else {
    band = RelativeHalfWidth(TotalUsdAt(c, q, -kZ90), TotalUsdAt(c, q, 0), TotalUsdAt(c, q, kZ90));
    measure = "total cost of the cheapest";
  }
  // No wider than a request may ask for (the shared range table's row).
  static constexpr double kMaxTieBand =
      validation::RangeOf("gpuadvisor.gateway.v1.Constraints.tie_band_fraction").max;
  band = std::min(band, kMaxTieBand);
  assumptions_.push_back(MakeTieAssumption(band, measure, index_->id(c.offer_index)));
  return band;
}

v1::Assumption RunState::MakeTieAssumption(double band, const std::string& measure,
                                           absl::string_view offer) const {
  const char* next = objective_ == v1::OBJECTIVE_FASTEST ? "total cost" : "expected hours";
  v1::Assumption a;
  a.set_field("constraints.tie_band_fraction");
  a.set_value(Fixed(band, 3));
  a.set_note(absl::StrCat(
      "the relative half-width of the P10-P90 interval of the ", measure, " (", offer,
      "): candidates within ", Percent(band),
      " of the best one not yet ranked are a tie, ordered by ", next,
      " (same band), then by risk; set tie_band_fraction (--tie_band) to change it, 0 for a "
      "strict order"));
  return a;
}

void RunState::ExplainUncertainty(const Candidate& candidate, const pricing::v1::Quote& quote,
                                  v1::Recommendation& r) const {
  const sizing::v1::ConfigurationEstimate& e = Est(candidate.config);
  // The P10-P90 line: each interval's numbers, ", " between them.
  std::string line;
  auto add = [&line](auto&&... pieces) {
    absl::StrAppend(&line, line.empty() ? "" : ", ", pieces...);
  };
  if (HasInterval(e.estimated_hours_interval())) {
    const std::string& basis = e.estimated_hours_interval().basis();
    const double h10 = ExpectedHoursAt(candidate, quote, -kZ90);
    const double h90 = ExpectedHoursAt(candidate, quote, kZ90);
    const double usd10 = TotalUsdAt(candidate, quote, -kZ90);
    const double usd90 = TotalUsdAt(candidate, quote, kZ90);
    SetInterval(h10, ExpectedHoursAt(candidate, quote, 0), h90, basis,
                r.mutable_estimated_hours_interval());
    SetInterval(usd10, TotalUsdAt(candidate, quote, 0), usd90,
                absl::StrCat("the hours' interval through the quote (", basis, ")"),
                r.mutable_total_usd_interval());
    add(Fixed(h10, 1), "-", Fixed(h90, 1), " h");
    add("$", Fixed(usd10, 2), "-$", Fixed(usd90, 2));
  }
  if (const sizing::v1::Interval& tps = e.tokens_per_second_interval(); HasInterval(tps)) {
    *r.mutable_tokens_per_second_interval() = tps;
    add(Fixed(tps.p10(), 0), "-", Fixed(tps.p90(), 0), " tokens/s");
  }
  if (const sizing::v1::Interval& ttft = e.time_to_first_token_interval(); HasInterval(ttft)) {
    *r.mutable_time_to_first_token_interval() = ttft;
    add("first token ", Fixed(ttft.p10(), 2), "-", Fixed(ttft.p90(), 2), " s");
  }
  if (!line.empty()) {
    r.add_reasons(
        absl::StrCat("P10-P90: ", line, " (measured error of the estimate, leave-one-source-out)"));
  }
  AddChecks(candidate, quote, r);
  std::vector<std::string> risks;
  r.set_risk(RiskOf(candidate, quote, &risks));
  for (std::string& text : risks) r.add_risks(std::move(text));
}

}  // namespace gpuadvisor::gateway::recommend
