#include "services/catalog/import/spot_statistics.h"

#include <algorithm>

namespace gpuadvisor::catalog {

void SetSpotStatistics(std::vector<double> zone_spot_prices, v1::Offer& offer) {
  zone_spot_prices.erase(std::remove_if(zone_spot_prices.begin(), zone_spot_prices.end(),
                                        [](double p) { return !(p > 0); }),
                         zone_spot_prices.end());
  offer.clear_spot_usd_per_hour();
  offer.clear_spot_min_usd_per_hour();
  offer.clear_spot_max_usd_per_hour();
  offer.clear_spot_zones();
  if (zone_spot_prices.empty()) return;
  std::sort(zone_spot_prices.begin(), zone_spot_prices.end());
  const size_t n = zone_spot_prices.size();
  const double median = n % 2 == 1 ? zone_spot_prices[n / 2]
                                   : (zone_spot_prices[n / 2 - 1] + zone_spot_prices[n / 2]) / 2;
  offer.set_spot_usd_per_hour(median);
  offer.set_spot_min_usd_per_hour(zone_spot_prices.front());
  offer.set_spot_max_usd_per_hour(zone_spot_prices.back());
  offer.set_spot_zones(static_cast<int32_t>(n));
}

}  // namespace gpuadvisor::catalog
