#include "services/gateway/recommend_text.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuadvisor::gateway::recommend {

using catalog::v1::FabricType;
using catalog::v1::LinkType;
using catalog::v1::PurchaseOption;

std::string Fixed(double value, int precision) {
  char buffer[48];
  const std::to_chars_result out =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed, precision);
  if (out.ec != std::errc()) return absl::StrFormat("%.*f", precision, value);
  return std::string(buffer, out.ptr);
}

std::string SignedFixed(double value, int precision) {
  std::string text = Fixed(value, precision);
  if (text.empty() || text[0] != '-') text.insert(text.begin(), '+');
  return text;
}

std::string LinkName(LinkType link) {
  switch (link) {
    case catalog::v1::LINK_TYPE_NVLINK:
      return "NVLink";
    case catalog::v1::LINK_TYPE_PCIE:
      return "PCIe";
    case catalog::v1::LINK_TYPE_INFINITY_FABRIC:
      return "Infinity Fabric";
    default:
      return "no link";
  }
}

std::string FabricName(FabricType fabric) {
  switch (fabric) {
    case catalog::v1::FABRIC_TYPE_INFINIBAND:
      return "InfiniBand";
    case catalog::v1::FABRIC_TYPE_EFA:
      return "EFA";
    case catalog::v1::FABRIC_TYPE_ROCE:
      return "RoCE";
    case catalog::v1::FABRIC_TYPE_ETHERNET:
      return "Ethernet";
    default:
      return "no fabric";
  }
}

std::string Gigabytes(double gb) { return Fixed(gb, gb < 100 ? 1 : 0); }

const char* OptionName(PurchaseOption option) {
  switch (option) {
    case catalog::v1::PURCHASE_OPTION_SPOT:
      return "spot";
    case catalog::v1::PURCHASE_OPTION_RESERVED:
      return "reserved";
    default:
      return "on-demand";
  }
}

}  // namespace gpuadvisor::gateway::recommend
