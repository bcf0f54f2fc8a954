#include "services/catalog/catalog_loader.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/io/deterministic.h"
#include "common/io/text_proto.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "services/catalog/catalog.h"
#include "services/catalog/catalog_guards.h"
#include "services/catalog/fingerprint.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/catalog/import/gcp_machines.h"
#include "services/catalog/located_text_proto.h"
#include "services/catalog/offer_list_file.h"
#include "services/catalog/provenance.h"
#include "services/catalog/skypilot_import.h"
#include "services/catalog/topology.h"

namespace gpuadvisor::catalog {
namespace {

using ::google::protobuf::Descriptor;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;
using ::google::protobuf::TextFormat;
using ::gpuadvisor::catalog::v1::CatalogSnapshot;
using ::gpuadvisor::catalog::v1::GpuList;
using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::catalog::v1::OfferList;

struct CsvSource {
  std::string cloud;
  std::string path;
};

// "<cloud>=<path>" or ".../<cloud>/<file>.csv".
CsvSource ParseCsvSource(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq != std::string::npos && eq > 0) {
    const std::string cloud = spec.substr(0, eq);
    if (std::all_of(cloud.begin(), cloud.end(), [](char c) {
          return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
        })) {
      return {absl::AsciiStrToLower(cloud), spec.substr(eq + 1)};
    }
  }
  std::string dir = spec;
  const size_t slash = dir.find_last_of('/');
  dir = slash == std::string::npos ? "" : dir.substr(0, slash);
  const size_t parent = dir.find_last_of('/');
  return {absl::AsciiStrToLower(parent == std::string::npos ? dir : dir.substr(parent + 1)), spec};
}

}  // namespace

std::string SnapshotContentHash(const CatalogSnapshot& snapshot) {
  CatalogSnapshot content = snapshot;
  content.clear_version();
  content.clear_loaded_at_unix_seconds();
  return FingerprintHex(DeterministicBytes(content));
}

VersionedBytes SerializeWithVersion(CatalogSnapshot& snapshot, int64_t sequence) {
  constexpr size_t kHashDigits = 16;  // FingerprintHex
  const int64_t loaded_at = snapshot.loaded_at_unix_seconds();
  CatalogSnapshot head;  // the two fields the hash leaves out, the digits to fill in
  head.set_version(absl::StrCat("v", sequence, "-", std::string(kHashDigits, '0')));
  head.set_loaded_at_unix_seconds(loaded_at);
  VersionedBytes out;
  head.SerializeToString(&out.serialized);
  const size_t content_start = out.serialized.size();
  // The version's bytes end where the loaded_at field begins (or the head does).
  const size_t digits_end =
      loaded_at != 0 ? content_start - (1 + google::protobuf::io::CodedOutputStream::VarintSize64(
                                                static_cast<uint64_t>(loaded_at)))
                     : content_start;
  snapshot.clear_version();
  snapshot.clear_loaded_at_unix_seconds();
  AppendDeterministicBytes(snapshot, &out.serialized);
  out.content_hash = FingerprintHex(absl::string_view(out.serialized).substr(content_start));
  out.serialized.replace(digits_end - kHashDigits, kHashDigits, out.content_hash);
  snapshot.set_version(absl::StrCat("v", sequence, "-", out.content_hash));
  snapshot.set_loaded_at_unix_seconds(loaded_at);
  return out;
}

