#include "services/catalog/import/price_import.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/io/text_proto.h"
#include "services/catalog/import/aws_price_list_import.h"
#include "services/catalog/import/azure_retail_import.h"
#include "services/catalog/import/gcp_billing_import.h"
#include "services/catalog/import/gpuhunt_import.h"
#include "services/catalog/import/oci_price_list_import.h"
#include "services/catalog/import/vast_import.h"

namespace gpuadvisor::catalog {

namespace {

// The importer of `source.format`.
absl::StatusOr<ImportedOffers> ImportByFormat(const PriceImportSource& source,
                                              const std::string& text,
                                              const PriceImportContext& context) {
  if (context.gpus == nullptr || context.known_offers == nullptr) {
    return absl::InvalidArgumentError("ImportPriceFile: context.gpus and known_offers must be set");
  }
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
    return ImportVastOffers(text, source.path, *context.gpus, options);
  }
  if (source.format == "gcp-billing") {
    absl::StatusOr<std::string> table = ReadFile(context.gcp_families_path);
    if (!table.ok()) return table.status();
    absl::StatusOr<std::vector<GcpSkuFamily>> families =
        ParseGcpSkuFamilies(*table, context.gcp_families_path);
    if (!families.ok()) return families.status();
    return ImportGcpBillingSkus(text, source.path, *families, *context.known_offers);
  }
  if (source.format == "aws-price-list") {
    return ImportAwsPriceList(text, source.path, *context.known_offers);
  }
  if (source.format == "azure-retail") {
    return ImportAzureRetailPrices(text, source.path, *context.known_offers);
  }
  if (source.format == "oci-price-list") {
    return ImportOciPriceList(text, source.path, *context.known_offers);
  }
  if (source.format == "gpuhunt") {
    return ImportGpuhuntCsv(text, source.provider, source.path, *context.gpus);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(source.path, ": unknown import format \"", source.format, "\""));
}

}  // namespace

absl::StatusOr<ImportedOffers> ImportPriceFile(const PriceImportSource& source,
                                               const PriceImportContext& context) {
  if (context.gpus == nullptr || context.known_offers == nullptr) {
    return absl::InvalidArgumentError("ImportPriceFile: context.gpus and known_offers must be set");
  }
  absl::StatusOr<std::string> text = ReadFile(source.path);
  if (!text.ok()) return text.status();
  if (source.as_of.known()) return ImportPriceText(source, *text, context);
  PriceImportSource dated = source;
  dated.as_of = FileModifiedAsOf(source.path);
  return ImportPriceText(dated, *text, context);
}

ImportAsOf FileModifiedAsOf(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return {};
  return {absl::FromUnixSeconds(info.st_mtime), "file modified"};
}

absl::StatusOr<ImportedOffers> ImportPriceText(const PriceImportSource& source,
                                               const std::string& text,
                                               const PriceImportContext& context) {
  absl::StatusOr<ImportedOffers> imported = ImportByFormat(source, text, context);
  if (imported.ok()) DateUndatedOffers(source.as_of, imported->offers);
  return imported;
}

std::vector<PriceImportSource> PriceImportSources(absl::string_view format,
                                                  absl::string_view comma_separated_paths) {
  std::vector<PriceImportSource> out;
  for (absl::string_view spec : absl::StrSplit(comma_separated_paths, ',', absl::SkipEmpty())) {
    PriceImportSource source{std::string(format), std::string(spec), "", {}};
    if (format == "gpuhunt") {
      // "<provider>=<path>", else the base name without ".csv".
      const size_t eq = spec.find('=');
      if (eq != absl::string_view::npos &&
          spec.substr(0, eq).find('/') == absl::string_view::npos) {
        source.provider = std::string(spec.substr(0, eq));
        source.path = std::string(spec.substr(eq + 1));
      } else {
        absl::string_view base = spec.substr(spec.find_last_of('/') + 1);
        absl::ConsumeSuffix(&base, ".csv");
        source.provider = std::string(base);
      }
    }
    out.push_back(std::move(source));
  }
  return out;
}

}  // namespace gpuadvisor::catalog
