#include "services/catalog/skypilot_import.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "services/catalog/import/python_literal.h"
#include "services/catalog/import/spot_statistics.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::LinkType;
using ::gpuadvisor::catalog::v1::Offer;

constexpr double kMiB = 1024.0 * 1024.0;

absl::Status RowError(absl::string_view file, int line, absl::string_view field,
                      absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ": ", field, ": ", problem));
}

struct GpuInfo {
  std::string name;
  double size = 0;  // MemoryInfo.SizeInMiB as written (unit depends on the cloud)
};

// nullopt for an empty or non-dict cell.
absl::StatusOr<std::optional<GpuInfo>> ParseGpuInfo(absl::string_view cell) {
  cell = absl::StripAsciiWhitespace(cell);
  if (cell.empty() || cell.front() != '{') return std::optional<GpuInfo>();
  absl::StatusOr<PyValue> root = ParsePythonLiteral(cell);
  if (!root.ok()) return root.status();
  GpuInfo info;
  const PyValue* gpus = root->Get("Gpus");
  if (gpus != nullptr && gpus->kind == PyValue::Kind::kList && !gpus->items.empty()) {
    const PyValue& first = gpus->items.front();
    if (const PyValue* name = first.Get("Name"); name && name->kind == PyValue::Kind::kString) {
      info.name = name->str;
    }
    if (const PyValue* memory = first.Get("MemoryInfo")) {
      if (const PyValue* size = memory->Get("SizeInMiB");
          size && size->kind == PyValue::Kind::kNumber && std::isfinite(size->number) &&
          size->number > 0) {
        info.size = size->number;
      }
    }
  }
  return std::optional<GpuInfo>(std::move(info));
}

enum class MemoryUnit { kMiBPerGpu, kMiBAllGpus, kGBPerGpu };

MemoryUnit MemoryUnitOf(absl::string_view cloud) {
  if (absl::EqualsIgnoreCase(cloud, "vast")) return MemoryUnit::kMiBAllGpus;
  if (absl::EqualsIgnoreCase(cloud, "shadeform") || absl::EqualsIgnoreCase(cloud, "runpod")) {
    return MemoryUnit::kGBPerGpu;
  }
  return MemoryUnit::kMiBPerGpu;
}

int64_t PerGpuBytes(const GpuInfo& info, double count, absl::string_view cloud) {
  if (info.size <= 0) return 0;
  switch (MemoryUnitOf(cloud)) {
    case MemoryUnit::kMiBAllGpus:
      return count > 0 ? static_cast<int64_t>(info.size * kMiB / count) : 0;
    case MemoryUnit::kGBPerGpu:
      return static_cast<int64_t>(info.size * 1e9);
    case MemoryUnit::kMiBPerGpu:
      break;
  }
  return static_cast<int64_t>(info.size * kMiB);
}

// ---------------------------------------------------------------------------
// Choosing the variant and describing the node.

enum class Form { kNone, kSxm, kPcie, kNvl };

// Form factor named in free text: "PCIe", "NVL" (not "NVLink"), "SXM".
Form FormHint(absl::string_view text) {
  const std::string upper = absl::AsciiStrToUpper(text);
  for (size_t at = upper.find("NVL"); at != std::string::npos; at = upper.find("NVL", at + 1)) {
    if (upper.compare(at, 6, "NVLINK") != 0) return Form::kNvl;
  }
  if (absl::StrContains(upper, "PCIE")) return Form::kPcie;
  if (absl::StrContains(upper, "SXM")) return Form::kSxm;
  return Form::kNone;
}

Form FormOfCanonical(absl::string_view name) {
  const std::string upper = absl::AsciiStrToUpper(name);
  if (absl::StrContains(upper, "PCIE")) return Form::kPcie;
  if (absl::EndsWith(upper, "-NVL")) return Form::kNvl;
  return Form::kSxm;
}

double RelativeError(int64_t expected, int64_t observed) {
  if (expected <= 0 || observed <= 0) return 1e9;
  return std::abs(static_cast<double>(observed - expected)) / static_cast<double>(expected);
}

