#include "services/gateway/gateway_service_impl.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status/grpc_status.h"
#include "common/validation/field_ranges.h"
#include "google/protobuf/arena.h"
#include "grpcpp/alarm.h"
#include "grpcpp/client_context.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "services/catalog/provenance.h"
#include "services/gateway/recommend_pipeline.h"
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
      gateway_metrics_(metrics),
      pipeline_options_{.price_book = options.price_book,
                        .region_groups = options.region_groups,
                        .overheads = options.overheads,
                        .estimate_cache = options.estimate_cache} {
  if (options_.sizing_probe_interval > absl::ZeroDuration()) {
    sizing_probe_ = std::thread([this] { ProbeSizing(); });
  }
}

GatewayServiceImpl::~GatewayServiceImpl() {
  {
    absl::MutexLock lock(&probe_mu_);
    probe_stop_ = true;
  }
  if (sizing_probe_.joinable()) sizing_probe_.join();
}

std::string GatewayServiceImpl::SizingModel() const {
  absl::MutexLock lock(&sizing_model_mu_);
  return sizing_model_;
}

void GatewayServiceImpl::HeardSizingModel(const std::string& fingerprint) {
  {
    absl::MutexLock lock(&sizing_model_mu_);
    if (fingerprint == sizing_model_) return;
    sizing_model_ = fingerprint;
  }
  // Another sizing model (a deploy): estimates of the old one are dropped,
  // and the response cache's keys name the new one.
  gateway_metrics_.sizing_model_changes().Increment();
  if (options_.estimate_cache != nullptr) options_.estimate_cache->SetModel(fingerprint);
}

void GatewayServiceImpl::ProbeSizing() {
  absl::MutexLock lock(&probe_mu_);
  while (!probe_stop_) {
    probe_mu_.Unlock();
    grpc::ClientContext client;
    client.set_deadline(absl::ToChronoTime(absl::Now() + options_.backend_timeout));
    sizing::v1::ListModelsResponse models;
    const absl::Time start = absl::Now();
    const grpc::Status status =
        sizing_->ListModels(&client, sizing::v1::ListModelsRequest(), &models);
    metrics_->ClientHandled("gpuadvisor.sizing.v1.SizingService", "ListModels", status.error_code(),
                            absl::ToDoubleSeconds(absl::Now() - start));
    if (status.ok()) HeardSizingModel(models.model_fingerprint());
    probe_mu_.Lock();
    probe_mu_.AwaitWithTimeout(absl::Condition(&probe_stop_), options_.sizing_probe_interval);
  }
}

absl::StatusOr<sizing::v1::EstimateResponse> GatewayServiceImpl::CallEstimate(
    grpc::ServerContext* context, const sizing::v1::EstimateRequest& request) {
  std::unique_ptr<grpc::ClientContext> client = BackendContext(context, options_.backend_timeout);
  sizing::v1::EstimateResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status status = sizing_->Estimate(client.get(), request, &response);
  gateway_metrics_.sizing_estimate().Handled(status.error_code(),
                                             absl::ToDoubleSeconds(absl::Now() - start));
  if (!status.ok()) return MapBackendStatus(Backend::kSizing, status);
  return response;
}

