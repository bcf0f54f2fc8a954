#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_IMPORT_REPORT_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_IMPORT_REPORT_H_

// What every price-file importer returns: the offers it built and an account
// of the input rows (an offer-file product, a billing SKU, a marketplace
// offer, a CSV data row): how many were read, how many were kept (used for
// at least one offer) and why the others were rejected. Always
// rows_read == rows_kept + sum(rejected_by_reason).

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"

namespace gpuadvisor::catalog {

struct ImportReport {
  std::string format;  // "vast", "gcp-billing", "aws-price-list", "gpuhunt"
  std::string file;
  int rows_read = 0;
  int rows_kept = 0;
  // Reason -> rows, e.g. "unknown GPU \"RTX A4000\"": 1, "deverified host": 3.
  std::map<std::string, int> rejected_by_reason;

  void Reject(const std::string& reason) { ++rejected_by_reason[reason]; }
  int rows_rejected() const;
  // "vast x.json: read 30, kept 27, rejected 3 (deverified host: 3)".
  std::string Summary() const;
};

struct ImportedOffers {
  std::vector<gpuadvisor::catalog::v1::Offer> offers;  // sorted by id, ids unique
  ImportReport report;
  // False when the format carries no spot prices (AWS offer files): a merge
  // then keeps the spot price the catalog already has.
  bool has_spot_prices = true;
};

// When the caller read an import's file (docs/catalog.md, "Import formats":
// "The date of a dateless file"): the refresher's fetch (or the response's
// Last-Modified when earlier), the catalog's --import_as_of or the file's
// modification time. It dates the prices of the formats that carry no date
// (SkyPilot CSV, gpuhunt, Vast, OCI's list) and of a dated format's file
// that lacks one; a file's own date always wins.
struct ImportAsOf {
  absl::Time time = absl::InfinitePast();  // InfinitePast = not known
  // How the time was taken, added to each offer it dates ("file modified",
  // "--import_as_of"); empty adds nothing (the refresher names its fetch).
  std::string how;
  bool known() const { return time != absl::InfinitePast(); }
};

// Dates every offer its file left without a date (as_of empty and
// priced_at_unix_seconds 0): as_of the UTC date of `as_of.time`,
// priced_at_unix_seconds the time itself, and "; priced as of <UTC time>
// (<how>)" appended to its source when `how` is set. A spot price the offer
// carries is dated with it (it has no date of its own). Nothing when the
// time is not known.
void DateUndatedOffers(const ImportAsOf& as_of,
                       std::vector<gpuadvisor::catalog::v1::Offer>& offers);

// Sorts offers by id (the importers' output order).
void SortById(std::vector<gpuadvisor::catalog::v1::Offer>& offers);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_IMPORT_REPORT_H_
