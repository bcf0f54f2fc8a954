#include "services/gateway/gateway_service_impl.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status/grpc_status.h"
#include "google/protobuf/arena.h"
#include "grpcpp/alarm.h"
#include "grpcpp/client_context.h"
#include "grpcpp/impl/codegen/proto_utils.h"
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
      // caller (RecommendCall::Quoted) retries, then reports it as UNAVAILABLE.
      if (backend == Backend::kPricing)
        return absl::Status(s.code(), absl::StrCat(name, " backend: ", s.message()));
      [[fallthrough]];
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
      if (backend == Backend::kSizing) return s;
      [[fallthrough]];
    default:
      return absl::InternalError(absl::StrCat(name, " backend rejected the gateway's request (",
                                              absl::StatusCodeToString(s.code()),
                                              "): ", s.message()));
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
  return absl::UnavailableError(
      "gateway has no catalog snapshot yet (catalog backend not reached)");
}

}  // namespace

GatewayServiceImpl::GatewayServiceImpl(catalog::CatalogReplica* replica,
                                       std::unique_ptr<sizing::v1::SizingService::Stub> sizing,
                                       std::unique_ptr<pricing::v1::PricingService::Stub> pricing,
                                       Metrics* metrics, Options options)
    : replica_(replica),
      sizing_(std::move(sizing)),
      pricing_(std::move(pricing)),
      metrics_(metrics),
      options_(options),
      limiter_(options.rate_limit),
      recommendations_(
          prometheus::BuildCounter()
              .Name("gpuadvisor_gateway_recommendations_total")
              .Help("Recommend calls by outcome: ok, empty (nothing qualified), error.")
              .Register(metrics->registry())),
      recommendations_ok_(recommendations_.Add({{"outcome", "ok"}})),
      recommendations_empty_(recommendations_.Add({{"outcome", "empty"}})),
      recommendations_error_(recommendations_.Add({{"outcome", "error"}})),
      cache_hits_(prometheus::BuildCounter()
                      .Name("gpuadvisor_gateway_response_cache_hits_total")
                      .Help("Recommend answers served from the response cache.")
                      .Register(metrics->registry())
                      .Add({})),
      cache_misses_(prometheus::BuildCounter()
                        .Name("gpuadvisor_gateway_response_cache_misses_total")
                        .Help("Recommend answers computed with the response cache on.")
                        .Register(metrics->registry())
                        .Add({})),
      local_quotes_(
          prometheus::BuildCounter()
              .Name("gpuadvisor_gateway_local_quotes_total")
              .Help("Recommend answers priced in process from the gateway's copy of pricing's "
                    "book; the others call pricing's Quote (grpc_client_handled_total).")
              .Register(metrics->registry())
              .Add({})),
      recommend_rpc_(metrics->ServerMethod(kService, "Recommend")),
      sizing_estimate_(metrics->ClientMethod("gpuadvisor.sizing.v1.SizingService", "Estimate")),
      pricing_quote_(metrics->ClientMethod("gpuadvisor.pricing.v1.PricingService", "Quote")) {
  metrics_->InitializeMethods(kService, {{"Recommend", "unary"},
                                         {"Estimate", "unary"},
                                         {"ListOffers", "unary"},
                                         {"ListGpus", "unary"},
                                         {"ListModels", "unary"}});
}

absl::StatusOr<sizing::v1::EstimateResponse> GatewayServiceImpl::CallEstimate(
    grpc::ServerContext* context, const sizing::v1::EstimateRequest& request) {
  std::unique_ptr<grpc::ClientContext> client = BackendContext(context, options_.backend_timeout);
  sizing::v1::EstimateResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status status = sizing_->Estimate(client.get(), request, &response);
  sizing_estimate_.Handled(status.error_code(), absl::ToDoubleSeconds(absl::Now() - start));
  if (!status.ok()) return MapBackendStatus(Backend::kSizing, status);
  return response;
}

// One Recommend that missed the response cache, from the request to the
// answer. The chain, each step on the gRPC thread that delivered the one
// before (never a thread of its own, never a blocking wait):
//
//   Start: RecommendationRun::Start ── needs sizing? ── Estimate ──> Sized
//   Sized: ApplyEstimates ── current local book? ── PriceBook::Quote ──> Answer
//          else CallQuote ── Quote ──> Quoted
//   Quoted: FAILED_PRECONDITION and time left? ── Alarm ──> CallQuote
//           else RecommendationRun::Finish ──> Answer (Finish the RPC)
//
// At most one backend call or alarm is outstanding, so the steps never run
// at once; only OnCancel can run beside a step, and it touches nothing but
// the alarm (under mu_). Backend calls are children of the caller's call
// (ClientContext::FromCallbackServerContext): the caller's cancellation or
// deadline ends them, and their callback carries the chain to its end.
// The reactor deletes itself in OnDone, after Finish.
class GatewayServiceImpl::RecommendCall final : public grpc::ServerUnaryReactor {
 public:
  RecommendCall(GatewayServiceImpl* service, grpc::CallbackServerContext* context,
                v1::RecommendRequest request, grpc::ByteBuffer* response, RpcScope rpc,
                CacheSlot slot)
      : service_(service),
        context_(context),
        request_(std::move(request)),
        response_(response),
        rpc_(std::move(rpc)),
        slot_(std::move(slot)) {}

