#include "services/gateway/gateway_service_impl.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status/grpc_status.h"
#include "grpcpp/client_context.h"
#include "services/gateway/recommender.h"
#include "services/gateway/workload_defaults.h"

namespace gpuadvisor::gateway {
namespace {

constexpr char kService[] = "gpuadvisor.gateway.v1.GatewayService";

enum class Backend { kSizing, kPricing };

// See the header: which backend answers the gateway passes on as they are.
absl::Status MapBackendStatus(Backend backend, const grpc::Status& status) {
  const char* name = backend == Backend::kSizing ? "sizing" : "pricing";
  const absl::Status s = FromGrpcStatus(status);
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kResourceExhausted:
      return absl::Status(s.code(), absl::StrCat(name, " backend: ", s.message()));
    case absl::StatusCode::kFailedPrecondition:
      // Pricing does not hold the catalog version asked for (yet): the
      // caller (CallQuoteAtVersion) retries, then reports it as UNAVAILABLE.
      if (backend == Backend::kPricing) return absl::Status(s.code(), absl::StrCat(name, " backend: ", s.message()));
      [[fallthrough]];
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
      if (backend == Backend::kSizing) return s;
      [[fallthrough]];
    default:
      return absl::InternalError(absl::StrCat(name, " backend rejected the gateway's request (",
                                              absl::StatusCodeToString(s.code()), "): ", s.message()));
  }
}

std::unique_ptr<grpc::ClientContext> BackendContext(grpc::ServerContext* context,
                                                    absl::Duration timeout) {
  std::unique_ptr<grpc::ClientContext> client = grpc::ClientContext::FromServerContext(*context);
  // The child deadline is the earlier of the caller's and ours.
  client->set_deadline(std::chrono::system_clock::now() +
                       std::chrono::microseconds(absl::ToInt64Microseconds(timeout)));
  return client;
}

absl::Status NoCatalogYet() {
  return absl::UnavailableError("gateway has no catalog snapshot yet (catalog backend not reached)");
}

}  // namespace

GatewayServiceImpl::GatewayServiceImpl(
    catalog::CatalogReplica* replica, std::unique_ptr<sizing::v1::SizingService::StubInterface> sizing,
    std::unique_ptr<pricing::v1::PricingService::StubInterface> pricing, Metrics* metrics,
    Options options)
    : replica_(replica),
      sizing_(std::move(sizing)),
      pricing_(std::move(pricing)),
      metrics_(metrics),
      options_(options),
      limiter_(options.rate_limit),
      recommendations_(prometheus::BuildCounter()
                           .Name("gpuadvisor_gateway_recommendations_total")
                           .Help("Recommend calls by outcome: ok, empty (nothing qualified), error.")
                           .Register(metrics->registry())),
      cache_hits_(prometheus::BuildCounter()
                      .Name("gpuadvisor_gateway_response_cache_hits_total")
                      .Help("Recommend answers served from the response cache.")
                      .Register(metrics->registry())
                      .Add({})),
      cache_misses_(prometheus::BuildCounter()
                        .Name("gpuadvisor_gateway_response_cache_misses_total")
                        .Help("Recommend answers computed with the response cache on.")
                        .Register(metrics->registry())
                        .Add({})) {
  metrics_->InitializeMethods(kService, {{"Recommend", "unary"},
                                        {"Estimate", "unary"},
                                        {"ListOffers", "unary"},
                                        {"ListGpus", "unary"},
                                        {"ListModels", "unary"}});
  for (const char* outcome : {"ok", "empty", "error"}) recommendations_.Add({{"outcome", outcome}});
}

absl::StatusOr<sizing::v1::EstimateResponse> GatewayServiceImpl::CallEstimate(
    grpc::ServerContext* context, const sizing::v1::EstimateRequest& request) {
  std::unique_ptr<grpc::ClientContext> client = BackendContext(context, options_.backend_timeout);
  sizing::v1::EstimateResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status status = sizing_->Estimate(client.get(), request, &response);
  metrics_->ClientHandled("gpuadvisor.sizing.v1.SizingService", "Estimate", status.error_code(),
                          absl::ToDoubleSeconds(absl::Now() - start));
  if (!status.ok()) return MapBackendStatus(Backend::kSizing, status);
  return response;
}

absl::StatusOr<pricing::v1::QuoteResponse> GatewayServiceImpl::CallQuote(
    grpc::ServerContext* context, const pricing::v1::QuoteRequest& request) {
  std::unique_ptr<grpc::ClientContext> client = BackendContext(context, options_.backend_timeout);
  pricing::v1::QuoteResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status status = pricing_->Quote(client.get(), request, &response);
  metrics_->ClientHandled("gpuadvisor.pricing.v1.PricingService", "Quote", status.error_code(),
                          absl::ToDoubleSeconds(absl::Now() - start));
  if (!status.ok()) return MapBackendStatus(Backend::kPricing, status);
  return response;
}

