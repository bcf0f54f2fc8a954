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

void DateUndatedOffers(const ImportAsOf& as_of,
                       std::vector<gpuadvisor::catalog::v1::Offer>& offers) {
  if (!as_of.known()) return;
  const std::string date = absl::FormatTime("%Y-%m-%d", as_of.time, absl::UTCTimeZone());
  const std::string note =
      as_of.how.empty()
          ? std::string()
          : absl::StrCat("; priced as of ",
                         absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", as_of.time, absl::UTCTimeZone()),
                         " (", as_of.how, ")");
  const int64_t at = absl::ToUnixSeconds(as_of.time);
  for (gpuadvisor::catalog::v1::Offer& offer : offers) {
    if (!offer.as_of().empty() || offer.priced_at_unix_seconds() != 0) continue;
    offer.set_as_of(date);
    offer.set_priced_at_unix_seconds(at);
    if (!note.empty()) offer.mutable_source()->append(note);
  }
}

void SortById(std::vector<gpuadvisor::catalog::v1::Offer>& offers) {
  // The order is sorted, then applied in place one cycle at a time, each
  // offer swapped once into its place: swapping whole offers inside the sort
  // costs several times more at 100,000 offers, and a second vector of them
  // is 100,000 more messages to make, touch and free.
  std::vector<size_t> order(offers.size());  // position -> the offer that goes there
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&offers](size_t a, size_t b) { return offers[a].id() < offers[b].id(); });
  for (size_t i = 0; i < order.size(); ++i) {
    size_t j = i;  // offers[j] holds the offer that started at i
    while (order[j] != i) {
      const size_t k = order[j];
      offers[j].Swap(&offers[k]);
      order[j] = j;
      j = k;
    }
    order[j] = j;
  }
}

}  // namespace gpuadvisor::catalog