// One Recommend that missed the response cache: the transport around a
// RecommendPipeline (recommend_pipeline.h), which runs the domain steps. The
// call gives it sizing's Estimate and pricing's Quote as callback-API calls,
// children of the caller's call (ClientContext::FromCallbackServerContext:
// the caller's cancellation or deadline ends them), capped by
// backend_timeout, with their statuses mapped (MapBackendStatus). A Quote
// answered FAILED_PRECONDITION (pricing has not built the catalog version
// yet) is asked again on a grpc::Alarm, for at most quote_version_wait and
// the caller's deadline. At most one backend call or alarm is outstanding,
// so the steps never run at once; only OnCancel can run beside a step, and it
// touches nothing but the alarm (under mu_). The reactor deletes itself in
// OnDone, after Finish.
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
        slot_(std::move(slot)),
        pipeline_(&service->pipeline_options_,
                  {.estimate =
                       [this](const sizing::v1::EstimateRequest& sizing_request,
                              sizing::v1::EstimateResponse* sized, RecommendPipeline::Done done) {
                         Estimate(sizing_request, sized, std::move(done));
                       },
                   .quote =
                       [this](const pricing::v1::QuoteRequest& quote_request,
                              pricing::v1::QuoteResponse* priced, RecommendPipeline::Done done) {
                         Quote(quote_request, priced, std::move(done));
                       }}) {}

  // Computes the answer (one snapshot of the catalog for all of it).
  void Start() {
    pipeline_.Run(
        service_->index_cache_.Get(service_->replica_->Current()), request_,
        [this](absl::StatusOr<v1::RecommendResponse*> answer) { Answer(std::move(answer)); });
  }

  void OnCancel() override {
    // A retry waiting on the alarm stops now (Quoted sees ok = false); a
    // backend call in flight is cancelled by gRPC itself (it is a child).
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (alarm_ != nullptr) alarm_->Cancel();
  }

  void OnDone() override { delete this; }

  // Set before Start on the first call of its cache key: it completes the
  // key in the response cache (waking the calls that joined it) when it ends.
  bool leads = false;

  // A call that joined another of its key: answered with that call's answer,
  // or (null: it failed) computes its own.
  void Joined(std::shared_ptr<const EncodedAnswer> answer, absl::Time computed_at) {
    if (answer == nullptr) return Start();
    service_->gateway_metrics_.cache_hits().Increment();
    service_->SendEncoded(*answer, computed_at, response_);
    Finish(rpc_.Finish(grpc::Status::OK));
  }

 private:
  void Estimate(const sizing::v1::EstimateRequest& request, sizing::v1::EstimateResponse* response,
                RecommendPipeline::Done done) {
    backend_done_ = std::move(done);
    client_ = BackendContext();
    backend_start_ = absl::Now();
    service_->sizing_->async()->Estimate(
        client_.get(), &request, response, [this, response](grpc::Status status) {
          service_->gateway_metrics_.sizing_estimate().Handled(
              status.error_code(), absl::ToDoubleSeconds(absl::Now() - backend_start_));
          if (status.ok()) service_->HeardSizingModel(response->model_fingerprint());
          BackendDone(status.ok() ? absl::OkStatus() : MapBackendStatus(Backend::kSizing, status));
        });
  }

  void Quote(const pricing::v1::QuoteRequest& request, pricing::v1::QuoteResponse* response,
             RecommendPipeline::Done done) {
    backend_done_ = std::move(done);
    quote_ = &request;
    priced_ = response;
    quote_give_up_ = absl::Now() + service_->options_.quote_version_wait;
    CallQuote();
  }

  void CallQuote() {
    client_ = BackendContext();
    priced_->Clear();
    backend_start_ = absl::Now();
    service_->pricing_->async()->Quote(client_.get(), quote_, priced_,
                                       [this](grpc::Status status) { Quoted(std::move(status)); });
  }

  // A Quote answered: FAILED_PRECONDITION is asked again while time is left,
  // then UNAVAILABLE naming the version.
  void Quoted(grpc::Status status) {
    service_->gateway_metrics_.pricing_quote().Handled(
        status.error_code(), absl::ToDoubleSeconds(absl::Now() - backend_start_));
    absl::Status priced =
        status.ok() ? absl::OkStatus() : MapBackendStatus(Backend::kPricing, status);
    if (absl::IsFailedPrecondition(priced)) {
      const absl::Time deadline = absl::FromChrono(context_->deadline());
      absl::MutexLock lock(&mu_);
      const absl::Duration wait = retry_wait_;
      if (!cancelled_ && absl::Now() + wait <= std::min(quote_give_up_, deadline)) {
        retry_wait_ = std::min(wait * 2, absl::Milliseconds(200));
        alarm_ = std::make_unique<grpc::Alarm>();
        alarm_->Set(absl::ToChronoTime(absl::Now() + wait), [this, priced](bool fired) {
          if (fired) return CallQuote();
          BackendDone(VersionMissing(priced));  // cancelled while waiting
        });
        return;
      }
      priced = VersionMissing(priced);
    }
    BackendDone(std::move(priced));
  }

  void BackendDone(absl::Status status) {
    RecommendPipeline::Done done = std::move(backend_done_);
    done(std::move(status));
  }

  absl::Status VersionMissing(const absl::Status& last) const {
    return absl::UnavailableError(
        absl::StrCat("pricing backend does not hold catalog version \"", quote_->catalog_version(),
                     "\" that this answer was built from (", last.message(), "); retry"));
  }

  std::unique_ptr<grpc::ClientContext> BackendContext() const {
    std::unique_ptr<grpc::ClientContext> client =
        grpc::ClientContext::FromCallbackServerContext(*context_);
    // The child deadline is the earlier of the caller's and ours.
    client->set_deadline(absl::ToChronoTime(absl::Now() + service_->options_.backend_timeout));
    return client;
  }

  void Answer(absl::StatusOr<v1::RecommendResponse*> answer) {
    if (pipeline_.priced_locally()) service_->gateway_metrics_.local_quotes().Increment();
    // Before this call finishes (it may be deleted right after).
    const grpc::Status status =
        service_->AnswerRecommend(slot_, std::move(answer), response_, leads);
    Finish(rpc_.Finish(status));
  }

  GatewayServiceImpl* const service_;
  grpc::CallbackServerContext* const context_;
  const v1::RecommendRequest request_;
  grpc::ByteBuffer* const response_;
  RpcScope rpc_;
  const CacheSlot slot_;
  RecommendPipeline pipeline_;
  RecommendPipeline::Done backend_done_;         // of the backend call in flight
  std::unique_ptr<grpc::ClientContext> client_;  // of the backend call in flight
  absl::Time backend_start_;
  const pricing::v1::QuoteRequest* quote_ = nullptr;  // the pipeline's
  pricing::v1::QuoteResponse* priced_ = nullptr;      // the pipeline's
  absl::Time quote_give_up_;
  absl::Duration retry_wait_ = absl::Milliseconds(20);
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<grpc::Alarm> alarm_ ABSL_GUARDED_BY(mu_);
};

