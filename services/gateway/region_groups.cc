#include "services/gateway/region_groups.h"

#include <algorithm>
#include <functional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/io/text_proto.h"
#include "common/status/status_macros.h"

namespace gpuadvisor::gateway {

bool GlobMatchIgnoringCase(absl::string_view pattern, absl::string_view text) {
  // Iterative matcher with one backtrack point for the last '*'.
  size_t p = 0, t = 0, star = absl::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && absl::ascii_tolower(static_cast<unsigned char>(pattern[p])) ==
                                         absl::ascii_tolower(static_cast<unsigned char>(text[t]))) {
      ++p;
      ++t;
    } else if (star != absl::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

absl::StatusOr<RegionGroups> RegionGroups::FromProto(const v1::RegionGroupList& list) {
  RegionGroups out;
  out.as_of_ = list.as_of();
  const int n = list.groups_size();
  for (int i = 0; i < n; ++i) {
    const v1::RegionGroup& g = list.groups(i);
    std::vector<std::string> keys = {g.name()};
    keys.insert(keys.end(), g.aliases().begin(), g.aliases().end());
    for (size_t k = 0; k < keys.size(); ++k) {
      const std::string field = k == 0 ? absl::StrCat("groups[", i, "].name")
                                       : absl::StrCat("groups[", i, "].aliases[", k - 1, "]");
      if (keys[k].empty())
        return absl::InvalidArgumentError(absl::StrCat(field, ": must not be empty"));
      if (!out.by_name_.try_emplace(absl::AsciiStrToLower(keys[k]), i).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": duplicate name \"", keys[k], "\""));
      }
      out.names_.push_back(absl::AsciiStrToLower(keys[k]));
    }
    for (int r = 0; r < g.regions_size(); ++r) {
      if (g.regions(r).pattern().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("groups[", i, "].regions[", r, "].pattern: must not be empty"));
      }
    }
    if (g.regions_size() == 0 && g.includes_size() == 0) {
      return absl::InvalidArgumentError(absl::StrCat("groups[", i, "]: needs regions or includes"));
    }
  }
  // Flatten includes depth-first; a group on the current path is a cycle.
  out.groups_.resize(n);
  std::vector<int> state(n, 0);  // 0 new, 1 on the path, 2 done
  std::function<absl::Status(int)> flatten = [&](int i) -> absl::Status {
    if (state[i] == 2) return absl::OkStatus();
    state[i] = 1;
    const v1::RegionGroup& g = list.groups(i);
    Group& group = out.groups_[i];
    group.name = g.name();
    group.description = g.description();
    group.patterns.assign(g.regions().begin(), g.regions().end());
    for (int k = 0; k < g.includes_size(); ++k) {
      auto it = out.by_name_.find(absl::AsciiStrToLower(g.includes(k)));
      const std::string field = absl::StrCat("groups[", i, "].includes[", k, "]");
      if (it == out.by_name_.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": unknown group \"", g.includes(k), "\""));
      }
      if (state[it->second] == 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": include cycle through \"", g.includes(k), "\""));
      }
      RETURN_IF_ERROR(flatten(it->second));
      const std::vector<v1::RegionPattern>& more = out.groups_[it->second].patterns;
      group.patterns.insert(group.patterns.end(), more.begin(), more.end());
    }
    state[i] = 2;
    return absl::OkStatus();
  };
  for (int i = 0; i < n; ++i) RETURN_IF_ERROR(flatten(i));
  std::sort(out.names_.begin(), out.names_.end());
  return out;
}

absl::StatusOr<RegionGroups> RegionGroups::FromFile(const std::string& path) {
  v1::RegionGroupList list;
  RETURN_IF_ERROR(LoadTextProtoFile(path, &list));
  absl::StatusOr<RegionGroups> groups = FromProto(list);
  if (!groups.ok()) {
    return absl::Status(groups.status().code(),
                        absl::StrCat(path, ": ", groups.status().message()));
  }
  return groups;
}

const RegionGroups::Group* RegionGroups::Find(absl::string_view name_or_alias) const {
  auto it = by_name_.find(absl::AsciiStrToLower(name_or_alias));
  return it == by_name_.end() ? nullptr : &groups_[it->second];
}

bool RegionGroups::Contains(const Group& group, absl::string_view provider,
                            absl::string_view region) {
  for (const v1::RegionPattern& p : group.patterns) {
    if (!p.provider().empty() && !absl::EqualsIgnoreCase(p.provider(), provider)) continue;
    if (GlobMatchIgnoringCase(p.pattern(), region)) return true;
  }
  return false;
}

}  // namespace gpuadvisor::gateway