namespace {

// SnapshotContentHash without a copy of a snapshot of 100,000 offers: the
// two fields it leaves out are set aside and put back.
std::string ContentHashInPlace(CatalogSnapshot& snapshot) {
  std::string version = std::move(*snapshot.mutable_version());
  const int64_t loaded_at = snapshot.loaded_at_unix_seconds();
  snapshot.clear_version();
  snapshot.clear_loaded_at_unix_seconds();
  std::string hash = FingerprintHex(DeterministicBytes(snapshot));
  snapshot.set_version(std::move(version));
  snapshot.set_loaded_at_unix_seconds(loaded_at);
  return hash;
}

// The spot price's own date across a merge into `known`: an import with spot
// prices brings its own, dated like its on-demand price, so the curated spot
// date goes; one without keeps the curated spot price, and that price keeps
// its date (the row's, before the import's on-demand price replaces it).
void CarrySpotDate(bool has_spot_prices, Offer& known) {
  if (has_spot_prices || known.spot_usd_per_hour() <= 0) {
    known.clear_spot_as_of();
    known.clear_spot_price_source();
    known.clear_spot_priced_at_unix_seconds();
    return;
  }
  if (HasOwnSpotDate(known) || known.priced_at_unix_seconds() <= 0) return;
  known.set_spot_as_of(known.as_of());
  known.set_spot_price_source(known.price_source());
  known.set_spot_priced_at_unix_seconds(known.priced_at_unix_seconds());
}

// Imported offers (SkyPilot CSV, provider price files) into the snapshot: a
// new id is added; a known id keeps its curated facts and takes the fresh
// prices (spot only when the source has spot prices), filling vCPUs and RAM
// where the curated offer has none. `Offers`: a std::vector<Offer> or the
// RepeatedPtrField of a parsed OfferList, its offers moved from either way.
template <typename Offers>
absl::Status MergeImported(const GpuNameResolver& resolver, Offers& offers, bool has_spot_prices,
                           absl::flat_hash_map<std::string, int>& index_by_id,
                           CatalogSnapshot& snapshot, bool take_dates = false) {
  snapshot.mutable_offers()->Reserve(snapshot.offers_size() + static_cast<int>(offers.size()));
  index_by_id.reserve(index_by_id.size() + static_cast<size_t>(offers.size()));
  for (Offer& offer : offers) {
    if (absl::Status s = ValidateAndNormalizeOffer(resolver, offer); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(offer.source(), ": ", s.message()));
    }
    FillPriceProvenance(offer, 0);
    auto [it, inserted] = index_by_id.emplace(offer.id(), snapshot.offers_size());
    if (inserted) {
      *snapshot.add_offers() = std::move(offer);
      continue;
    }
    Offer& known = *snapshot.mutable_offers(it->second);
    CarrySpotDate(has_spot_prices, known);
    known.set_on_demand_usd_per_hour(offer.on_demand_usd_per_hour());
    if (has_spot_prices) {
      known.set_spot_usd_per_hour(offer.spot_usd_per_hour());
      known.set_spot_min_usd_per_hour(offer.spot_min_usd_per_hour());
      known.set_spot_max_usd_per_hour(offer.spot_max_usd_per_hour());
      known.set_spot_zones(offer.spot_zones());
      // Its own date where the import gives one (the refresher's copy of a
      // known spot price it did not fetch), else the row's.
      known.set_spot_as_of(offer.spot_as_of());
      known.set_spot_price_source(offer.spot_price_source());
      known.set_spot_priced_at_unix_seconds(offer.spot_priced_at_unix_seconds());
    }
    if (offer.reserved_usd_per_hour() > 0)
      known.set_reserved_usd_per_hour(offer.reserved_usd_per_hour());
    if (take_dates) {  // the refresher's copy: its fetch date and what it saw
      known.set_as_of(offer.as_of());
      known.set_availability(offer.availability());
    } else if (!offer.as_of().empty()) {
      known.set_as_of(offer.as_of());  // the date of the price file's prices
    }
    if (known.vcpus() == 0) known.set_vcpus(offer.vcpus());
    if (known.ram_bytes() == 0) known.set_ram_bytes(offer.ram_bytes());
    known.set_source(absl::StrCat(known.source(), "; prices ", offer.source()));
    // The prices are the import's now: so are their source, time and budget.
    known.set_price_source(offer.price_source());
    known.set_priced_at_unix_seconds(offer.priced_at_unix_seconds());
    known.set_stale_after_seconds(offer.stale_after_seconds());
    known.set_last_seen_available_unix_seconds(offer.last_seen_available_unix_seconds());
  }
  return absl::OkStatus();
}

// The refresher's published file (services/refresher): an OfferList merged
// like an import. A missing file is no refreshed data yet, not an error.
absl::Status MergeRefreshed(const std::string& path, const GpuNameResolver& resolver,
                            absl::flat_hash_map<std::string, int>& index_by_id,
                            CatalogSnapshot& snapshot, std::vector<std::string>& source_names,
                            std::vector<v1::SourceState>& states) {
  if (path.empty() || !std::filesystem::exists(path)) return absl::OkStatus();
  absl::StatusOr<OfferList> refreshed;
  {
    absl::StatusOr<std::string> bytes = ReadFile(path);
    if (!bytes.ok()) return bytes.status();
    refreshed = DecodeOfferListFile(*bytes, path);  // binary or text (offer_list_file.h)
  }
  if (!refreshed.ok()) return refreshed.status();
  // Merged straight from the parsed list: no second set of 100,000 offers.
  google::protobuf::RepeatedPtrField<Offer>& offers = *refreshed->mutable_offers();
  for (const Offer& offer : offers) {
    if (!absl::StartsWith(offer.source(), "refresh ") || offer.as_of().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": offer \"", offer.id(), "\": source must name its refresh, with an as_of"));
    }
  }
  if (absl::Status s = MergeImported(resolver, offers, /*has_spot_prices=*/true, index_by_id,
                                     snapshot, /*take_dates=*/true);
      !s.ok()) {
    return s;
  }
  source_names.push_back(absl::StrCat(path, " (", refreshed->source(), ")"));
  states.assign(refreshed->sources().begin(), refreshed->sources().end());
  return absl::OkStatus();
}

