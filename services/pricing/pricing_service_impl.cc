#include "services/pricing/pricing_service_impl.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/grpc/server.h"
#include "common/status/grpc_status.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace gpuadvisor::pricing {
namespace {

constexpr char kService[] = "gpuadvisor.pricing.v1.PricingService";

grpc::Status NotLoaded() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "price book not loaded yet; retry");
}

// gpuadvisor_pricing_prices_as_of_timestamp_seconds: when the served prices
// were taken, read at scrape time (absent while unknown). The age of the data
// itself, as opposed to when it was last loaded.
class PricesAsOfCollector final : public prometheus::Collectable {
 public:
  explicit PricesAsOfCollector(const PriceStore* store) : store_(store) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    prometheus::MetricFamily family;
    family.name = "gpuadvisor_pricing_prices_as_of_timestamp_seconds";
    family.help = "Unix time the served prices were taken (the price book's prices_as_of).";
    family.type = prometheus::MetricType::Gauge;
    std::shared_ptr<const PriceBook> book = store_->Current();
    if (book != nullptr && book->prices_as_of() != absl::InfinitePast()) {
      prometheus::ClientMetric metric;
      metric.gauge.value = absl::ToDoubleSeconds(book->prices_as_of() - absl::UnixEpoch());
      family.metric.push_back(std::move(metric));
    }
    return {std::move(family)};
  }

 private:
  const PriceStore* store_;
};

}  // namespace

PricingServiceImpl::PricingServiceImpl(PriceStore* store, Metrics* metrics, Options options)
    : store_(store), metrics_(metrics), options_(std::move(options)) {
  // The admin token is checked before the request body is read: an
  // unauthenticated caller's (possibly huge) update is never buffered whole
  // or decoded.
  MarkMethodStreamed(MethodIndex(kService, "UpdatePrices"),
                     AdminMethod<v1::UpdatePricesRequest, v1::UpdatePricesResponse>(
                         kService, "UpdatePrices",
                         [this](const grpc::ServerContext& context) {
                           return CheckAdminToken(context, options_.admin_token);
                         },
                         [this](grpc::ServerContext* context, const v1::UpdatePricesRequest* request,
                                v1::UpdatePricesResponse* response) {
                           return UpdatePrices(context, request, response);
                         }));
  metrics_->AddCollectable(std::make_shared<PricesAsOfCollector>(store_));
  metrics_->InitializeMethods(kService, {{"Quote", "unary"}, {"GetPriceBook", "unary"},
                                        {"UpdatePrices", "unary"}, {"WatchPrices", "server_stream"}});
}

void PricingServiceImpl::Shutdown() {
  shutting_down_ = true;
  store_->Shutdown();
}

grpc::Status PricingServiceImpl::Quote(grpc::ServerContext*, const v1::QuoteRequest* request,
                                       v1::QuoteResponse* response) {
  RpcScope rpc(metrics_, kService, "Quote");
  std::shared_ptr<const PriceBook> book = store_->ForCatalog(request->catalog_version());
  if (book == nullptr) {
    std::shared_ptr<const PriceBook> current = store_->Current();
    if (current == nullptr) return rpc.Finish(NotLoaded());
    // The caller used a catalog version this replica has not seen yet (or no
    // longer keeps): quoting another version's book would mix two versions
    // in one answer.
    return rpc.Finish(grpc::Status(
        grpc::StatusCode::FAILED_PRECONDITION,
        absl::StrCat("catalog_version: no price book for catalog version \"", request->catalog_version(),
                     "\" (current: \"", current->data().catalog_version(), "\"); retry")));
  }
  absl::StatusOr<v1::QuoteResponse> quote = book->Quote(*request, absl::Now());
  if (!quote.ok()) return rpc.Finish(ToGrpcStatus(quote.status()));
  *response = std::move(*quote);
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status PricingServiceImpl::GetPriceBook(grpc::ServerContext*, const v1::GetPriceBookRequest*,
                                              v1::GetPriceBookResponse* response) {
  RpcScope rpc(metrics_, kService, "GetPriceBook");
  std::shared_ptr<const PriceBook> book = store_->Current();
  if (book == nullptr) return rpc.Finish(NotLoaded());
  *response->mutable_price_book() = book->data();
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status PricingServiceImpl::UpdatePrices(grpc::ServerContext* context,
                                              const v1::UpdatePricesRequest* request,
                                              v1::UpdatePricesResponse* response) {
  RpcScope rpc(metrics_, kService, "UpdatePrices");
  const absl::Status allowed = CheckAdminToken(*context, options_.admin_token);
  if (!allowed.ok()) return rpc.Finish(ToGrpcStatus(allowed));
  absl::StatusOr<std::shared_ptr<const PriceBook>> updated = store_->Update(*request, options_.persist);
  metrics_->DataLoaded(updated.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  if (!updated.ok()) return rpc.Finish(ToGrpcStatus(updated.status()));
  response->set_price_book_version((*updated)->data().version());
  response->set_updated(request->prices_size());
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status PricingServiceImpl::WatchPrices(grpc::ServerContext* context,
                                             const v1::WatchPricesRequest* request,
                                             grpc::ServerWriter<v1::WatchPricesResponse>* writer) {
  RpcScope rpc(metrics_, kService, "WatchPrices", "server_stream");
  std::string known = request->known_version();
  while (!context->IsCancelled() && !shutting_down_) {
    std::shared_ptr<const PriceBook> book =
        store_->WaitForChange(known, absl::Now() + absl::Seconds(options_.watch_poll_seconds));
    if (book == nullptr || book->data().version() == known) continue;
    v1::WatchPricesResponse update;
    *update.mutable_price_book() = book->data();
    if (!writer->Write(update)) break;
    known = book->data().version();
  }
  return rpc.Finish(grpc::Status::OK);
}

}  // namespace gpuadvisor::pricing
