// dstack task or service configuration (export.h).

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "services/gateway/export_internal.h"

namespace gpuadvisor::gateway::export_internal {
namespace {

using v1::Recommendation;

// dstack's names for one offer ("" region / instance type = not pinned),
// or why it has none.
struct DstackNames {
  const Recommendation* r = nullptr;
  std::string backend, region, instance_type, gpu, why_not;
  bool spot = false;
  double price = 0;  // per node-hour, as dstack sorts offers (spot: the cheapest zone)
  double cap = 0;    // per node-hour, the most the plan priced (spot: the dearest zone)
};

std::string Pick(const char* what, const std::string& provider, const std::string& ours,
                 std::string& why_not) {
  if (!Has({"dstack", what, provider})) return ours;
  std::string theirs = NameAt({"dstack", what, provider, ours});
  if (theirs.empty() && why_not.empty()) {
    why_not = absl::StrCat("no dstack ", what == std::string("regions") ? "region" : "offer name",
                           " for \"", ours, "\" in data/exports/orchestrators.json");
  }
  return theirs;
}

DstackNames DstackNamesOf(const Recommendation& r) {
  DstackNames n;
  n.r = &r;
  const auto& o = r.offer();
  const std::string& p = o.provider();
  const Shape shape = ShapeOf(r);
  n.spot = r.purchase_option() == catalog::v1::PURCHASE_OPTION_SPOT;
  n.cap = NodePricePerHour(r);
  n.price = n.spot && o.spot_min_usd_per_hour() > 0 ? o.spot_min_usd_per_hour() : n.cap;
  n.backend = NameAt({"dstack", "backends", p});
  const std::vector<std::string> multinode = ListAt({"dstack", "multinode_backends"});
  if (r.purchase_option() == catalog::v1::PURCHASE_OPTION_RESERVED) {
    n.why_not =
        "reserved: its price needs a reservation (dstack's reservation field) this file cannot "
        "name; written as on-demand it would be charged the on-demand price";
  } else if (n.backend.empty()) {
    n.why_not = absl::StrCat("dstack has no backend for \"", p, "\"");
  } else if (!shape.serving && shape.nodes_per_unit > 1 &&
             std::find(multinode.begin(), multinode.end(), n.backend) == multinode.end()) {
    n.why_not =
        absl::StrCat("dstack runs multi-node tasks only on multi-node backends, not ", n.backend);
  } else if (shape.serving && shape.nodes_per_unit > 1) {
    n.why_not = absl::StrCat("a replica spans ", shape.nodes_per_unit,
                             " nodes; dstack service replicas are single instances");
  }
  n.gpu = NameAt({"dstack", "gpu_names", o.gpu_model()});
  if (n.gpu.empty() && n.why_not.empty()) {
    n.why_not = absl::StrCat("GPU ", o.gpu_model(), " has no dstack (gpuhunt) name");
  }
  if (Has({"dstack", "attached_accelerators", p, o.instance_type()})) {
    n.instance_type = NameAt({"dstack", "attached_accelerators", p, o.instance_type()});
  } else if (!Has({"dstack", "unpinned_instance_types", p})) {
    n.instance_type = Pick("instance_types", p, o.instance_type(), n.why_not);
  }
  if (o.region() != "global") {
    n.region = Pick("regions", p, o.region(), n.why_not);
  } else if (!Has({"dstack", "global_regions", p}) && n.why_not.empty()) {
    n.why_not = "no region: dstack needs one for this backend";
  }
  return n;
}

std::string ShapeKey(const Recommendation& r) {
  const Shape s = ShapeOf(r);
  if (s.serving) return absl::StrCat(s.units, s.units == 1 ? " replica" : " replicas");
  return absl::StrCat(s.nodes_per_unit, s.nodes_per_unit == 1 ? " node" : " nodes");
}

// The offers dstack could match with these filters: every combination of
// backend, region, instance type (or GPU and count where instance types are
// not pinned) and spot that one of the kept offers makes possible.
using Combo = std::tuple<std::string, std::string, std::string, bool>;
std::set<Combo> Reachable(const std::vector<DstackNames>& kept) {
  std::set<std::pair<std::string, std::string>> regions, types;  // (backend, name)
  std::set<bool> spots;
  for (const DstackNames& n : kept) {
    regions.insert({n.backend, n.region});
    types.insert({n.backend, n.instance_type.empty()
                                 ? absl::StrCat(n.gpu, ":", n.r->offer().gpus_per_node())
                                 : n.instance_type});
    spots.insert(n.spot);
  }
  std::set<Combo> out;
  for (const auto& [b, region] : regions) {
    for (const auto& [tb, type] : types) {
      if (tb != b) continue;
      for (bool spot : spots) out.insert({b, region, type, spot});
    }
  }
  return out;
}

Combo ComboOf(const DstackNames& n) {
  return {n.backend, n.region,
          n.instance_type.empty() ? absl::StrCat(n.gpu, ":", n.r->offer().gpus_per_node())
                                  : n.instance_type,
          n.spot};
}

// Why `c` cannot be in a file with rank `first` at all ("" = it can).
std::string Conflict(const DstackNames& first, const DstackNames& c) {
  if (c.price > 0 && first.price > 0 && c.price < first.price) {
    return absl::StrFormat(
        "$%.2f per node-hour, below rank %d's $%.2f: dstack takes the cheapest matching offer, "
        "so it would run before rank %d",
        c.price, first.r->rank(), first.price, first.r->rank());
  }
  if (c.region.empty() != first.region.empty() ||
      c.instance_type.empty() != first.instance_type.empty()) {
    return "dstack's regions and instance_types lists apply to every backend, and this offer "
           "cannot be pinned the same way as rank " +
           absl::StrCat(first.r->rank());
  }
  return "";
}

// The offers the filters of `kept` would match that none of them is.
std::set<Combo> Unplanned(const std::vector<DstackNames>& kept) {
  std::set<Combo> planned, out;
  for (const DstackNames& n : kept) planned.insert(ComboOf(n));
  for (const Combo& combo : Reachable(kept)) {
    if (planned.count(combo) == 0) out.insert(combo);
  }
  return out;
}

std::string Words(const Combo& c) {
  return absl::StrCat("with it the filters would also match ", std::get<0>(c), " ", std::get<2>(c),
                      " ", std::get<1>(c), std::get<3>(c) ? " spot" : " on-demand",
                      ", which the plan did not price");
}

// An offer of the group that cannot be in the file with `kept`, and why.
struct Moved {
  DstackNames n;
  std::string why;
};

// The group's offers one file can hold: rank 1 of the group, then the
// others that leave it the cheapest match, while the filters would match an
// unplanned offer dropping the lowest-ranked offer that lets them. The rest
// go to `moved`, in rank order, for the next file.
std::vector<DstackNames> Compatible(const std::vector<DstackNames>& group,
                                    std::vector<Moved>& moved) {
  std::vector<DstackNames> kept = {group.front()};
  for (size_t i = 1; i < group.size(); ++i) {
    std::string why = Conflict(group.front(), group[i]);
    if (why.empty()) {
      kept.push_back(group[i]);
    } else {
      moved.push_back({group[i], why});
    }
  }
  for (std::set<Combo> bad = Unplanned(kept); !bad.empty() && kept.size() > 1;
       bad = Unplanned(kept)) {
    const Combo combo = *bad.begin();
    size_t drop = kept.size() - 1;
    for (size_t i = kept.size() - 1; i >= 1; --i) {
      std::vector<DstackNames> without = kept;
      without.erase(without.begin() + i);
      if (Unplanned(without).count(combo) == 0) {
        drop = i;
        break;
      }
    }
    moved.push_back({kept[drop], Words(combo)});
    kept.erase(kept.begin() + drop);
  }
  std::sort(moved.begin(), moved.end(),
            [](const Moved& a, const Moved& b) { return a.n.r->rank() < b.n.r->rank(); });
  return kept;
}

// Every file of the answer: per shape, as many files as it takes to hold
// each offer in one, with why each offer is not in the earlier files.
struct DstackFiles {
  Alternatives alts;                                // the files' recommendations
  std::vector<std::vector<DstackNames>> kept;       // per file
  std::vector<std::vector<std::string>> elsewhere;  // per file: "rank N ...: in alternative=M: why"
};

DstackFiles Partition(const std::vector<std::vector<DstackNames>>& shapes,
                      const std::vector<std::string>& shape_keys) {
  DstackFiles f;
  for (size_t s = 0; s < shapes.size(); ++s) {
    std::vector<DstackNames> remaining = shapes[s];
    for (int part = 1; !remaining.empty(); ++part) {
      std::vector<Moved> moved;
      f.kept.push_back(Compatible(remaining, moved));
      std::string key = shape_keys[s];
      if (part > 1) absl::StrAppend(&key, ", part ", part);
      for (const DstackNames& n : f.kept.back()) AddToGroup(f.alts, key, n.r);
      f.elsewhere.emplace_back();
      remaining.clear();
      for (const Moved& m : moved) {
        f.elsewhere.back().push_back(absl::StrCat(
            RankName(*m.n.r), ": in alternative=", f.kept.size() + 1, " or later: ", m.why));
        remaining.push_back(m.n);
      }
    }
  }
  return f;
}

template <typename F>
std::vector<std::string> Distinct(const std::vector<DstackNames>& kept, F field) {
  std::vector<std::string> out;
  for (const DstackNames& n : kept) {
    std::string v = field(n);
    if (!v.empty() && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

std::string Resources(const std::vector<DstackNames>& kept) {
  int min_gpus = 1 << 30, max_gpus = 0;
  int64_t min_memory = INT64_MAX;
  for (const DstackNames& n : kept) {
    min_gpus = std::min(min_gpus, n.r->offer().gpus_per_node());
    max_gpus = std::max(max_gpus, n.r->offer().gpus_per_node());
    if (n.r->gpu_memory_bytes() > 0) min_memory = std::min(min_memory, n.r->gpu_memory_bytes());
  }
  std::string y = "resources:\n  gpu:\n";
  absl::StrAppend(
      &y, "    name: ", QList(Distinct(kept, [](const DstackNames& n) { return n.gpu; })), "\n");
  absl::StrAppend(
      &y, "    count: ",
      min_gpus == max_gpus ? absl::StrCat(min_gpus) : Q(absl::StrCat(min_gpus, "..", max_gpus)),
      "\n");
  if (min_memory != INT64_MAX) {
    // gpuhunt's GPU memory is the size as sold ("80 GB" for 80 GiB): the
    // catalog's bytes are binary units, so GiB, rounded down, is that figure.
    absl::StrAppend(&y, "    memory: ", Q(absl::StrCat(min_memory >> 30, "GB..")), "\n");
  }
  return y;
}

std::string Profile(const std::vector<DstackNames>& kept) {
  bool spot = false, on_demand = false;
  double max_price = 0;
  for (const DstackNames& n : kept) {
    (n.spot ? spot : on_demand) = true;
    max_price = std::max(max_price, n.cap);
  }
  std::string y;
  absl::StrAppend(&y, "backends: ",
                  QList(Distinct(kept, [](const DstackNames& n) { return n.backend; })), "\n");
  auto regions = Distinct(kept, [](const DstackNames& n) { return n.region; });
  if (!regions.empty()) absl::StrAppend(&y, "regions: ", QList(regions), "\n");
  auto types = Distinct(kept, [](const DstackNames& n) { return n.instance_type; });
  if (!types.empty()) absl::StrAppend(&y, "instance_types: ", QList(types), "\n");
  absl::StrAppend(&y, "spot_policy: ",
                  spot && on_demand ? "auto"
                  : spot            ? "spot"
                                    : "on-demand",
                  "\n");
  if (max_price > 0) absl::StrAppend(&y, "max_price: ", CapAbove(max_price), "\n");
  return y;
}

std::string Body(const v1::RecommendRequest& request, const std::vector<DstackNames>& kept) {
  const Shape shape = ShapeOf(*kept.front().r);
  std::string y;
  absl::StrAppend(&y, "type: ", shape.serving ? "service" : "task", "\n");
  absl::StrAppend(&y, "name: ", Q(absl::StrCat("gpu-advisor-", TaskSlug(request))), "\n");
  if (shape.serving) {
    absl::StrAppend(&y, "port: ", static_cast<int>(NumberAt({"dstack", "serving", "port"})), "\n");
    absl::StrAppend(&y, "replicas: ", shape.units, "\n");
  } else {
    absl::StrAppend(&y, "nodes: ", shape.nodes_per_unit, "\n");
  }
  y += "commands:\n  - echo \"replace with your job\"\n";
  y += Resources(kept);
  y += Profile(kept);
  return y;
}

}  // namespace

absl::StatusOr<ExportFile> Dstack(const v1::RecommendRequest& request,
                                  const v1::RecommendResponse& response, int alternative) {
  ExportFile file;
  Alternatives shapes;
  std::vector<DstackNames> names;
  for (const Recommendation& r : response.recommendations()) {
    DstackNames n = DstackNamesOf(r);
    if (!n.why_not.empty()) {
      file.left_out.push_back(absl::StrCat(RankName(r), ": ", n.why_not));
      continue;
    }
    names.push_back(n);
    AddToGroup(shapes, ShapeKey(r), &r);
  }
  if (shapes.groups.empty()) return NothingLeft("dstack", response, file.left_out);
  std::vector<std::vector<DstackNames>> by_shape;
  for (const auto& group : shapes.groups) {
    by_shape.emplace_back();
    for (const Recommendation* r : group) {
      by_shape.back().push_back(*std::find_if(names.begin(), names.end(),
                                              [&](const DstackNames& x) { return x.r == r; }));
    }
  }
  const DstackFiles files = Partition(by_shape, shapes.keys);
  file.alternatives = static_cast<int>(files.kept.size());
  if (alternative > file.alternatives) {
    return absl::NotFoundError(
        absl::StrCat("alternative: this answer has ", file.alternatives, " dstack file(s)"));
  }
  const std::vector<DstackNames>& kept = files.kept[alternative - 1];
  std::string y = Header(ShapeOf(*kept.front().r).serving ? "dstack service" : "dstack task",
                         request, response);
  y += "# Run: dstack apply -f .dstack.yml (add your commands). dstack takes the cheapest\n"
       "# offer matching every filter below; the filters match only these planned offers,\n"
       "# cheapest first (then the next cheapest if it cannot get one):\n";
  for (const DstackNames& n : kept) {
    absl::StrAppend(&y, "#   rank ", n.r->rank(), ": ", n.backend, " ",
                    n.instance_type.empty() ? n.gpu : n.instance_type, " ",
                    n.region.empty() ? "(any region)" : n.region, ": ", Summary(*n.r), "\n");
  }
  y += AlternativesComment(files.alts, alternative, "dstack");
  if (!files.elsewhere[alternative - 1].empty()) {
    y += "# Not in this file (same shape, another file):\n";
    for (const std::string& e : files.elsewhere[alternative - 1])
      absl::StrAppend(&y, "#   ", e, "\n");
  }
  y += LeftOutComment(file.left_out);
  y += Body(request, kept);
  file.text = std::move(y);
  return file;
}

}  // namespace gpuadvisor::gateway::export_internal
