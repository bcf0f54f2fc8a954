#ifndef GPUADVISOR_SERVICES_CATALOG_IMPORT_OCI_PRICE_LIST_IMPORT_H_
#define GPUADVISOR_SERVICES_CATALOG_IMPORT_OCI_PRICE_LIST_IMPORT_H_

// Import of Oracle Cloud's public price list (GET
// https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD,
// no key): {"items": [{"partNumber", "displayName", "metricName",
// "serviceCategory", "currencyCodeLocalizations": [{"currencyCode",
// "prices": [{"model", "value"}]}]}], ...}, or a list of such pages. Format
// notes: tests/data/oci-price-list/SOURCE.md.
//
// OCI prices GPU shapes per GPU-hour, the same in every region. An item is a
// row. Kept: metricName "GPU Per Hour", a "PAY_AS_YOU_GO" USD price above 0,
// a displayName "... GPU - <name>" whose <name> (spaces dropped, any case)
// is the GPU part of a known OCI shape "<BM|VM>.GPU.<name>.<count>" (BM.GPU.
// H100.8, VM.GPU.A10.1; shapes such as BM.GPU4.8 carry no name and are not
// priced from the list). Each matching shape becomes an offer at count x the
// price, with the known offer's facts and region ("global"). The list has no
// preemptible prices (has_spot_prices false).

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "services/catalog/import/import_report.h"

namespace gpuadvisor::catalog {

// kInvalidArgument "<file_name>: ..." when the text is not JSON, a page has
// no "items" list, or items are read but none has "currencyCodeLocalizations"
// (a changed schema).
absl::StatusOr<ImportedOffers> ImportOciPriceList(
    absl::string_view json_text, absl::string_view file_name,
    const google::protobuf::RepeatedPtrField<gpuadvisor::catalog::v1::Offer>& known_offers);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_IMPORT_OCI_PRICE_LIST_IMPORT_H_