GatewayServiceImpl::CacheSlot GatewayServiceImpl::CacheSlotFor(
    const v1::RecommendRequest& request) const {
  // The key names the versions live now (the catalog, pricing's book and
  // sizing's model); an answer is stored only if it was computed from
  // exactly those versions.
  CacheSlot slot;
  if (options_.response_cache == nullptr || !options_.response_cache->enabled() ||
      !options_.price_book_version) {
    return slot;
  }
  std::shared_ptr<const catalog::Catalog> catalog = replica_->Current();
  if (catalog != nullptr) slot.catalog_version = catalog->snapshot().version();
  slot.price_book_version = options_.price_book_version();
  slot.sizing_model = SizingModel();
  slot.key =
      ResponseCache::Key(request, slot.catalog_version, slot.price_book_version, slot.sizing_model);
  return slot;
}

grpc::Status GatewayServiceImpl::AnswerRecommend(const CacheSlot& slot,
                                                 absl::StatusOr<v1::RecommendResponse*> answer,
                                                 grpc::ByteBuffer* response, bool leads) {
  std::shared_ptr<const EncodedAnswer> encoded;
  grpc::Status status = grpc::Status::OK;
  if (!answer.ok()) {
    gateway_metrics_.recommendations_error().Increment();
    status = ToGrpcStatus(answer.status());
  } else {
    v1::RecommendResponse& computed_answer = **answer;  // on the pipeline's arena
    const bool storable = !slot.key.empty() &&
                          computed_answer.catalog_version() == slot.catalog_version &&
                          computed_answer.price_book_version() == slot.price_book_version &&
                          SizingModel() == slot.sizing_model;
    auto computed = std::make_shared<const EncodedAnswer>(EncodedAnswer::Encode(computed_answer));
    *response = computed->Send(computed->price_book_age_seconds,
                               static_cast<int64_t>(replica_->AgeSeconds()));
    (computed->empty ? gateway_metrics_.recommendations_empty()
                     : gateway_metrics_.recommendations_ok())
        .Increment();
    if (!slot.key.empty()) gateway_metrics_.cache_misses().Increment();
    if (storable) encoded = std::move(computed);
  }
  if (slot.key.empty()) return status;
  const std::string versions =
      ResponseCache::Versions(slot.catalog_version, slot.price_book_version, slot.sizing_model);
  if (leads) {
    // Stores the answer (if any) and answers the calls that joined the key,
    // or lets them compute their own.
    options_.response_cache->Complete(slot.key, versions, std::move(encoded), absl::Now());
  } else if (encoded != nullptr) {
    options_.response_cache->Insert(slot.key, versions, std::move(encoded), absl::Now());
  }
  return status;
}