// What the load steps below build, in order.
struct LoadState {
  struct Origin {
    const std::string* path;
    int line;
  };
  CatalogSnapshot snapshot;
  std::vector<std::string> source_names;
  absl::flat_hash_map<std::string, int> index_by_id;  // id -> snapshot.offers index
  std::vector<Origin> origins;                        // of the offer files' offers
  std::string prices_as_of;
};

absl::Status LoadGpus(const CatalogSources& sources, std::vector<std::string>& gpu_origins,
                      LoadState& state) {
  absl::StatusOr<std::string> text = ReadFile(sources.gpus_path);
  if (!text.ok()) return text.status();
  GpuList gpus;
  TextFormat::ParseInfoTree tree;
  if (absl::Status s = ParseWithLocations(*text, sources.gpus_path, &gpus, &tree); !s.ok()) {
    return s;
  }
  if (gpus.gpus_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(sources.gpus_path, ":1:1: gpus: no GPU listed"));
  }
  const FieldDescriptor* list = GpuList::descriptor()->FindFieldByName("gpus");
  for (int i = 0; i < gpus.gpus_size(); ++i) {
    if (absl::Status s = ValidateGpu(gpus.gpus(i)); !s.ok()) {
      return Located(sources.gpus_path, tree, list, i, s);
    }
  }
  for (int i = 0; i < gpus.gpus_size(); ++i) {
    gpu_origins.push_back(absl::StrCat(sources.gpus_path, ":", LineOf(tree, list, i)));
  }
  *state.snapshot.mutable_gpus() = std::move(*gpus.mutable_gpus());
  state.source_names.push_back(sources.gpus_path);
  return absl::OkStatus();
}

absl::Status LoadOfferFile(const std::string& path, const GpuNameResolver& resolver,
                           std::vector<std::string>& offer_origins, LoadState& state) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  OfferList offers;
  TextFormat::ParseInfoTree tree;
  if (absl::Status s = ParseWithLocations(*text, path, &offers, &tree); !s.ok()) return s;
  if (offers.offers_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":1:1: offers: no offer listed"));
  }
  const FieldDescriptor* list = OfferList::descriptor()->FindFieldByName("offers");
  for (int i = 0; i < offers.offers_size(); ++i) {
    Offer& offer = *offers.mutable_offers(i);
    if (absl::Status s = ValidateAndNormalizeOffer(resolver, offer); !s.ok()) {
      return Located(path, tree, list, i, s);
    }
    if (offer.as_of().empty() && !offers.prices_as_of().empty()) {
      offer.set_as_of(offers.prices_as_of());
    }
    FillPriceProvenance(offer, offers.stale_after_seconds());
    const int line = tree.GetLocation(list, i).line + 1;
    auto [it, inserted] = state.index_by_id.emplace(offer.id(), state.snapshot.offers_size());
    if (!inserted) {
      const LoadState::Origin& first = state.origins[static_cast<size_t>(it->second)];
      return Located(path, tree, list, i,
                     absl::InvalidArgumentError(absl::StrCat("id: \"", offer.id(), "\" duplicates ",
                                                             *first.path, ":", first.line)));
    }
    state.origins.push_back({&path, line});
    offer_origins.push_back(absl::StrCat(path, ":", line));
    *state.snapshot.add_offers() = std::move(offer);
  }
  if (!offers.prices_as_of().empty() &&
      (state.prices_as_of.empty() || offers.prices_as_of() < state.prices_as_of)) {
    state.prices_as_of = offers.prices_as_of();
  }
  state.source_names.push_back(
      offers.source().empty() ? path : absl::StrCat(path, " (", offers.source(), ")"));
  return absl::OkStatus();
}

