#include "services/sizing/topology.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;
namespace cv1 = ::gpuadvisor::catalog::v1;

void LegacyScaleUp(const GpuSpec& gpu, const v1::GpuConfiguration& c, const v1::LinkConstants& k,
                   Links* l) {
  const int gpn = c.gpus_per_node();
  double raw = c.link_bytes_per_second();
  l->domain_size = gpn;
  switch (c.link()) {
    case cv1::LINK_TYPE_NVLINK:
    case cv1::LINK_TYPE_INFINITY_FABRIC:
      l->fast_domain = true;
      if (raw <= 0)
        raw = gpu.nvlink_bytes_per_second > 0 ? gpu.nvlink_bytes_per_second
                                              : k.default_nvlink_bytes_per_second();
      l->domain_bus = raw / 2.0 * k.scale_up_bus_efficiency();  // legacy figure is bidirectional
      l->domain_latency = k.scale_up_latency_seconds();
      break;
    default:
      if (raw <= 0) raw = 2.0 * k.default_pcie_bytes_per_second();
      l->domain_bus = raw / 2.0 * k.pcie_bus_efficiency();
      l->domain_latency = k.pcie_latency_seconds();
      l->bridged_or_pcie = gpn > 1;
  }
  l->cross_bus = l->domain_bus;
  l->cross_latency = l->domain_latency;
}

void ScaleUp(const cv1::ScaleUpDomain& s, int gpn, const v1::LinkConstants& k, Links* l) {
  const double cross_raw = s.cross_domain_bytes_per_second_per_gpu() > 0
                               ? s.cross_domain_bytes_per_second_per_gpu()
                               : k.default_pcie_bytes_per_second();
  l->cross_bus = cross_raw * k.pcie_bus_efficiency();
  l->cross_latency = k.pcie_latency_seconds();
  l->domain_size = s.domain_size() > 0 ? std::min(s.domain_size(), gpn) : gpn;
  const double raw = s.bytes_per_second_per_gpu();
  switch (s.kind()) {
    case cv1::SCALE_UP_KIND_NVSWITCH:
    case cv1::SCALE_UP_KIND_INFINITY_FABRIC:
      l->fast_domain = true;
      l->domain_bus = (raw > 0 ? raw : k.default_nvswitch_bytes_per_second_per_gpu()) *
                      k.scale_up_bus_efficiency();
      l->domain_latency = k.scale_up_latency_seconds();
      break;
    case cv1::SCALE_UP_KIND_NVLINK_BRIDGE_PAIRS:
      l->bridged_or_pcie = true;
      l->domain_size = s.domain_size() > 0 ? std::min(s.domain_size(), gpn) : std::min(2, gpn);
      l->domain_bus = (raw > 0 ? raw : k.default_nvlink_bridge_bytes_per_second()) *
                      k.scale_up_bus_efficiency();
      l->domain_latency = k.scale_up_latency_seconds();
      break;
    case cv1::SCALE_UP_KIND_PCIE_NO_P2P:
      l->bridged_or_pcie = gpn > 1;
      l->domain_bus = (raw > 0 ? raw : cross_raw) * k.pcie_no_p2p_bus_efficiency();
      l->domain_latency = k.pcie_latency_seconds();
      l->cross_bus = std::min(l->cross_bus, l->domain_bus);
      break;
    case cv1::SCALE_UP_KIND_TPU_ICI:
      l->unsupported =
          "TPU slices (ICI torus) are not modelled by sizing: no GPU-style estimate is given";
      break;
    case cv1::SCALE_UP_KIND_NEURONLINK:
      l->unsupported =
          "AWS Trainium/Inferentia (NeuronLink) is not modelled by sizing: no GPU-style estimate "
          "is given";
      break;
    default:  // NONE, PCIE_P2P
      l->bridged_or_pcie = gpn > 1;
      l->domain_bus = (raw > 0 ? raw : cross_raw) * k.pcie_bus_efficiency();
      l->domain_latency = k.pcie_latency_seconds();
  }
}

}  // namespace

double Links::InterBus(int members_per_node, int gpus_per_node, int span) const {
  const double share = node_bus * std::max(1, members_per_node) / std::max(1, gpus_per_node);
  return std::min(share, members_per_node > 1 ? IntraBus(span) : share);
}

Links ResolveLinks(const GpuSpec& gpu, const v1::GpuConfiguration& c, const v1::LinkConstants& k) {
  Links l;
  const int gpn = c.gpus_per_node();
  if (c.has_scale_up() && c.scale_up().kind() != cv1::SCALE_UP_KIND_UNSPECIFIED) {
    ScaleUp(c.scale_up(), gpn, k, &l);
  } else {
    LegacyScaleUp(gpu, c, k, &l);
  }
  const std::string vendor = absl::AsciiStrToLower(gpu.vendor);
  if (l.unsupported.empty() && (vendor == "google" || vendor == "aws" || vendor == "annapurna")) {
    l.unsupported = absl::StrCat(gpu.name, " (", gpu.vendor,
                                 ") is not a GPU that sizing models: no estimate is given");
  }

  double gbps = 0;
  cv1::FabricType type = c.fabric();
  if (c.has_scale_out() && c.scale_out().type() != cv1::FABRIC_TYPE_UNSPECIFIED) {
    type = c.scale_out().type();
    gbps = c.scale_out().gbps_per_node();
    l.max_nodes = c.scale_out().max_nodes();
    if (gbps <= 0 && type != cv1::FABRIC_TYPE_NONE) type = cv1::FABRIC_TYPE_UNSPECIFIED;
  } else {
    gbps = c.fabric_gbps();
  }
  switch (type) {
    case cv1::FABRIC_TYPE_NONE:
      gbps = 0;
      break;
    case cv1::FABRIC_TYPE_INFINIBAND:
      if (gbps <= 0) gbps = k.default_infiniband_gbps();
      break;
    case cv1::FABRIC_TYPE_EFA:
      if (gbps <= 0) gbps = k.default_efa_gbps();
      break;
    case cv1::FABRIC_TYPE_ROCE:
      if (gbps <= 0) gbps = k.default_roce_gbps();
      break;
    case cv1::FABRIC_TYPE_ETHERNET:
      if (gbps <= 0) gbps = k.default_ethernet_gbps();
      break;
    default:
      if (gbps <= 0) {
        gbps = k.unknown_fabric_gbps();
        l.default_fabric = true;
      }
  }
  l.host_bytes_per_second = c.has_host_link_bytes_per_second() && c.host_link_bytes_per_second() > 0
                                ? c.host_link_bytes_per_second() * k.host_link_efficiency()
                                : k.default_host_link_bytes_per_second();
  l.fabric = gbps > 0;
  l.node_bus = gbps * 1e9 / 8.0 * k.fabric_bus_efficiency();
  l.node_latency = k.fabric_latency_seconds();
  return l;
}

}  // namespace gpuadvisor::sizing
