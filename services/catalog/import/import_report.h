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

// Sorts offers by id (the importers' output order).
void SortById(std::vector<gpuadvisor::catalog::v1::Offer>& offers);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_IMPORT_REPORT_H_
