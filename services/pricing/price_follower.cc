#include "services/pricing/price_follower.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc/watch_chunks.h"

namespace gpuadvisor::pricing {

PriceFollower::PriceFollower(std::unique_ptr<v1::PricingService::StubInterface> writer,
                             PriceBooks* store, Options options)
    : writer_(std::move(writer)),
      store_(store),
      options_(std::move(options)),
      retry_delay_(options_.retry_interval) {}

PriceFollower::~PriceFollower() { Stop(); }

void PriceFollower::Start() {
  follower_ = std::thread([this] { Follow(); });
}

void PriceFollower::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    if (active_call_ != nullptr) active_call_->TryCancel();
  }
  if (follower_.joinable()) follower_.join();
}

double PriceFollower::AgeSeconds() const {
  absl::MutexLock lock(&mu_);
  if (!has_book_) return -1;
  const absl::Duration silent = absl::Now() - last_message_;
  return silent <= 2 * options_.heartbeat_interval ? 0 : absl::ToDoubleSeconds(silent);
}

bool PriceFollower::WaitForVersion(const std::string& version, absl::Time deadline) const {
  std::shared_ptr<const PriceBook> book = store_->Current();
  while (book == nullptr || book->version() != version) {
    if (absl::Now() >= deadline) return false;
    book = store_->WaitForChange(book == nullptr ? "" : book->version(),
                                 std::min(deadline, absl::Now() + absl::Milliseconds(100)));
  }
  return true;
}

absl::Duration PriceFollower::retry_delay() const {
  absl::MutexLock lock(&mu_);
  return retry_delay_;
}

absl::Duration PriceFollower::NextRetryDelay(absl::Duration previous, const Options& options) {
  return std::max(options.retry_interval, std::min(2 * previous, options.max_retry_interval));
}

void PriceFollower::SetApplying(bool applying) {
  absl::MutexLock lock(&mu_);
  applying_ = applying;
  last_heard_ = absl::Now();  // the silence the watchdog measures starts again
}

void PriceFollower::Reject(const absl::Status& status) {
  std::shared_ptr<const PriceBook> serving = store_->Current();
  const std::string keeping =
      serving != nullptr ? absl::StrCat("version ", serving->version()) : "no book";
  std::fprintf(stderr, "%s: %s; keeping %s\n", options_.name.c_str(),
               std::string(status.message()).c_str(), keeping.c_str());
  if (options_.on_rejected) {
    options_.on_rejected(
        absl::Status(status.code(), absl::StrCat(status.message(), "; keeping ", keeping)));
  }
}

bool PriceFollower::Apply(v1::PriceBook data) {
  const absl::Time start = absl::Now();
  const std::string version = data.version();
  const int prices = data.prices_size();
  absl::StatusOr<std::shared_ptr<const PriceBook>> book = PriceBook::Create(std::move(data));
  if (!book.ok()) {
    Reject(
        absl::Status(book.status().code(), absl::StrCat("rejected the pricing writer's book ",
                                                        version, ": ", book.status().message())));
    return false;
  }
  if ((*book)->version() != version) {
    std::fprintf(stderr, "%s: the pricing writer's book %s hashes to %s here (version skew)\n",
                 options_.name.c_str(), version.c_str(), (*book)->version().c_str());
  }
  {
    absl::MutexLock lock(&mu_);
    retry_delay_ = options_.retry_interval;  // current with the writer again
  }
  store_->Set(*book);
  {
    absl::MutexLock lock(&mu_);
    has_book_ = true;
  }
  const absl::Duration took = absl::Now() - start;
  if (took > absl::Seconds(1)) {  // a large book: say how long it took
    std::fprintf(stderr, "%s: price book %s (%d prices) validated and swapped in in %.1f s\n",
                 options_.name.c_str(), version.c_str(), prices, absl::ToDoubleSeconds(took));
  }
  return true;
}

