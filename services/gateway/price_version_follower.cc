#include "services/gateway/price_version_follower.h"

#include <utility>

namespace gpuadvisor::gateway {

PriceVersionFollower::PriceVersionFollower(std::unique_ptr<pricing::v1::PricingService::StubInterface> stub,
                                           Options options)
    : stub_(std::move(stub)), options_(options) {}

PriceVersionFollower::~PriceVersionFollower() { Stop(); }

void PriceVersionFollower::Start() {
  follower_ = std::thread([this] { Follow(); });
}

void PriceVersionFollower::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    if (active_call_ != nullptr) active_call_->TryCancel();
  }
  if (follower_.joinable()) follower_.join();
}

std::string PriceVersionFollower::Current() const {
  absl::MutexLock lock(&mu_);
  return version_;
}

void PriceVersionFollower::Follow() {
  while (true) {
    grpc::ClientContext context;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      active_call_ = &context;
    }
    std::unique_ptr<grpc::ClientReaderInterface<pricing::v1::WatchPricesResponse>> reader =
        stub_->WatchPrices(&context, pricing::v1::WatchPricesRequest());
    pricing::v1::WatchPricesResponse update;
    while (reader->Read(&update)) {
      absl::MutexLock lock(&mu_);
      version_ = update.price_book().version();
    }
    reader->Finish();
    absl::MutexLock lock(&mu_);
    version_.clear();  // a change could be missed while disconnected
    active_call_ = nullptr;
    if (stopping_) return;
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.retry_interval);
  }
}

}  // namespace gpuadvisor::gateway