absl::Status LoadSkyPilotCsv(const CatalogSources& sources, const std::string& spec,
                             const GpuNameResolver& resolver, LoadState& state) {
  const CsvSource csv = ParseCsvSource(spec);
  if (csv.cloud.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec, ": cannot tell the cloud; use <cloud>=<path>"));
  }
  absl::StatusOr<std::string> text = ReadFile(csv.path);
  if (!text.ok()) return text.status();
  std::optional<GcpMachines> gcp_machines;
  if (csv.cloud == "gcp") {
    absl::StatusOr<GcpMachines> machines = LoadGcpMachines(sources.gcp_machines_path);
    if (!machines.ok()) return machines.status();
    gcp_machines = *std::move(machines);
  }
  const ImportAsOf as_of =
      sources.imports_as_of.known() ? sources.imports_as_of : FileModifiedAsOf(csv.path);
  absl::StatusOr<SkyPilotImport> imported = ImportSkyPilotCsv(
      *text, csv.cloud, csv.path, resolver, gcp_machines ? &*gcp_machines : nullptr, as_of);
  if (!imported.ok()) return imported.status();
  if (absl::Status s = MergeImported(resolver, imported->offers, /*has_spot_prices=*/true,
                                     state.index_by_id, state.snapshot);
      !s.ok()) {
    return s;
  }
  state.source_names.push_back(imported->Report(csv.cloud, csv.path).Summary());
  return absl::OkStatus();
}

// Provider price files: new offers are added, known ids get fresh prices.
absl::Status LoadPriceImport(const CatalogSources& sources, PriceImportSource import,
                             const GpuNameResolver& resolver, LoadState& state) {
  PriceImportContext context{&resolver, sources.continents_path, sources.gcp_families_path,
                             &state.snapshot.offers()};
  if (!import.as_of.known()) import.as_of = sources.imports_as_of;  // else the file's mtime
  absl::StatusOr<ImportedOffers> imported = ImportPriceFile(import, context);
  if (!imported.ok()) return imported.status();
  if (absl::Status s = MergeImported(resolver, imported->offers, imported->has_spot_prices,
                                     state.index_by_id, state.snapshot);
      !s.ok()) {
    return s;
  }
  state.source_names.push_back(imported->report.Summary());
  return absl::OkStatus();
}

// Topology as data: every offer gets its scale-up domain and scale-out
// fabric, and the legacy link/fabric fields follow them.
absl::Status ApplyTopologyFile(const CatalogSources& sources, const GpuNameResolver& resolver,
                               LoadState& state) {
  absl::StatusOr<v1::TopologyRules> rules = LoadTopologyRules(sources.topology_path, resolver);
  if (!rules.ok()) return rules.status();
  absl::flat_hash_map<std::string, const v1::Gpu*> gpu_by_name;
  for (const v1::Gpu& gpu : state.snapshot.gpus()) gpu_by_name.emplace(gpu.name(), &gpu);
  for (Offer& offer : *state.snapshot.mutable_offers()) {
    auto it = gpu_by_name.find(offer.gpu_model());
    if (it != gpu_by_name.end()) ApplyTopology(*rules, *it->second, offer);
  }
  if (!sources.topology_path.empty()) state.source_names.push_back(sources.topology_path);
  return absl::OkStatus();
}

// The loader proper; `gpu_origins` / `offer_origins` receive "path:line" per
// GPU and per offer ("" for offers from CSV and price files).
absl::StatusOr<CatalogSnapshot> Load(const CatalogSources& sources, bool check_whole,
                                     std::vector<std::string>& gpu_origins,
                                     std::vector<std::string>& offer_origins) {
  LoadState state;
  if (absl::Status s = LoadGpus(sources, gpu_origins, state); !s.ok()) return s;
  const GpuNameResolver resolver(state.snapshot.gpus());
  for (const std::string& path : sources.offer_paths) {
    if (absl::Status s = LoadOfferFile(path, resolver, offer_origins, state); !s.ok()) return s;
  }
  for (const std::string& spec : sources.skypilot_csv_paths) {
    if (absl::Status s = LoadSkyPilotCsv(sources, spec, resolver, state); !s.ok()) return s;
  }
  for (const PriceImportSource& import : sources.price_imports) {
    if (absl::Status s = LoadPriceImport(sources, import, resolver, state); !s.ok()) return s;
  }
  std::vector<v1::SourceState> refreshed_states;
  if (absl::Status s = MergeRefreshed(sources.refreshed_offers_path, resolver, state.index_by_id,
                                      state.snapshot, state.source_names, refreshed_states);
      !s.ok()) {
    return s;
  }
  // Where every offer's prices come from, and one state per source.
  for (Offer& offer : *state.snapshot.mutable_offers()) FillPriceProvenance(offer, 0);
  for (v1::SourceState& source : SourceStatesOf(state.snapshot, refreshed_states, 0)) {
    *state.snapshot.add_sources() = std::move(source);
  }
  if (absl::Status s = ApplyTopologyFile(sources, resolver, state); !s.ok()) return s;
  CatalogSnapshot& snapshot = state.snapshot;
  snapshot.set_source(absl::StrJoin(state.source_names, "; "));
  snapshot.set_prices_as_of(state.prices_as_of);
  // Whole-snapshot rules (GPU spellings unique, ...): the same check the
  // serving side runs, so a file that loads here is one Create() accepts.
  // LoadCatalog hashes the content once the guards' warnings are in.
  snapshot.set_loaded_at_unix_seconds(absl::ToUnixSeconds(absl::Now()));
  if (check_whole) {
    absl::StatusOr<std::shared_ptr<const Catalog>> check = Catalog::Create(snapshot);
    if (!check.ok()) return WholeCatalogError(sources, check.status());
  }
  // Offers from CSVs and price files come after the offer files: no line.
  offer_origins.resize(static_cast<size_t>(snapshot.offers_size()));
  return std::move(state.snapshot);
}

}  // namespace