void PriceFollower::Watchdog() {
  // Ends a stream that stays silent (a hung or partitioned writer).
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::Milliseconds(100));
    // Not timed: a call the writer has not accepted yet (it waits for the
    // writer to be reachable and SERVING), or a book being applied.
    if (stopping_ || active_call_ == nullptr || !accepted_ || applying_) continue;
    const absl::Duration silent = absl::Now() - last_heard_;
    if (silent > options_.heartbeat_interval * options_.missed_heartbeats) {
      std::fprintf(stderr, "%s: nothing heard from the pricing writer for %s; reconnecting\n",
                   options_.name.c_str(), absl::FormatDuration(silent).c_str());
      active_call_->TryCancel();
      last_heard_ = absl::InfiniteFuture();  // once per stream
    }
  }
}

void PriceFollower::Follow() {
  std::thread watchdog([this] { Watchdog(); });
  std::string known;
  while (true) {
    grpc::ClientContext context;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
      active_call_ = &context;
      accepted_ = false;
      last_heard_ = absl::Now();
    }
    // While the writer is down or not SERVING yet (the backend channel checks
    // its health) the call waits in the channel, which reconnects with its own
    // backoff, instead of failing at once and being dialled again: the
    // follower starts the moment the writer is ready.
    context.set_wait_for_ready(true);
    v1::WatchPricesRequest request;
    request.set_known_version(known);
    request.set_heartbeat_interval_millis(
        static_cast<int32_t>(absl::ToInt64Milliseconds(options_.heartbeat_interval)));
    request.set_accept_chunks(true);
    std::unique_ptr<grpc::ClientReaderInterface<v1::WatchPricesResponse>> reader =
        writer_->WatchPrices(&context, request);
    reader->WaitForInitialMetadata();  // the writer accepted the watch, or the call ended
    {
      absl::MutexLock lock(&mu_);
      accepted_ = true;
      last_heard_ = absl::Now();
    }
    SnapshotAssembler<v1::PriceBook> assembler;
    v1::WatchPricesResponse update;
    while (reader->Read(&update)) {
      {
        absl::MutexLock lock(&mu_);
        last_heard_ = last_message_ = absl::Now();
      }
      absl::StatusOr<v1::PriceBook> book = absl::UnavailableError("no book");
      if (update.has_chunk()) {
        if (absl::Status added = assembler.Add(update.chunk()); !added.ok()) {
          book = added;
        } else if (assembler.complete()) {
          // Checking and parsing a large book takes seconds without reading
          // the stream: not silence for the watchdog.
          SetApplying(true);
          book = assembler.Take(nullptr);
        }
      } else if (update.has_price_book()) {
        assembler.Reset();
        book = std::move(*update.mutable_price_book());
      } else {
        // A heartbeat: the writer has nothing newer than what was sent.
        absl::MutexLock lock(&mu_);
        if (has_book_) retry_delay_ = options_.retry_interval;
      }
      update.Clear();
      if (absl::IsDataLoss(book.status())) {
        // Out of order, corrupt or mislabelled chunks: drop them, keep the
        // book, and reconnect so the writer sends it again.
        SetApplying(false);
        Reject(book.status());
        context.TryCancel();
        break;
      }
      if (!book.ok()) continue;  // a heartbeat, or a chunk of a book still arriving
      SetApplying(true);
      std::string version = book->version();
      if (Apply(*std::move(book))) known = std::move(version);
      SetApplying(false);
    }
    if (assembler.in_progress()) {
      Reject(absl::DataLossError(absl::StrCat("watch stream ended after ", assembler.received(),
                                              " of ", assembler.total(), " bytes of price book ",
                                              assembler.version())));
      assembler.Reset();
    }
    const grpc::Status status = reader->Finish();
    absl::MutexLock lock(&mu_);
    active_call_ = nullptr;
    if (stopping_) break;
    const absl::Duration wait = retry_delay_;
    retry_delay_ = NextRetryDelay(wait, options_);
    std::fprintf(stderr, "%s: watch of the pricing writer ended: %s; reconnecting in %s\n",
                 options_.name.c_str(),
                 status.ok() ? "closed by the writer" : status.error_message().c_str(),
                 absl::FormatDuration(wait).c_str());
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), wait);
  }
  watchdog.join();
}

}  // namespace gpuadvisor::pricing
