#ifndef GPUADVISOR_SERVICES_CATALOG_CATALOG_FLAGS_H_
#define GPUADVISOR_SERVICES_CATALOG_CATALOG_FLAGS_H_

// The flags of the servers that read the catalog files (catalog_server and
// pricing_server), defined once: --data_dir, --offers, --skypilot_csv, the
// provider price files (--vast_json, --gcp_billing_json,
// --aws_price_list_json, --gpuhunt_csv, and --import_as_of, when those files were read) and
// --admin_token_file. Only their main() calls these.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/catalog/catalog_loader.h"

namespace gpuadvisor::catalog {

// --data_dir (default "data").
std::string DataDirFromFlags();

// The catalog sources named by --data_dir, --offers, --skypilot_csv, the
// price-file flags and --import_as_of.
CatalogSources CatalogSourcesFromFlags();

// `catalog_server --check FILES`: the sources of --data_dir and the flags,
// with each named file taking the place of its kind, chosen by name:
// gpus.textproto, topology.textproto, guards.textproto; other *.textproto
// are offer files (together they replace the default offers); *.csv are
// SkyPilot CSVs ("cloud=path" or .../<cloud>/vms.csv); *.json are Vast.ai
// offer searches. kInvalidArgument for another extension.
absl::StatusOr<CatalogSources> CheckSources(CatalogSources base,
                                            const std::vector<std::string>& files);

// The admin token from --admin_token_file, else $GPUADVISOR_ADMIN_TOKEN;
// empty disables the admin RPCs.
absl::StatusOr<std::string> AdminTokenFromFlags();

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_CATALOG_FLAGS_H_
