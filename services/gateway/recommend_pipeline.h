#ifndef GPUADVISOR_SERVICES_GATEWAY_RECOMMEND_PIPELINE_H_
#define GPUADVISOR_SERVICES_GATEWAY_RECOMMEND_PIPELINE_H_

// One Recommend from the request to the answer, without gRPC: the domain
// stages (RecommendationRun, recommender.h) around the two backends, which
// are injected. The gRPC adapter (gateway_service_impl.cc) injects its calls
// to sizing and pricing (deadlines, retries, status mapping); tests inject
// the sizing model and the price book in process and run it without servers.
//
//   Run: RecommendationRun::Start ── needs sizing? ── estimate ──> Sized
//   Sized: PlanQuote ── a current local book? ── PriceBook::Quote ──> done
//          else quote (catalog_version set) ──> Quoted ──> Finish ──> done
//
// Each step runs on the thread that delivered the one before (the caller's,
// or a backend callback's): at most one backend call is outstanding, and no
// step blocks. Not thread-safe otherwise; one pipeline per request.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "google/protobuf/arena.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "gpuadvisor/pricing/v1/pricing.pb.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/gateway/estimate_cache.h"
#include "services/gateway/offer_index.h"
#include "services/gateway/overheads.h"
#include "services/gateway/recommender.h"
#include "services/gateway/region_groups.h"
#include "services/pricing/price_book.h"

namespace gpuadvisor::gateway {

class RecommendPipeline {
 public:
  using Done = absl::AnyInvocable<void(absl::Status)>;
  // Sizing's Estimate: fills `response` and calls `done` once, on any thread.
  // A failure is the status to answer with (the adapter maps backend codes).
  using EstimateFn = std::function<void(const sizing::v1::EstimateRequest& request,
                                        sizing::v1::EstimateResponse* response, Done done)>;
  // Pricing's Quote of `request` (catalog_version set): as EstimateFn.
  using QuoteFn = std::function<void(const pricing::v1::QuoteRequest& request,
                                     pricing::v1::QuoteResponse* response, Done done)>;
  // Pricing's book for a catalog version when the gateway holds a current
  // copy of it (then the quote is computed in process), else null.
  using PriceBookFn =
      std::function<std::shared_ptr<const pricing::PriceBook>(const std::string& catalog_version)>;

  // The two backends, per request (the adapter's calls carry its deadline).
  struct Backends {
    EstimateFn estimate;
    QuoteFn quote;
  };
  // Shared by every request; the pointers must outlive the pipelines.
  struct Options {
    PriceBookFn price_book;  // null: every answer calls Backends::quote
    const RegionGroups* region_groups = nullptr;
    const OverheadModel* overheads = nullptr;
    EstimateCache* estimate_cache = nullptr;
    // With price_book: which offers quote alike under a book (made from
    // `overheads`), for a smaller quote with the same answer; may be null.
    QuoteClassCache* quote_classes = nullptr;
  };

  RecommendPipeline(const Options* options, Backends backends)
      : options_(options), backends_(std::move(backends)) {}
  RecommendPipeline(const RecommendPipeline&) = delete;
  RecommendPipeline& operator=(const RecommendPipeline&) = delete;

  // The answer lives on the pipeline's arena (built there, freed with the
  // pipeline, not message by message): read or encode it before deleting
  // the pipeline.
  using Answer = absl::AnyInvocable<void(absl::StatusOr<v1::RecommendResponse*>)>;
  // Answers `request` from `index` (one catalog snapshot for the whole
  // answer; null: kUnavailable) and calls `done` once with the answer or the
  // error. The pipeline must live until then.
  void Run(std::shared_ptr<const OfferIndex> index, const v1::RecommendRequest& request,
           Answer done);

  // After `done`: whether the answer was priced from a local book, and
  // whether sizing was called.
  bool priced_locally() const { return priced_locally_; }
  bool sized() const { return sized_called_; }

  // After `done` has read (or encoded) the answer: frees the run, the quote
  // and the answer now, on this thread, while they are still in its cache
  // (rather than wherever the pipeline is deleted later). The answer
  // pointer given to `done` is invalid after.
  void Release();

 private:
  void Reply(absl::Status status);
  // The error, or (OK) answer_, to `done`.
  // Finishes the run into answer_ (on arena_), then replies.
  void FinishAnswer(const pricing::v1::QuoteResponse& quotes);
  void Sized(absl::Status sized);
  void Quoted(absl::Status status);

  const Options* options_;
  const Backends backends_;
  Answer done_;
  std::shared_ptr<const OfferIndex> index_;
  std::optional<RecommendationRun> run_;
  sizing::v1::EstimateResponse estimates_;
  pricing::v1::QuoteRequest quote_;
  // The quote and the answer are parsed into (or computed in) the arena and
  // dropped with it, not message by message (a quote has hundreds of items,
  // an answer tens of messages per recommendation).
  google::protobuf::Arena arena_;
  pricing::v1::QuoteResponse* priced_ = nullptr;  // on arena_
  v1::RecommendResponse* answer_ = nullptr;       // on arena_
  bool priced_locally_ = false;
  bool sized_called_ = false;
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_RECOMMEND_PIPELINE_H_
