#ifndef GPUADVISOR_COMMON_GRPC_LIMITS_H_
#define GPUADVISOR_COMMON_GRPC_LIMITS_H_

// Receive limits sized to each server's contract: the largest request any RPC
// of that server legitimately takes, with headroom. A larger request is
// refused by gRPC with RESOURCE_EXHAUSTED before any handler runs. Responses
// (a catalog snapshot) are bounded separately by ServerOptions::max_send_bytes.

#include <string_view>

namespace gpuadvisor {

// Gateway (public): Recommend / Estimate and the pass-through listings carry a
// workload, constraints and a few filter lists; the largest realistic one is a
// few KB. 1 MiB leaves room for long provider/region lists.
inline constexpr int kGatewayMaxRequestBytes = 1 << 20;

// Catalog: ListOffers filters, WatchCatalog's known version, an empty
// ReloadCatalog. Small.
inline constexpr int kCatalogMaxRequestBytes = 1 << 20;

// Sizing: one Estimate for every distinct GPU configuration of the catalog
// (hundreds, ~200 bytes each, with topology); 8 MiB covers a 30,000-offer
// catalog where every offer were its own configuration.
inline constexpr int kSizingMaxRequestBytes = 8 << 20;

// Pricing: a Quote holds at most max(300, 20 x max_results) items of ~80
// bytes; an UpdatePrices (admin, authenticated before it is read) may carry a
// whole price book: 30,000 offers x ~120 bytes = 3.6 MB. 8 MiB.
inline constexpr int kPricingMaxRequestBytes = 8 << 20;

// The limit above for a server binary by its name ("gateway", "catalog",
// "sizing", "pricing"); 1 MiB for any other.
inline int MaxRequestBytesFor(const char* name) {
  const std::string_view n(name);
  if (n == "sizing") return kSizingMaxRequestBytes;
  if (n == "pricing") return kPricingMaxRequestBytes;
  if (n == "catalog") return kCatalogMaxRequestBytes;
  return kGatewayMaxRequestBytes;
}

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_GRPC_LIMITS_H_
