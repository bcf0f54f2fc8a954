#include "services/catalog/catalog_flags.h"

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/grpc/server.h"

ABSL_FLAG(
    std::string, data_dir, "data",
    "Folder with catalog/gpus.textproto, catalog/offers.textproto and pricing/billing.textproto.");
ABSL_FLAG(std::string, offers, "",
          "Comma-separated OfferList files; default <data_dir>/catalog/offers.textproto.");
ABSL_FLAG(std::string, skypilot_csv, "",
          "Comma-separated SkyPilot v8 vms.csv files (cloud=path or .../<cloud>/vms.csv).");
ABSL_FLAG(std::string, vast_json, "",
          "Comma-separated Vast.ai offer searches (`vastai search offers --raw` JSON).");
ABSL_FLAG(std::string, gcp_billing_json, "",
          "Comma-separated GCP Cloud Billing Catalog SKU files (Compute Engine skus pages).");
ABSL_FLAG(std::string, aws_price_list_json, "",
          "Comma-separated AWS Price List offer files (AmazonEC2 <region>/index.json).");
ABSL_FLAG(std::string, gpuhunt_csv, "",
          "Comma-separated dstack gpuhunt catalog CSVs (provider=path or .../<provider>.csv).");
ABSL_FLAG(absl::Time, import_as_of, absl::InfinitePast(),
          "When the --skypilot_csv / --vast_json / ... files were read (RFC 3339, e.g. "
          "2026-12-04T10:00:00Z): the date of the prices of files that carry none (SkyPilot, "
          "gpuhunt, Vast). Default: each file's modification time.");
ABSL_FLAG(std::string, refreshed_offers, "",
          "The refresher's published OfferList (docs/catalog.md \"Refresh\"); read on every "
          "load, a missing file = nothing refreshed yet.");
ABSL_FLAG(std::string, catalog_guards, "",
          "CatalogGuards file for the load guards; default <data_dir>/catalog/guards.textproto, "
          "\"none\" turns them off.");
ABSL_FLAG(std::string, admin_token_file, "",
          "File holding the admin token; else $GPUADVISOR_ADMIN_TOKEN.");

namespace gpuadvisor::catalog {

std::string DataDirFromFlags() { return absl::GetFlag(FLAGS_data_dir); }

CatalogSources CatalogSourcesFromFlags() {
  CatalogSources sources =
      CatalogSourcesFor(absl::GetFlag(FLAGS_data_dir), absl::GetFlag(FLAGS_offers),
                        absl::GetFlag(FLAGS_skypilot_csv));
  const std::pair<const char*, std::string> imports[] = {
      {"vast", absl::GetFlag(FLAGS_vast_json)},
      {"gcp-billing", absl::GetFlag(FLAGS_gcp_billing_json)},
      {"aws-price-list", absl::GetFlag(FLAGS_aws_price_list_json)},
      {"gpuhunt", absl::GetFlag(FLAGS_gpuhunt_csv)},
  };
  for (const auto& [format, paths] : imports) {
    for (auto& import : PriceImportSources(format, paths)) {
      sources.price_imports.push_back(std::move(import));
    }
  }
  if (const absl::Time as_of = absl::GetFlag(FLAGS_import_as_of); as_of != absl::InfinitePast()) {
    sources.imports_as_of = {as_of, "--import_as_of"};
  }
  sources.refreshed_offers_path = absl::GetFlag(FLAGS_refreshed_offers);
  if (const std::string guards = absl::GetFlag(FLAGS_catalog_guards); !guards.empty()) {
    sources.guards_path = guards == "none" ? "" : guards;
  }
  return sources;
}

absl::StatusOr<CatalogSources> CheckSources(CatalogSources base,
                                            const std::vector<std::string>& files) {
  std::vector<std::string> offers, vast;
  for (const std::string& file : files) {
    const std::string name = file.substr(file.find_last_of('/') + 1);
    if (name == "gpus.textproto") {
      base.gpus_path = file;
    } else if (name == "topology.textproto") {
      base.topology_path = file;
    } else if (name == "guards.textproto") {
      base.guards_path = file;
    } else if (absl::EndsWith(name, ".textproto")) {
      offers.push_back(file);
    } else if (absl::EndsWith(name, ".csv")) {
      base.skypilot_csv_paths.push_back(file);
    } else if (absl::EndsWith(name, ".json")) {
      vast.push_back(file);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          file,
          ": cannot tell what it is (expected gpus/topology/guards.textproto, an offer "
          ".textproto, a SkyPilot .csv or a Vast.ai .json)"));
    }
  }
  if (!offers.empty()) base.offer_paths = offers;
  for (auto& import : PriceImportSources("vast", absl::StrJoin(vast, ","))) {
    base.price_imports.push_back(std::move(import));
  }
  return base;
}

absl::StatusOr<std::string> AdminTokenFromFlags() {
  return ReadAdminToken(absl::GetFlag(FLAGS_admin_token_file), "GPUADVISOR_ADMIN_TOKEN");
}

}  // namespace gpuadvisor::catalog
