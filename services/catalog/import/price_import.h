#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_PRICE_IMPORT_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_PRICE_IMPORT_H_

// One entry point for the price-file importers the catalog loader reads
// beside its own files and SkyPilot's CSVs (docs/catalog.md, "Import
// formats"):
//   vast            Vast.ai offer search JSON            (vast_import.h)
//   gcp-billing     GCP Cloud Billing Catalog SKU JSON   (gcp_billing_import.h)
//   aws-price-list  AWS Price List EC2 offer file JSON   (aws_price_list_import.h)
//   azure-retail    Azure Retail Prices API pages JSON   (azure_retail_import.h)
//   oci-price-list  OCI public price list JSON           (oci_price_list_import.h)
//   gpuhunt         dstack gpuhunt catalog CSV           (gpuhunt_import.h); the
//                   path may be "<provider>=<path>", else the file's base name
//                   names the provider (aws.csv -> aws)
// Each import returns offers with canonical GPU names and the report of rows
// read, kept and rejected by reason.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/catalog/import/import_report.h"

namespace gpuadvisor::catalog {

struct PriceImportSource {
  std::string format;  // see above
  std::string path;
  std::string provider;  // gpuhunt only
  // When the file was read: dates what it leaves undated (import_report.h).
  // Not known: ImportPriceFile takes the file's modification time ("file
  // modified"); ImportPriceText leaves such offers undated.
  ImportAsOf as_of;
};

// Everything an import may need besides its own file.
struct PriceImportContext {
  const GpuNameResolver* gpus = nullptr;
  // data/catalog/country_continents.csv (Vast regions); empty = none.
  std::string continents_path;
  // data/catalog/gcp_billing_families.csv; required for gcp-billing.
  std::string gcp_families_path;
  // The offers loaded before this import (the curated files, earlier
  // imports): machine shapes for formats that price a machine type without
  // describing it (GCP, AWS).
  const google::protobuf::RepeatedPtrField<gpuadvisor::catalog::v1::Offer>* known_offers = nullptr;
};

// Reads `source.path` and imports it; an `as_of` not known is the file's
// modification time. kInvalidArgument for an unknown
// format or a malformed file ("<path>: ..."), kNotFound for a missing file.
absl::StatusOr<ImportedOffers> ImportPriceFile(const PriceImportSource& source,
                                               const PriceImportContext& context);

// The same for a file's text already in memory (the refresher's downloads);
// `source.path` only names it (in errors and in each offer's `source`).
absl::StatusOr<ImportedOffers> ImportPriceText(const PriceImportSource& source,
                                               const std::string& text,
                                               const PriceImportContext& context);

// The modification time of `path` as an as-of ("file modified"); not known
// when the file cannot be read.
ImportAsOf FileModifiedAsOf(const std::string& path);

// "<format>=<path>" entries of a comma-separated flag value, all of `format`.
std::vector<PriceImportSource> PriceImportSources(absl::string_view format,
                                                  absl::string_view comma_separated_paths);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_PRICE_IMPORT_H_
