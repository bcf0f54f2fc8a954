#include "services/catalog/import/gcp_machines.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/io/text_proto.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/catalog/import/csv.h"

namespace gpuadvisor::catalog {
namespace {

std::string AttachedKey(absl::string_view accelerator, int gpus) {
  return absl::StrCat(GpuNameResolver::Key(accelerator), "|", gpus);
}

}  // namespace

const GcpMachines::Accelerators* GcpMachines::BuiltIn(absl::string_view machine_type) const {
  auto it = built_in.find(machine_type);
  return it == built_in.end() ? nullptr : &it->second;
}

const std::string* GcpMachines::AttachedHost(absl::string_view accelerator, int gpus) const {
  auto it = attached_host.find(AttachedKey(accelerator, gpus));
  return it == attached_host.end() ? nullptr : &it->second;
}

bool GcpMachines::Attachable(absl::string_view accelerator) const {
  const std::string prefix = absl::StrCat(GpuNameResolver::Key(accelerator), "|");
  for (const auto& [key, host] : attached_host) {
    if (absl::StartsWith(key, prefix)) return true;
  }
  return false;
}

absl::StatusOr<GcpMachines> ParseGcpMachines(absl::string_view text, absl::string_view file_name) {
  absl::StatusOr<std::vector<CsvRecord>> records = ParseCsv(BlankCommentLines(text), file_name);
  if (!records.ok()) return records.status();
  if (records->empty()) return absl::InvalidArgumentError(absl::StrCat(file_name, ": empty"));
  const CsvHeader header(records->front());
  for (const char* column : {"machine_type", "accelerator", "gpus", "kind", "source"}) {
    if (!header.Find(column)) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_name, ":", records->front().line, ": missing column \"", column, "\""));
    }
  }
  GcpMachines machines;
  for (size_t r = 1; r < records->size(); ++r) {
    const CsvRecord& record = (*records)[r];
    auto fail = [&](absl::string_view column, absl::string_view problem) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_name, ":", record.line, ": ", column, ": ", problem));
    };
    auto cell = [&](absl::string_view column) {
      return std::string(absl::StripAsciiWhitespace(header.Cell(record, column)));
    };
    for (const char* column : {"machine_type", "accelerator", "gpus", "kind", "source"}) {
      if (cell(column).empty()) return fail(column, "must be set");
    }
    const std::string machine = cell("machine_type"), accelerator = cell("accelerator"),
                      kind = cell("kind");
    int gpus = 0;
    if (!absl::SimpleAtoi(cell("gpus"), &gpus) || gpus <= 0) {
      return fail("gpus", absl::StrCat("must be a positive integer, got \"", cell("gpus"), "\""));
    }
    if (kind == "built_in") {
      if (!machines.built_in.emplace(machine, GcpMachines::Accelerators{accelerator, gpus})
               .second) {
        return fail("machine_type", absl::StrCat("\"", machine, "\" listed twice"));
      }
    } else if (kind == "attached") {
      if (!machines.attached_host.emplace(AttachedKey(accelerator, gpus), machine).second) {
        return fail("accelerator", absl::StrCat(accelerator, " x", gpus, " attached to two hosts"));
      }
    } else {
      return fail("kind", absl::StrCat("must be built_in or attached, got \"", kind, "\""));
    }
  }
  return machines;
}

absl::StatusOr<GcpMachines> LoadGcpMachines(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseGcpMachines(*text, path);
}

}  // namespace gpuadvisor::catalog
