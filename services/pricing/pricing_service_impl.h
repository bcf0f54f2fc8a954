#ifndef GPUADVISOR_SERVICES_PRICING_PRICING_SERVICE_IMPL_H_
#define GPUADVISOR_SERVICES_PRICING_PRICING_SERVICE_IMPL_H_

// gRPC adapter for gpuadvisor.pricing.v1.PricingService over a PriceStore.
// Each call prices from one book (a shared_ptr taken at the start), so no
// quote mixes two versions. Thread-safe.

#include <atomic>
#include <string>

#include "common/metrics/metrics.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "services/pricing/price_book.h"

namespace gpuadvisor::pricing {

class PricingServiceImpl final : public v1::PricingService::Service {
 public:
  struct Options {
    std::string admin_token;  // empty disables UpdatePrices
    double watch_poll_seconds = 1.0;
    // Makes accepted UpdatePrices durable before they go live (see
    // PriceStore::Update); null = in memory only.
    PriceStore::Persist persist = nullptr;
  };

  // `store` and `metrics` must outlive the service; the store holds a book.
  PricingServiceImpl(PriceStore* store, Metrics* metrics, Options options);

  // Wakes and ends WatchPrices streams (before server shutdown).
  void Shutdown();

  grpc::Status Quote(grpc::ServerContext* context, const v1::QuoteRequest* request,
                     v1::QuoteResponse* response) override;
  grpc::Status GetPriceBook(grpc::ServerContext* context, const v1::GetPriceBookRequest* request,
                            v1::GetPriceBookResponse* response) override;
  grpc::Status UpdatePrices(grpc::ServerContext* context, const v1::UpdatePricesRequest* request,
                            v1::UpdatePricesResponse* response) override;
  grpc::Status WatchPrices(grpc::ServerContext* context, const v1::WatchPricesRequest* request,
                           grpc::ServerWriter<v1::WatchPricesResponse>* writer) override;

 private:
  PriceStore* store_;
  Metrics* metrics_;
  const Options options_;
  std::atomic<bool> shutting_down_{false};
};

}  // namespace gpuadvisor::pricing

#endif  // GPUADVISOR_SERVICES_PRICING_PRICING_SERVICE_IMPL_H_