  void Start() {
    // One snapshot for the whole answer: its offers are filtered and sized,
    // and pricing quotes against the same version.
    catalog_ = service_->replica_->Current();
    absl::StatusOr<RecommendationRun> run = RecommendationRun::Start(
        service_->index_cache_.Get(catalog_), request_, service_->options_.region_groups,
        service_->options_.overheads, service_->options_.estimate_cache);
    if (!run.ok()) return Answer(run.status());
    run_.emplace(*std::move(run));
    if (!run_->needs_sizing()) return Sized(grpc::Status::OK);
    client_ = BackendContext();
    backend_start_ = absl::Now();
    service_->sizing_->async()->Estimate(client_.get(), &run_->estimate_request(), &sized_,
                                         [this](grpc::Status status) { Sized(std::move(status)); });
  }

  void OnCancel() override {
    // A retry waiting on the alarm stops now (Quoted sees ok = false); a
    // backend call in flight is cancelled by gRPC itself (it is a child).
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (alarm_ != nullptr) alarm_->Cancel();
  }

  void OnDone() override { delete this; }

  // Set before Start on the first call of its cache key: it answers the
  // calls parked on the key when it ends.
  bool leads = false;

  // A parked call: answered with the answer of the call it waited for.
  void Share(const std::shared_ptr<const EncodedAnswer>& answer, absl::Time computed_at) {
    service_->cache_hits_.Increment();
    service_->SendEncoded(*answer, computed_at, response_);
    Finish(rpc_.Finish(grpc::Status::OK));
  }

 private:
  void Sized(grpc::Status status) {
    if (client_ != nullptr) {
      service_->sizing_estimate_.Handled(status.error_code(),
                                         absl::ToDoubleSeconds(absl::Now() - backend_start_));
    }
    if (!status.ok()) return Answer(MapBackendStatus(Backend::kSizing, status));
    absl::StatusOr<RecommendationRun::QuotePlan> plan = run_->PlanQuote(std::move(sized_));
    if (!plan.ok()) return Answer(plan.status());
    const std::string& catalog_version = catalog_->snapshot().version();
    if (service_->options_.price_book) {
      if (std::shared_ptr<const pricing::PriceBook> book =
              service_->options_.price_book(catalog_version)) {
        return QuoteHere(*book, *plan);
      }
    }
    quote_ = plan->ToRequest();
    quote_.set_catalog_version(catalog_version);
    // Quote even with no items: an empty answer still says which price book
    // it was checked against. With no items, a pricing failure only costs
    // the answer that version.
    quote_give_up_ = absl::Now() + service_->options_.quote_version_wait;
    CallQuote();
  }

  // The quote pricing would give, from the gateway's copy of its book.
  void QuoteHere(const pricing::PriceBook& book, const RecommendationRun::QuotePlan& plan) {
    service_->local_quotes_.Increment();
    priced_ = google::protobuf::Arena::CreateMessage<pricing::v1::QuoteResponse>(&arena_);
    if (absl::Status quoted = book.Quote(plan.items, plan.job, absl::Now(), priced_);
        !quoted.ok()) {
      // The gateway built the request: a rejection is its own fault.
      return Answer(absl::InternalError(
          absl::StrCat("pricing (in process) rejected the gateway's request: ", quoted.message())));
    }
    Answer(run_->Finish(*priced_));
  }

  void CallQuote() {
    client_ = BackendContext();
    // The answer is parsed into the arena and dropped with it, not message
    // by message (a quote has hundreds of items).
    priced_ = google::protobuf::Arena::CreateMessage<pricing::v1::QuoteResponse>(&arena_);
    backend_start_ = absl::Now();
    service_->pricing_->async()->Quote(client_.get(), &quote_, priced_,
                                       [this](grpc::Status status) { Quoted(std::move(status)); });
  }

