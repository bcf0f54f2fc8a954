#include "services/catalog/import/import_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpuadvisor::catalog {

int ImportReport::rows_rejected() const {
  int n = 0;
  for (const auto& [reason, count] : rejected_by_reason) n += count;
  return n;
}

std::string ImportReport::Summary() const {
  std::string out = absl::StrCat(format, " ", file, ": read ", rows_read, ", kept ", rows_kept,
                                 ", rejected ", rows_rejected());
  if (!rejected_by_reason.empty()) {
    absl::StrAppend(&out, " (",
                    absl::StrJoin(rejected_by_reason, ", ",
                                  [](std::string* o, const auto& entry) {
                                    absl::StrAppend(o, entry.first, ": ", entry.second);
                                  }),
                    ")");
  }
  return out;
}

void SortById(std::vector<gpuadvisor::catalog::v1::Offer>& offers) {
  std::sort(offers.begin(), offers.end(),
            [](const auto& a, const auto& b) { return a.id() < b.id(); });
}

}  // namespace gpuadvisor::catalog
