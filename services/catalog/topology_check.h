#ifndef GPUADVISOR_SERVICES_CATALOG_TOPOLOGY_CHECK_H_
#define GPUADVISOR_SERVICES_CATALOG_TOPOLOGY_CHECK_H_

// Checks of an offer's scale-up domain and scale-out fabric against the
// contract alone (no data files): used by the snapshot index (Catalog) that
// followers link through the catalog client library, and by the topology
// rules loader. Plain functions; thread-safe.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"

namespace gpuadvisor::catalog {

// Checks one offer's own scale_up / scale_out / host_link / network (when present). Errors are
// kInvalidArgument naming the field relative to the offer
// ("scale_up.domain_size: must be <= gpus_per_node (4), got 8").
absl::Status ValidateOfferTopology(const gpuadvisor::catalog::v1::Offer& offer);

// `prefix` is "scale_up." or "rules[i].scale_up." style, relative to the
// message the caller reports on. gpus_per_node 0 = not known (a rule).
// kInvalidArgument naming the field: unknown kind, domain_size < 0 or above
// gpus_per_node, a bandwidth negative or not finite.
absl::Status ValidateScaleUp(absl::string_view prefix,
                             const gpuadvisor::catalog::v1::ScaleUpDomain& up, int gpus_per_node);

// kInvalidArgument naming the field: unknown type, gbps_per_node negative or
// not finite, max_nodes < 0, or max_nodes > 1 with FABRIC_TYPE_NONE.
absl::Status ValidateScaleOut(absl::string_view prefix,
                              const gpuadvisor::catalog::v1::ScaleOutFabric& out);

// kInvalidArgument naming the field: unknown kind, pcie_generation outside
// 0..7 or set on a kind other than PCIe, lanes outside 0..32, a bandwidth
// negative or not finite.
absl::Status ValidateHostLink(absl::string_view prefix,
                              const gpuadvisor::catalog::v1::HostLink& link);

// kInvalidArgument naming the field: gbps negative or not finite.
absl::Status ValidateNetwork(absl::string_view prefix,
                             const gpuadvisor::catalog::v1::InstanceNetwork& network);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_TOPOLOGY_CHECK_H_
