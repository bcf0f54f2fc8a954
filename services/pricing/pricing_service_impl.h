#ifndef GPUADVISOR_SERVICES_PRICING_PRICING_SERVICE_IMPL_H_
#define GPUADVISOR_SERVICES_PRICING_PRICING_SERVICE_IMPL_H_

// gRPC adapter for gpuadvisor.pricing.v1.PricingService over a PriceStore.
// Each call prices from one book (a shared_ptr taken at the start), so no
// quote mixes two versions; a Quote naming a catalog version is priced by
// that version's book (FAILED_PRECONDITION when the store does not hold it).
// WatchPrices runs on the shared watch design (common/grpc/watch_hub.h): one
// encoding per book version for every watcher, no thread per watcher, slow
// watchers dropped with RESOURCE_EXHAUSTED, a watcher cap and heartbeats.
// A book larger than one message (a million offers is ~80 MB) goes in
// chunks to followers that set WatchPricesRequest.accept_chunks
// (common/grpc/watch_chunks.h, the same design as WatchCatalog); one that
// did not gets the whole book while it fits, else FAILED_PRECONDITION.
// UpdatePrices checks the admin token before it reads the request.
// Quote is CPU-only and runs on the gRPC callback API: answered on the gRPC
// thread that delivered the request (no handler thread, no handoff).
// Thread-safe.

#include <atomic>
#include <functional>
#include <string>

#include "common/grpc/watch_chunks.h"
#include "common/grpc/watch_hub.h"
#include "common/metrics/metrics.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "services/pricing/price_follower.h"
#include "services/pricing/price_store.h"

namespace gpuadvisor::pricing {

class PricingServiceImpl final
    : public v1::PricingService::WithCallbackMethod_Quote<v1::PricingService::Service> {
 public:
  struct Options {
    std::string admin_token;          // empty disables UpdatePrices
    double watch_poll_seconds = 1.0;  // unused; kept for callers' designated initializers
    // Makes accepted UpdatePrices durable before they go live (see
    // PriceStore::Update); null = in memory only.
    PriceStore::Persist persist = nullptr;
    WatchHub::Options watch = WatchHub::Options();
    // WatchPrices: book data per chunk and the largest whole book sent.
    ChunkEncoding watch_encoding = ChunkEncoding();
    // On a follower replica (docs/reliability.md, single writer): sends an
    // authenticated UpdatePrices on to the writer and answers with the
    // writer's answer (once this replica serves that book). Null on the
    // writer, which applies updates itself.
    std::function<grpc::Status(grpc::ServerContext*, const v1::UpdatePricesRequest&,
                               v1::UpdatePricesResponse*)>
        forward_update = nullptr;
  };

  // `store` and `metrics` must outlive the service; the store holds a book.
  PricingServiceImpl(PriceStore* store, Metrics* metrics, Options options);

  // Wakes and ends WatchPrices streams (before server shutdown).
  void Shutdown();

  // (The synchronous overload is the generated one that is never called.)
  using v1::PricingService::WithCallbackMethod_Quote<v1::PricingService::Service>::Quote;
  grpc::ServerUnaryReactor* Quote(grpc::CallbackServerContext* context,
                                  const v1::QuoteRequest* request,
                                  v1::QuoteResponse* response) override;
  grpc::Status GetPriceBook(grpc::ServerContext* context, const v1::GetPriceBookRequest* request,
                            v1::GetPriceBookResponse* response) override;
  grpc::Status UpdatePrices(grpc::ServerContext* context, const v1::UpdatePricesRequest* request,
                            v1::UpdatePricesResponse* response) override;
  // WatchPrices is served by the WatchHub (callback API), not a sync handler.

  const WatchHub& watch_hub() const { return hub_; }

 private:
  PriceStore* store_;
  Metrics* metrics_;
  const Options options_;
  std::atomic<bool> shutting_down_{false};
  WatchHub hub_;
  MethodMetrics& quote_rpc_;  // resolved once
};

// The WatchPrices encoding of `book`: the whole WatchPricesResponse (or
// whole_refused when larger than encoding.max_message_bytes) and its chunks.
std::shared_ptr<const WatchHub::Encoded> EncodePriceBook(const v1::PriceBook& book,
                                                         const ChunkEncoding& encoding);

// The WatchPrices source over `store`, which must outlive the hub.
WatchHub::Source PriceWatchSource(PriceStore* store, ChunkEncoding encoding = ChunkEncoding());

// Initial metadata of a WatchPrices stream (kPriceWatchVersionHeader,
// kPriceWatchHeartbeatHeader): services/pricing/price_follower.h.

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_PRICING_SERVICE_IMPL_H_
