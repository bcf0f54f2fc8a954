#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_VAST_IMPORT_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_VAST_IMPORT_H_

// Import of a Vast.ai offer search: the JSON of `vastai search offers --raw`
// (a list of offers) or of the API it calls (POST /api/v0/bundles/,
// {"offers": [...]}). Vast is a live marketplace: every offer is one host's
// slice of a machine, priced on its own. Format notes and pitfalls:
// tests/data/vast/SOURCE.md.
//
// One Offer per (machine_id, num_gpus) - several search results for the same
// slice of one machine are alternatives, so only the cheapest is kept
// ("duplicate slice of machine"):
//   id            "vast/<n>x-<GPU name, spaces as _>-m<machine_id>/<region>"
//   region        the host's `geolocation` normalised the way SkyPilot's Vast
//                 catalog writes it: "Texas, US" -> "Texas, US, NA" (continent
//                 from the country code, data/catalog/country_continents.csv);
//                 left as written when the country is not in that table
//   gpu_model     `gpu_name` through the GpuNameResolver, the variant chosen by
//                 `gpu_ram` (MiB per GPU) and form hints ("H100 NVL", "A100 PCIE")
//   vcpus, ram    `cpu_cores_effective` (the slice's share; `cpu_cores` is the
//                 whole machine) and `cpu_ram` (MB, already the slice's share)
//   local disk    `disk_space` GB
//   on-demand     `dph_base`: compute only. Vast's `dph_total` adds the
//                 storage of the disk size used in the search; storage is priced
//                 by the pricing service, so it is left out here and the
//                 offer's source states the host's storage price ($/GB-month)
//   spot          `min_bid` (the interruptible floor for the whole offer) when
//                 it is below `dph_base`; otherwise no spot
//   availability  LIMITED (one host, gone once rented); link from the GPU;
//                 no inter-node fabric (max_nodes 1)
// Rejected (counted by reason): not rentable or already rented, deverified
// hosts (unless Options.keep_deverified), unknown GPUs, no price, missing
// fields, fractional GPU counts.

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/catalog/import/import_report.h"

namespace gpuadvisor::catalog {

// Country code ("US") -> continent code ("NA").
using ContinentTable = absl::flat_hash_map<std::string, std::string>;

// Reads data/catalog/country_continents.csv ('#' comment lines, header
// "continent,countries", then one continent per line with its country codes
// space-separated). kInvalidArgument "<file_name>:<line>: ..." on a bad line
// or a country listed twice.
absl::StatusOr<ContinentTable> ParseContinentTable(absl::string_view text,
                                                   absl::string_view file_name);

struct VastImportOptions {
  // Keep offers of hosts Vast has de-verified (failed its checks). Default no.
  bool keep_deverified = false;
  // Country -> continent for the region names; empty leaves "State, CC".
  ContinentTable continents;
};

// The whole file must parse as JSON and be a list of offers or an object with
// an "offers" list: kInvalidArgument "<file_name>: ..." otherwise. Bad offers
// are rejected one by one and counted in the report, never fatal.
absl::StatusOr<ImportedOffers> ImportVastOffers(absl::string_view json_text,
                                                absl::string_view file_name,
                                                const GpuNameResolver& gpus,
                                                const VastImportOptions& options);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_VAST_IMPORT_H_