absl::StatusOr<pricing::v1::QuoteResponse> GatewayServiceImpl::CallQuoteAtVersion(
    grpc::ServerContext* context, const pricing::v1::QuoteRequest& request) {
  // Pricing follows the catalog on its own and may not have built the book
  // of this version yet (a reload moments ago): wait a little and ask again,
  // within the caller's deadline, rather than mix two versions.
  absl::Duration wait = absl::Milliseconds(20);
  const absl::Time give_up = absl::Now() + options_.quote_version_wait;
  while (true) {
    absl::StatusOr<pricing::v1::QuoteResponse> priced = CallQuote(context, request);
    if (priced.ok()) {
      if (priced->catalog_version() != request.catalog_version()) {
        return absl::UnavailableError(absl::StrCat("pricing backend: quoted catalog version \"",
                                                   priced->catalog_version(), "\", not \"",
                                                   request.catalog_version(), "\" as asked; retry"));
      }
      return priced;
    }
    if (!absl::IsFailedPrecondition(priced.status())) return priced.status();
    const absl::Time deadline = absl::FromChrono(context->deadline());
    if (absl::Now() + wait > std::min(give_up, deadline) || context->IsCancelled()) {
      return absl::UnavailableError(absl::StrCat(
          "pricing backend does not hold catalog version \"", request.catalog_version(),
          "\" that this answer was built from (", priced.status().message(), "); retry"));
    }
    absl::SleepFor(wait);
    wait = std::min(wait * 2, absl::Milliseconds(200));
  }
}

absl::StatusOr<v1::RecommendResponse> GatewayServiceImpl::DoRecommend(
    grpc::ServerContext* context, const v1::RecommendRequest& request) {
  // One snapshot for the whole answer: its offers are filtered and sized,
  // and pricing quotes against the same version.
  std::shared_ptr<const catalog::Catalog> catalog = replica_->Current();
  absl::StatusOr<RecommendationRun> run =
      RecommendationRun::Start(index_cache_.Get(catalog), request, options_.region_groups,
                               options_.overheads, options_.estimate_cache);
  if (!run.ok()) return run.status();
  absl::StatusOr<sizing::v1::EstimateResponse> sized =
      run->needs_sizing() ? CallEstimate(context, run->estimate_request()) : sizing::v1::EstimateResponse();
  if (!sized.ok()) return sized.status();
  absl::StatusOr<pricing::v1::QuoteRequest> quote = run->ApplyEstimates(std::move(*sized));
  if (!quote.ok()) return quote.status();
  quote->set_catalog_version(catalog->snapshot().version());
  // Quote even with no items: an empty answer still says which price book
  // it was checked against. With no items, a pricing failure only costs the
  // answer that version.
  absl::StatusOr<pricing::v1::QuoteResponse> priced = CallQuoteAtVersion(context, *quote);
  if (!priced.ok()) {
    if (quote->items_size() > 0) return priced.status();
    priced = pricing::v1::QuoteResponse();
  }
  return run->Finish(*priced);
}

