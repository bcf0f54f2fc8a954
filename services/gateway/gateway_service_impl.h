#ifndef GPUADVISOR_SERVICES_GATEWAY_GATEWAY_SERVICE_IMPL_H_
#define GPUADVISOR_SERVICES_GATEWAY_GATEWAY_SERVICE_IMPL_H_

// gRPC adapter for gpuadvisor.gateway.v1.GatewayService: runs a
// RecommendationRun against one snapshot of the catalog replica, one Estimate
// call to sizing and one quote of the candidates at the snapshot's version,
// so an answer never mixes two catalog versions.
//
// The quote is computed in process (PriceBook::Quote, the code pricing runs)
// when Options::price_book gives a current copy of pricing's book for that
// catalog version; otherwise it is a Quote call to pricing that names the
// version (pricing answers FAILED_PRECONDITION for a version it does not
// hold; the gateway retries briefly, then answers UNAVAILABLE). Either way
// the answer carries the version of the book that priced it. Backend calls
// carry the caller's deadline and cancellation
// (ClientContext::FromServerContext), capped by Options::backend_timeout.
//
// Recommend is served on the gRPC callback API and never blocks a thread: a
// response-cache hit is answered inline on the gRPC thread that delivered the
// request; a miss runs the domain logic on the gRPC threads that deliver each
// step (the request, then sizing's answer, then pricing's) and calls the
// backends with the callback client API; the FAILED_PRECONDITION retry waits
// on a grpc::Alarm. The whole chain is RecommendCall in the .cc. A caller that
// cancels (or whose deadline passes) cancels the backend call in flight and
// any retry wait. Identical requests that arrive while one is computed wait
// for its answer rather than compute it again (with the response cache on).
// Recommend is a raw method (bytes in and out, the same
// messages on the wire): an answer is encoded once, and a cached one is sent
// as those bytes (EncodedAnswer, response_cache.h). The other methods are
// synchronous (one handler thread each). Status mapping: a backend's UNAVAILABLE,
// DEADLINE_EXCEEDED, CANCELLED and RESOURCE_EXHAUSTED pass through; sizing's
// INVALID_ARGUMENT and NOT_FOUND describe the caller's workload and pass
// through; anything else a backend says about a request the gateway built is
// the gateway's fault: INTERNAL.
//
// ListOffers and ListGpus answer from the catalog replica (the same filters
// and paging as the catalog service; they keep answering while the catalog is
// down; UNAVAILABLE only before any snapshot). ListModels passes through to
// sizing like Estimate. Thread-safe.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/grpc/rate_limiter.h"
#include "common/metrics/metrics.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "gpuadvisor/sizing/v1/sizing.grpc.pb.h"
#include "prometheus/collectable.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/metric_family.h"
#include "services/catalog/catalog_replica.h"
#include "services/gateway/estimate_cache.h"
#include "services/gateway/offer_index.h"
#include "services/gateway/overheads.h"
#include "services/gateway/region_groups.h"
#include "services/gateway/response_cache.h"
#include "services/pricing/price_book.h"

