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
// request; a miss runs a RecommendPipeline (recommend_pipeline.h: the domain
// steps, no gRPC) on the gRPC threads that deliver each step (the request,
// then sizing's answer, then pricing's). This adapter keeps the transport
// only: the backend calls on the callback client API with their deadlines,
// the FAILED_PRECONDITION retry on a grpc::Alarm, status mapping, and bytes
// in and out (RecommendCall in the .cc). A caller that cancels (or whose
// deadline passes) cancels the backend call in flight and any retry wait.
// Identical requests that arrive while one is computed wait for its answer
// rather than compute it again (ResponseCache::LookupOrJoin, with the
// response cache on).
//
// Sizing's model: every Estimate answer names it (model_fingerprint), and a
// probe asks sizing's ListModels every Options::sizing_probe_interval, so a
// sizing deploy is heard even when every estimate is cached. The estimate
// cache and the response cache key on it: another model starts them over.
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
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/grpc/rate_limiter.h"
#include "common/metrics/metrics.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "gpuadvisor/pricing/v1/pricing.grpc.pb.h"
#include "gpuadvisor/sizing/v1/sizing.grpc.pb.h"
#include "services/catalog/catalog_replica.h"
#include "services/gateway/estimate_cache.h"
#include "services/gateway/gateway_metrics.h"
#include "services/gateway/offer_index.h"
#include "services/gateway/overheads.h"
#include "services/gateway/recommend_pipeline.h"
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
    // The indexes of the replica's catalogs, prepared on the replica's
    // thread before each swap (CatalogReplica::Options::prepare ->
    // OfferIndexCache::Prepare); must outlive the service. Null: the service
    // keeps its own, each catalog indexed by the first Recommend that needs it.
    OfferIndexCache* index_cache = nullptr;
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
    // How often sizing's ListModels is asked which model it runs (its
    // model_fingerprint); 0 = only from Estimate answers.
    absl::Duration sizing_probe_interval = absl::Seconds(1);
  };

  // `replica` and `metrics` must outlive the service. The stubs are real
  // stubs (their callback API serves Recommend).
  GatewayServiceImpl(catalog::CatalogReplica* replica,
                     std::unique_ptr<sizing::v1::SizingService::Stub> sizing,
                     std::unique_ptr<pricing::v1::PricingService::Stub> pricing, Metrics* metrics,
                     Options options);
  ~GatewayServiceImpl() override;

  // `request` is an encoded RecommendRequest, `response` receives an encoded
  // RecommendResponse. (The synchronous overload is the generated one that is
  // never called.)
  using v1::GatewayService::WithRawCallbackMethod_Recommend<v1::GatewayService::Service>::Recommend;
  grpc::ServerUnaryReactor* Recommend(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;

  // Recommend for a caller in this process (the HTTP front end) without
  // gRPC's encoding: the gRPC method's rate limit (on LocalCall::client_key),
  // response cache and coalescing, pipeline, backend deadlines (capped by
  // LocalCall::deadline), metrics (Recommend's gRPC server metrics too) and
  // status mapping, with the request and the answer as messages. `done` is
  // called once: on this thread (a refusal, a cache hit, an answer that
  // needed no backend call) or on the thread of a backend's answer. It must
  // not block, and the answer lives only while it runs (it is on the call's
  // arena: read, print or copy it there). An answer that comes after the
  // deadline is DEADLINE_EXCEEDED.
  struct LocalCall {
    std::string client_key;  // the rate limit's bucket: "203.0.113.9", "cert:CN=x,SAN=y"
    absl::Time deadline = absl::InfiniteFuture();
  };
  using LocalAnswer = absl::AnyInvocable<void(absl::StatusOr<const v1::RecommendResponse*>)>;
  void RecommendLocal(const LocalCall& call, v1::RecommendRequest request, LocalAnswer done);

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
  // The snapshot's SourceStates, aged now; file sources' last attempt is the
  // snapshot's load time. UNAVAILABLE before any snapshot.
  grpc::Status ListSources(grpc::ServerContext* context,
                           const catalog::v1::ListSourcesRequest* request,
                           catalog::v1::ListSourcesResponse* response) override;

 private:
  // One Recommend past the rate limit (gateway_recommend.cc): the backend
  // calls around a RecommendPipeline, ended by the gRPC reactor
  // (GrpcRecommend) or the in-process caller's callback (LocalRecommend).
  class RecommendCall;
  class GrpcRecommend;
  class LocalRecommend;

  // The response-cache key of a request and the versions it names; key is
  // empty when the cache is off or a version is unknown.
  struct CacheSlot {
    std::string key, catalog_version, price_book_version, sizing_model;
  };
  CacheSlot CacheSlotFor(const v1::RecommendRequest& request) const;
  // Asks the response cache for `call`'s key: a hit is answered at once, a
  // key being computed is joined, else the call computes (and leads) it.
  void BeginRecommend(RecommendCall* call);
  // The end of every computed Recommend: counts the outcome, stores the
  // answer under `slot` if it was computed from the slot's versions and,
  // when the call `leads` its key, completes the key (answering the calls
  // that joined it). Returns the answer's encoding (EncodedAnswer::Encode:
  // its ages are cleared from `answer`), made when `encode` is set or the
  // cache keeps it; null otherwise and on an error. `answer` lives on the
  // call's pipeline (recommend_pipeline.h).
  std::shared_ptr<const EncodedAnswer> AnswerRecommend(
      const CacheSlot& slot, const absl::StatusOr<v1::RecommendResponse*>& answer, bool encode,
      bool leads);
  // Counts a cached (or shared) answer; its price_book_age_seconds, aged
  // since `stored_at`.
  int64_t SharedAnswer(const EncodedAnswer& answer, absl::Time stored_at);

  absl::StatusOr<sizing::v1::EstimateResponse> CallEstimate(
      grpc::ServerContext* context, const sizing::v1::EstimateRequest& request);

  // Sizing's model as last heard ("" before any answer, or from a sizing
  // that names none), and what hearing one does.
  std::string SizingModel() const;
  void HeardSizingModel(const std::string& fingerprint);
  void ProbeSizing();  // the probe thread's loop

  // The index a Recommend answers from: the replica's newest catalog, or the
  // previous one while only it has a local price book (OfferIndexCache::Get).
  std::shared_ptr<const OfferIndex> ServingIndex();

  catalog::CatalogReplica* replica_;
  OfferIndexCache own_index_cache_;  // when Options::index_cache is null
  OfferIndexCache* index_cache_;
  std::unique_ptr<sizing::v1::SizingService::Stub> sizing_;
  std::unique_ptr<pricing::v1::PricingService::Stub> pricing_;
  Metrics* metrics_;
  const Options options_;
  PeerRateLimiter limiter_;
  GatewayMetrics gateway_metrics_;  // every gateway family, resolved once
  QuoteClassCache quote_classes_;   // for the in-process quotes (pipeline_options_)
  const RecommendPipeline::Options pipeline_options_;
  mutable absl::Mutex sizing_model_mu_;
  std::string sizing_model_ ABSL_GUARDED_BY(sizing_model_mu_);
  absl::Mutex probe_mu_;
  bool probe_stop_ ABSL_GUARDED_BY(probe_mu_) = false;
  std::thread sizing_probe_;
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_GATEWAY_SERVICE_IMPL_H_
