#include "common/validation/name_match.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace gpuadvisor::validation {
namespace {

int EditDistance(const std::string& a, const std::string& b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> ClosestNames(absl::string_view name,
                                      const std::vector<std::string>& candidates, int n) {
  const std::string wanted = absl::AsciiStrToLower(name);
  std::vector<std::tuple<int, int, std::string>> scored;  // (contains ? 0 : 1, distance, name)
  scored.reserve(candidates.size());
  for (const std::string& candidate : candidates) {
    const std::string lower = absl::AsciiStrToLower(candidate);
    const bool contains =
        !wanted.empty() && (absl::StrContains(lower, wanted) || absl::StrContains(wanted, lower));
    scored.emplace_back(contains ? 0 : 1, EditDistance(wanted, lower), candidate);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (const auto& entry : scored) {
    if (static_cast<int>(out.size()) >= n) break;
    if (std::find(out.begin(), out.end(), std::get<2>(entry)) == out.end())
      out.push_back(std::get<2>(entry));
  }
  return out;
}

}  // namespace gpuadvisor::validation
