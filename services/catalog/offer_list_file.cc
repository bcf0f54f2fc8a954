#include "services/catalog/offer_list_file.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/text_format.h"
#include "services/catalog/fingerprint.h"
#include "services/catalog/located_text_proto.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::OfferList;

constexpr char kMagic[] = "gpuadvisor-offer-list";

struct Header {
  int64_t offers = -1;
  int64_t bytes = -1;
  std::string checksum;
};

absl::StatusOr<Header> ParseHeader(absl::string_view line, const std::string& path) {
  const std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
  if (fields.size() < 5 || fields[0] != kMagic || fields[1] != "1") {
    return absl::DataLossError(absl::StrCat(path, ": not a version 1 ", kMagic, " header"));
  }
  Header h;
  for (size_t i = 2; i < fields.size(); ++i) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(fields[i], absl::MaxSplits('=', 1));
    if (kv.first == "offers" && !absl::SimpleAtoi(kv.second, &h.offers)) h.offers = -1;
    if (kv.first == "bytes" && !absl::SimpleAtoi(kv.second, &h.bytes)) h.bytes = -1;
    if (kv.first == "fnv1a64") h.checksum = std::string(kv.second);
  }
  if (h.offers < 0 || h.bytes < 0 || h.checksum.empty()) {
    return absl::DataLossError(absl::StrCat(path, ": header lacks offers, bytes or fnv1a64"));
  }
  return h;
}

absl::StatusOr<OfferList> DecodeBinary(absl::string_view bytes, const std::string& path) {
  const size_t newline = bytes.find('\n');
  if (newline == absl::string_view::npos || newline > 4096) {
    return absl::DataLossError(absl::StrCat(path, ": no header line"));
  }
  absl::StatusOr<Header> header = ParseHeader(bytes.substr(0, newline), path);
  if (!header.ok()) return header.status();
  const absl::string_view body = bytes.substr(newline + 1);
  if (static_cast<int64_t>(body.size()) != header->bytes) {
    return absl::DataLossError(absl::StrCat(path, ": ", body.size(),
                                            " bytes after the header, expected ", header->bytes,
                                            " (truncated or appended)"));
  }
  if (FingerprintHex(body) != header->checksum) {
    return absl::DataLossError(absl::StrCat(path, ": checksum mismatch"));
  }
  OfferList list;
  if (!list.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    return absl::DataLossError(absl::StrCat(path, ": not a serialized OfferList"));
  }
  if (list.offers_size() != header->offers) {
    return absl::DataLossError(absl::StrCat(path, ": holds ", list.offers_size(),
                                            " offers, header says ", header->offers));
  }
  return list;
}

}  // namespace

OfferListFileFormat OfferListFileFormatFor(absl::string_view path) {
  return absl::EndsWith(path, ".textproto") || absl::EndsWith(path, ".txtpb")
             ? OfferListFileFormat::kText
             : OfferListFileFormat::kBinary;
}

std::string EncodeOfferListFile(const OfferList& list, OfferListFileFormat format,
                                absl::string_view header_comment) {
  if (format == OfferListFileFormat::kText) {
    std::string text;
    google::protobuf::TextFormat::PrintToString(list, &text);
    return absl::StrCat(header_comment, text);
  }
  std::string body;
  list.SerializeToString(&body);
  std::string file = BinaryOfferListHeader(body, list.offers_size());
  file.append(body);
  return file;
}

std::string BinaryOfferListHeader(absl::string_view body, int64_t offers) {
  return absl::StrCat(kMagic, " 1 offers=", offers, " bytes=", body.size(),
                      " fnv1a64=", FingerprintHex(body), "\n");
}

absl::StatusOr<OfferList> DecodeOfferListFile(absl::string_view bytes, const std::string& path) {
  if (absl::StartsWith(bytes, kMagic)) return DecodeBinary(bytes, path);
  OfferList list;
  google::protobuf::TextFormat::ParseInfoTree tree;
  if (absl::Status s = ParseWithLocations(std::string(bytes), path, &list, &tree); !s.ok()) {
    return s;
  }
  return list;
}

}  // namespace gpuadvisor::catalog