// Picks among the variants of `canonical`'s family: first those whose memory
// is within 15% of the observed per-GPU memory (GiB-vs-GB and usable-memory
// differences stay below that), then those of the hinted form factor; keeps
// `canonical` if it survives, else the closest in memory.
std::string RefineVariant(const GpuNameResolver& gpus, const std::string& canonical,
                          int64_t memory_per_gpu, absl::string_view hints) {
  std::vector<const GpuNameResolver::Facts*> candidates = gpus.Variants(canonical);
  if (candidates.size() <= 1) return canonical;
  auto narrow = [&candidates](auto keep) {
    std::vector<const GpuNameResolver::Facts*> kept;
    for (const auto* c : candidates) {
      if (keep(*c)) kept.push_back(c);
    }
    if (!kept.empty()) candidates = std::move(kept);
  };
  if (memory_per_gpu > 0) {
    narrow([&](const GpuNameResolver::Facts& f) {
      return RelativeError(f.memory_bytes, memory_per_gpu) <= 0.15;
    });
  }
  if (const Form hint = FormHint(hints); hint != Form::kNone) {
    narrow([&](const GpuNameResolver::Facts& f) { return FormOfCanonical(f.name) == hint; });
  }
  const GpuNameResolver::Facts* best = candidates.front();
  for (const auto* c : candidates) {
    if (c->name == canonical) return canonical;
    if (RelativeError(c->memory_bytes, memory_per_gpu) <
        RelativeError(best->memory_bytes, memory_per_gpu)) {
      best = c;
    }
  }
  return best->name;
}

void SetLink(const GpuNameResolver::Facts& gpu, int count, absl::string_view hints, Offer& offer) {
  if (count <= 1) {
    offer.set_link(v1::LINK_TYPE_NONE);
    return;
  }
  const bool says_nvlink = absl::StrContains(absl::AsciiStrToUpper(hints), "NVLINK");
  if (absl::EqualsIgnoreCase(gpu.vendor, "AMD") && gpu.nvlink_bytes_per_second > 0) {
    offer.set_link(v1::LINK_TYPE_INFINITY_FABRIC);
    offer.set_link_bytes_per_second(gpu.nvlink_bytes_per_second);
  } else if (says_nvlink ||
             (gpu.memory_type == v1::MEMORY_TYPE_HBM && gpu.nvlink_bytes_per_second > 0 &&
              FormOfCanonical(gpu.name) == Form::kSxm &&
              absl::EqualsIgnoreCase(gpu.vendor, "NVIDIA"))) {
    offer.set_link(v1::LINK_TYPE_NVLINK);
    offer.set_link_bytes_per_second(gpu.nvlink_bytes_per_second);
  } else {
    offer.set_link(v1::LINK_TYPE_PCIE);
    offer.set_link_bytes_per_second(gpu.pcie_bytes_per_second);
  }
}

// ---------------------------------------------------------------------------
// Rows.

struct Row {
  int line = 0;
  std::string instance_type;
  std::string accelerator;
  double count = 0;
  double vcpus = 0;
  double memory_gib = 0;
  std::string gpu_info;
  double price = 0;
  double spot = 0;
  std::string region;
  std::string zone;
  double hosting_type = 0;  // Vast's HostingType column (newer catalogs); 0 = absent
};

// docs/catalog.md, "Host tier and reliability": Vast hosts are community
// unless HostingType >= 1; RunPod *_SECURE types are Secure Cloud
// (datacenter), the others Community Cloud; other clouds' own hosts unset.
v1::HostTier HostTierOf(absl::string_view cloud, absl::string_view instance_type,
                        double hosting_type) {
  if (absl::EqualsIgnoreCase(cloud, "vast")) {
    return hosting_type >= 1 ? v1::HOST_TIER_DATACENTER : v1::HOST_TIER_COMMUNITY;
  }
  if (absl::EqualsIgnoreCase(cloud, "runpod")) {
    return absl::EndsWithIgnoreCase(instance_type, "_SECURE") ? v1::HOST_TIER_DATACENTER
                                                              : v1::HOST_TIER_COMMUNITY;
  }
  return v1::HOST_TIER_UNSPECIFIED;
}

// A priced GPU machine before merging zones: a complete row, or a GCP host
// row plus an accelerator row.
struct Candidate {
  const Row* row;   // carries accelerator, count, GpuInfo, region, zone
  const Row* host;  // GCP host row, or nullptr
  std::string instance_type;
  double vcpus;
  double memory_gib;
  double price;
  double spot;
};