  // CallQuote for quote_.catalog_version(), retried while pricing answers
  // FAILED_PRECONDITION (it has not built that version's book yet: a reload
  // moments ago), for at most Options::quote_version_wait and the caller's
  // deadline; then UNAVAILABLE naming the version. A quote of another
  // version is refused.
  void Quoted(grpc::Status status) {
    service_->pricing_quote_.Handled(status.error_code(),
                                     absl::ToDoubleSeconds(absl::Now() - backend_start_));
    absl::Status priced = absl::OkStatus();
    if (!status.ok()) {
      priced = MapBackendStatus(Backend::kPricing, status);
    } else if (priced_->catalog_version() != quote_.catalog_version()) {
      priced = absl::UnavailableError(absl::StrCat("pricing backend: quoted catalog version \"",
                                                   priced_->catalog_version(), "\", not \"",
                                                   quote_.catalog_version(), "\" as asked; retry"));
    }
    if (absl::IsFailedPrecondition(priced)) {
      const absl::Time deadline = absl::FromChrono(context_->deadline());
      absl::MutexLock lock(&mu_);
      const absl::Duration wait = retry_wait_;
      if (!cancelled_ && absl::Now() + wait <= std::min(quote_give_up_, deadline)) {
        retry_wait_ = std::min(wait * 2, absl::Milliseconds(200));
        alarm_ = std::make_unique<grpc::Alarm>();
        alarm_->Set(absl::ToChronoTime(absl::Now() + wait), [this, priced](bool fired) {
          if (fired) return CallQuote();
          Answer(VersionMissing(priced));  // cancelled while waiting
        });
        return;
      }
      priced = VersionMissing(priced);
    }
    if (!priced.ok()) {
      if (quote_.items_size() > 0) return Answer(priced);
      priced_->Clear();
    }
    Answer(run_->Finish(*priced_));
  }

  absl::Status VersionMissing(const absl::Status& last) const {
    return absl::UnavailableError(
        absl::StrCat("pricing backend does not hold catalog version \"", quote_.catalog_version(),
                     "\" that this answer was built from (", last.message(), "); retry"));
  }

  std::unique_ptr<grpc::ClientContext> BackendContext() const {
    std::unique_ptr<grpc::ClientContext> client =
        grpc::ClientContext::FromCallbackServerContext(*context_);
    // The child deadline is the earlier of the caller's and ours.
    client->set_deadline(absl::ToChronoTime(absl::Now() + service_->options_.backend_timeout));
    return client;
  }

  void Answer(absl::StatusOr<v1::RecommendResponse> answer) {
    std::shared_ptr<const EncodedAnswer> shared;
    const grpc::Status status =
        service_->AnswerRecommend(slot_, std::move(answer), response_, &shared);
    if (leads) {
      // Before this call finishes (it may be deleted right after).
      const absl::Time now = absl::Now();
      for (RecommendCall* parked : service_->TakeParked(slot_.key)) {
        if (shared != nullptr) {
          parked->Share(shared, now);
        } else {
          parked->Start();  // no answer to share: it computes its own
        }
      }
    }
    Finish(rpc_.Finish(status));
  }

  GatewayServiceImpl* const service_;
  grpc::CallbackServerContext* const context_;
  const v1::RecommendRequest request_;
  grpc::ByteBuffer* const response_;
  RpcScope rpc_;
  const CacheSlot slot_;
  std::shared_ptr<const catalog::Catalog> catalog_;
  std::optional<RecommendationRun> run_;
  std::unique_ptr<grpc::ClientContext> client_;  // of the backend call in flight
  absl::Time backend_start_;
  sizing::v1::EstimateResponse sized_;
  pricing::v1::QuoteRequest quote_;
  google::protobuf::Arena arena_;
  pricing::v1::QuoteResponse* priced_ = nullptr;  // on arena_
  absl::Time quote_give_up_;
  absl::Duration retry_wait_ = absl::Milliseconds(20);
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<grpc::Alarm> alarm_ ABSL_GUARDED_BY(mu_);
};

GatewayServiceImpl::CacheSlot GatewayServiceImpl::CacheSlotFor(
    const v1::RecommendRequest& request) const {
  // The key names the versions live now; an answer is stored only if it was
  // computed from exactly those versions.
  CacheSlot slot;
  if (options_.response_cache == nullptr || !options_.response_cache->enabled() ||
      !options_.price_book_version) {
    return slot;
  }
  std::shared_ptr<const catalog::Catalog> catalog = replica_->Current();
  if (catalog != nullptr) slot.catalog_version = catalog->snapshot().version();
  slot.price_book_version = options_.price_book_version();
  slot.key = ResponseCache::Key(request, slot.catalog_version, slot.price_book_version);
  return slot;
}

