#ifndef GPUADVISOR_SERVICES_CLI_ASSUMED_TOPOLOGY_H_
#define GPUADVISOR_SERVICES_CLI_ASSUMED_TOPOLOGY_H_

// The topology `gpu-advisor estimate` sizes a GPU configuration with when the
// user gives none (no --link, no scale_up in a request file): the one the
// catalog's offers of that GPU carry, so an estimate of N x GPU matches what
// `recommend` computes for those offers. Recommend sizes each offer with the
// offer's own topology (catalog Offer.scale_up, link, link_bytes_per_second
// and host_link, filled from data/catalog/topology.textproto on load); this
// picks the topology most of the GPU's offers share and says so.

#include <string>
#include <vector>

#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::cli {

struct AssumedTopology {
  // False when nothing was assumed (the configuration already had a link or a
  // scale_up).
  bool assumed = false;
  // The flag a user would write for the same link: "--link=pcie".
  std::string link_flag;
  // Where it comes from, for the answer: "scale-up pcie-p2p, as 3 of 3
  // catalog offers of 2x A100-80GB-PCIE; --link=... to choose".
  std::string reason;
};

// Fills `config`'s link, link_bytes_per_second, scale_up and
// host_link_bytes_per_second from `offers` (the catalog's offers of
// config->gpu_model(), any count, any order) when config has neither a link
// nor a scale_up; leaves it unchanged otherwise. Offers with
// config->gpus_per_node() GPUs decide; when there are none, offers of the GPU
// with more than one GPU per node (or, for one GPU, any offer of it). Among
// them the topology (scale_up without its source, link, link bandwidth, host
// link) most offers share wins; a tie goes to the one listed first. With no
// offer at all, a multi-GPU configuration is taken as PCIe (the cautious
// reading; an NVLink figure in the GPU's datasheet is often an optional
// bridge), a single GPU gets nothing assumed.
AssumedTopology AssumeTopology(const std::vector<catalog::v1::Offer>& offers,
                               sizing::v1::GpuConfiguration* config);

}  // namespace gpuadvisor::cli

#endif  // GPUADVISOR_SERVICES_CLI_ASSUMED_TOPOLOGY_H_
