#include "services/gateway/full_scan_reference.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "services/gateway/recommend_state.h"

namespace gpuadvisor::gateway {
namespace {

using recommend::Ranked;
using recommend::RunState;
using recommend::Unit;

class FullScan final : public recommend::ReferenceScan {
 public:
  explicit FullScan(Scan scan) : scan_(scan) {}

  void MakeUnits(RunState& run) const override {
    const std::vector<OfferFacts>& facts = run.index_->offers();
    int passing = 0;
    for (int offer = 0; offer < static_cast<int>(facts.size()); ++offer) {
      if (!run.PassesNames(offer)) continue;
      ++passing;
      Unit unit;
      unit.cell = facts[offer].cell;
      unit.offer = unit.first = offer;
      unit.count = 1;
      run.units_.push_back(std::move(unit));
    }
    run.CountFilteredByName(passing);
  }

  std::vector<Ranked> Select(RunState& run, int cap, int64_t& total) const override {
    const std::vector<OfferFacts>& facts = run.index_->offers();
    std::vector<Ranked> selected;
    for (const Unit& unit : run.units_) {
      for (int k = unit.fitting_begin; k < unit.fitting_end; ++k) {
        const auto [step, config] = run.fitting_[k];
        const int32_t nodes = int32_t{1} << step;
        for (int pos = 0; pos < static_cast<int>(run.options_.size()); ++pos) {
          const double price = recommend::ListPrice(facts[unit.offer], run.options_[pos]);
          if (price <= 0) continue;
          selected.push_back(
              {run.PreRankKeyOf(config, price * (nodes + run.SpareOf(run.options_[pos]))),
               unit.offer, step, pos, static_cast<int>(&unit - run.units_.data()), config, price});
        }
      }
    }
    total = static_cast<int64_t>(selected.size());
    std::sort(selected.begin(), selected.end());
    if (scan_ == Scan::kFullScan) run.PreRankCut(selected, static_cast<size_t>(cap));
    if (scan_ == Scan::kFullScanWholeBand) {
      selected.resize(run.PreRankKeep(selected, static_cast<size_t>(cap)));
    }
    return selected;
  }

 private:
  const Scan scan_;
};

}  // namespace

absl::StatusOr<RecommendationRun> StartWithScan(Scan scan, std::shared_ptr<const OfferIndex> index,
                                                const v1::RecommendRequest& request,
                                                const RegionGroups* groups,
                                                const OverheadModel* overheads) {
  static const FullScan* const kFullScan = new FullScan(Scan::kFullScan);
  static const FullScan* const kUncapped = new FullScan(Scan::kFullScanUncapped);
  static const FullScan* const kWholeBand = new FullScan(Scan::kFullScanWholeBand);
  return recommend::StartRun(std::move(index), request, groups, overheads,
                             /*estimate_cache=*/nullptr,
                             scan == Scan::kFullScan            ? kFullScan
                             : scan == Scan::kFullScanUncapped  ? kUncapped
                             : scan == Scan::kFullScanWholeBand ? kWholeBand
                                                                : nullptr);
}

}  // namespace gpuadvisor::gateway