absl::StatusOr<double> ParseNumber(absl::string_view cell, absl::string_view file, int line,
                                   absl::string_view column) {
  cell = absl::StripAsciiWhitespace(cell);
  if (cell.empty()) return 0.0;
  double value = 0;
  if (!absl::SimpleAtod(cell, &value) || !std::isfinite(value)) {
    return RowError(file, line, column,
                    absl::StrCat("not a number: \"", absl::CEscape(cell), "\""));
  }
  if (value < 0) return RowError(file, line, column, absl::StrCat("negative: ", cell));
  return value;
}

// Pairs GCP host and accelerator rows of one zone; marks used rows.
std::vector<Candidate> PairGcpRows(const std::vector<Row>& rows, const GcpMachines& machines,
                                   std::vector<char>& paired,
                                   std::vector<std::string>& unpaired_reason) {
  std::vector<Candidate> out;
  auto zone_of = [](const Row& r) { return r.zone.empty() ? r.region : r.zone; };
  // (zone, accelerator key, count) -> accelerator row; (zone, machine) -> host row.
  absl::flat_hash_map<std::string, size_t> accelerators;
  absl::flat_hash_map<std::string, size_t> hosts;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.instance_type.empty() && !r.accelerator.empty()) {
      accelerators.emplace(
          absl::StrCat(zone_of(r), "|", GpuNameResolver::Key(r.accelerator), "|", r.count), i);
    } else if (!r.instance_type.empty() && r.accelerator.empty()) {
      hosts.emplace(absl::StrCat(zone_of(r), "|", r.instance_type), i);
    }
  }
  auto add = [&](size_t host, size_t accelerator, std::string instance_type) {
    const Row& h = rows[host];
    const Row& a = rows[accelerator];
    const double spot = (h.spot > 0 || h.price == 0) && a.spot > 0 ? h.spot + a.spot : 0;
    out.push_back(Candidate{&a, &h, std::move(instance_type), h.vcpus, h.memory_gib,
                            h.price + a.price, spot});
    paired[host] = paired[accelerator] = 1;
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.instance_type.empty() || !r.accelerator.empty()) continue;
    const GcpMachines::Accelerators* pairing = machines.BuiltIn(r.instance_type);
    if (pairing == nullptr) continue;
    auto it =
        accelerators.find(absl::StrCat(zone_of(r), "|", GpuNameResolver::Key(pairing->accelerator),
                                       "|", static_cast<double>(pairing->gpus)));
    if (it == accelerators.end()) {
      unpaired_reason[i] = absl::StrCat("gcp: no accelerator row for ", r.instance_type);
      continue;
    }
    add(i, it->second, r.instance_type);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (!r.instance_type.empty() || r.accelerator.empty() || !machines.Attachable(r.accelerator)) {
      continue;
    }
    const int count = static_cast<int>(r.count);
    const std::string* host = machines.AttachedHost(r.accelerator, count);
    if (host == nullptr) {
      unpaired_reason[i] = absl::StrCat("gcp: no n1 host listed for ", r.accelerator, " x", count);
      continue;
    }
    const std::string& machine = *host;
    auto it = hosts.find(absl::StrCat(zone_of(r), "|", machine));
    if (it == hosts.end()) {
      unpaired_reason[i] = absl::StrCat("gcp: no host row for ", r.accelerator, " x", count);
      continue;
    }
    add(it->second, i, absl::StrCat(machine, "+", r.accelerator, "x", count));
  }
  return out;
}

}  // namespace

absl::StatusOr<int64_t> SkyPilotGpuMemoryPerGpuBytes(absl::string_view gpu_info,
                                                     double accelerator_count,
                                                     absl::string_view cloud) {
  absl::StatusOr<std::optional<GpuInfo>> info = ParseGpuInfo(gpu_info);
  if (!info.ok()) return info.status();
  if (!info->has_value()) return 0;
  return PerGpuBytes(**info, accelerator_count, cloud);
}

