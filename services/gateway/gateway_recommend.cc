// GatewayServiceImpl's Recommend (gateway_service_impl.h): the gRPC method
// and its in-process twin for the HTTP front end, over one RecommendCall.

#include <algorithm>
#include <chrono>
#include <string>
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
#include "services/gateway/backend_status.h"
#include "services/gateway/gateway_service_impl.h"
#include "services/gateway/recommend_pipeline.h"

namespace gpuadvisor::gateway {

// One Recommend past the rate limit: the transport around a
// RecommendPipeline (recommend_pipeline.h), which runs the domain steps. The
// call gives it sizing's Estimate and pricing's Quote as callback-API calls
// (children of the caller's gRPC call when there is one: its cancellation
// ends them), each under the earlier of the caller's deadline and
// backend_timeout, with their statuses mapped (MapBackendStatus). A Quote
// answered FAILED_PRECONDITION (pricing has not built the catalog version
// yet) is asked again on a grpc::Alarm, for at most quote_version_wait and
// the caller's deadline. At most one backend call or alarm is outstanding,
// so the steps never run at once; only Cancel can run beside a step, and it
// touches nothing but the alarm (under mu_). The subclass ends the call:
// Computed with the pipeline's answer, or Shared with another call's.
class GatewayServiceImpl::RecommendCall {
 public:
  RecommendCall(GatewayServiceImpl* service, v1::RecommendRequest request, RpcScope rpc,
                CacheSlot slot)
      : service_(service),
        request_(std::move(request)),
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
  virtual ~RecommendCall() = default;

  const std::string& key() const { return slot_.key; }

  // Computes the answer (one snapshot of the catalog for all of it).
  void Start() {
    pipeline_.Run(service_->ServingIndex(), request_,
                  [this](absl::StatusOr<v1::RecommendResponse*> answer) {
                    if (pipeline_.priced_locally()) {
                      service_->gateway_metrics_.local_quotes().Increment();
                    }
                    Computed(std::move(answer));  // may delete this call
                  });
  }

  // Set before Start on the first call of its cache key: it completes the
  // key in the response cache (waking the calls that joined it) when it ends.
  bool leads = false;

  // A call that joined another of its key: answered with that call's answer,
  // or (null: it failed) computes its own.
  void Joined(std::shared_ptr<const EncodedAnswer> answer, absl::Time computed_at) {
    if (answer == nullptr) return Start();
    service_->gateway_metrics_.cache_hits().Increment();
    Shared(*answer, computed_at);
  }

 protected:
  // The end of the call, each exactly once (the call may be deleted in it):
  // the answer this call computed (on the pipeline's arena: it lives as long
  // as the call), or one computed before (a cache hit, or the call it
  // joined) at `computed_at`.
  virtual void Computed(absl::StatusOr<v1::RecommendResponse*> answer) = 0;
  virtual void Shared(const EncodedAnswer& answer, absl::Time computed_at) = 0;
  // A backend call's context before its deadline is set: a child of the
  // caller's call, or a fresh one.
  virtual std::unique_ptr<grpc::ClientContext> ParentContext() const = 0;
  virtual absl::Time Deadline() const = 0;  // the caller's

  // Frees the pipeline's run and answer on this thread once the answer is
  // encoded (the call itself is deleted later, on whichever thread gRPC ends
  // it).
  void ReleasePipeline() { pipeline_.Release(); }

  // The caller went away: a retry waiting on the alarm stops now (Quoted
  // sees ok = false).
  void Cancel() {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (alarm_ != nullptr) alarm_->Cancel();
  }

  GatewayServiceImpl* const service_;
  const v1::RecommendRequest request_;
  RpcScope rpc_;
  const CacheSlot slot_;

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
      const absl::Time deadline = Deadline();
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

