#include "common/grpc/client_address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpuadvisor {
namespace {

// 16 bytes, IPv4 mapped into IPv6 so one comparison covers both.
std::optional<std::array<unsigned char, 16>> ParseIp(absl::string_view text) {
  const std::string ip(absl::StripAsciiWhitespace(text));
  std::array<unsigned char, 16> out{};
  in_addr v4;
  if (inet_pton(AF_INET, ip.c_str(), &v4) == 1) {
    out[10] = out[11] = 0xff;
    std::memcpy(out.data() + 12, &v4, 4);
    return out;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, ip.c_str(), &v6) == 1) {
    std::memcpy(out.data(), &v6, 16);
    return out;
  }
  return std::nullopt;
}

bool IsV4Mapped(const std::array<unsigned char, 16>& a) {
  for (int i = 0; i < 10; ++i) {
    if (a[static_cast<size_t>(i)] != 0) return false;
  }
  return a[10] == 0xff && a[11] == 0xff;
}

// A hop as written by a proxy: "203.0.113.9", "[2001:db8::1]:4711",
// "\"[2001:db8::1]\"", "198.51.100.7:8080"; the address alone, or "".
std::string HopAddress(absl::string_view hop) {
  hop = absl::StripAsciiWhitespace(hop);
  absl::ConsumePrefix(&hop, "\"");
  absl::ConsumeSuffix(&hop, "\"");
  if (absl::ConsumePrefix(&hop, "[")) {
    const size_t close = hop.find(']');
    return close == absl::string_view::npos ? "" : std::string(hop.substr(0, close));
  }
  // One colon: IPv4 with a port. More: a bare IPv6 address.
  if (std::count(hop.begin(), hop.end(), ':') == 1) hop = hop.substr(0, hop.find(':'));
  return ParseIp(hop).has_value() ? std::string(hop) : "";
}

// The hops, nearest last, from Forwarded's for= (when present) or XFF.
std::vector<std::string> Hops(absl::string_view x_forwarded_for, absl::string_view forwarded) {
  std::vector<std::string> hops;
  if (!absl::StripAsciiWhitespace(forwarded).empty()) {
    for (absl::string_view element : absl::StrSplit(forwarded, ',')) {
      std::string address;
      for (absl::string_view pair : absl::StrSplit(element, ';')) {
        pair = absl::StripAsciiWhitespace(pair);
        if (pair.size() > 4 && absl::EqualsIgnoreCase(pair.substr(0, 4), "for=")) {
          address = HopAddress(pair.substr(4));
        }
      }
      hops.push_back(address);
    }
    return hops;
  }
  for (absl::string_view hop : absl::StrSplit(x_forwarded_for, ',', absl::SkipWhitespace())) {
    hops.push_back(HopAddress(hop));
  }
  return hops;
}

}  // namespace

absl::StatusOr<ProxyRanges> ProxyRanges::Parse(const std::vector<std::string>& cidrs) {
  ProxyRanges ranges;
  for (const std::string& entry : cidrs) {
    if (absl::StripAsciiWhitespace(entry).empty()) continue;
    std::vector<std::string> parts = absl::StrSplit(entry, '/');
    std::optional<std::array<unsigned char, 16>> address = ParseIp(parts[0]);
    const bool v4 = address.has_value() && IsV4Mapped(*address);
    int bits = v4 ? 32 : 128;
    if (!address.has_value() || parts.size() > 2 ||
        (parts.size() == 2 &&
         (!absl::SimpleAtoi(parts[1], &bits) || bits < 0 || bits > (v4 ? 32 : 128)))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "trusted proxies: \"", entry, "\" is not an address or a CIDR range (10.0.0.0/8)"));
    }
    ranges.ranges_.push_back({*address, v4 ? bits + 96 : bits});
  }
  return ranges;
}

bool ProxyRanges::Contains(absl::string_view ip) const {
  std::optional<std::array<unsigned char, 16>> address = ParseIp(ip);
  if (!address.has_value()) return false;
  for (const Range& range : ranges_) {
    bool match = true;
    for (int bit = 0; bit < range.prefix_bits && match; ++bit) {
      const size_t byte = static_cast<size_t>(bit / 8);
      const int mask = 0x80 >> (bit % 8);
      match = ((*address)[byte] & mask) == (range.address[byte] & mask);
    }
    if (match) return true;
  }
  return false;
}

std::string ClientAddress(absl::string_view peer_ip, absl::string_view x_forwarded_for,
                          absl::string_view forwarded, const ProxyRanges& proxies) {
  std::string client(peer_ip);
  if (!proxies.Contains(client)) return client;
  std::vector<std::string> hops = Hops(x_forwarded_for, forwarded);
  for (auto hop = hops.rbegin(); hop != hops.rend(); ++hop) {
    if (hop->empty()) return client;  // "unknown" or garbage: stop at the last proxy
    client = *hop;
    if (!proxies.Contains(client)) return client;
  }
  return client;
}

std::string IpOfPeer(absl::string_view peer) {
  if (absl::ConsumePrefix(&peer, "ipv6:")) {
    absl::ConsumePrefix(&peer, "%5B");
    if (absl::ConsumePrefix(&peer, "[")) return std::string(peer.substr(0, peer.find(']')));
    const size_t end = peer.find("%5D");
    return std::string(peer.substr(0, end));
  }
  if (absl::ConsumePrefix(&peer, "ipv4:")) return std::string(peer.substr(0, peer.rfind(':')));
  return "";
}

}  // namespace gpuadvisor