namespace {

// The columns of a vms.csv header.
struct Columns {
  size_t type, name, count, price, region;
  std::optional<size_t> vcpus, memory, info, spot, zone, hosting;
};

absl::StatusOr<Columns> ReadHeader(const CsvRecord& header, absl::string_view file_name) {
  absl::flat_hash_map<std::string, size_t> column;
  for (size_t c = 0; c < header.fields.size(); ++c) {
    column.emplace(absl::StripAsciiWhitespace(header.fields[c]), c);
  }
  for (const char* required :
       {"InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region"}) {
    if (!column.contains(required)) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_name, ":", header.line, ": missing column \"", required, "\""));
    }
  }
  auto index_of = [&](const char* name) -> std::optional<size_t> {
    return column.contains(name) ? std::optional<size_t>(column[name]) : std::nullopt;
  };
  return Columns{column["InstanceType"],     column["AcceleratorName"],
                 column["AcceleratorCount"], column["Price"],
                 column["Region"],           index_of("vCPUs"),
                 index_of("MemoryGiB"),      index_of("GpuInfo"),
                 index_of("SpotPrice"),      index_of("AvailabilityZone"),
                 index_of("HostingType")};
}

absl::StatusOr<Row> ReadRow(const CsvRecord& record, const Columns& col,
                            absl::string_view file_name) {
  Row row;
  row.line = record.line;
  const auto& f = record.fields;
  row.instance_type = std::string(absl::StripAsciiWhitespace(f[col.type]));
  row.accelerator = std::string(absl::StripAsciiWhitespace(f[col.name]));
  row.region = CleanRegion(f[col.region]);
  if (col.zone) row.zone = f[*col.zone];
  if (col.info) row.gpu_info = f[*col.info];
  if (col.hosting &&
      !absl::SimpleAtod(absl::StripAsciiWhitespace(f[*col.hosting]), &row.hosting_type)) {
    row.hosting_type = 0;
  }
  struct {
    std::optional<size_t> col;
    const char* name;
    double* out;
  } numbers[] = {{col.count, "AcceleratorCount", &row.count},
                 {col.price, "Price", &row.price},
                 {col.spot, "SpotPrice", &row.spot},
                 {col.vcpus, "vCPUs", &row.vcpus},
                 {col.memory, "MemoryGiB", &row.memory_gib}};
  for (const auto& number : numbers) {
    if (!number.col) continue;
    absl::StatusOr<double> value = ParseNumber(f[*number.col], file_name, row.line, number.name);
    if (!value.ok()) return value.status();
    *number.out = *value;
  }
  return row;
}

// Every data row of a vms.csv; a malformed file is an error.
absl::StatusOr<std::vector<Row>> ReadRows(absl::string_view csv, absl::string_view file_name) {
  absl::StatusOr<std::vector<CsvRecord>> records = ParseCsv(csv, file_name);
  if (!records.ok()) return records.status();
  if (records->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ":1: empty file, no header"));
  }
  const CsvRecord& header = records->front();
  absl::StatusOr<Columns> columns = ReadHeader(header, file_name);
  if (!columns.ok()) return columns.status();
  std::vector<Row> rows;
  rows.reserve(records->size() - 1);
  for (size_t r = 1; r < records->size(); ++r) {
    const CsvRecord& record = (*records)[r];
    if (record.fields.size() != header.fields.size()) {
      return absl::InvalidArgumentError(absl::StrCat(file_name, ":", record.line, ": expected ",
                                                     header.fields.size(), " fields, got ",
                                                     record.fields.size()));
    }
    absl::StatusOr<Row> row = ReadRow(record, *columns, file_name);
    if (!row.ok()) return row.status();
    rows.push_back(*std::move(row));
  }
  return rows;
}

