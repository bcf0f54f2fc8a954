#include "services/pricing/price_follower.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/time/clock.h"

namespace gpuadvisor::pricing {

PriceFollower::PriceFollower(std::unique_ptr<v1::PricingService::StubInterface> writer, PriceStore* store,
                             Options options)
    : writer_(std::move(writer)), store_(store), options_(options) {}

PriceFollower::~PriceFollower() { Stop(); }

void PriceFollower::Start() {
  follower_ = std::thread([this] { Follow(); });
}

void PriceFollower::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    if (active_call_ != nullptr) active_call_->TryCancel();
  }
  if (follower_.joinable()) follower_.join();
}

double PriceFollower::AgeSeconds() const {
  absl::MutexLock lock(&mu_);
  if (!has_book_) return -1;
  const absl::Duration silent = absl::Now() - last_message_;
  return silent <= 2 * options_.heartbeat_interval ? 0 : absl::ToDoubleSeconds(silent);
}

bool PriceFollower::WaitForVersion(const std::string& version, absl::Time deadline) const {
  std::shared_ptr<const PriceBook> book = store_->Current();
  while (book == nullptr || book->version() != version) {
    if (absl::Now() >= deadline) return false;
    book = store_->WaitForChange(book == nullptr ? "" : book->version(),
                                 std::min(deadline, absl::Now() + absl::Milliseconds(100)));
  }
  return true;
}

void PriceFollower::Follow() {
  // A watchdog ends a stream that stays silent (a hung or partitioned writer).
  std::thread watchdog([this] {
    absl::MutexLock lock(&mu_);
    while (!stopping_) {
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::Milliseconds(100));
      if (active_call_ != nullptr &&
          absl::Now() - last_heard_ > options_.heartbeat_interval * options_.missed_heartbeats) {
        active_call_->TryCancel();
        last_heard_ = absl::InfiniteFuture();  // once per stream
      }
    }
  });
  std::string known;
  while (true) {
    grpc::ClientContext context;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
      active_call_ = &context;
      last_heard_ = absl::Now();
    }
    v1::WatchPricesRequest request;
    request.set_known_version(known);
    request.set_heartbeat_interval_millis(
        static_cast<int32_t>(absl::ToInt64Milliseconds(options_.heartbeat_interval)));
    std::unique_ptr<grpc::ClientReaderInterface<v1::WatchPricesResponse>> reader =
        writer_->WatchPrices(&context, request);
    v1::WatchPricesResponse update;
    while (reader->Read(&update)) {
      {
        absl::MutexLock lock(&mu_);
        last_heard_ = last_message_ = absl::Now();
      }
      if (!update.has_price_book()) continue;  // a heartbeat
      const std::string version = update.price_book().version();
      absl::StatusOr<std::shared_ptr<const PriceBook>> book = PriceBook::Create(*update.mutable_price_book());
      if (!book.ok()) {
        std::fprintf(stderr, "pricing follower: rejected the writer's book %s: %s\n", version.c_str(),
                     book.status().ToString().c_str());
        continue;
      }
      if ((*book)->version() != version) {
        std::fprintf(stderr, "pricing follower: the writer's book %s hashes to %s here (version skew)\n",
                     version.c_str(), (*book)->version().c_str());
      }
      known = version;
      store_->Set(*book);
      absl::MutexLock lock(&mu_);
      has_book_ = true;
    }
    const grpc::Status status = reader->Finish();
    absl::MutexLock lock(&mu_);
    active_call_ = nullptr;
    if (stopping_) break;
    if (!status.ok()) {
      std::fprintf(stderr, "pricing follower: watch of the writer ended: %s; reconnecting\n",
                   status.error_message().c_str());
    }
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.retry_interval);
  }
  watchdog.join();
}

}  // namespace gpuadvisor::pricing
