#include "services/catalog/import/import_report.h"

#include <algorithm>
#include <utility>

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
  // The order is sorted, then each offer moved once: swapping whole offers
  // inside the sort costs several times more at 100,000 offers.
  std::vector<size_t> order(offers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&offers](size_t a, size_t b) { return offers[a].id() < offers[b].id(); });
  std::vector<gpuadvisor::catalog::v1::Offer> sorted(offers.size());
  for (size_t i = 0; i < order.size(); ++i) sorted[i].Swap(&offers[order[i]]);
  offers = std::move(sorted);
}

}  // namespace gpuadvisor::catalog
