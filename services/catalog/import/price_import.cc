#include "services/catalog/import/price_import.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/io/text_proto.h"
#include "services/catalog/import/vast_import.h"

namespace gpuadvisor::catalog {

absl::StatusOr<ImportedOffers> ImportPriceFile(const PriceImportSource& source,
                                               const PriceImportContext& context) {
  absl::StatusOr<std::string> text = ReadFile(source.path);
  if (!text.ok()) return text.status();
  if (source.format == "vast") {
    VastImportOptions options;
    if (!context.continents_path.empty()) {
      absl::StatusOr<std::string> table = ReadFile(context.continents_path);
      if (!table.ok()) return table.status();
      absl::StatusOr<ContinentTable> continents =
          ParseContinentTable(*table, context.continents_path);
      if (!continents.ok()) return continents.status();
      options.continents = *std::move(continents);
    }
    return ImportVastOffers(*text, source.path, *context.gpus, options);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(source.path, ": unknown import format \"", source.format, "\""));
}

std::vector<PriceImportSource> PriceImportSources(absl::string_view format,
                                                  absl::string_view comma_separated_paths) {
  std::vector<PriceImportSource> out;
  for (absl::string_view path : absl::StrSplit(comma_separated_paths, ',', absl::SkipEmpty())) {
    out.push_back({std::string(format), std::string(path)});
  }
  return out;
}

}  // namespace gpuadvisor::catalog