  // The earlier of the caller's deadline and ours.
  std::unique_ptr<grpc::ClientContext> BackendContext() const {
    std::unique_ptr<grpc::ClientContext> client = ParentContext();
    client->set_deadline(
        absl::ToChronoTime(std::min(Deadline(), absl::Now() + service_->options_.backend_timeout)));
    return client;
  }

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

// The gRPC method's call: answers bytes (EncodedAnswer) through the
// callback API's reactor, which deletes itself in OnDone, after Finish.
class GatewayServiceImpl::GrpcRecommend final : public RecommendCall,
                                                public grpc::ServerUnaryReactor {
 public:
  GrpcRecommend(GatewayServiceImpl* service, grpc::CallbackServerContext* context,
                v1::RecommendRequest request, grpc::ByteBuffer* response, RpcScope rpc,
                CacheSlot slot)
      : RecommendCall(service, std::move(request), std::move(rpc), std::move(slot)),
        context_(context),
        response_(response) {}

  // A backend call in flight is cancelled by gRPC itself (it is a child).
  void OnCancel() override { Cancel(); }
  void OnDone() override { delete this; }

 private:
  void Computed(absl::StatusOr<v1::RecommendResponse*> answer) override {
    std::shared_ptr<const EncodedAnswer> encoded =
        service_->AnswerRecommend(slot_, answer, /*encode=*/true, leads);
    if (encoded != nullptr) {
      *response_ = encoded->Send(encoded->price_book_age_seconds,
                                 static_cast<int64_t>(service_->replica_->AgeSeconds()));
    }
    ReleasePipeline();
    Finish(rpc_.Finish(answer.ok() ? grpc::Status::OK : ToGrpcStatus(answer.status())));
  }

  void Shared(const EncodedAnswer& answer, absl::Time computed_at) override {
    *response_ = answer.Send(service_->SharedAnswer(answer, computed_at),
                             static_cast<int64_t>(service_->replica_->AgeSeconds()));
    Finish(rpc_.Finish(grpc::Status::OK));
  }

  std::unique_ptr<grpc::ClientContext> ParentContext() const override {
    return grpc::ClientContext::FromCallbackServerContext(*context_);
  }
  absl::Time Deadline() const override { return absl::FromChrono(context_->deadline()); }

  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer* const response_;
};

// RecommendLocal's call: answers the message to the caller's callback, then
// deletes itself.
class GatewayServiceImpl::LocalRecommend final : public RecommendCall {
 public:
  LocalRecommend(GatewayServiceImpl* service, absl::Time deadline, v1::RecommendRequest request,
                 RpcScope rpc, CacheSlot slot, LocalAnswer done)
      : RecommendCall(service, std::move(request), std::move(rpc), std::move(slot)),
        deadline_(deadline),
        done_(std::move(done)) {}

 private:
  void Computed(absl::StatusOr<v1::RecommendResponse*> answer) override {
    // Encoding for the cache leaves the ages out of the answer: put back.
    const int64_t price_book_age = answer.ok() ? (*answer)->price_book_age_seconds() : 0;
    service_->AnswerRecommend(slot_, answer, /*encode=*/false, leads);
    if (answer.ok()) {
      (*answer)->set_price_book_age_seconds(price_book_age);
      (*answer)->set_catalog_age_seconds(static_cast<int64_t>(service_->replica_->AgeSeconds()));
    }
    End(std::move(answer));
  }

  void Shared(const EncodedAnswer& answer, absl::Time computed_at) override {
    v1::RecommendResponse* response =
        google::protobuf::Arena::CreateMessage<v1::RecommendResponse>(&shared_arena_);
    if (!response->ParseFromArray(answer.bytes.begin(), static_cast<int>(answer.bytes.size()))) {
      return End(absl::InternalError("gateway: a cached answer does not parse"));
    }
    response->set_price_book_age_seconds(service_->SharedAnswer(answer, computed_at));
    response->set_catalog_age_seconds(static_cast<int64_t>(service_->replica_->AgeSeconds()));
    End(response);
  }

  // The answer to the caller while this call (and the arena the answer is
  // on) lives, then the call is deleted.
  void End(absl::StatusOr<v1::RecommendResponse*> answer) {
    absl::StatusOr<const v1::RecommendResponse*> sent = std::move(answer);
    if (sent.ok() && absl::Now() > deadline_) {
      sent = absl::DeadlineExceededError("deadline: the answer came after the call's deadline");
    }
    rpc_.Finish(sent.ok() ? grpc::Status::OK : ToGrpcStatus(sent.status()));
    LocalAnswer done = std::move(done_);
    done(std::move(sent));
    delete this;
  }