grpc::Status GatewayServiceImpl::Recommend(grpc::ServerContext* context,
                                           const v1::RecommendRequest* request,
                                           v1::RecommendResponse* response) {
  RpcScope rpc(metrics_, kService, "Recommend");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  // The cache key names the versions live now; an answer is stored only if
  // it was computed from exactly those versions.
  std::string key, catalog_version, price_book_version;
  if (options_.response_cache != nullptr && options_.response_cache->enabled() &&
      options_.price_book_version) {
    std::shared_ptr<const catalog::Catalog> catalog = replica_->Current();
    if (catalog != nullptr) catalog_version = catalog->snapshot().version();
    price_book_version = options_.price_book_version();
    key = ResponseCache::Key(*request, catalog_version, price_book_version);
  }
  const ResponseCache::Hit hit =
      options_.response_cache != nullptr ? options_.response_cache->Lookup(key) : ResponseCache::Hit{};
  const bool cached = hit.response != nullptr;
  absl::StatusOr<v1::RecommendResponse> answer =
      cached ? absl::StatusOr<v1::RecommendResponse>(*hit.response) : DoRecommend(context, *request);
  if (cached) {
    answer->set_price_book_age_seconds(answer->price_book_age_seconds() +
                                       absl::ToInt64Seconds(absl::Now() - hit.stored_at));
  }
  const double age = replica_->AgeSeconds();
  if (!answer.ok()) {
    recommendations_.Add({{"outcome", "error"}}).Increment();
    return rpc.Finish(ToGrpcStatus(answer.status()));
  }
  if (!key.empty()) {
    (cached ? cache_hits_ : cache_misses_).Increment();
    if (!cached && answer->catalog_version() == catalog_version &&
        answer->price_book_version() == price_book_version) {
      options_.response_cache->Insert(key, catalog_version, price_book_version, *answer, absl::Now());
    }
  }
  recommendations_.Add({{"outcome", answer->recommendations().empty() ? "empty" : "ok"}}).Increment();
  *response = std::move(*answer);
  response->set_catalog_age_seconds(static_cast<int64_t>(age));
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status GatewayServiceImpl::Estimate(grpc::ServerContext* context,
                                          const v1::EstimateRequest* request,
                                          v1::EstimateResponse* response) {
  RpcScope rpc(metrics_, kService, "Estimate");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  sizing::v1::EstimateRequest forward;
  *forward.mutable_workload() = request->workload();
  std::vector<v1::Assumption> assumptions;
  if (absl::Status s = ApplyWorkloadDefaults(*forward.mutable_workload(), assumptions, WorkloadUse::kSize); !s.ok()) {
    return rpc.Finish(ToGrpcStatus(s));
  }
  *forward.mutable_configurations() = request->configurations();
  if (request->has_vram_margin()) forward.set_vram_margin(request->vram_margin());
  absl::StatusOr<sizing::v1::EstimateResponse> sized = CallEstimate(context, forward);
  if (!sized.ok()) return rpc.Finish(ToGrpcStatus(sized.status()));
  response->mutable_estimates()->Swap(sized->mutable_estimates());
  response->mutable_totals()->Swap(sized->mutable_totals());
  AddSizedAssumptions(forward.workload(), *sized, assumptions);
  response->mutable_model()->Swap(sized->mutable_model());
  for (v1::Assumption& a : assumptions) *response->add_assumptions() = std::move(a);
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status GatewayServiceImpl::ListOffers(grpc::ServerContext* context,
                                            const catalog::v1::ListOffersRequest* request,
                                            catalog::v1::ListOffersResponse* response) {
  RpcScope rpc(metrics_, kService, "ListOffers");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  std::shared_ptr<const catalog::Catalog> current = replica_->Current();
  if (current == nullptr) return rpc.Finish(ToGrpcStatus(NoCatalogYet()));
  absl::StatusOr<catalog::v1::ListOffersResponse> offers = current->ListOffers(*request);
  if (!offers.ok()) return rpc.Finish(ToGrpcStatus(offers.status()));
  *response = std::move(*offers);
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status GatewayServiceImpl::ListGpus(grpc::ServerContext* context, const catalog::v1::ListGpusRequest*,
                                          catalog::v1::ListGpusResponse* response) {
  RpcScope rpc(metrics_, kService, "ListGpus");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  std::shared_ptr<const catalog::Catalog> current = replica_->Current();
  if (current == nullptr) return rpc.Finish(ToGrpcStatus(NoCatalogYet()));
  *response->mutable_gpus() = current->snapshot().gpus();
  response->set_catalog_version(current->snapshot().version());
  return rpc.Finish(grpc::Status::OK);
}

grpc::Status GatewayServiceImpl::ListModels(grpc::ServerContext* context,
                                            const sizing::v1::ListModelsRequest* request,
                                            sizing::v1::ListModelsResponse* response) {
  RpcScope rpc(metrics_, kService, "ListModels");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  std::unique_ptr<grpc::ClientContext> client = BackendContext(context, options_.backend_timeout);
  const absl::Time start = absl::Now();
  const grpc::Status status = sizing_->ListModels(client.get(), *request, response);
  metrics_->ClientHandled("gpuadvisor.sizing.v1.SizingService", "ListModels", status.error_code(),
                          absl::ToDoubleSeconds(absl::Now() - start));
  if (!status.ok()) {
    response->Clear();
    return rpc.Finish(ToGrpcStatus(MapBackendStatus(Backend::kSizing, status)));
  }
  return rpc.Finish(grpc::Status::OK);
}

std::vector<prometheus::MetricFamily> CatalogAgeCollector::Collect() const {
  prometheus::MetricFamily family;
  family.name = "gpuadvisor_gateway_catalog_age_seconds";
  family.help = "Seconds since the gateway's catalog replica was last known current (-1: none yet).";
  family.type = prometheus::MetricType::Gauge;
  prometheus::ClientMetric metric;
  metric.gauge.value = replica_->AgeSeconds();
  family.metric.push_back(std::move(metric));
  return {std::move(family)};
}

}  // namespace gpuadvisor::gateway
