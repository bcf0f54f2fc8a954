#include "services/catalog/topology.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/io/text_proto.h"
#include "google/protobuf/text_format.h"
#include "services/catalog/located_text_proto.h"
#include "services/catalog/topology_check.h"

namespace gpuadvisor::catalog {
namespace {

using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::TextFormat;
using ::gpuadvisor::catalog::v1::Gpu;
using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::catalog::v1::ScaleOutFabric;
using ::gpuadvisor::catalog::v1::ScaleUpDomain;
using ::gpuadvisor::catalog::v1::TopologyRule;
using ::gpuadvisor::catalog::v1::TopologyRules;

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

// Nominal one-direction PCIe rate of `lanes` lanes of generation `gen`, in
// the convention of gpus.textproto (Gen4 x16 = 32e9 one way, 64e9 both).
double PcieOneWay(int gen, int lanes) {
  if (gen <= 0 || lanes <= 0) return 0;
  return std::ldexp(1e9, gen - 3) * lanes;
}

// The card's own host link from gpus.textproto (bidirectional x16 figure);
// unset when the file records none (TPU, Trainium).
std::optional<v1::HostLink> HostLinkFromGpu(const Gpu& gpu) {
  const double both = gpu.pcie_bytes_per_second();
  if (both <= 0) return std::nullopt;
  v1::HostLink link;
  link.set_kind(v1::HOST_LINK_KIND_PCIE);
  link.set_lanes(16);
  for (int gen = 1; gen <= 7; ++gen) {
    if (std::abs(PcieOneWay(gen, 16) - both / 2) < 1e6) link.set_pcie_generation(gen);
  }
  link.set_bytes_per_second_per_gpu(both / 2);
  link.set_source(absl::StrCat(
      "gpus.textproto: ", gpu.name(), " x16 PCIe",
      link.pcie_generation() > 0 ? absl::StrCat(" Gen", link.pcie_generation()) : std::string(),
      " (the card's link; no rule gives the host's)"));
  return link;
}

bool IsMultiNodeFabric(v1::FabricType type) {
  return type != v1::FABRIC_TYPE_NONE && type != v1::FABRIC_TYPE_UNSPECIFIED;
}

// The scale-up domain the legacy fields describe.
ScaleUpDomain FromLegacyLink(const Offer& offer) {
  ScaleUpDomain up;
  if (offer.gpus_per_node() <= 1) {
    up.set_kind(v1::SCALE_UP_KIND_NONE);
  } else {
    switch (offer.link()) {
      case v1::LINK_TYPE_NVLINK:
        up.set_kind(v1::SCALE_UP_KIND_NVSWITCH);
        break;
      case v1::LINK_TYPE_INFINITY_FABRIC:
        up.set_kind(v1::SCALE_UP_KIND_INFINITY_FABRIC);
        break;
      default:
        // Without a rule we cannot tell whether peer-to-peer works; the
        // cautious reading stages transfers through the host.
        up.set_kind(v1::SCALE_UP_KIND_PCIE_NO_P2P);
        break;
    }
  }
  up.set_bytes_per_second_per_gpu(offer.link_bytes_per_second() / 2);
  up.set_source("derived from the offer's link field (no topology rule matched)");
  return up;
}

ScaleOutFabric FromLegacyFabric(const Offer& offer) {
  ScaleOutFabric out;
  if (offer.gpus_per_node() <= 1 && !IsMultiNodeFabric(offer.fabric())) {
    out.set_type(v1::FABRIC_TYPE_NONE);
    out.set_max_nodes(1);
  } else {
    out.set_type(offer.fabric());
    out.set_gbps_per_node(offer.fabric_gbps());
    out.set_max_nodes(offer.max_nodes());
  }
  out.set_source("derived from the offer's fabric fields (no topology rule matched)");
  return out;
}

void DeriveBandwidths(const Gpu& gpu, const Offer& offer, ScaleUpDomain& up) {
  const double pcie_one_way = gpu.pcie_bytes_per_second() / 2;
  const double fast_one_way = gpu.nvlink_bytes_per_second() / 2;
  if (up.domain_size() == 0) up.set_domain_size(std::max(1, offer.gpus_per_node()));
  if (up.bytes_per_second_per_gpu() == 0) {
    switch (up.kind()) {
      case v1::SCALE_UP_KIND_NVSWITCH:
      case v1::SCALE_UP_KIND_NVLINK_BRIDGE_PAIRS:
      case v1::SCALE_UP_KIND_INFINITY_FABRIC:
      case v1::SCALE_UP_KIND_TPU_ICI:
      case v1::SCALE_UP_KIND_NEURONLINK:
        up.set_bytes_per_second_per_gpu(fast_one_way);
        break;
      case v1::SCALE_UP_KIND_PCIE_P2P:
      case v1::SCALE_UP_KIND_PCIE_NO_P2P:
        up.set_bytes_per_second_per_gpu(pcie_one_way);
        break;
      default:
        break;
    }
  }
  if (up.cross_domain_bytes_per_second_per_gpu() == 0 && up.domain_size() < offer.gpus_per_node()) {
    up.set_cross_domain_bytes_per_second_per_gpu(pcie_one_way);
  }
}

v1::LinkType LegacyLink(const ScaleUpDomain& up, int gpus_per_node) {
  if (gpus_per_node <= 1) return v1::LINK_TYPE_NONE;
  switch (up.kind()) {
    case v1::SCALE_UP_KIND_NONE:
      return v1::LINK_TYPE_NONE;
    case v1::SCALE_UP_KIND_NVSWITCH:
    case v1::SCALE_UP_KIND_NVLINK_BRIDGE_PAIRS:
      return v1::LINK_TYPE_NVLINK;
    case v1::SCALE_UP_KIND_PCIE_P2P:
    case v1::SCALE_UP_KIND_PCIE_NO_P2P:
      return v1::LINK_TYPE_PCIE;
    case v1::SCALE_UP_KIND_INFINITY_FABRIC:
      return v1::LINK_TYPE_INFINITY_FABRIC;
    default:
      return v1::LINK_TYPE_UNSPECIFIED;
  }
}

}  // namespace

bool RuleMatches(const TopologyRule& rule, const Offer& offer) {
  if (!rule.provider().empty() && !absl::EqualsIgnoreCase(rule.provider(), offer.provider())) {
    return false;
  }
  if (!rule.instance_type().empty() && rule.instance_type() != offer.instance_type()) return false;
  if (!rule.instance_type_prefix().empty() &&
      !absl::StartsWith(offer.instance_type(), rule.instance_type_prefix())) {
    return false;
  }
  if (!rule.gpu_model().empty() && rule.gpu_model() != offer.gpu_model()) return false;
  if (rule.min_gpus_per_node() > 0 && offer.gpus_per_node() < rule.min_gpus_per_node()) {
    return false;
  }
  if (rule.max_gpus_per_node() > 0 && offer.gpus_per_node() > rule.max_gpus_per_node()) {
    return false;
  }
  return true;
}

absl::StatusOr<TopologyRules> LoadTopologyRules(const std::string& path,
                                                const GpuNameResolver& resolver) {
  TopologyRules rules;
  if (path.empty()) return rules;
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  TextFormat::ParseInfoTree tree;
  if (absl::Status s = ParseWithLocations(*text, path, &rules, &tree); !s.ok()) return s;
  const FieldDescriptor* list = TopologyRules::descriptor()->FindFieldByName("rules");
  for (int i = 0; i < rules.rules_size(); ++i) {
    TopologyRule& rule = *rules.mutable_rules(i);
    auto fail = [&](const absl::Status& s) { return Located(path, tree, list, i, s); };
    if (!rule.has_scale_up() && !rule.has_scale_out() && !rule.has_host_link() &&
        !rule.has_network()) {
      return fail(
          FieldError("scale_up", "a rule must set scale_up, scale_out, host_link or network"));
    }
    if (!rule.gpu_model().empty()) {
      std::optional<std::string> canonical = resolver.Canonical(rule.gpu_model());
      if (!canonical) {
        return fail(
            FieldError("gpu_model", absl::StrCat("unknown GPU \"", rule.gpu_model(), "\"")));
      }
      rule.set_gpu_model(*canonical);
    }
    if (rule.min_gpus_per_node() < 0 || rule.max_gpus_per_node() < 0) {
      return fail(FieldError("min_gpus_per_node", "bounds must be >= 0"));
    }
    if (rule.has_scale_up()) {
      if (absl::Status s = ValidateScaleUp("scale_up.", rule.scale_up(), 0); !s.ok()) {
        return fail(s);
      }
    }
    if (rule.has_scale_out()) {
      if (absl::Status s = ValidateScaleOut("scale_out.", rule.scale_out()); !s.ok()) {
        return fail(s);
      }
    }
    if (rule.has_host_link()) {
      if (absl::Status s = ValidateHostLink("host_link.", rule.host_link()); !s.ok()) {
        return fail(s);
      }
    }
    if (rule.has_network()) {
      if (absl::Status s = ValidateNetwork("network.", rule.network()); !s.ok()) return fail(s);
    }
    if (rule.source().empty())
      return fail(FieldError("source", "must name where the fact comes from"));
  }
  return rules;
}

void ApplyTopology(const TopologyRules& rules, const Gpu& gpu, Offer& offer) {
  const TopologyRule* up_rule = nullptr;
  const TopologyRule* out_rule = nullptr;
  const TopologyRule* host_rule = nullptr;
  const TopologyRule* net_rule = nullptr;
  for (const TopologyRule& rule : rules.rules()) {
    const bool wanted = (up_rule == nullptr && rule.has_scale_up()) ||
                        (out_rule == nullptr && rule.has_scale_out()) ||
                        (host_rule == nullptr && rule.has_host_link()) ||
                        (net_rule == nullptr && rule.has_network());
    if (!wanted || !RuleMatches(rule, offer)) continue;
    if (up_rule == nullptr && rule.has_scale_up()) up_rule = &rule;
    if (out_rule == nullptr && rule.has_scale_out()) out_rule = &rule;
    if (host_rule == nullptr && rule.has_host_link()) host_rule = &rule;
    if (net_rule == nullptr && rule.has_network()) net_rule = &rule;
  }
  if (!offer.has_host_link()) {
    if (host_rule != nullptr) {
      *offer.mutable_host_link() = host_rule->host_link();
      if (offer.host_link().source().empty()) {
        offer.mutable_host_link()->set_source(host_rule->source());
      }
    } else if (std::optional<v1::HostLink> link = HostLinkFromGpu(gpu)) {
      *offer.mutable_host_link() = *std::move(link);
    }
  }
  if (offer.has_host_link() && offer.host_link().bytes_per_second_per_gpu() == 0 &&
      offer.host_link().kind() == v1::HOST_LINK_KIND_PCIE) {
    v1::HostLink& link = *offer.mutable_host_link();
    if (link.lanes() == 0) link.set_lanes(16);
    link.set_bytes_per_second_per_gpu(PcieOneWay(link.pcie_generation(), link.lanes()));
  }
  if (!offer.has_network() && net_rule != nullptr) {
    *offer.mutable_network() = net_rule->network();
    if (offer.network().source().empty()) offer.mutable_network()->set_source(net_rule->source());
  }
  if (!offer.has_scale_up()) {
    if (up_rule != nullptr) {
      *offer.mutable_scale_up() = up_rule->scale_up();
      if (offer.scale_up().source().empty())
        offer.mutable_scale_up()->set_source(up_rule->source());
    } else {
      *offer.mutable_scale_up() = FromLegacyLink(offer);
    }
  }
  if (!offer.has_scale_out()) {
    if (out_rule != nullptr) {
      *offer.mutable_scale_out() = out_rule->scale_out();
      if (offer.scale_out().source().empty()) {
        offer.mutable_scale_out()->set_source(out_rule->source());
      }
    } else {
      *offer.mutable_scale_out() = FromLegacyFabric(offer);
    }
  }
  ScaleUpDomain& up = *offer.mutable_scale_up();
  if (offer.gpus_per_node() <= 1 && up.kind() == v1::SCALE_UP_KIND_UNSPECIFIED) {
    up.set_kind(v1::SCALE_UP_KIND_NONE);
  }
  DeriveBandwidths(gpu, offer, up);
  ScaleOutFabric& out = *offer.mutable_scale_out();
  if (out.max_nodes() == 0) out.set_max_nodes(1);

  // Legacy fields follow the topology, so old clients see the same facts.
  offer.set_link(LegacyLink(up, offer.gpus_per_node()));
  offer.set_link_bytes_per_second(offer.gpus_per_node() <= 1 ? 0
                                                             : 2 * up.bytes_per_second_per_gpu());
  offer.set_fabric(out.type());
  offer.set_fabric_gbps(out.gbps_per_node());
  offer.set_max_nodes(IsMultiNodeFabric(out.type()) ? std::max(1, out.max_nodes()) : 1);
}

}  // namespace gpuadvisor::catalog