absl::Status WholeCatalogError(const CatalogSources& sources, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(sources.gpus_path, ": ", status.message()));
}

absl::StatusOr<CatalogSnapshot> LoadCatalogSnapshot(const CatalogSources& sources) {
  absl::StatusOr<LoadedCatalog> loaded = LoadCatalog(sources, LoadOptions());
  if (!loaded.ok()) return loaded.status();
  return std::move(loaded->snapshot);
}

absl::StatusOr<LoadedCatalog> LoadCatalog(const CatalogSources& sources,
                                          const LoadOptions& options) {
  std::vector<std::string> gpu_origins, offer_origins;
  absl::StatusOr<CatalogSnapshot> snapshot =
      Load(sources, options.check_whole, gpu_origins, offer_origins);
  if (!snapshot.ok()) return snapshot.status();
  LoadedCatalog result;
  result.snapshot = *std::move(snapshot);
  const GpuNameResolver resolver(result.snapshot.gpus());
  absl::StatusOr<v1::CatalogGuards> guards = LoadCatalogGuards(sources.guards_path, resolver);
  if (!guards.ok()) return guards.status();
  const SnapshotOrigins origins{std::move(gpu_origins), std::move(offer_origins)};
  GuardReport report = CheckCatalogGuards(*guards, result.snapshot, origins, options.current);
  if (!report.errors.empty() && !options.force) {
    constexpr size_t kShown = 50;
    const size_t shown = std::min(report.errors.size(), kShown);
    return absl::InvalidArgumentError(
        absl::StrCat("load guards rejected the catalog (", report.errors.size(),
                     " finding(s); a forced reload accepts it):\n",
                     absl::StrJoin(report.errors.begin(),
                                   report.errors.begin() + static_cast<long>(shown), "\n"),
                     report.errors.size() > shown ? "\n..." : ""));
  }
  for (const std::string& e : report.errors) result.warnings.push_back(absl::StrCat("forced: ", e));
  for (std::string& w : report.warnings) result.warnings.push_back(std::move(w));
  // The warnings are part of the content.
  if (options.content_hash) result.snapshot.set_version(ContentHashInPlace(result.snapshot));
  return result;
}

CatalogSources CatalogSourcesFor(const std::string& data_dir, absl::string_view offer_files,
                                 absl::string_view skypilot_csvs) {
  CatalogSources sources;
  sources.gpus_path = data_dir + "/catalog/gpus.textproto";
  sources.topology_path = data_dir + "/catalog/topology.textproto";
  sources.guards_path = data_dir + "/catalog/guards.textproto";
  sources.offer_paths = absl::StrSplit(offer_files, ',', absl::SkipEmpty());
  if (sources.offer_paths.empty()) sources.offer_paths = {data_dir + "/catalog/offers.textproto"};
  sources.skypilot_csv_paths = absl::StrSplit(skypilot_csvs, ',', absl::SkipEmpty());
  sources.continents_path = data_dir + "/catalog/country_continents.csv";
  sources.gcp_families_path = data_dir + "/catalog/gcp_billing_families.csv";
  sources.gcp_machines_path = data_dir + "/catalog/gcp_machines.csv";
  return sources;
}

}  // namespace gpuadvisor::catalog
