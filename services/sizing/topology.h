#ifndef GPUADVISOR_SERVICES_SIZING_TOPOLOGY_H_
#define GPUADVISOR_SERVICES_SIZING_TOPOLOGY_H_

// The links of one GPU configuration as the collectives see them: the
// scale-up domain inside a node, the path between domains of one node, and
// the scale-out fabric between nodes. GpuConfiguration.scale_up/scale_out
// supersede the legacy link/fabric fields when set.

#include <string>

#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::sizing {

struct GpuSpec;

struct Links {
  int domain_size = 1;        // GPUs that share the fast link (<= GPUs per node)
  double domain_bus = 0;      // bytes/s NCCL bus bandwidth inside the domain
  double domain_latency = 0;  // s per collective inside the domain
  double cross_bus = 0;       // bytes/s between domains of one node (PCIe)
  double cross_latency = 0;
  double node_bus = 0;  // bytes/s of the node's NICs together (inter-node)
  double node_latency = 0;
  bool fast_domain = false;      // NVLink/NVSwitch/Infinity Fabric (not PCIe, not bridges only)
  bool bridged_or_pcie = false;  // the domain is NVLink bridge pairs or PCIe
  bool fabric = false;           // a usable inter-node network
  bool default_fabric = false;   // fabric type unknown: assumed 100 GbE
  int max_nodes = 0;             // 0 = no limit known
  // Achieved host-to-GPU copy rate per GPU, one direction (offload traffic):
  // 62.5% of GpuConfiguration.host_link_bytes_per_second, 20e9 when unset.
  double host_bytes_per_second = 20e9;
  std::string unsupported;  // non-empty: the accelerator cannot be sized (why)

  // Bus bandwidth and latency of a collective whose group spans `span`
  // consecutive GPUs of one node.
  double IntraBus(int span) const { return span <= domain_size ? domain_bus : cross_bus; }
  double IntraLatency(int span) const {
    return span <= domain_size ? domain_latency : cross_latency;
  }
  // Bus bandwidth of a group with `members_per_node` GPUs in each node when
  // every GPU of the node is in some such group: the group's share of the
  // node's NICs, never more than the intra-node path.
  double InterBus(int members_per_node, int gpus_per_node, int span) const;
};

// `k`: the link efficiencies, latencies and defaults (data/sizing/engine.textproto).
Links ResolveLinks(const GpuSpec& gpu, const gpuadvisor::sizing::v1::GpuConfiguration& c,
                   const gpuadvisor::sizing::v1::LinkConstants& k);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_TOPOLOGY_H_
