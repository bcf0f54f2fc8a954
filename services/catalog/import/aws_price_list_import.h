#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_AWS_PRICE_LIST_IMPORT_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_AWS_PRICE_LIST_IMPORT_H_

// Import of an AWS Price List offer file for AmazonEC2 (the Bulk API's
// offers/v1.0/aws/AmazonEC2/current/<region>/index.json): products keyed by
// SKU, terms.OnDemand[sku][sku.offerTermCode].priceDimensions[...]. Format
// notes and pitfalls: tests/data/aws-price-list/SOURCE.md.
//
// A product is a row. Kept: productFamily "Compute Instance", Linux, Shared
// tenancy, capacitystatus Used, preInstalledSw NA, marketoption OnDemand, with
// an on-demand term priced per hour ("Hrs") in USD above 0. Others are
// rejected by reason (Capacity Block products carry a $0.00 on-demand term
// and are billed by a separate upfront fee; China regions price in CNY).
// The file has no GPU model (`gpuMemory` is "NA"): the GPU model, count and
// topology come from the catalog's known offers of the same instance type;
// an instance type the catalog does not know is rejected. vCPUs and memory
// ("1152 GiB") come from the file, the region from `regionCode`.
// Offers get id "aws/<instance type>/<region>".

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/import/import_report.h"

namespace gpuadvisor::catalog {

// kInvalidArgument "<file_name>: ..." when the file is not JSON or has no
// "products" object.
absl::StatusOr<ImportedOffers> ImportAwsPriceList(
    absl::string_view json_text, absl::string_view file_name,
    const google::protobuf::RepeatedPtrField<gpuadvisor::catalog::v1::Offer>& known_offers);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_AWS_PRICE_LIST_IMPORT_H_
