#include "services/catalog/topology_check.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::catalog::v1::ScaleOutFabric;
using ::gpuadvisor::catalog::v1::ScaleUpDomain;

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

absl::Status CheckBandwidth(absl::string_view field, double value) {
  if (!std::isfinite(value) || value < 0) {
    return FieldError(field, absl::StrCat("must be finite and >= 0, got ", value));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateScaleUp(absl::string_view prefix, const ScaleUpDomain& up, int gpus_per_node) {
  if (!v1::ScaleUpKind_IsValid(up.kind())) {
    return FieldError(absl::StrCat(prefix, "kind"), absl::StrCat("unknown value ", up.kind()));
  }
  if (up.domain_size() < 0) {
    return FieldError(absl::StrCat(prefix, "domain_size"),
                      absl::StrCat("must be >= 0, got ", up.domain_size()));
  }
  if (gpus_per_node > 0 && up.domain_size() > gpus_per_node) {
    return FieldError(
        absl::StrCat(prefix, "domain_size"),
        absl::StrCat("must be <= gpus_per_node (", gpus_per_node, "), got ", up.domain_size()));
  }
  if (absl::Status s = CheckBandwidth(absl::StrCat(prefix, "bytes_per_second_per_gpu"),
                                      up.bytes_per_second_per_gpu());
      !s.ok()) {
    return s;
  }
  return CheckBandwidth(absl::StrCat(prefix, "cross_domain_bytes_per_second_per_gpu"),
                        up.cross_domain_bytes_per_second_per_gpu());
}

absl::Status ValidateScaleOut(absl::string_view prefix, const ScaleOutFabric& out) {
  if (!v1::FabricType_IsValid(out.type())) {
    return FieldError(absl::StrCat(prefix, "type"), absl::StrCat("unknown value ", out.type()));
  }
  if (absl::Status s = CheckBandwidth(absl::StrCat(prefix, "gbps_per_node"), out.gbps_per_node());
      !s.ok()) {
    return s;
  }
  if (out.max_nodes() < 0) {
    return FieldError(absl::StrCat(prefix, "max_nodes"),
                      absl::StrCat("must be >= 0, got ", out.max_nodes()));
  }
  if (out.type() == v1::FABRIC_TYPE_NONE && out.max_nodes() > 1) {
    return FieldError(absl::StrCat(prefix, "max_nodes"),
                      absl::StrCat("must be 1 with FABRIC_TYPE_NONE, got ", out.max_nodes()));
  }
  return absl::OkStatus();
}

absl::Status ValidateHostLink(absl::string_view prefix, const v1::HostLink& link) {
  if (!v1::HostLinkKind_IsValid(link.kind())) {
    return FieldError(absl::StrCat(prefix, "kind"), absl::StrCat("unknown value ", link.kind()));
  }
  if (link.pcie_generation() < 0 || link.pcie_generation() > 7) {
    return FieldError(
        absl::StrCat(prefix, "pcie_generation"),
        absl::StrCat("must be 0 (not recorded) or 1..7, got ", link.pcie_generation()));
  }
  if (link.lanes() < 0 || link.lanes() > 32) {
    return FieldError(absl::StrCat(prefix, "lanes"),
                      absl::StrCat("must be 0 (not recorded) or 1..32, got ", link.lanes()));
  }
  if (link.kind() != v1::HOST_LINK_KIND_PCIE && link.pcie_generation() != 0) {
    return FieldError(absl::StrCat(prefix, "pcie_generation"), "only with HOST_LINK_KIND_PCIE");
  }
  return CheckBandwidth(absl::StrCat(prefix, "bytes_per_second_per_gpu"),
                        link.bytes_per_second_per_gpu());
}

absl::Status ValidateNetwork(absl::string_view prefix, const v1::InstanceNetwork& network) {
  return CheckBandwidth(absl::StrCat(prefix, "gbps"), network.gbps());
}

absl::Status ValidateOfferTopology(const Offer& offer) {
  if (offer.has_scale_up()) {
    if (absl::Status s = ValidateScaleUp("scale_up.", offer.scale_up(), offer.gpus_per_node());
        !s.ok()) {
      return s;
    }
  }
  if (offer.has_scale_out()) {
    if (absl::Status s = ValidateScaleOut("scale_out.", offer.scale_out()); !s.ok()) return s;
  }
  if (offer.has_host_link()) {
    if (absl::Status s = ValidateHostLink("host_link.", offer.host_link()); !s.ok()) return s;
  }
  if (offer.has_network()) return ValidateNetwork("network.", offer.network());
  return absl::OkStatus();
}

}  // namespace gpuadvisor::catalog
