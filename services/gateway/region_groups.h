#ifndef GPUADVISOR_SERVICES_GATEWAY_REGION_GROUPS_H_
#define GPUADVISOR_SERVICES_GATEWAY_REGION_GROUPS_H_

// Region groups ("eu", "us", "asia", "germany", ...) for
// Constraints.regions, read from data/gateway/regions.textproto
// (gpuadvisor.gateway.v1.RegionGroupList). Names, aliases, providers,
// patterns and region names all compare case-insensitively.
//
//   absl::StatusOr<RegionGroups> groups = RegionGroups::FromFile("data/gateway/regions.textproto");
//   const RegionGroups::Group* eu = groups->Find("EU");
//   bool in = groups->Contains(*eu, "aws", "eu-central-1");   // true
//
// Immutable after construction; thread-safe.

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"

namespace gpuadvisor::gateway {

// Case-insensitive glob: '*' matches any run of characters (also none),
// every other character itself.
bool GlobMatchIgnoringCase(absl::string_view pattern, absl::string_view text);

class RegionGroups {
 public:
  struct Group {
    std::string name;
    std::string description;
    // Own patterns and those of every included group, flattened.
    std::vector<v1::RegionPattern> patterns;
  };

  RegionGroups() = default;  // no groups

  // kInvalidArgument naming the field ("groups[2].includes[0]: unknown group
  // \"x\"") for an empty or duplicate name or alias, an empty pattern, an
  // unknown include or an include cycle.
  static absl::StatusOr<RegionGroups> FromProto(const v1::RegionGroupList& list);
  static absl::StatusOr<RegionGroups> FromFile(const std::string& path);

  // nullptr when no group has this name or alias.
  const Group* Find(absl::string_view name_or_alias) const;
  static bool Contains(const Group& group, absl::string_view provider, absl::string_view region);

  // Every name and alias, sorted; for "did you mean" messages.
  const std::vector<std::string>& names() const { return names_; }
  const std::string& as_of() const { return as_of_; }

 private:
  std::vector<Group> groups_;
  absl::flat_hash_map<std::string, int> by_name_;  // lower-case name or alias
  std::vector<std::string> names_;
  std::string as_of_;
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_REGION_GROUPS_H_
