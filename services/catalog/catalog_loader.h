#ifndef GPUADVISOR_SERVICES_CATALOG_CATALOG_LOADER_H_
#define GPUADVISOR_SERVICES_CATALOG_CATALOG_LOADER_H_

// Builds a CatalogSnapshot from the files on disk: the GPU list, the native
// offer files (protobuf text format) and SkyPilot catalog CSVs.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/import/price_import.h"

namespace gpuadvisor::catalog {

struct CatalogSources {
  // A gpuadvisor.catalog.v1.GpuList text file (data/catalog/gpus.textproto).
  std::string gpus_path;
  // gpuadvisor.catalog.v1.OfferList text files, read in order. An offer id
  // may appear only once across all of them.
  std::vector<std::string> offer_paths;
  // SkyPilot vms.csv files, read after the offer files: "<cloud>=<path>", or a
  // path whose parent folder names the cloud (catalogs/v8/<cloud>/vms.csv).
  // A CSV offer whose id is already present refreshes that offer's on-demand
  // and spot prices, vCPUs/RAM if unset, and appends to its source, keeping
  // the hand-curated interconnect; other CSV offers are added.
  std::vector<std::string> skypilot_csv_paths;
  // Provider price files (Vast.ai search JSON, ...), read last and merged
  // like the SkyPilot CSVs; see services/catalog/import/price_import.h.
  std::vector<PriceImportSource> price_imports;
  // When the SkyPilot CSVs and price files were read (--import_as_of): the
  // date of the prices of files that carry none. Not known: each file's
  // modification time (import/import_report.h, ImportAsOf).
  ImportAsOf imports_as_of;
  // Country -> continent table for the Vast.ai regions
  // (<data_dir>/catalog/country_continents.csv).
  std::string continents_path;
  // Which Billing SKUs price which GCP machine types
  // (<data_dir>/catalog/gcp_billing_families.csv).
  std::string gcp_families_path;
  // Which accelerators each GCP machine type carries, for SkyPilot's GCP
  // catalog (<data_dir>/catalog/gcp_machines.csv); read only when a GCP
  // SkyPilot CSV is given.
  std::string gcp_machines_path;
  // A gpuadvisor.catalog.v1.TopologyRules text file
  // (data/catalog/topology.textproto); empty = no rules. After all offers are
  // read, every offer gets its scale_up / scale_out from it (ApplyTopology),
  // and the legacy link/fabric fields are rewritten to match.
  std::string topology_path;
  // A gpuadvisor.catalog.v1.CatalogGuards text file
  // (data/catalog/guards.textproto); empty = no load guards.
  std::string guards_path;
  // The refresher's published OfferList (services/refresher), read after the
  // price files and merged like them, taking each offer's as_of (the fetch
  // date); every offer's source names its refresh ("refresh <name> at
  // <time> ..."). Empty or a missing file = none yet.
  std::string refreshed_offers_path;
};

// How a load treats the load guards (services/catalog/catalog_guards.h).
struct LoadOptions {
  // Accept what the guards would reject: each finding becomes a warning
  // ("forced: ...") instead of an error. Syntax and schema errors are never
  // forced.
  bool force = false;
  // The catalog being served, for the shrink guard; nullptr = none.
  const gpuadvisor::catalog::v1::CatalogSnapshot* current = nullptr;
  // Run Catalog::Create's whole-snapshot rules on the result. A caller that
  // builds the Catalog itself next (CatalogStore::Reload) turns it off rather
  // than validate and index 100,000 offers twice, and reports a failure with
  // WholeCatalogError.
  bool check_whole = true;
  // Set the snapshot's version to its content hash. A caller that names the
  // version itself from the snapshot Catalog::Create normalized
  // (CatalogStore::Reload, SerializeWithVersion) turns it off.
  bool content_hash = true;
};

struct LoadedCatalog {
  gpuadvisor::catalog::v1::CatalogSnapshot snapshot;
  // Outliers kept (also on the offers' `warnings`) and forced findings, one
  // line each with file:line.
  std::vector<std::string> warnings;
};

// The sources a server reads from its flags: <data_dir>/catalog/gpus.textproto,
// <data_dir>/catalog/topology.textproto,
// the comma-separated `offer_files` (default <data_dir>/catalog/offers.textproto)
// and the comma-separated `skypilot_csvs`.
CatalogSources CatalogSourcesFor(const std::string& data_dir, absl::string_view offer_files,
                                 absl::string_view skypilot_csvs);

// Reads every source and validates the whole result (every rule of
// Catalog::Create). Errors are kInvalidArgument naming file, line and field:
//   "data/catalog/offers.textproto:120:3: offers[12].gpu_model: unknown GPU \"X\""
//   "data/catalog/offers.textproto:7:1: Expected identifier, got: }"   (syntax)
//   "catalogs/v8/vast/vms.csv:12: Price: not a number: \"abc\""
// kNotFound / kUnavailable when a file is missing or unreadable. A GPU list or
// offer file without any entry is rejected (a truncated file must not empty
// the catalog). The snapshot's version is the 16-hex-digit content
// fingerprint (same files, same version), loaded_at is now, source lists the
// files and prices_as_of is the oldest date the offer files give.
absl::StatusOr<gpuadvisor::catalog::v1::CatalogSnapshot> LoadCatalogSnapshot(
    const CatalogSources& sources);

// LoadCatalogSnapshot, then the load guards of `sources.guards_path`: a
// finding outside a reject range fails the load with kInvalidArgument
// "load guards rejected the catalog (...): <file>:<line>: offers[i] \"id\":
// ..." (every finding on its own line) unless `options.force`; outliers are
// kept with a warning. The snapshot's version covers the warnings.
absl::StatusOr<LoadedCatalog> LoadCatalog(const CatalogSources& sources,
                                          const LoadOptions& options);

// A Catalog::Create error on a loaded snapshot, as the loader reports it
// ("<gpus_path>: <message>").
absl::Status WholeCatalogError(const CatalogSources& sources, const absl::Status& status);

// The content fingerprint used as version: 16 hex digits over the snapshot
// without its version and loaded_at.
std::string SnapshotContentHash(const gpuadvisor::catalog::v1::CatalogSnapshot& snapshot);

// Sets `snapshot`'s version to "v<sequence>-<SnapshotContentHash>" and
// returns the hash and the snapshot's bytes as SerializeToString writes them,
// from one serialization: version and loaded_at (fields 1 and 2) come first,
// the content the hash covers is the rest.
struct VersionedBytes {
  std::string content_hash;
  std::string serialized;
};
VersionedBytes SerializeWithVersion(gpuadvisor::catalog::v1::CatalogSnapshot& snapshot,
                                    int64_t sequence);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_CATALOG_LOADER_H_
