#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_GPUHUNT_IMPORT_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_GPUHUNT_IMPORT_H_

// Import of a dstack gpuhunt catalog CSV (one `<provider>.csv` of the
// published catalog.zip), header
//   instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,
//   spot,disk_size,gpu_vendor,flags,cpu_arch,provider_data
// parsed by header name; older catalogs without the last four columns are
// accepted. Schema and pitfalls: tests/data/gpuhunt/SOURCE.md.
//   price         USD/hour for the whole instance
//   memory        GB; gpu_memory GB per GPU (picks the GPU variant)
//   spot          True/False (any case); spot and on-demand are separate rows
//                 and merge into one offer
//   location      a region, a zone or a place: GCP zones ("us-central1-a")
//                 become their region so rows match the other sources; rows of
//                 several zones of one region: the lowest on-demand price, and
//                 spot as the median over the zones with min, max and the
//                 zone count kept (import/spot_statistics.h)
//   gpu_name      dstack's normalised name, through the GpuNameResolver;
//                 historical "tpu-v3" means vendor google, name v3
// Provider names normalise to the catalog's (SkyPilot's) names: lambdalabs ->
// lambda, vastai -> vast, gcp/aws/azure/... as they are.
// Offers: id "<provider>/<instance_name>/<location>", nodes 1, max_nodes 1,
// link from the GPU. Rejected by reason: required cell empty, no GPU,
// unknown GPU, not a number, fractional count, no price.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/catalog/import/import_report.h"

namespace gpuadvisor::catalog {

// The catalog's provider name for a gpuhunt provider name ("lambdalabs" ->
// "lambda"); other names lower-cased.
std::string ProviderFromGpuhunt(absl::string_view gpuhunt_provider);

// `provider` as gpuhunt names it (the CSV file's base name, e.g. "aws" for
// aws.csv). kInvalidArgument "<file_name>:<line>: ..." for a CSV that does
// not parse or lacks a required column.
absl::StatusOr<ImportedOffers> ImportGpuhuntCsv(absl::string_view csv, absl::string_view provider,
                                                absl::string_view file_name,
                                                const GpuNameResolver& gpus);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_GPUHUNT_IMPORT_H_
