#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_OFFER_SHAPE_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_OFFER_SHAPE_H_

// The machine of a known offer, for the importers that price an instance
// type without describing it (AWS Price List, GCP billing, Azure Retail, OCI
// price list): they take the GPUs, memory and topology from the catalog's
// own row of that type and set the price, region and dates from their file.
//
// What is copied is the machine, the same in every region and under every
// price: provider, instance_type, gpu_model, gpus_per_node, nodes, vcpus,
// ram_bytes, local_disk_bytes, link, link_bytes_per_second, fabric,
// fabric_gbps, max_nodes, scale_up, scale_out, host_link, network, host_tier,
// and the price budget of the catalog's files (stale_after_seconds: policy,
// not a price; a refresh sets its source's own).
//
// Never copied, because each belongs to one price, region, term or sighting
// of the known row: id, region, availability, the prices (on_demand, spot,
// reserved, spot_min/max, spot_zones), commitments (an AWS Capacity Block or
// a GCP committed-use term is sold per region, at its own price and date),
// price_flags and warnings (the load guards' findings about the known row's
// prices; they run again on every load), source, as_of, price_source,
// priced_at, the spot price's own date and source, host_reliability (one
// marketplace host's record) and last_seen_available. An importer fills
// them from its own file, where the file has them (docs/catalog.md, "Import
// formats": "What an import copies from a known row").

#include "gpuadvisor/catalog/v1/catalog.pb.h"

namespace gpuadvisor::catalog {

gpuadvisor::catalog::v1::Offer MachineShapeOf(const gpuadvisor::catalog::v1::Offer& known);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_OFFER_SHAPE_H_
