#ifndef GPUADVISOR_SERVICES_GATEWAY_PRICE_VERSION_FOLLOWER_H_
#define GPUADVISOR_SERVICES_GATEWAY_PRICE_VERSION_FOLLOWER_H_

// Follows PricingService.WatchPrices and keeps the current price-book version,
// so the gateway can tell whether a cached answer is still priced by the book
// that is live now. While the stream is down the version is unknown ("") and
// nothing is served from or stored in the response cache. Thread-safe.

#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "grpcpp/client_context.h"

namespace gpuadvisor::gateway {

class PriceVersionFollower {
 public:
  struct Options {
    absl::Duration retry_interval = absl::Seconds(1);  // between reconnects
  };

  PriceVersionFollower(std::unique_ptr<pricing::v1::PricingService::StubInterface> stub, Options options);
  ~PriceVersionFollower();  // Stop()s

  void Start();  // follows in a background thread until Stop()
  void Stop();

  // The live price-book version; "" while unknown or disconnected.
  std::string Current() const;

 private:
  void Follow();

  std::unique_ptr<pricing::v1::PricingService::StubInterface> stub_;
  const Options options_;
  std::thread follower_;

  mutable absl::Mutex mu_;
  std::string version_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* active_call_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_PRICE_VERSION_FOLLOWER_H_