grpc::Status GatewayServiceImpl::AnswerRecommend(const CacheSlot& slot,
                                                 absl::StatusOr<v1::RecommendResponse> answer,
                                                 grpc::ByteBuffer* response,
                                                 std::shared_ptr<const EncodedAnswer>* shared) {
  if (!answer.ok()) {
    recommendations_error_.Increment();
    return ToGrpcStatus(answer.status());
  }
  const bool storable = !slot.key.empty() && answer->catalog_version() == slot.catalog_version &&
                        answer->price_book_version() == slot.price_book_version;
  auto encoded = std::make_shared<const EncodedAnswer>(EncodedAnswer::From(*std::move(answer)));
  *response =
      encoded->Send(encoded->price_book_age_seconds, static_cast<int64_t>(replica_->AgeSeconds()));
  (encoded->empty ? recommendations_empty_ : recommendations_ok_).Increment();
  if (!slot.key.empty()) {
    cache_misses_.Increment();
    if (storable) {
      *shared = encoded;
      options_.response_cache->Insert(slot.key, slot.catalog_version, slot.price_book_version,
                                      std::move(encoded), absl::Now());
    }
  }
  return grpc::Status::OK;
}

void GatewayServiceImpl::SendEncoded(const EncodedAnswer& answer, absl::Time stored_at,
                                     grpc::ByteBuffer* response) {
  (answer.empty ? recommendations_empty_ : recommendations_ok_).Increment();
  *response =
      answer.Send(answer.price_book_age_seconds + absl::ToInt64Seconds(absl::Now() - stored_at),
                  static_cast<int64_t>(replica_->AgeSeconds()));
}

std::vector<GatewayServiceImpl::RecommendCall*> GatewayServiceImpl::TakeParked(
    const std::string& key) {
  absl::MutexLock lock(&inflight_mu_);
  auto it = inflight_.find(key);
  if (it == inflight_.end()) return {};
  std::vector<RecommendCall*> parked = std::move(it->second);
  inflight_.erase(it);
  return parked;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::Recommend(grpc::CallbackServerContext* context,
                                                        const grpc::ByteBuffer* request_bytes,
                                                        grpc::ByteBuffer* response) {
  RpcScope rpc(&recommend_rpc_);
  const auto answer_now = [&](grpc::Status status) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(rpc.Finish(std::move(status)));
    return reactor;
  };
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return answer_now(admitted);
  v1::RecommendRequest request;
  grpc::ByteBuffer bytes(*request_bytes);  // shares the slices
  // The status a typed method answers for an unparsable request.
  if (grpc::Status parsed =
          grpc::SerializationTraits<v1::RecommendRequest>::Deserialize(&bytes, &request);
      !parsed.ok()) {
    return answer_now(parsed);
  }
  CacheSlot slot = CacheSlotFor(request);
  if (!slot.key.empty()) {
    const ResponseCache::Hit hit = options_.response_cache->Lookup(slot.key);
    if (hit.response != nullptr) {
      // Answered here, on the thread that delivered the request, with the
      // bytes encoded when the answer was computed.
      cache_hits_.Increment();
      SendEncoded(*hit.response, hit.stored_at, response);
      return answer_now(grpc::Status::OK);
    }
  }
  const std::string key = slot.key;
  auto* call = new RecommendCall(this, context, std::move(request), response, std::move(rpc),
                                 std::move(slot));
  if (!key.empty()) {
    absl::MutexLock lock(&inflight_mu_);
    auto [it, first] = inflight_.try_emplace(key);
    if (!first) {
      it->second.push_back(call);  // parked until the first call of its key ends
      return call;
    }
    call->leads = true;
  }
  call->Start();
  return call;
}

grpc::Status GatewayServiceImpl::Estimate(grpc::ServerContext* context,
                                          const v1::EstimateRequest* request,
                                          v1::EstimateResponse* response) {
  RpcScope rpc(metrics_, kService, "Estimate");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  sizing::v1::EstimateRequest forward;
  *forward.mutable_workload() = request->workload();
  std::vector<v1::Assumption> assumptions;
  if (absl::Status s =
          ApplyWorkloadDefaults(*forward.mutable_workload(), assumptions, WorkloadUse::kSize);
      !s.ok()) {
    return rpc.Finish(ToGrpcStatus(s));
  }
  *forward.mutable_configurations() = request->configurations();
  if (request->has_vram_margin()) forward.set_vram_margin(request->vram_margin());
  if (request->has_serving_slo()) *forward.mutable_serving_slo() = request->serving_slo();
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

grpc::Status GatewayServiceImpl::ListGpus(grpc::ServerContext* context,
                                          const catalog::v1::ListGpusRequest*,
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
  family.help =
      "Seconds since the gateway's catalog replica was last known current (-1: none yet).";
  family.type = prometheus::MetricType::Gauge;
  prometheus::ClientMetric metric;
  metric.gauge.value = replica_->AgeSeconds();
  family.metric.push_back(std::move(metric));
  return {std::move(family)};
}

}  // namespace gpuadvisor::gateway
