#ifndef GPUADVISOR_SERVICES_GATEWAY_FULL_SCAN_REFERENCE_H_
#define GPUADVISOR_SERVICES_GATEWAY_FULL_SCAN_REFERENCE_H_

// Test helper (library gateway_full_scan_testing, linked by tests only): the
// recommender's reference answer. Scan::kFullScan makes one unit per offer
// that passes the name filters and pre-ranks by sorting every candidate,
// where the live path (Scan::kTopK, RecommendationRun::Start) groups offers
// into cells and merges streams of them by list price. Both must give the
// same answer, byte for byte.

#include <memory>

#include "absl/status/statusor.h"
#include "services/gateway/recommender.h"

namespace gpuadvisor::gateway {

// kFullScanUncapped quotes every candidate (no pre-rank cut at all): the
// answer the pre-rank's cut, tie band included, must not change at the top.
// kFullScanWholeBand quotes the whole tie band past the cap
// (RunState::PreRankKeep) without leaving out what its kind outranks
// (RunState::DropOutranked): the answer must be the same, byte for byte.
enum class Scan { kTopK, kFullScan, kFullScanUncapped, kFullScanWholeBand };

// RecommendationRun::Start (no estimate cache) by the given scan.
absl::StatusOr<RecommendationRun> StartWithScan(Scan scan, std::shared_ptr<const OfferIndex> index,
                                                const v1::RecommendRequest& request,
                                                const RegionGroups* groups,
                                                const OverheadModel* overheads);

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_FULL_SCAN_REFERENCE_H_
