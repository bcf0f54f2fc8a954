#include "services/cli/assumed_topology.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "services/cli/proto_flags.h"

namespace gpuadvisor::cli {
namespace {

using catalog::v1::Offer;

// What recommend hands sizing for an offer (gateway OfferShape), without the
// sources: offers that share it size alike.
struct Topology {
  catalog::v1::LinkType link = catalog::v1::LINK_TYPE_UNSPECIFIED;
  double link_bytes_per_second = 0;
  bool has_scale_up = false;
  catalog::v1::ScaleUpDomain scale_up;
  double host_link_bytes_per_second = 0;

  static Topology Of(const Offer& o) {
    Topology t;
    t.link = o.link();
    t.link_bytes_per_second = o.link_bytes_per_second();
    t.has_scale_up = o.has_scale_up();
    t.scale_up = o.scale_up();
    t.scale_up.clear_source();
    t.host_link_bytes_per_second = o.host_link().bytes_per_second_per_gpu();
    return t;
  }
  std::string Key() const {
    std::string up;
    scale_up.SerializeToString(&up);
    return absl::StrCat(link, "|", link_bytes_per_second, "|", has_scale_up, "|", up, "|",
                        host_link_bytes_per_second);
  }
};

std::string Dashed(const google::protobuf::EnumDescriptor* type, int value) {
  return absl::StrReplaceAll(EnumShortName(type, value), {{"_", "-"}});
}

std::string Describe(const Topology& t, int gpus) {
  std::string out;
  if (t.has_scale_up && t.scale_up.kind() != catalog::v1::SCALE_UP_KIND_UNSPECIFIED &&
      t.scale_up.kind() != catalog::v1::SCALE_UP_KIND_NONE) {
    out =
        absl::StrCat("scale-up ", Dashed(catalog::v1::ScaleUpKind_descriptor(), t.scale_up.kind()));
    if (t.scale_up.domain_size() > 0 && t.scale_up.domain_size() < gpus) {
      absl::StrAppend(&out, " in domains of ", t.scale_up.domain_size());
    }
    if (t.scale_up.bytes_per_second_per_gpu() > 0) {
      absl::StrAppend(
          &out, absl::StrFormat(" %.0f GB/s per GPU", t.scale_up.bytes_per_second_per_gpu() / 1e9));
    }
  } else if (t.link != catalog::v1::LINK_TYPE_UNSPECIFIED &&
             t.link != catalog::v1::LINK_TYPE_NONE) {
    out = absl::StrCat("link ", Dashed(catalog::v1::LinkType_descriptor(), t.link));
  }
  if (t.host_link_bytes_per_second > 0) {
    absl::StrAppend(
        &out, out.empty() ? "" : ", ",
        absl::StrFormat("host link %.0f GB/s per GPU", t.host_link_bytes_per_second / 1e9));
  }
  return out;
}

}  // namespace

AssumedTopology AssumeTopology(const std::vector<Offer>& offers,
                               sizing::v1::GpuConfiguration* config) {
  AssumedTopology result;
  if (config->link() != catalog::v1::LINK_TYPE_UNSPECIFIED || config->has_scale_up()) return result;
  const int gpus = config->gpus_per_node();
  std::vector<const Offer*> same_count, fallback;
  for (const Offer& o : offers) {
    if (o.gpus_per_node() == gpus) {
      same_count.push_back(&o);
    } else if (gpus == 1 || o.gpus_per_node() > 1) {
      fallback.push_back(&o);
    }
  }
  const std::vector<const Offer*>& pool = same_count.empty() ? fallback : same_count;
  const std::string shape = absl::StrCat(gpus, "x ", config->gpu_model());
  if (pool.empty()) {
    if (gpus <= 1) return result;
    config->set_link(catalog::v1::LINK_TYPE_PCIE);
    result.assumed = true;
    result.link_flag = "--link=pcie";
    result.reason = absl::StrCat("no catalog offer has ", config->gpu_model(),
                                 ", so PCIe, the cautious reading; --link=... to choose");
    return result;
  }
  // The topology most offers of the pool share; the first listed on a tie.
  std::vector<std::pair<Topology, int>> counted;
  std::vector<std::string> keys;
  for (const Offer* o : pool) {
    Topology t = Topology::Of(*o);
    const std::string key = t.Key();
    size_t i = 0;
    while (i < keys.size() && keys[i] != key) ++i;
    if (i == keys.size()) {
      keys.push_back(key);
      counted.emplace_back(std::move(t), 0);
    }
    ++counted[i].second;
  }
  size_t best = 0;
  for (size_t i = 1; i < counted.size(); ++i) {
    if (counted[i].second > counted[best].second) best = i;
  }
  const Topology& t = counted[best].first;
  config->set_link(t.link);
  config->set_link_bytes_per_second(t.link_bytes_per_second);
  if (t.has_scale_up) *config->mutable_scale_up() = t.scale_up;
  if (t.host_link_bytes_per_second > 0)
    config->set_host_link_bytes_per_second(t.host_link_bytes_per_second);

  result.assumed = true;
  if (t.link != catalog::v1::LINK_TYPE_UNSPECIFIED && t.link != catalog::v1::LINK_TYPE_NONE) {
    result.link_flag =
        absl::StrCat("--link=", EnumShortName(catalog::v1::LinkType_descriptor(), t.link));
  }
  const std::string of =
      same_count.empty()
          ? absl::StrCat("catalog offers of ", config->gpu_model(),
                         gpus > 1 ? " with several GPUs" : "", " (none has ", gpus, ")")
          : absl::StrCat("catalog offers of ", shape);
  result.reason =
      absl::StrCat(Describe(t, gpus), ", as ", counted[best].second, " of ", pool.size(), " ", of);
  if (counted.size() > 1) absl::StrAppend(&result.reason, "; the others differ");
  if (gpus > 1) absl::StrAppend(&result.reason, "; --link=... to choose");
  return result;
}

}  // namespace gpuadvisor::cli
