#include "services/pricing/price_follower.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace gpuadvisor::pricing {
namespace {

// Validates the writer's book and Sets it into `store`.
absl::Status TakeBook(v1::PriceBook data, PriceBooks* store, const std::string& name) {
  const absl::Time start = absl::Now();
  const std::string version = data.version();
  const int prices = data.prices_size();
  absl::StatusOr<std::shared_ptr<const PriceBook>> book = PriceBook::Create(std::move(data));
  if (!book.ok()) {
    return absl::Status(book.status().code(), absl::StrCat("rejected the pricing writer's book ",
                                                           version, ": ", book.status().message()));
  }
  if ((*book)->version() != version) {
    std::fprintf(stderr, "%s: the pricing writer's book %s hashes to %s here (version skew)\n",
                 name.c_str(), version.c_str(), (*book)->version().c_str());
  }
  store->Set(*book);
  const absl::Duration took = absl::Now() - start;
  if (took > absl::Seconds(1)) {  // a large book: say how long it took
    std::fprintf(stderr, "%s: price book %s (%d prices) validated and swapped in in %.1f s\n",
                 name.c_str(), version.c_str(), prices, absl::ToDoubleSeconds(took));
  }
  return absl::OkStatus();
}

}  // namespace

PriceFollower::Watch::Protocol PriceFollower::Protocol(v1::PricingService::StubInterface* writer,
                                                       PriceBooks* store, const std::string& name) {
  Watch::Protocol protocol;
  protocol.peer = "the pricing writer";
  protocol.value_name = "price book";
  protocol.version_header = kPriceWatchVersionHeader;
  protocol.heartbeat_header = kPriceWatchHeartbeatHeader;
  protocol.open = [writer](grpc::ClientContext* context, const v1::WatchPricesRequest& request) {
    return writer->WatchPrices(context, request);
  };
  protocol.value_of = [](v1::WatchPricesResponse* response) -> v1::PriceBook* {
    return response->has_price_book() ? response->mutable_price_book() : nullptr;
  };
  protocol.apply = [store, name](v1::PriceBook book, std::string, const std::string&) {
    return TakeBook(std::move(book), store, name);
  };
  protocol.serving_version = [store] {
    std::shared_ptr<const PriceBook> serving = store->Current();
    return serving != nullptr ? serving->version() : std::string();
  };
  return protocol;
}

PriceFollower::PriceFollower(std::unique_ptr<v1::PricingService::StubInterface> writer,
                             PriceBooks* store, Options options)
    : writer_(std::move(writer)),
      store_(store),
      watch_(Protocol(writer_.get(), store, options.name), std::move(options)) {}

PriceFollower::~PriceFollower() { Stop(); }

void PriceFollower::Start() { watch_.Start(); }

void PriceFollower::Stop() { watch_.Stop(); }

bool PriceFollower::WaitForVersion(const std::string& version, absl::Time deadline) const {
  std::shared_ptr<const PriceBook> book = store_->Current();
  while (book == nullptr || book->version() != version) {
    if (absl::Now() >= deadline) return false;
    book = store_->WaitForChange(book == nullptr ? "" : book->version(),
                                 std::min(deadline, absl::Now() + absl::Milliseconds(100)));
  }
  return true;
}

}  // namespace gpuadvisor::pricing
