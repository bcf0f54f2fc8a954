#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_AZURE_RETAIL_IMPORT_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_AZURE_RETAIL_IMPORT_H_

// Import of Azure Retail Prices API pages (GET
// https://prices.azure.com/api/retail/prices?$filter=..., unauthenticated,
// 100 items a page, the next page in `NextPageLink`): a page
// {"BillingCurrency", "Items": [...], "NextPageLink", "Count"}, or a list of
// such pages. Format notes: tests/data/azure-retail/SOURCE.md.
//
// An item is a row. Kept: serviceName "Virtual Machines", currencyCode USD,
// unitOfMeasure "1 Hour", a Linux meter (productName without "Windows"),
// an armSkuName the catalog knows (the GPU model, count and topology come
// from the known offer of that instance type, import/offer_shape.h: never its
// terms, flags or dates), retailPrice above 0:
//   type Consumption                   -> on-demand
//   type Consumption, meterName "* Spot" -> spot
//   type Reservation, reservationTerm "1 Year" -> reserved; the API gives the
//     whole term's price, divided by 8,760 hours (no Offer.commitments: the
//     term is pricing's BillingRule.reserved_price_term for azure)
// Rejected by reason: "Low Priority" meters (retired), DevTestConsumption,
// 3-year reservations, Windows, other units or currencies, unknown sizes, and
// the rows of a size and region with no on-demand row.
// Offers get id "azure/<armSkuName>/<armRegionName>".

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/import/import_report.h"

namespace gpuadvisor::catalog {

// kInvalidArgument "<file_name>: ..." when the text is not JSON, a page has
// no "Items" list, or items are read but none has a numeric retailPrice (a
// changed schema).
absl::StatusOr<ImportedOffers> ImportAzureRetailPrices(
    absl::string_view json_text, absl::string_view file_name,
    const google::protobuf::RepeatedPtrField<gpuadvisor::catalog::v1::Offer>& known_offers);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_AZURE_RETAIL_IMPORT_H_
