#ifndef GPUADVISOR_SERVICES_CATALOG_SKYPILOT_IMPORT_H_
#define GPUADVISOR_SERVICES_CATALOG_SKYPILOT_IMPORT_H_

// Import of SkyPilot catalog CSVs (skypilot-org/skypilot-catalog, schema v8,
// `catalogs/v8/<cloud>/vms.csv`) into catalog offers. Quirks handled (see
// tests/data/skypilot-catalog/SOURCE.md):
//   - columns are found by header name; their order differs per cloud;
//   - RFC 4180 quoting (commas, doubled quotes, line breaks inside quotes),
//     CRLF or LF line ends, a UTF-8 byte-order mark, UTF-8 text kept as is;
//   - `AcceleratorCount` as "8" or "8.0"; rows without an accelerator (CPU
//     machines) are skipped; fractional GPUs (shared slices) are skipped;
//   - `GpuInfo` is a Python-repr dict that may contain JSON `null`
//     (Hyperstack); its memory is MiB per GPU on most clouds, MiB for all
//     GPUs together on Vast, and GB per GPU on Shadeform and RunPod;
//   - empty `SpotPrice` = no spot; Vast writes 0.00 for "no spot"; RunPod
//     copies the on-demand price into SpotPrice, which is dropped;
//   - AWS lists one row per availability zone: rows are merged per
//     (instance type, region); the spot price is the median over the zones
//     with spot, min and max and the zone count kept (import/spot_statistics.h),
//     the on-demand price the region's (the lowest should zones differ);
//   - GCP prices GPU machines as a host row (empty AcceleratorName, host price
//     only) plus an accelerator row (empty InstanceType) in the same zone:
//     they are summed. Which host pairs with which accelerator row is data,
//     data/catalog/gcp_machines.csv (import/gcp_machines.h): a2/a3/a4/g2
//     machine types carry fixed GPUs; T4/V100/... rows pair with the n1 host
//     listed for their count, named "n1-standard-8+T4x1";
//   - Vast's vCPUs/MemoryGiB are placeholders and are not imported.
// Each row's accelerator name goes through the GpuNameResolver; family names
// ("A100", "H100") are narrowed to a variant by the per-GPU memory and by
// form-factor hints in the names ("PCIe", "NVL", "SXM"). Rows whose GPU is not
// known are skipped and counted.
//
// Offers get id "<cloud>/<instance_type>/<region>", nodes 1, availability
// unspecified (a catalog row does not prove capacity), a first reading of the
// legacy intra-node link from the GPU's facts in gpus.textproto (NVLink for
// HBM SXM parts with NVLink or names saying "NVLink", Infinity Fabric for AMD,
// else PCIe at the card's pcie_bytes_per_second; none for one GPU), no
// inter-node fabric and max_nodes 1. The topology proper (scale-up domain,
// fabric, host link, network) is data, data/catalog/topology.textproto,
// applied by the catalog loader to imported offers like to any other.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/catalog/import/csv.h"
#include "services/catalog/import/gcp_machines.h"
#include "services/catalog/import/import_report.h"

namespace gpuadvisor::catalog {

struct SkyPilotImport {
  std::vector<gpuadvisor::catalog::v1::Offer> offers;  // sorted by id
  int rows = 0;                                        // data rows read (the header is not a row)
  int skipped_rows = 0;                                // rows that contributed to no offer
  // Why rows were skipped: "no accelerator", "unknown GPU \"A40\"",
  // "fractional GPU count", "no price", "gcp: no host row for T4 x1", ...
  std::map<std::string, int> skipped_by_reason;

  // The account every importer gives (import/import_report.h): rows read,
  // kept (rows - skipped_rows) and rejected by reason; format "skypilot <cloud>".
  ImportReport Report(absl::string_view cloud, absl::string_view file) const;
};

// Imports one vms.csv. `cloud` is the SkyPilot cloud name ("aws", "gcp",
// "lambda", ...) and becomes Offer.provider; `file_name` is used in errors and
// in Offer.source ("skypilot:<file_name>:<line>"). `gcp_machines` (the parsed
// data/catalog/gcp_machines.csv) is required for cloud "gcp", unused otherwise. A malformed file is
// rejected whole: kInvalidArgument "<file_name>:<line>: <column>: <problem>"
// (missing required column, unterminated quote, wrong field count, a number
// that does not parse, a GpuInfo dict that does not parse). The CSV carries
// no price date: `as_of`, when the caller read it (the refresher's fetch,
// the catalog's --import_as_of or the file's modification time), dates every
// offer (as_of, priced_at_unix_seconds; import_report.h); not known = undated.
absl::StatusOr<SkyPilotImport> ImportSkyPilotCsv(absl::string_view csv, absl::string_view cloud,
                                                 absl::string_view file_name,
                                                 const GpuNameResolver& gpus,
                                                 const GcpMachines* gcp_machines = nullptr,
                                                 const ImportAsOf& as_of = {});

// Per-GPU memory in bytes described by a GpuInfo cell for `cloud`, applying
// the cloud's unit quirks above; 0 when the cell has no memory figure (empty,
// or not a dict as on some clouds). kInvalidArgument if a dict does not parse.
absl::StatusOr<int64_t> SkyPilotGpuMemoryPerGpuBytes(absl::string_view gpu_info,
                                                     double accelerator_count,
                                                     absl::string_view cloud);

// Shared with the other importers (services/catalog/import/):
// The variant of `canonical`'s family that fits the observed per-GPU memory
// (0 = unknown) and the form-factor hints in free text ("PCIe", "NVL",
// "SXM"), as described above; `canonical` when it fits.
std::string RefineGpuVariant(const GpuNameResolver& gpus, const std::string& canonical,
                             int64_t memory_per_gpu_bytes, absl::string_view hints);
// Sets offer.link / link_bytes_per_second for `gpus_per_node` GPUs of `gpu`
// as described above (hints: names that may say "NVLink").
void SetIntraNodeLink(const GpuNameResolver::Facts& gpu, int gpus_per_node, absl::string_view hints,
                      gpuadvisor::catalog::v1::Offer& offer);
// A region name as every importer writes it: each comma-separated part
// trimmed, empty parts dropped, rejoined with ", ". A marketplace host that
// gives no city ("", "US", "NA") is "US, NA", not ", US, NA"; a name without
// commas ("us-east-1") is only trimmed.
std::string CleanRegion(absl::string_view region);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_SKYPILOT_IMPORT_H_
