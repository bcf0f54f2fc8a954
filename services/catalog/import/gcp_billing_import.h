#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_GCP_BILLING_IMPORT_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_GCP_BILLING_IMPORT_H_

// Import of GCP Cloud Billing Catalog SKUs for Compute Engine
// (GET cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus): a page
// {"skus": [...], "nextPageToken": ...}, a list of such pages, or the pages'
// SKUs concatenated into one list. Format notes and pitfalls:
// tests/data/gcp-billing-catalog/SOURCE.md.
//
// The API has no machine prices: a GPU machine's price is assembled from its
// GPU, core and RAM SKUs in the same region,
//   gpus x GPU SKU + vCPUs x "<family> Instance Core" + GiB x "<family> Instance Ram",
// for `category.usageType` OnDemand (on-demand), Preemptible (spot) and
// Commit1Yr (reserved = 1-year commitment: reserved_usd_per_hour, no
// Offer.commitments; its term is pricing's BillingRule.reserved_price_term
// for gcp). Which SKUs price which machine
// types is data (data/catalog/gcp_billing_families.csv); the machine shapes
// (GPU model and count, vCPUs, RAM, topology) are those of the catalog's
// known GCP offers (import/offer_shape.h: the machine only, never the known
// row's terms, flags or dates), so only machine types the catalog knows are
// priced, in every region all three SKUs list (`serviceRegions`).
//   money         `units` (a string) + `nanos` x 1e-9 of the first priced
//                 tier of pricingInfo[0]; divided by currencyConversionRate
//                 when not in USD
//   units         h (GPU per GPU-hour, core per vCPU-hour), GiBy.h (RAM)
// Every SKU is a row: kept when it priced at least one offer, else rejected
// with the reason (not a GPU machine component, commitment term not used,
// no machine type of that family in the catalog, unit not hourly, ...).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/import/import_report.h"

namespace gpuadvisor::catalog {

struct GcpSkuFamily {
  std::string machine_prefix;         // "a3-megagpu"
  std::string sku_family;             // "A3Plus"
  std::vector<std::string> gpu_skus;  // {"Nvidia H100 80GB Mega", "Nvidia H100 80GB Plus"}
};

// Reads data/catalog/gcp_billing_families.csv ('#' comments, header
// machine_prefix,sku_family,gpu_skus). kInvalidArgument "<file>:<line>: ...".
absl::StatusOr<std::vector<GcpSkuFamily>> ParseGcpSkuFamilies(absl::string_view text,
                                                              absl::string_view file_name);

// `known_offers`: offers already in the catalog; those of provider "gcp"
// give the machine shapes. Offers get id "gcp/<machine type>/<region>" and
// the shape's topology. kInvalidArgument "<file_name>: ..." when the file is
// not JSON or holds no SKU list.
absl::StatusOr<ImportedOffers> ImportGcpBillingSkus(
    absl::string_view json_text, absl::string_view file_name,
    const std::vector<GcpSkuFamily>& families,
    const google::protobuf::RepeatedPtrField<gpuadvisor::catalog::v1::Offer>& known_offers);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_GCP_BILLING_IMPORT_H_