namespace gpuadvisor::gateway {

class GatewayServiceImpl final
    : public v1::GatewayService::WithRawCallbackMethod_Recommend<v1::GatewayService::Service> {
 public:
  struct Options {
    absl::Duration backend_timeout = absl::Seconds(2);  // per backend call
    // How long a Recommend waits for pricing to hold the catalog version the
    // answer was built from (after a reload pricing may be a moment behind).
    absl::Duration quote_version_wait = absl::Seconds(1);
    // Whole answers for repeated requests; null = every Recommend is computed.
    // Used only while `price_book_version` names the live price book.
    ResponseCache* response_cache = nullptr;
    std::function<std::string()> price_book_version;  // "" = unknown
    // Pricing's book for a catalog version, copied into this process and
    // current (see pricing::PriceFollower); null when there is none or the
    // copy may be stale. Null function: every answer calls pricing's Quote.
    std::function<std::shared_ptr<const pricing::PriceBook>(const std::string& catalog_version)>
        price_book;
    // Sizing answers per (workload, configuration); null = every Recommend
    // sizes all its configurations. Must outlive the service.
    EstimateCache* estimate_cache = nullptr;
    // Region groups for Constraints.regions; must outlive the service. Null:
    // region names only.
    const RegionGroups* region_groups = nullptr;
    // Start-up and data-movement overheads; must outlive the service. Null:
    // none added.
    const OverheadModel* overheads = nullptr;
    // Per-client token bucket over every public RPC (off by default here;
    // gateway_server turns it on with --rate_limit_per_second).
    PeerRateLimiter::Options rate_limit = PeerRateLimiter::Options();
  };

  // `replica` and `metrics` must outlive the service. The stubs are real
  // stubs (their callback API serves Recommend).
  GatewayServiceImpl(catalog::CatalogReplica* replica,
                     std::unique_ptr<sizing::v1::SizingService::Stub> sizing,
                     std::unique_ptr<pricing::v1::PricingService::Stub> pricing, Metrics* metrics,
                     Options options);

  // `request` is an encoded RecommendRequest, `response` receives an encoded
  // RecommendResponse. (The synchronous overload is the generated one that is
  // never called.)
  using v1::GatewayService::WithRawCallbackMethod_Recommend<v1::GatewayService::Service>::Recommend;
  grpc::ServerUnaryReactor* Recommend(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::Status Estimate(grpc::ServerContext* context, const v1::EstimateRequest* request,
                        v1::EstimateResponse* response) override;
  grpc::Status ListOffers(grpc::ServerContext* context,
                          const catalog::v1::ListOffersRequest* request,
                          catalog::v1::ListOffersResponse* response) override;
  grpc::Status ListGpus(grpc::ServerContext* context, const catalog::v1::ListGpusRequest* request,
                        catalog::v1::ListGpusResponse* response) override;
  grpc::Status ListModels(grpc::ServerContext* context,
                          const sizing::v1::ListModelsRequest* request,
                          sizing::v1::ListModelsResponse* response) override;

 private:
  class RecommendCall;  // one Recommend that missed the response cache

  // The response-cache key of a request and the versions it names; key is
  // empty when the cache is off or a version is unknown.
  struct CacheSlot {
    std::string key, catalog_version, price_book_version;
  };
  CacheSlot CacheSlotFor(const v1::RecommendRequest& request) const;
  // The end of every computed Recommend: counts the outcome, encodes the
  // answer into `response` with the catalog's age and stores it under `slot`;
  // `*shared` receives the answer if it may serve the slot's key.
  grpc::Status AnswerRecommend(const CacheSlot& slot, absl::StatusOr<v1::RecommendResponse> answer,
                               grpc::ByteBuffer* response,
                               std::shared_ptr<const EncodedAnswer>* shared);
  // A cached (or shared) answer into `response`, aged since `stored_at`.
  void SendEncoded(const EncodedAnswer& answer, absl::Time stored_at, grpc::ByteBuffer* response);
  // The calls parked on `key` (see inflight_), no longer parked.
  std::vector<RecommendCall*> TakeParked(const std::string& key);

  absl::StatusOr<sizing::v1::EstimateResponse> CallEstimate(
      grpc::ServerContext* context, const sizing::v1::EstimateRequest& request);

  catalog::CatalogReplica* replica_;
  OfferIndexCache index_cache_;  // the replica's newest snapshot, indexed once
  std::unique_ptr<sizing::v1::SizingService::Stub> sizing_;
  std::unique_ptr<pricing::v1::PricingService::Stub> pricing_;
  Metrics* metrics_;
  const Options options_;
  PeerRateLimiter limiter_;
  // Resolved once: a Recommend builds no label map and takes no metrics lock.
  prometheus::Family<prometheus::Counter>& recommendations_;
  prometheus::Counter& recommendations_ok_;
  prometheus::Counter& recommendations_empty_;
  prometheus::Counter& recommendations_error_;
  prometheus::Counter& cache_hits_;
  prometheus::Counter& cache_misses_;
  prometheus::Counter& local_quotes_;  // answers priced in process
  // Identical requests (one cache key) that miss while one of them is being
  // computed are parked on it instead of computing it again: the first call
  // is the key's entry here, the others wait in its list. When it ends, a
  // parked call is answered with its answer, or (if it failed) computes its
  // own. Only with the response cache on.
  absl::Mutex inflight_mu_;
  absl::flat_hash_map<std::string, std::vector<RecommendCall*>> inflight_
      ABSL_GUARDED_BY(inflight_mu_);
  MethodMetrics& recommend_rpc_;
  MethodMetrics& sizing_estimate_;  // calls to sizing's Estimate
  MethodMetrics& pricing_quote_;    // calls to pricing's Quote (no local book)
};

// gpuadvisor_gateway_catalog_age_seconds, read from the replica at scrape
// time so an idle gateway still reports a stale catalog.
class CatalogAgeCollector final : public prometheus::Collectable {
 public:
  explicit CatalogAgeCollector(const catalog::CatalogReplica* replica) : replica_(replica) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const catalog::CatalogReplica* replica_;
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_GATEWAY_SERVICE_IMPL_H_
