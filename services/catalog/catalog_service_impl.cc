#include "services/catalog/catalog_service_impl.h"

#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/grpc/server.h"
#include "common/status/grpc_status.h"

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
                               .Register(metrics->registry())) {
  metrics_->InitializeMethods(kService, {{"ListGpus", "unary"}, {"ListOffers", "unary"},
                                        {"WatchCatalog", "server_stream"}, {"ReloadCatalog", "unary"}});
}

absl::Status CatalogServiceImpl::Reload() {
  const absl::Status status = store_->Reload();
  metrics_->DataLoaded(status.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  if (!status.ok()) return status;
  std::map<std::string, int> per_provider;
  for (const v1::Offer& offer : store_->Current()->snapshot().offers()) ++per_provider[offer.provider()];
  for (const auto& [provider, count] : per_provider) {
    offers_per_provider_.Add({{"provider", provider}}).Set(count);
  }
  return absl::OkStatus();
}

void CatalogServiceImpl::Shutdown() {
  shutting_down_ = true;
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

grpc::Status CatalogServiceImpl::WatchCatalog(grpc::ServerContext* context,
                                              const v1::WatchCatalogRequest* request,
                                              grpc::ServerWriter<v1::WatchCatalogResponse>* writer) {
  RpcScope rpc(metrics_, kService, "WatchCatalog", "server_stream");
  std::string known = request->known_version();
  // Accept the watch at once, naming the current version, so a follower knows
  // it is current even when nothing has changed since its known_version.
  std::shared_ptr<const Catalog> current = store_->Current();
  context->AddInitialMetadata(kWatchVersionHeader, current ? current->snapshot().version() : "");
  writer->SendInitialMetadata();
  while (!context->IsCancelled()) {
    std::shared_ptr<const Catalog> catalog = store_->WaitForChange(
        known, absl::Now() + absl::Seconds(options_.watch_poll_seconds));
    if (catalog == nullptr || catalog->snapshot().version() == known) {
      if (shutting_down_) break;
      continue;
    }
    v1::WatchCatalogResponse update;
    *update.mutable_snapshot() = catalog->snapshot();
    if (!writer->Write(update)) break;  // the client went away
    known = catalog->snapshot().version();
  }
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status CatalogServiceImpl::ReloadCatalog(grpc::ServerContext* context,
                                               const v1::ReloadCatalogRequest*,
                                               v1::ReloadCatalogResponse* response) {
  RpcScope rpc(metrics_, kService, "ReloadCatalog");
  const absl::Status allowed = CheckAdminToken(*context, options_.admin_token);
  if (!allowed.ok()) return rpc.Finish(ToGrpcStatus(allowed));
  const absl::Status reloaded = Reload();
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
  return rpc.Finish(grpc::Status::OK);
}

}  // namespace gpuadvisor::catalog
