#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_SPOT_STATISTICS_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_SPOT_STATISTICS_H_

// The spot price of a region as the catalog states it (docs/catalog.md
// "Spot"): the median over the zones that sell spot, with the cheapest and
// dearest zone and the zone count kept. One cheap zone is not what a job gets
// when it needs capacity now.

#include <vector>

#include "gpuadvisor/catalog/v1/catalog.pb.h"

namespace gpuadvisor::catalog {

// Sets offer.spot_usd_per_hour (median; the mean of the two middle prices
// for an even count), spot_min/max_usd_per_hour and spot_zones from the
// zones' spot prices. Prices <= 0 (no spot in that zone) are ignored; with
// none left the four fields are cleared.
void SetSpotStatistics(std::vector<double> zone_spot_prices, gpuadvisor::catalog::v1::Offer& offer);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_SPOT_STATISTICS_H_
