#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_CSV_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_CSV_H_

// An RFC 4180 CSV reader for the catalog importers (SkyPilot, gpuhunt) and a
// header index that finds columns by name.
//
// Accepted: quoted fields with commas, doubled quotes and line breaks; CRLF,
// LF or lone CR line ends; a UTF-8 byte-order mark (dropped); UTF-8 text kept
// as is. Blank lines are skipped. Pure functions; thread-safe.

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuadvisor::catalog {

// One parsed CSV record: the 1-based line it starts on and its fields.
struct CsvRecord {
  int line = 0;
  std::vector<std::string> fields;
};

// Splits `text` into records. kInvalidArgument "<file_name>:<line>: ..." for
// an unterminated quoted field or text after a closing quote.
absl::StatusOr<std::vector<CsvRecord>> ParseCsv(absl::string_view text,
                                                absl::string_view file_name);

// `text` with every line whose first non-blank character is '#' emptied
// (line numbers are kept), for the commented CSV files under data/.
std::string BlankCommentLines(absl::string_view text);

// Column positions of a header record, by name (surrounding spaces ignored).
class CsvHeader {
 public:
  explicit CsvHeader(const CsvRecord& header);

  // The column's index, or nullopt when the header lacks it.
  std::optional<size_t> Find(absl::string_view name) const;
  // The cell of `record` in column `name`; "" when the column is absent or the
  // record is shorter than the header (older files with fewer trailing columns).
  absl::string_view Cell(const CsvRecord& record, absl::string_view name) const;
  size_t size() const { return size_; }

 private:
  absl::flat_hash_map<std::string, size_t> index_;
  size_t size_ = 0;
};

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_CSV_H_
