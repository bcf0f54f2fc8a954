#ifndef GPUADVISOR_SERVICES_CATALOG_OFFER_LIST_FILE_H_
#define GPUADVISOR_SERVICES_CATALOG_OFFER_LIST_FILE_H_

// The file the refresher publishes and the catalog writer reads
// (catalog_server --refreshed_offers): one OfferList, in one of two forms.
//
//   binary (what the refresher writes unless the name ends in .textproto or
//   .txtpb): a one-line header "gpuadvisor-offer-list 1 offers=N bytes=B
//   fnv1a64=H" then B bytes of the serialized OfferList. Parsing 100,000
//   offers this way costs a fraction of the text form (no tokenizer, no
//   line table), and a file that is cut short, appended to or corrupt fails
//   its byte count or checksum: kDataLoss, never a partial list.
//   text (.textproto / .txtpb): protobuf text format, for reading by eye.
//
//   std::string bytes = EncodeOfferListFile(list, OfferListFileFormatFor(path));
//   absl::StatusOr<OfferList> list = DecodeOfferListFile(bytes, path);  // either form

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"

namespace gpuadvisor::catalog {

enum class OfferListFileFormat { kBinary, kText };

// kText for a name ending in ".textproto" or ".txtpb", else kBinary.
OfferListFileFormat OfferListFileFormatFor(absl::string_view path);

// The whole file. `header_comment` (text form only): lines put first, each
// starting with "# ".
std::string EncodeOfferListFile(const gpuadvisor::catalog::v1::OfferList& list,
                                OfferListFileFormat format, absl::string_view header_comment = "");

// The binary form's header line (newline included) for `body`, a serialized
// OfferList of `offers` offers: the file is the header, then the body.
std::string BinaryOfferListHeader(absl::string_view body, int64_t offers);

// Either form, told apart by the binary header. A binary file with a bad
// header, byte count, checksum or offer count is kDataLoss naming `path`; a
// text file with a syntax error is kInvalidArgument with file:line.
absl::StatusOr<gpuadvisor::catalog::v1::OfferList> DecodeOfferListFile(absl::string_view bytes,
                                                                       const std::string& path);

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_OFFER_LIST_FILE_H_
