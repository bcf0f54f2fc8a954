#include "common/grpc/client_address.h"

#include "gtest/gtest.h"

namespace gpuadvisor {
namespace {

TEST(ProxyRanges, ParsesCidrsAndSingleAddresses) {
  absl::StatusOr<ProxyRanges> ranges =
      ProxyRanges::Parse({"10.0.0.0/8", "192.168.1.7", "fd00::/8"});
  ASSERT_TRUE(ranges.ok()) << ranges.status();
  EXPECT_TRUE(ranges->Contains("10.200.3.4"));
  EXPECT_TRUE(ranges->Contains("::ffff:10.1.1.1"));
  EXPECT_TRUE(ranges->Contains("192.168.1.7"));
  EXPECT_FALSE(ranges->Contains("192.168.1.8"));
  EXPECT_TRUE(ranges->Contains("fd12::1"));
  EXPECT_FALSE(ranges->Contains("fe80::1"));
  EXPECT_FALSE(ranges->Contains("11.0.0.1"));
  EXPECT_FALSE(ranges->Contains("not an address"));
  for (const char* bad : {"10.0.0.0/33", "10.0.0/8", "proxy.local", "::1/129", "1.2.3.4/x"}) {
    absl::StatusOr<ProxyRanges> parsed = ProxyRanges::Parse({bad});
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find(bad), absl::string_view::npos) << bad;
  }
}

TEST(ClientAddress, BelievesForwardedHeadersOnlyFromTrustedProxies) {
  absl::StatusOr<ProxyRanges> proxies = ProxyRanges::Parse({"10.0.0.0/8"});
  ASSERT_TRUE(proxies.ok());
  struct Case {
    const char* peer;
    const char* xff;
    const char* forwarded;
    const char* client;
  };
  const Case cases[] = {
      // No proxy in between: the peer, whatever it claims.
      {"203.0.113.9", "1.2.3.4", "", "203.0.113.9"},
      // A trusted proxy: the hop it recorded.
      {"10.0.0.5", "198.51.100.7", "", "198.51.100.7"},
      // A chain: the nearest untrusted hop, not the spoofable leftmost one.
      {"10.0.0.5", "6.6.6.6, 198.51.100.7, 10.0.0.9", "", "198.51.100.7"},
      // Forwarded (RFC 7239) wins over X-Forwarded-For; ports and brackets go.
      {"10.0.0.5", "1.1.1.1", "for=\"[2001:db8::17]:4711\";proto=https", "2001:db8::17"},
      {"10.0.0.5", "", "for=192.0.2.60:8080, for=10.0.0.7", "192.0.2.60"},
      // "unknown" stops the walk at the last proxy.
      {"10.0.0.5", "", "for=unknown", "10.0.0.5"},
      {"10.0.0.5", "", "", "10.0.0.5"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ClientAddress(c.peer, c.xff, c.forwarded, *proxies), c.client)
        << c.peer << " | " << c.xff << " | " << c.forwarded;
  }
}

TEST(ClientAddress, IpOfGrpcPeers) {
  EXPECT_EQ(IpOfPeer("ipv4:10.0.0.7:51234"), "10.0.0.7");
  EXPECT_EQ(IpOfPeer("ipv6:[::1]:5000"), "::1");
  EXPECT_EQ(IpOfPeer("ipv6:%5B::1%5D:5000"), "::1");
  EXPECT_EQ(IpOfPeer("inproc"), "");
  EXPECT_EQ(IpOfPeer("unix:/tmp/x"), "");
}

}  // namespace
}  // namespace gpuadvisor