void GatewayServiceImpl::SendEncoded(const EncodedAnswer& answer, absl::Time stored_at,
                                     grpc::ByteBuffer* response) {
  (answer.empty ? gateway_metrics_.recommendations_empty() : gateway_metrics_.recommendations_ok())
      .Increment();
  *response =
      answer.Send(answer.price_book_age_seconds + absl::ToInt64Seconds(absl::Now() - stored_at),
                  static_cast<int64_t>(replica_->AgeSeconds()));
}

grpc::ServerUnaryReactor* GatewayServiceImpl::Recommend(grpc::CallbackServerContext* context,
                                                        const grpc::ByteBuffer* request_bytes,
                                                        grpc::ByteBuffer* response) {
  RpcScope rpc(&gateway_metrics_.recommend_rpc());
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
  const std::string key = slot.key;
  auto* call = new RecommendCall(this, context, std::move(request), response, std::move(rpc),
                                 std::move(slot));
  if (!key.empty()) {
    // One cache call: a hit, or this call computes the key, or it joins the
    // call already computing it.
    const ResponseCache::Joined joined = options_.response_cache->LookupOrJoin(
        key, [call](std::shared_ptr<const EncodedAnswer> answer, absl::Time computed_at) {
          call->Joined(std::move(answer), computed_at);
        });
    switch (joined.outcome) {
      case ResponseCache::Joined::kHit:
        // Answered here, on the thread that delivered the request, with the
        // bytes encoded when the answer was computed.
        call->Joined(joined.hit.response, joined.hit.stored_at);
        return call;
      case ResponseCache::Joined::kJoined:
        return call;  // answered when the call computing the key ends
      case ResponseCache::Joined::kLeads:
        call->leads = true;
        break;
    }
  }
  call->Start();
  return call;
}

grpc::Status GatewayServiceImpl::Estimate(grpc::ServerContext* context,
                                          const v1::EstimateRequest* request,
                                          v1::EstimateResponse* response) {
  RpcScope rpc(metrics_, kService, "Estimate");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  // Every number's physical range, from the table all services share.
  if (absl::Status s = validation::CheckRanges(*request); !s.ok()) {
    return rpc.Finish(ToGrpcStatus(s));
  }
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
  HeardSizingModel(sized->model_fingerprint());
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

grpc::Status GatewayServiceImpl::ListSources(grpc::ServerContext* context,
                                             const catalog::v1::ListSourcesRequest*,
                                             catalog::v1::ListSourcesResponse* response) {
  RpcScope rpc(metrics_, kService, "ListSources");
  if (grpc::Status admitted = limiter_.Admit(*context); !admitted.ok()) return rpc.Finish(admitted);
  std::shared_ptr<const catalog::Catalog> current = replica_->Current();
  if (current == nullptr) return rpc.Finish(ToGrpcStatus(NoCatalogYet()));
  const catalog::v1::CatalogSnapshot& snapshot = current->snapshot();
  *response->mutable_sources() = snapshot.sources();
  for (catalog::v1::SourceState& s : *response->mutable_sources()) {
    if (s.kind() == "file") s.set_last_attempt_unix_seconds(snapshot.loaded_at_unix_seconds());
  }
  const absl::Time now = absl::Now();
  catalog::AgeSources(*response->mutable_sources(), now);
  response->set_catalog_version(snapshot.version());
  response->set_now_unix_seconds(absl::ToUnixSeconds(now));
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

}  // namespace gpuadvisor::gateway
