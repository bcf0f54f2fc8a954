#include "services/catalog/import/csv.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpuadvisor::catalog {

absl::StatusOr<std::vector<CsvRecord>> ParseCsv(absl::string_view text,
                                                absl::string_view file_name) {
  absl::ConsumePrefix(&text, "\xEF\xBB\xBF");
  std::vector<CsvRecord> records;
  const size_t n = text.size();
  size_t i = 0;
  int line = 1;
  while (i < n) {
    CsvRecord record;
    record.line = line;
    std::string field;
    bool quoted = false;     // the current field started with a quote
    bool in_quotes = false;  // inside the quotes
    bool blank = true;
    while (true) {
      if (i >= n) {
        if (in_quotes) {
          return absl::InvalidArgumentError(
              absl::StrCat(file_name, ":", record.line, ": unterminated quoted field"));
        }
        record.fields.push_back(std::move(field));
        break;
      }
      const char c = text[i];
      if (in_quotes) {
        if (c == '"') {
          if (i + 1 < n && text[i + 1] == '"') {
            field.push_back('"');
            i += 2;
          } else {
            in_quotes = false;
            ++i;
          }
          continue;
        }
        if (c == '\n' || (c == '\r' && !(i + 1 < n && text[i + 1] == '\n'))) ++line;
        field.push_back(c);
        ++i;
        continue;
      }
      if (c == ',') {
        record.fields.push_back(std::move(field));
        field.clear();
        quoted = false;
        blank = false;
        ++i;
      } else if (c == '\r' || c == '\n') {
        record.fields.push_back(std::move(field));
        i += (c == '\r' && i + 1 < n && text[i + 1] == '\n') ? 2 : 1;
        ++line;
        break;
      } else if (quoted) {
        return absl::InvalidArgumentError(absl::StrCat(file_name, ":", line,
                                                       ": text after the closing quote of field ",
                                                       record.fields.size() + 1));
      } else if (c == '"' && field.empty()) {
        quoted = in_quotes = true;
        blank = false;
        ++i;
      } else {
        field.push_back(c);
        blank = false;
        ++i;
      }
    }
    if (blank && record.fields.size() == 1 && record.fields[0].empty()) continue;
    records.push_back(std::move(record));
  }
  return records;
}

std::string BlankCommentLines(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "#")) {
      absl::StrAppend(&out, line);
    }
    out.push_back('\n');
  }
  return out;
}

CsvHeader::CsvHeader(const CsvRecord& header) : size_(header.fields.size()) {
  for (size_t c = 0; c < header.fields.size(); ++c) {
    index_.emplace(absl::StripAsciiWhitespace(header.fields[c]), c);
  }
}

std::optional<size_t> CsvHeader::Find(absl::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

absl::string_view CsvHeader::Cell(const CsvRecord& record, absl::string_view name) const {
  const std::optional<size_t> column = Find(name);
  if (!column || *column >= record.fields.size()) return "";
  return record.fields[*column];
}

}  // namespace gpuadvisor::catalog
