#include "services/catalog/catalog_service_impl.h"

#include <cstdio>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/grpc/server.h"
#include "common/status/grpc_status.h"
#include "grpcpp/impl/codegen/server_callback_handlers.h"

namespace gpuadvisor::catalog {
namespace {

constexpr char kService[] = "gpuadvisor.catalog.v1.CatalogService";

grpc::Status NotLoaded() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "catalog not loaded yet; retry");
}

}  // namespace

CatalogServiceImpl::CatalogServiceImpl(CatalogStore* store, Metrics* metrics, Options options)
    : store_(store),
      metrics_(metrics),
      options_(std::move(options)),
      offers_per_provider_(prometheus::BuildGauge()
                               .Name("gpuadvisor_catalog_offers")
                               .Help("Offers in the serving catalog snapshot, by provider.")
                               .Register(metrics->registry())),
      hub_(CatalogWatchSource(store, options_.snapshot_encoding), options_.watch) {
  MarkMethodRawCallback(
      MethodIndex(kService, "WatchCatalog"),
      new grpc::internal::CallbackServerStreamingHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
          [this](grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
            return hub_.Open(context, request);
          }));
  // The admin token is checked before the request body is read.
  MarkMethodStreamed(
      MethodIndex(kService, "ReloadCatalog"),
      AdminMethod<v1::ReloadCatalogRequest, v1::ReloadCatalogResponse>(
          kService, "ReloadCatalog",
          [this](const grpc::ServerContext& context) {
            return CheckAdminToken(context, options_.admin_token);
          },
          [this](grpc::ServerContext* context, const v1::ReloadCatalogRequest* request,
                 v1::ReloadCatalogResponse* response) {
            return ReloadCatalog(context, request, response);
          }));
  hub_.ExportMetrics(*metrics_, "gpuadvisor_catalog_watchers", "WatchCatalog");
  metrics_->InitializeMethods(kService, {{"ListGpus", "unary"},
                                         {"ListOffers", "unary"},
                                         {"WatchCatalog", "server_stream"},
                                         {"ReloadCatalog", "unary"}});
}

absl::Status CatalogServiceImpl::Reload(bool force) {
  const absl::Time start = absl::Now();
  const absl::Status status = store_->Reload(force);
  metrics_->DataLoaded(status.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  if (!status.ok()) return status;
  CountOffers();
  if (std::shared_ptr<const Catalog> catalog = store_->Current(); catalog != nullptr) {
    std::fprintf(stderr, "catalog: serving %s (%d offers), read, checked and indexed in %.2f s\n",
                 catalog->snapshot().version().c_str(), catalog->snapshot().offers_size(),
                 absl::ToDoubleSeconds(absl::Now() - start));
  }
  return absl::OkStatus();
}

void CatalogServiceImpl::Followed() {
  metrics_->DataLoaded(true, absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  CountOffers();
}

void CatalogServiceImpl::CountOffers() {
  std::shared_ptr<const Catalog> catalog = store_->Current();
  if (catalog == nullptr) return;
  std::map<std::string, int> per_provider;
  for (const v1::Offer& offer : catalog->snapshot().offers()) ++per_provider[offer.provider()];
  for (const auto& [provider, count] : per_provider) {
    offers_per_provider_.Add({{"provider", provider}}).Set(count);
  }
}

void CatalogServiceImpl::Shutdown() {
  shutting_down_ = true;
  hub_.Shutdown();
  store_->Shutdown();
}

grpc::Status CatalogServiceImpl::ListGpus(grpc::ServerContext*, const v1::ListGpusRequest*,
                                          v1::ListGpusResponse* response) {
  RpcScope rpc(metrics_, kService, "ListGpus");
  std::shared_ptr<const Catalog> catalog = store_->Current();
  if (catalog == nullptr) return rpc.Finish(NotLoaded());
  *response->mutable_gpus() = catalog->snapshot().gpus();
  response->set_catalog_version(catalog->snapshot().version());
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status CatalogServiceImpl::ListOffers(grpc::ServerContext*,
                                            const v1::ListOffersRequest* request,
                                            v1::ListOffersResponse* response) {
  RpcScope rpc(metrics_, kService, "ListOffers");
  std::shared_ptr<const Catalog> catalog = store_->Current();
  if (catalog == nullptr) return rpc.Finish(NotLoaded());
  absl::StatusOr<v1::ListOffersResponse> offers = catalog->ListOffers(*request);
  if (!offers.ok()) return rpc.Finish(ToGrpcStatus(offers.status()));
  *response = std::move(*offers);
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status CatalogServiceImpl::ReloadCatalog(grpc::ServerContext* context,
                                               const v1::ReloadCatalogRequest* request,
                                               v1::ReloadCatalogResponse* response) {
  RpcScope rpc(metrics_, kService, "ReloadCatalog");
  const absl::Status allowed = CheckAdminToken(*context, options_.admin_token);
  if (!allowed.ok()) return rpc.Finish(ToGrpcStatus(allowed));
  if (options_.forward_reload)
    return rpc.Finish(options_.forward_reload(context, *request, response));
  const absl::Status reloaded = Reload(request->force());
  if (!reloaded.ok()) {
    // The files are the operator's input: a bad file is their argument, and the
    // old snapshot is still serving.
    return rpc.Finish(ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("reload rejected, previous catalog still serving: ", reloaded.message()))));
  }
  std::shared_ptr<const Catalog> catalog = store_->Current();
  response->set_catalog_version(catalog->snapshot().version());
  response->set_gpus(catalog->snapshot().gpus_size());
  response->set_offers(catalog->snapshot().offers_size());
  // Kept outliers and forced findings, capped so a huge import cannot blow
  // the response.
  constexpr int kMaxWarnings = 200;
  for (const std::string& warning : store_->last_warnings()) {
    if (response->warnings_size() == kMaxWarnings) break;
    response->add_warnings(warning);
  }
  return rpc.Finish(grpc::Status::OK);
}

}  // namespace gpuadvisor::catalog