  std::unique_ptr<grpc::ClientContext> ParentContext() const override {
    return std::make_unique<grpc::ClientContext>();
  }
  absl::Time Deadline() const override { return deadline_; }

  const absl::Time deadline_;
  LocalAnswer done_;
  google::protobuf::Arena shared_arena_;  // a cached answer, parsed
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

std::shared_ptr<const EncodedAnswer> GatewayServiceImpl::AnswerRecommend(
    const CacheSlot& slot, const absl::StatusOr<v1::RecommendResponse*>& answer, bool encode,
    bool leads) {
  std::shared_ptr<const EncodedAnswer> encoded, stored;
  if (!answer.ok()) {
    gateway_metrics_.recommendations_error().Increment();
  } else {
    v1::RecommendResponse& computed = **answer;  // on the pipeline's arena
    const bool storable = !slot.key.empty() && computed.catalog_version() == slot.catalog_version &&
                          computed.price_book_version() == slot.price_book_version &&
                          SizingModel() == slot.sizing_model;
    (computed.recommendations().empty() ? gateway_metrics_.recommendations_empty()
                                        : gateway_metrics_.recommendations_ok())
        .Increment();
    if (encode || storable) {
      encoded = std::make_shared<const EncodedAnswer>(EncodedAnswer::Encode(computed));
    }
    if (!slot.key.empty()) gateway_metrics_.cache_misses().Increment();
    if (storable) stored = encoded;
  }
  if (slot.key.empty()) return encoded;
  const std::string versions =
      ResponseCache::Versions(slot.catalog_version, slot.price_book_version, slot.sizing_model);
  if (leads) {
    // Stores the answer (if any) and answers the calls that joined the key,
    // or lets them compute their own.
    options_.response_cache->Complete(slot.key, versions, std::move(stored), absl::Now());
  } else if (stored != nullptr) {
    options_.response_cache->Insert(slot.key, versions, std::move(stored), absl::Now());
  }
  return encoded;
}

int64_t GatewayServiceImpl::SharedAnswer(const EncodedAnswer& answer, absl::Time stored_at) {
  (answer.empty ? gateway_metrics_.recommendations_empty() : gateway_metrics_.recommendations_ok())
      .Increment();
  return answer.price_book_age_seconds + absl::ToInt64Seconds(absl::Now() - stored_at);
}

void GatewayServiceImpl::BeginRecommend(RecommendCall* call) {
  const std::string key = call->key();
  if (!key.empty()) {
    // One cache call: a hit, or this call computes the key, or it joins the
    // call already computing it.
    const ResponseCache::Joined joined = options_.response_cache->LookupOrJoin(
        key, [call](std::shared_ptr<const EncodedAnswer> answer, absl::Time computed_at) {
          call->Joined(std::move(answer), computed_at);
        });
    switch (joined.outcome) {
      case ResponseCache::Joined::kHit:
        // Answered here, on the thread that delivered the request, from the
        // answer encoded when it was computed.
        call->Joined(joined.hit.response, joined.hit.stored_at);
        return;
      case ResponseCache::Joined::kJoined:
        return;  // answered when the call computing the key ends
      case ResponseCache::Joined::kLeads:
        call->leads = true;
        break;
    }
  }
  call->Start();
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
  auto* call = new GrpcRecommend(this, context, std::move(request), response, std::move(rpc),
                                 std::move(slot));
  BeginRecommend(call);
  // The reactor outlives this return even when it has finished (OnDone
  // deletes it afterwards).
  return call;
}

void GatewayServiceImpl::RecommendLocal(const LocalCall& call, v1::RecommendRequest request,
                                        LocalAnswer done) {
  RpcScope rpc(&gateway_metrics_.recommend_rpc());
  if (grpc::Status admitted = limiter_.AdmitClient(call.client_key); !admitted.ok()) {
    rpc.Finish(admitted);
    return done(FromGrpcStatus(admitted));
  }
  CacheSlot slot = CacheSlotFor(request);
  BeginRecommend(new LocalRecommend(this, call.deadline, std::move(request), std::move(rpc),
                                    std::move(slot), std::move(done)));
}

}  // namespace gpuadvisor::gateway
