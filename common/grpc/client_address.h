#ifndef GPUADVISOR_COMMON_GRPC_CLIENT_ADDRESS_H_
#define GPUADVISOR_COMMON_GRPC_CLIENT_ADDRESS_H_

// Who the client of a call is, for per-client limits, when proxies stand in
// between: X-Forwarded-For and Forwarded (RFC 7239) are believed only when
// the hop that wrote them is a configured proxy range.
//
//   absl::StatusOr<ProxyRanges> proxies = ProxyRanges::Parse({"10.0.0.0/8"});
//   ClientAddress("10.1.2.3", "203.0.113.9, 10.4.4.4", "", *proxies)
//       == "203.0.113.9"
//
// Plain C++ (no gRPC); thread-safe once built.

#include <array>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuadvisor {

class ProxyRanges {
 public:
  // CIDR ranges ("10.0.0.0/8", "fd00::/8") or single addresses ("127.0.0.1").
  // kInvalidArgument naming the entry that does not parse.
  static absl::StatusOr<ProxyRanges> Parse(const std::vector<std::string>& cidrs);

  // Whether `ip` ("10.1.2.3", "::1", "::ffff:10.1.2.3") lies in a range.
  bool Contains(absl::string_view ip) const;
  bool empty() const { return ranges_.empty(); }

 private:
  struct Range {
    std::array<unsigned char, 16> address{};  // IPv4 as ::ffff:a.b.c.d
    int prefix_bits = 0;                      // of the 128
  };
  std::vector<Range> ranges_;
};

// The client's address: `peer_ip` (the TCP peer) unless it is a trusted
// proxy; then the hops the proxies recorded are walked from the right (the
// nearest) and the first that is not a trusted proxy is the client.
// `forwarded` (RFC 7239 "for=" elements) is read when present, else
// `x_forwarded_for`. A hop that is not an address ("unknown", a token) stops
// the walk at the last trusted proxy.
std::string ClientAddress(absl::string_view peer_ip, absl::string_view x_forwarded_for,
                          absl::string_view forwarded, const ProxyRanges& proxies);

// "10.1.2.3" from "ipv4:10.1.2.3:5000", "::1" from "ipv6:[::1]:5000" (gRPC's
// peer strings); "" when it holds no address.
std::string IpOfPeer(absl::string_view grpc_peer);

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_CLIENT_ADDRESS_H_