// Which rows price a GPU machine on their own, and the GCP pairs; `reason`
// receives why a row is not one.
absl::StatusOr<std::vector<Candidate>> SelectCandidates(const std::vector<Row>& rows,
                                                        absl::string_view cloud,
                                                        absl::string_view file_name,
                                                        const GpuNameResolver& gpus,
                                                        const GcpMachines* gcp_machines,
                                                        std::vector<std::string>& reason) {
  std::vector<char> paired(rows.size(), 0);
  std::vector<Candidate> candidates;
  const bool gcp = absl::EqualsIgnoreCase(cloud, "gcp");
  if (gcp) {
    if (gcp_machines == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          file_name, ": a GCP catalog needs the machine table (data/catalog/gcp_machines.csv)"));
    }
    candidates = PairGcpRows(rows, *gcp_machines, paired, reason);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    if (paired[i]) continue;
    if (row.accelerator.empty() || row.count == 0) {
      if (reason[i].empty()) reason[i] = "no accelerator";
      continue;
    }
    if (gcp && row.instance_type.empty()) {
      // An accelerator row no host took.
      if (reason[i].empty()) {
        reason[i] = gpus.Canonical(row.accelerator)
                        ? absl::StrCat("gcp: no host row for ", row.accelerator)
                        : absl::StrCat("unknown GPU \"", row.accelerator, "\"");
      }
      continue;
    }
    candidates.push_back(Candidate{&row, nullptr, row.instance_type, row.vcpus, row.memory_gib,
                                   row.price, row.spot});
  }
  return candidates;
}

// Candidates -> offers, merged per (instance type, region).
struct OfferBuilder {
  absl::Status Add(const Candidate& c, SkyPilotImport& result);
  // Spot statistics over the zones, the rows' account, the order.
  void Finish(SkyPilotImport& result);
  size_t IndexOf(const Row* row) const { return static_cast<size_t>(row - rows_.data()); }
  void Skip(const Candidate& c, const std::string& why) {
    for (const Row* row : {c.row, c.host}) {
      if (row != nullptr && reason_[IndexOf(row)].empty()) reason_[IndexOf(row)] = why;
    }
  }
  void MarkProduced(const Candidate& c) {
    produced_[IndexOf(c.row)] = 1;
    if (c.host != nullptr) produced_[IndexOf(c.host)] = 1;
  }
  Offer NewOffer(const Candidate& c, const std::string& id, const std::string& model,
                 const std::string& hints) const;

  const std::vector<Row>& rows_;
  const absl::string_view cloud_, file_name_;
  const GpuNameResolver& gpus_;
  std::vector<std::string>& reason_;
  std::vector<char> produced_ = std::vector<char>(rows_.size(), 0);
  absl::flat_hash_map<std::string, size_t> offer_index_ = {};  // id -> result.offers index
  std::vector<std::vector<double>> zone_spots_ = {};           // per result.offers index
};

Offer OfferBuilder::NewOffer(const Candidate& c, const std::string& id, const std::string& model,
                             const std::string& hints) const {
  const Row& row = *c.row;
  const int count = static_cast<int>(row.count);
  Offer offer;
  offer.set_id(id);
  offer.set_provider(std::string(cloud_));
  offer.set_instance_type(c.instance_type);
  offer.set_region(row.region);
  offer.set_gpu_model(model);
  offer.set_gpus_per_node(count);
  offer.set_nodes(1);
  if (!absl::EqualsIgnoreCase(cloud_, "vast")) {  // Vast's vCPUs/MemoryGiB are fixed placeholders
    offer.set_vcpus(static_cast<int32_t>(c.vcpus));
    offer.set_ram_bytes(static_cast<int64_t>(c.memory_gib * 1024 * kMiB));
  }
  if (const GpuNameResolver::Facts* facts = gpus_.FactsOf(model)) {
    SetLink(*facts, count, hints, offer);
  }
  // The inter-node fabric is data (data/catalog/topology.textproto), applied
  // when the catalog loads: a bare import is single node.
  offer.set_max_nodes(1);
  offer.set_host_tier(HostTierOf(cloud_, c.instance_type, row.hosting_type));
  offer.set_on_demand_usd_per_hour(c.price);
  offer.set_source(absl::StrCat("skypilot:", file_name_, ":", row.line));
  return offer;
}

