#ifndef GPUADVISOR_SERVICES_CATALOG_TOPOLOGY_H_
#define GPUADVISOR_SERVICES_CATALOG_TOPOLOGY_H_

// Topology as data: fills each offer's scale-up domain (how the accelerators
// of one node are joined) and scale-out fabric (the node's network towards
// the other nodes of a cluster) from data/catalog/topology.textproto, and
// keeps the legacy link/fabric fields consistent with them.
//
//   absl::StatusOr<TopologyRules> rules = LoadTopologyRules(path, resolver);
//   ApplyTopology(*rules, *gpu, offer);   // fills what the offer lacks
//
// Conventions (also in docs/catalog.md):
//   * ScaleUpDomain.bytes_per_second_per_gpu is one direction, per
//     accelerator; Gpu.nvlink_bytes_per_second and pcie_bytes_per_second are
//     bidirectional aggregates, so a derived figure is half of them.
//   * Offer.link_bytes_per_second (legacy) is bidirectional: twice the
//     scale-up figure.
//   * ScaleOutFabric.gbps_per_node is the node's total over all its NICs
//     (8 x 400 Gb/s InfiniBand = 3200), never per GPU.
//
// Thread safety: plain functions over values; TopologyRules is immutable.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/gpu_name_resolver.h"
#include "services/catalog/topology_check.h"

namespace gpuadvisor::catalog {

// Reads and validates a gpuadvisor.catalog.v1.TopologyRules text file.
// kInvalidArgument with "file:line:col: rules[i].<field>: ..." for a syntax
// error, an unknown gpu_model, a rule without selector-independent content
// (none of scale_up, scale_out, host_link, network), or a value out of range (negative
// bandwidth, domain_size < 0, max_nodes < 1 on a fabric other than NONE, max_nodes != 1 on
// FABRIC_TYPE_NONE). gpu_model is rewritten to the canonical name. kNotFound
// when the file is missing. An empty path gives no rules.
absl::StatusOr<gpuadvisor::catalog::v1::TopologyRules> LoadTopologyRules(
    const std::string& path, const GpuNameResolver& resolver);

// ValidateOfferTopology: services/catalog/topology_check.h.

// Fills what `offer` lacks, then rewrites the legacy fields from it:
//   1. scale_up: the offer's own if present, else the first rule (file order)
//      that matches and sets scale_up, else derived from the legacy `link`
//      (NONE for one accelerator; NVLINK -> NVSWITCH; PCIE -> PCIE_NO_P2P, the
//      cautious reading; INFINITY_FABRIC -> INFINITY_FABRIC).
//   2. scale_out: likewise; the legacy fabric/fabric_gbps/max_nodes are the
//      fallback. One-accelerator offers without a rule get FABRIC_TYPE_NONE.
//   3. Zero bandwidths are derived from `gpu` (see the header comment); a
//      domain_size of 0 becomes gpus_per_node.
//   4. host_link: the offer's own, else the first matching rule that sets it,
//      else the GPU's own PCIe figure (gpus.textproto, x16, generation read
//      from the figure); unset when the GPU records none. A PCIe link with
//      bytes_per_second_per_gpu 0 gets 1e9 x 2^(gen-3) per lane (one way).
//      network: the offer's own, else the first matching rule; else unset
//      (not published).
//   5. link, link_bytes_per_second, fabric, fabric_gbps and max_nodes are set
//      from the result (TPU ICI and NeuronLink have no legacy link type and
//      leave `link` LINK_TYPE_UNSPECIFIED).
// `gpu` is the offer's canonical GPU. The offer must have passed
// ValidateAndNormalizeOffer (gpu_model canonical).
void ApplyTopology(const gpuadvisor::catalog::v1::TopologyRules& rules,
                   const gpuadvisor::catalog::v1::Gpu& gpu, gpuadvisor::catalog::v1::Offer& offer);

// True when a rule's selectors all match the offer (gpu_model compared as
// canonical names; provider ignoring ASCII case).
bool RuleMatches(const gpuadvisor::catalog::v1::TopologyRule& rule,
                 const gpuadvisor::catalog::v1::Offer& offer);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_TOPOLOGY_H_
