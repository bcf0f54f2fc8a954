#include "services/catalog/catalog_flags.h"

#include "absl/flags/flag.h"
#include "common/grpc/server.h"

ABSL_FLAG(std::string, data_dir, "data",
          "Folder with catalog/gpus.textproto, catalog/offers.textproto and pricing/billing.textproto.");
ABSL_FLAG(std::string, offers, "", "Comma-separated OfferList files; default <data_dir>/catalog/offers.textproto.");
ABSL_FLAG(std::string, skypilot_csv, "",
          "Comma-separated SkyPilot v8 vms.csv files (cloud=path or .../<cloud>/vms.csv).");
ABSL_FLAG(std::string, vast_json, "",
          "Comma-separated Vast.ai offer searches (`vastai search offers --raw` JSON).");
ABSL_FLAG(std::string, admin_token_file, "", "File holding the admin token; else $GPUADVISOR_ADMIN_TOKEN.");

namespace gpuadvisor::catalog {

std::string DataDirFromFlags() { return absl::GetFlag(FLAGS_data_dir); }

CatalogSources CatalogSourcesFromFlags() {
  CatalogSources sources = CatalogSourcesFor(
      absl::GetFlag(FLAGS_data_dir), absl::GetFlag(FLAGS_offers), absl::GetFlag(FLAGS_skypilot_csv));
  for (auto& import : PriceImportSources("vast", absl::GetFlag(FLAGS_vast_json))) {
    sources.price_imports.push_back(std::move(import));
  }
  return sources;
}

absl::StatusOr<std::string> AdminTokenFromFlags() {
  return ReadAdminToken(absl::GetFlag(FLAGS_admin_token_file), "GPUADVISOR_ADMIN_TOKEN");
}

}  // namespace gpuadvisor::catalog