absl::Status OfferBuilder::Add(const Candidate& c, SkyPilotImport& result) {
  const Row& row = *c.row;
  if (row.count != std::floor(row.count)) {
    Skip(c, "fractional GPU count");
    return absl::OkStatus();
  }
  std::optional<std::string> canonical = gpus_.Canonical(row.accelerator);
  if (!canonical) {
    Skip(c, absl::StrCat("unknown GPU \"", row.accelerator, "\""));
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<GpuInfo>> info = ParseGpuInfo(row.gpu_info);
  if (!info.ok()) return RowError(file_name_, row.line, "GpuInfo", info.status().message());
  const int64_t memory_per_gpu = info->has_value() ? PerGpuBytes(**info, row.count, cloud_) : 0;
  const std::string hints = absl::StrCat(c.instance_type, " ", row.accelerator, " ",
                                         info->has_value() ? (*info)->name : "");
  const std::string model = RefineVariant(gpus_, *canonical, memory_per_gpu, hints);
  double spot = c.spot;
  if (absl::EqualsIgnoreCase(cloud_, "runpod") && spot == c.price) {
    spot = 0;  // RunPod copies on-demand into SpotPrice
  }
  if (c.price <= 0 && spot <= 0) {
    Skip(c, "no price");
    return absl::OkStatus();
  }
  const std::string id = absl::StrCat(cloud_, "/", c.instance_type, "/", row.region);
  auto [it, inserted] = offer_index_.emplace(id, result.offers.size());
  MarkProduced(c);
  if (!inserted) {
    // Another zone of the same type and region: the on-demand price is the
    // region's (the lowest, should zones differ); spot is a statistic over
    // the zones (Finish).
    Offer& offer = result.offers[it->second];
    auto lowest = [](double a, double b) { return a <= 0 ? b : b <= 0 ? a : std::min(a, b); };
    offer.set_on_demand_usd_per_hour(lowest(offer.on_demand_usd_per_hour(), c.price));
    zone_spots_[it->second].push_back(spot);
    return absl::OkStatus();
  }
  zone_spots_.push_back({spot});
  result.offers.push_back(NewOffer(c, id, model, hints));
  return absl::OkStatus();
}

void OfferBuilder::Finish(SkyPilotImport& result) {
  for (size_t o = 0; o < result.offers.size(); ++o) {
    SetSpotStatistics(std::move(zone_spots_[o]), result.offers[o]);
  }
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (produced_[i]) continue;
    ++result.skipped_rows;
    ++result.skipped_by_reason[reason_[i].empty() ? "unpriced" : reason_[i]];
  }
  std::sort(result.offers.begin(), result.offers.end(),
            [](const Offer& a, const Offer& b) { return a.id() < b.id(); });
}

}  // namespace

absl::StatusOr<SkyPilotImport> ImportSkyPilotCsv(absl::string_view csv, absl::string_view cloud,
                                                 absl::string_view file_name,
                                                 const GpuNameResolver& gpus,
                                                 const GcpMachines* gcp_machines,
                                                 const ImportAsOf& as_of) {
  absl::StatusOr<std::vector<Row>> rows = ReadRows(csv, file_name);
  if (!rows.ok()) return rows.status();
  SkyPilotImport result;
  result.rows = static_cast<int>(rows->size());
  std::vector<std::string> reason(rows->size());
  absl::StatusOr<std::vector<Candidate>> candidates =
      SelectCandidates(*rows, cloud, file_name, gpus, gcp_machines, reason);
  if (!candidates.ok()) return candidates.status();
  OfferBuilder builder{*rows, cloud, file_name, gpus, reason};
  for (const Candidate& c : *candidates) {
    if (absl::Status s = builder.Add(c, result); !s.ok()) return s;
  }
  builder.Finish(result);
  DateUndatedOffers(as_of, result.offers);  // the CSV has no price date
  return result;
}

std::string RefineGpuVariant(const GpuNameResolver& gpus, const std::string& canonical,
                             int64_t memory_per_gpu_bytes, absl::string_view hints) {
  return RefineVariant(gpus, canonical, memory_per_gpu_bytes, hints);
}

void SetIntraNodeLink(const GpuNameResolver::Facts& gpu, int gpus_per_node, absl::string_view hints,
                      Offer& offer) {
  SetLink(gpu, gpus_per_node, hints, offer);
}

std::string CleanRegion(absl::string_view region) {
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(region, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (!part.empty()) parts.push_back(part);
  }
  return absl::StrJoin(parts, ", ");
}

ImportReport SkyPilotImport::Report(absl::string_view cloud, absl::string_view file) const {
  ImportReport report;
  report.format = absl::StrCat("skypilot ", cloud);
  report.file = std::string(file);
  report.rows_read = rows;
  report.rows_kept = rows - skipped_rows;
  report.rejected_by_reason = skipped_by_reason;
  return report;
}

}  // namespace gpuadvisor::catalog
