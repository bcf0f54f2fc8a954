#include "services/catalog/import/offer_shape.h"

namespace gpuadvisor::catalog {

v1::Offer MachineShapeOf(const v1::Offer& known) {
  v1::Offer shape;
  shape.set_provider(known.provider());
  shape.set_instance_type(known.instance_type());
  shape.set_gpu_model(known.gpu_model());
  shape.set_gpus_per_node(known.gpus_per_node());
  shape.set_nodes(known.nodes());
  shape.set_vcpus(known.vcpus());
  shape.set_ram_bytes(known.ram_bytes());
  shape.set_local_disk_bytes(known.local_disk_bytes());
  shape.set_link(known.link());
  shape.set_link_bytes_per_second(known.link_bytes_per_second());
  shape.set_fabric(known.fabric());
  shape.set_fabric_gbps(known.fabric_gbps());
  shape.set_max_nodes(known.max_nodes());
  if (known.has_scale_up()) *shape.mutable_scale_up() = known.scale_up();
  if (known.has_scale_out()) *shape.mutable_scale_out() = known.scale_out();
  if (known.has_host_link()) *shape.mutable_host_link() = known.host_link();
  if (known.has_network()) *shape.mutable_network() = known.network();
  shape.set_host_tier(known.host_tier());
  shape.set_stale_after_seconds(known.stale_after_seconds());
  return shape;
}

}  // namespace gpuadvisor::catalog
