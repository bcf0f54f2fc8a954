#ifndef GPUADVISOR_SERVICES_REFRESHER_SOURCE_IMPORT_H_
#define GPUADVISOR_SERVICES_REFRESHER_SOURCE_IMPORT_H_

// Turns the fetched bodies of one refresher source into catalog offers with
// the catalog's own importers (services/catalog/import, docs/catalog.md
// "Import formats"), and checks a new copy against the source's previous
// good copy (the refresh guards, docs/catalog.md "Refresh").

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/catalog/import/import_report.h"
#include "services/refresher/refresher_config.pb.h"

namespace gpuadvisor::refresher {

struct ImportContext {
  const catalog::GpuNameResolver* gpus = nullptr;
  // The curated catalog: machine shapes for GCP billing and AWS offer files.
  const google::protobuf::RepeatedPtrField<catalog::v1::Offer>* known_offers = nullptr;
  std::string continents_path;    // data/catalog/country_continents.csv
  std::string gcp_families_path;  // data/catalog/gcp_billing_families.csv
};

struct SourceRows {
  int read = 0;
  int kept = 0;
  std::map<std::string, int> rejected;  // reason -> rows
};

struct ImportedCopy {
  std::vector<catalog::v1::Offer> offers;  // ids unique
  SourceRows rows;
};

// kInvalidArgument for a body the format's importer rejects (a changed
// schema, a truncated file) or an unknown format. `as_of` (when the bodies
// were fetched, or their Last-Modified when earlier) dates the prices of
// the formats that carry no date (SkyPilot, gpuhunt, Vast, OCI).
absl::StatusOr<ImportedCopy> ImportBodies(const RefreshSource& source,
                                          const std::vector<std::string>& bodies,
                                          const ImportContext& context,
                                          const catalog::ImportAsOf& as_of = {});

// The guards, against `previous` (the last good copy; empty = none):
//   - no offers at all (an empty page) is held back;
//   - fewer than (1 - max_shrink_fraction) x the previous offers;
//   - an offer whose on-demand or spot price moved more than max_price_ratio
//     times from its previous good price, or whose price per accelerator-hour
//     lies outside [min_usd, max_usd] (physical and market bounds).
// Returns kFailedPrecondition with the reasons.
struct PriceBounds {
  double min_usd_per_gpu_hour = 0.02;
  double max_usd_per_gpu_hour = 50;
};
absl::Status GuardCopy(const RefreshSource& source, const std::vector<catalog::v1::Offer>& previous,
                       const std::vector<catalog::v1::Offer>& next, const PriceBounds& bounds);

}  // namespace gpuadvisor::refresher

#endif  // GPUADVISOR_SERVICES_REFRESHER_SOURCE_IMPORT_H_
