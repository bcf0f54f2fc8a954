#include "services/pricing/pricing_service_impl.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/grpc/server.h"
#include "common/metrics/function_metric.h"
#include "common/status/grpc_status.h"
#include "grpcpp/impl/codegen/server_callback_handlers.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace gpuadvisor::pricing {
namespace {

constexpr char kService[] = "gpuadvisor.pricing.v1.PricingService";

grpc::Status NotLoaded() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "price book not loaded yet; retry");
}

}  // namespace

std::shared_ptr<const WatchHub::Encoded> EncodePriceBook(const v1::PriceBook& book,
                                                         const ChunkEncoding& encoding) {
  // Serialized once, straight from the book (no copy into a response), for
  // every watcher and both forms.
  std::string serialized;
  book.SerializeToString(&serialized);
  ChunkedResponse response;
  response.value_field = v1::WatchPricesResponse::kPriceBookFieldNumber;
  response.chunk_field = v1::WatchPricesResponse::kChunkFieldNumber;
  response.what =
      absl::StrCat("price book ", book.version(), " (", book.prices_size(), " offer prices)");
  response.accept_field = "WatchPricesRequest.accept_chunks";
  return EncodeChunked(std::move(serialized), book.version(), response, encoding);
}

WatchHub::Source PriceWatchSource(PriceStore* store, ChunkEncoding encoding) {
  WatchHub::Source source;
  source.wait_for_change = [store, encoding](
                               const std::string& known,
                               absl::Time deadline) -> std::shared_ptr<const WatchHub::Encoded> {
    std::shared_ptr<const PriceBook> book = store->WaitForChange(known, deadline);
    if (book == nullptr || book->version() == known) return nullptr;
    return EncodePriceBook(book->data(), encoding);
  };
  source.current_version = [store] {
    std::shared_ptr<const PriceBook> book = store->Current();
    return book != nullptr ? book->version() : std::string();
  };
  source.heartbeat = [](absl::Time now) {
    v1::WatchPricesResponse heartbeat;
    heartbeat.set_heartbeat_unix_millis(absl::ToUnixMillis(now));
    return heartbeat.SerializeAsString();
  };
  source.parse_request = [](const grpc::ByteBuffer& bytes, std::string* known,
                            int64_t* heartbeat_millis) {
    v1::WatchPricesRequest request;
    grpc::ProtoBufferReader reader(const_cast<grpc::ByteBuffer*>(&bytes));
    if (!request.ParseFromZeroCopyStream(&reader)) return false;
    *known = request.known_version();
    *heartbeat_millis = request.heartbeat_interval_millis();
    return true;
  };
  source.accepts_chunks = [](const grpc::ByteBuffer& bytes) {
    v1::WatchPricesRequest request;
    grpc::ProtoBufferReader reader(const_cast<grpc::ByteBuffer*>(&bytes));
    return request.ParseFromZeroCopyStream(&reader) && request.accept_chunks();
  };
  source.version_header = kPriceWatchVersionHeader;
  source.heartbeat_header = kPriceWatchHeartbeatHeader;
  return source;
}

PricingServiceImpl::PricingServiceImpl(PriceStore* store, Metrics* metrics, Options options)
    : store_(store),
      metrics_(metrics),
      options_(std::move(options)),
      hub_(PriceWatchSource(store, options_.watch_encoding), options_.watch),
      quote_rpc_(metrics->ServerMethod(kService, "Quote")) {
  MarkMethodRawCallback(
      MethodIndex(kService, "WatchPrices"),
      new grpc::internal::CallbackServerStreamingHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
          [this](grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
            return hub_.Open(context, request);
          }));
  hub_.ExportMetrics(*metrics_, "gpuadvisor_pricing_watchers", "WatchPrices");
  // The admin token is checked before the request body is read: an
  // unauthenticated caller's (possibly huge) update is never buffered whole
  // or decoded.
  MarkMethodStreamed(
      MethodIndex(kService, "UpdatePrices"),
      AdminMethod<v1::UpdatePricesRequest, v1::UpdatePricesResponse>(
          kService, "UpdatePrices",
          [this](const grpc::ServerContext& context) {
            return CheckAdminToken(context, options_.admin_token);
          },
          [this](grpc::ServerContext* context, const v1::UpdatePricesRequest* request,
                 v1::UpdatePricesResponse* response) {
            return UpdatePrices(context, request, response);
          }));
  // When the served prices were taken (absent while unknown): the age of the
  // data itself, as opposed to when it was last loaded.
  metrics_->AddCollectable(std::make_shared<FunctionMetric>(
      "gpuadvisor_pricing_prices_as_of_timestamp_seconds",
      "Unix time the served prices were taken (the price book's prices_as_of).", [store = store_] {
        const std::shared_ptr<const PriceBook> book = store->Current();
        if (book == nullptr || book->prices_as_of() == absl::InfinitePast()) return -1.0;
        return absl::ToDoubleSeconds(book->prices_as_of() - absl::UnixEpoch());
      }));
  metrics_->InitializeMethods(kService, {{"Quote", "unary"},
                                         {"GetPriceBook", "unary"},
                                         {"UpdatePrices", "unary"},
                                         {"WatchPrices", "server_stream"}});
}

void PricingServiceImpl::Shutdown() {
  shutting_down_ = true;
  hub_.Shutdown();
  store_->Shutdown();
}

grpc::ServerUnaryReactor* PricingServiceImpl::Quote(grpc::CallbackServerContext* context,
                                                    const v1::QuoteRequest* request,
                                                    v1::QuoteResponse* response) {
  RpcScope rpc(&quote_rpc_);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::shared_ptr<const PriceBook> book = store_->ForCatalog(request->catalog_version());
  if (book == nullptr) {
    std::shared_ptr<const PriceBook> current = store_->Current();
    if (current == nullptr) {
      reactor->Finish(rpc.Finish(NotLoaded()));
      return reactor;
    }
    // The caller used a catalog version this replica has not seen yet (or no
    // longer keeps): quoting another version's book would mix two versions
    // in one answer.
    reactor->Finish(rpc.Finish(
        grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                     absl::StrCat("catalog_version: no price book for catalog version \"",
                                  request->catalog_version(), "\" (current: \"",
                                  current->data().catalog_version(), "\"); retry"))));
    return reactor;
  }
  const absl::Status quoted = book->Quote(*request, absl::Now(), response);
  reactor->Finish(rpc.Finish(ToGrpcStatus(quoted)));
  return reactor;
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
  if (options_.forward_update)
    return rpc.Finish(options_.forward_update(context, *request, response));
  absl::StatusOr<std::shared_ptr<const PriceBook>> updated =
      store_->Update(*request, options_.persist);
  metrics_->DataLoaded(updated.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  if (!updated.ok()) return rpc.Finish(ToGrpcStatus(updated.status()));
  response->set_price_book_version((*updated)->data().version());
  response->set_updated(request->prices_size());
  return rpc.Finish(grpc::Status::OK);
}

}  // namespace gpuadvisor::pricing
