#include "services/refresher/refresher.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/io/json_quote.h"
#include "common/io/text_proto.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "services/catalog/import/json.h"
#include "services/catalog/offer_list_file.h"

namespace gpuadvisor::refresher {
namespace {

using ::google::protobuf::io::CodedOutputStream;
using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::catalog::v1::OfferList;

std::string WithParam(const std::string& url, const std::string& name, const std::string& value) {
  return absl::StrCat(url, absl::StrContains(url, "?") ? "&" : "?", name, "=", value);
}

// The key of `api_key_file`, read on every refresh; its text never appears
// in an error.
absl::StatusOr<std::string> ReadKey(const RefreshSource& source) {
  absl::StatusOr<std::string> key = ReadFile(source.api_key_file());
  if (!key.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(source.name(), ": api_key_file ", source.api_key_file(), " cannot be read"));
  }
  std::string text(absl::StripAsciiWhitespace(*key));
  if (text.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(source.name(), ": api_key_file ", source.api_key_file(), " is empty"));
  }
  return text;
}

// Every published offer names its source and when it was fetched (for a
// marketplace, when it was last seen listed): "refresh <name> at <UTC time>,
// stale after <s> s (<the importer's source>)", as_of the fetch date.
// A live marketplace lists only what can be rented now: what it lists is
// seen available at the fetch.
bool ListsAvailability(const RefreshSource& source) { return source.format() == "vast"; }

// The prices are as old as the fetch, or as the oldest page's Last-Modified
// when that is earlier (a file published before it was read).
absl::Time PricesAsOf(absl::Time fetched, const std::map<std::string, FetchResult>& pages) {
  absl::Time as_of = fetched;
  for (const auto& [url, page] : pages) {
    absl::Time modified;
    if (!page.last_modified.empty() &&
        absl::ParseTime("%a, %d %b %Y %H:%M:%S GMT", page.last_modified, absl::UTCTimeZone(),
                        &modified, nullptr)) {
      as_of = std::min(as_of, modified);
    }
  }
  return as_of;
}

// `as_of` dates the prices (PricesAsOf); `now` is the fetch.
void Stamp(const RefreshSource& source, absl::Time now, absl::Time as_of,
           std::vector<Offer>& offers) {
  const std::string date = absl::FormatTime("%Y-%m-%d", as_of, absl::UTCTimeZone());
  const std::string at = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", now, absl::UTCTimeZone());
  const std::string modified =
      as_of < now ? absl::StrCat(", Last-Modified ",
                                 absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", as_of, absl::UTCTimeZone()))
                  : "";
  const bool lists_availability = ListsAvailability(source);
  for (Offer& o : offers) {
    o.set_as_of(date);
    o.set_price_source(source.name());
    o.set_priced_at_unix_seconds(absl::ToUnixSeconds(as_of));
    o.set_stale_after_seconds(source.stale_after_seconds());
    if (lists_availability) o.set_last_seen_available_unix_seconds(absl::ToUnixSeconds(now));
    o.set_source(absl::StrCat(kRefreshSourcePrefix, source.name(), " at ", at, modified,
                              ", stale after ", source.stale_after_seconds(), " s (", o.source(),
                              ")"));
  }
}

// "https://host:443/a?b" -> "https://host": where a page link may lead.
std::string Origin(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  const size_t end = url.find_first_of("/?#", scheme + 3);
  std::string origin = absl::AsciiStrToLower(url.substr(0, end));
  for (const char* port : {"https://|:443", "http://|:80"}) {
    const std::vector<std::string> p = absl::StrSplit(port, '|');
    if (absl::StartsWith(origin, p[0]) && absl::EndsWith(origin, p[1])) {
      origin.resize(origin.size() - p[1].size());
    }
  }
  return origin;
}

catalog::v1::SourceState ToProto(const SourceState& s) {
  catalog::v1::SourceState out;
  out.set_name(s.name);
  out.set_kind("refresh");
  out.set_last_attempt_unix_seconds(s.last_attempt_unix);
  out.set_last_success_unix_seconds(s.last_success_unix);
  out.set_result(s.result);
  out.set_reason(s.reason);
  out.set_rows_read(s.rows.read);
  out.set_rows_kept(s.rows.kept);
  for (const auto& [reason, rows] : s.rows.rejected) {
    catalog::v1::RejectedRows* r = out.add_rows_rejected();
    r->set_reason(reason);
    r->set_rows(rows);
  }
  out.set_offers(s.offers);
  out.set_stale_after_seconds(s.stale_after_seconds);
  return out;
}

}  // namespace

// The next page of a paged source, "" at the last page: GCP's
// `nextPageToken` (sent back as pageToken on the first URL) or Azure's
// `NextPageLink` (a whole URL, followed only on the source's own origin).
absl::StatusOr<std::string> NextPage(const std::string& first_url, const std::string& page_url,
                                     const std::string& body) {
  absl::StatusOr<catalog::json::Value> doc = catalog::json::Parse(body, page_url);
  if (!doc.ok()) return std::string();  // the importer reports a body that is not JSON
  if (const std::string token = catalog::json::String(*doc, "nextPageToken"); !token.empty()) {
    return WithParam(first_url, "pageToken", token);
  }
  const std::string link = catalog::json::String(*doc, "NextPageLink");
  if (link.empty()) return std::string();
  if (Origin(link) != Origin(first_url)) {
    return absl::FailedPreconditionError(absl::StrCat(
        RedactUrl(page_url), ": NextPageLink ", RedactUrl(link), " leaves the source's origin"));
  }
  return link;
}

Refresher::Refresher(RefresherConfig config, RefresherOptions options, FetchFn fetch,
                     PublishFn publish)
    : options_(std::move(options)), fetch_(std::move(fetch)), publish_(std::move(publish)) {
  bounds_ = options_.bounds;
  if (config.min_usd_per_gpu_hour() > 0)
    bounds_.min_usd_per_gpu_hour = config.min_usd_per_gpu_hour();
  if (config.max_usd_per_gpu_hour() > 0)
    bounds_.max_usd_per_gpu_hour = config.max_usd_per_gpu_hour();
  for (RefreshSource& s : *config.mutable_sources()) {
    auto source = std::make_unique<Source>();
    source->state.name = s.name();
    source->state.stale_after_seconds = s.stale_after_seconds();
    source->config = std::move(s);
    sources_.push_back(std::move(source));
  }
  absl::MutexLock lock(&mu_);
  PublishStates();
}

void Refresher::PublishStates() {
  std::vector<SourceState> states;
  for (const auto& source : sources_) states.push_back(source->state);
  absl::MutexLock lock(&states_mu_);
  states_ = std::move(states);
}

int Refresher::RefreshDue(absl::Time now) {
  absl::MutexLock lock(&mu_);
  int ran = 0;
  for (auto& source : sources_) {
    if (source->next_due > now) continue;
    RunRefresh(*source, now);
    PublishStates();
    ++ran;
  }
  return ran;
}

absl::Status Refresher::RefreshNow(const std::string& name, absl::Time now) {
  absl::MutexLock lock(&mu_);
  for (auto& source : sources_) {
    if (source->config.name() != name) continue;
    RunRefresh(*source, now);
    PublishStates();
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("no source named \"", name, "\""));
}

absl::Time Refresher::NextDue() const {
  absl::MutexLock lock(&mu_);
  absl::Time next = absl::InfiniteFuture();
  for (const auto& source : sources_) next = std::min(next, source->next_due);
  return next;
}

absl::StatusOr<std::vector<std::string>> Refresher::FetchPages(Source& source,
                                                               const std::string& url,
                                                               const FetchOptions& base) {
  std::vector<std::string> bodies;
  std::string page_url = url;
  const int pages = std::max(1, source.config.max_pages());
  for (int page = 0; page < pages; ++page) {
    FetchOptions options = base;
    auto cached = source.validators.find(page_url);
    if (cached != source.validators.end()) {
      options.etag = cached->second.etag;
      options.last_modified = cached->second.last_modified;
    }
    absl::StatusOr<FetchResult> r = fetch_(page_url, options);
    if (!r.ok()) return r.status();
    if (r->not_modified && cached != source.validators.end()) {
      bodies.push_back(cached->second.body);
      source.pending[page_url] = cached->second;
    } else {
      ++source.modified_pages;
      bodies.push_back(r->body);
      if (!r->etag.empty() || !r->last_modified.empty()) source.pending[page_url] = *r;
    }
    if (source.config.max_pages() == 0) break;
    absl::StatusOr<std::string> next = NextPage(url, page_url, bodies.back());
    if (!next.ok()) return next.status();
    if (next->empty()) return bodies;
    page_url = *std::move(next);
  }
  if (source.config.max_pages() == 0) return bodies;
  // More pages than allowed: the copy would be partial.
  return absl::FailedPreconditionError(
      absl::StrCat(RedactUrl(url), ": more than ", pages, " pages (max_pages); nothing published"));
}

absl::StatusOr<std::vector<std::string>> Refresher::FetchAll(Source& source) {
  FetchOptions options;
  if (source.config.timeout_seconds() > 0)
    options.timeout_seconds = source.config.timeout_seconds();
  if (source.config.max_bytes() > 0) options.max_bytes = source.config.max_bytes();
  options.retries = source.config.retries();
  options.ca_file = options_.ca_file;
  std::string key;
  if (!source.config.api_key_file().empty()) {
    absl::StatusOr<std::string> k = ReadKey(source.config);
    if (!k.ok()) return k.status();
    key = *std::move(k);
  }
  std::vector<std::string> bodies;
  for (const std::string& url : source.config.urls()) {
    const std::string full = key.empty() ? url : WithParam(url, "key", key);
    absl::StatusOr<std::vector<std::string>> pages = FetchPages(source, full, options);
    if (!pages.ok()) return pages.status();
    for (std::string& b : *pages) bodies.push_back(std::move(b));
  }
  return bodies;
}

void Refresher::RunRefresh(Source& source, absl::Time now) {
  SourceState& state = source.state;
  state.last_attempt_unix = absl::ToUnixSeconds(now);
  ++state.attempts;
  source.next_due = now + absl::Seconds(std::max<int64_t>(1, source.config.interval_seconds()));
  // A failed attempt publishes the unchanged good copies with the new state,
  // so the reason reaches the catalog's followers (best effort).
  auto fail = [&](const char* result, const absl::Status& why) {
    ++state.failures;
    state.result = result;
    state.reason = std::string(why.message());
    if (state.last_success_unix > 0) (void)Publish();
  };
  source.pending.clear();
  source.modified_pages = 0;
  state.fetch_seconds = state.import_seconds = state.publish_seconds = 0;
  absl::Time step = absl::Now();
  auto took = [&step] {
    const absl::Time end = absl::Now();
    return absl::ToDoubleSeconds(end - std::exchange(step, end));
  };
  absl::StatusOr<std::vector<std::string>> bodies = FetchAll(source);
  state.fetch_seconds = took();
  if (!bodies.ok()) return fail("fetch failed", bodies.status());
  if (source.modified_pages == 0 && !source.good.empty()) {
    // Every page a 304 against the copy serving: the source confirms it; no
    // import. The source's age restarts; the offers keep the time their
    // prices were fetched. A marketplace still lists them, so they are seen
    // available now: republished with that time (else a listing that does
    // not change would pass its availability budget and never rank 1).
    state.last_success_unix = absl::ToUnixSeconds(now);
    state.result = "not modified";
    state.reason.clear();
    if (ListsAvailability(source.config)) {
      for (Offer& o : source.good) o.set_last_seen_available_unix_seconds(state.last_success_unix);
      (void)Publish();  // best effort: a failed reload leaves the older sighting
    }
    return;
  }
  const absl::Time as_of = PricesAsOf(now, source.pending);
  absl::StatusOr<ImportedCopy> copy =
      ImportBodies(source.config, *bodies, options_.import, {as_of, ""});
  if (!copy.ok()) return fail("import failed", copy.status());
  state.rows = copy->rows;
  if (absl::Status s = GuardCopy(source.config, source.good, copy->offers, bounds_); !s.ok()) {
    return fail("held back", s);
  }
  Stamp(source.config, now, as_of, copy->offers);
  std::vector<Offer> previous = std::move(source.good);
  source.good = std::move(copy->offers);
  state.import_seconds = took();
  absl::Status published = Publish();
  state.publish_seconds = took();
  if (absl::Status s = published; !s.ok()) {
    source.good = std::move(previous);
    return fail("rejected by the catalog", s);
  }
  source.validators = std::move(source.pending);
  source.pending.clear();
  state.last_success_unix = absl::ToUnixSeconds(now);
  state.offers = static_cast<int>(source.good.size());
  state.result = "ok";
  state.reason.clear();
}

OfferList Refresher::OutputFrame() {
  OfferList frame;
  std::vector<std::string> names;
  for (const auto& source : sources_) {
    if (!source->good.empty()) names.push_back(source->config.name());
  }
  frame.set_source(absl::StrCat("refresher: ", absl::StrJoin(names, ", ")));
  // The states ride with the offers to the catalog and its followers
  // (CatalogSnapshot.sources: `gpu-advisor sources`, GET /v1/sources).
  for (const auto& source : sources_) *frame.add_sources() = ToProto(source->state);
  return frame;
}

std::string Refresher::OutputBody() {
  // The bytes SerializeToString gives for the whole list (fields in number
  // order: source, offers, sources), with every good copy's offers
  // serialized where they are: no list of 100,000 offers is built.
  OfferList head = OutputFrame();
  OfferList tail;
  tail.mutable_sources()->Swap(head.mutable_sources());
  constexpr uint32_t kOffersTag = (OfferList::kOffersFieldNumber << 3) | 2;  // length-delimited
  size_t total = head.ByteSizeLong() + tail.ByteSizeLong();
  for (const auto& source : sources_) {
    for (const Offer& o : source->good) {
      const size_t n = o.ByteSizeLong();  // cached for the writes below
      total += 1 + CodedOutputStream::VarintSize32(static_cast<uint32_t>(n)) + n;
    }
  }
  std::string body;
  body.reserve(total);
  head.AppendToString(&body);
  {
    google::protobuf::io::StringOutputStream stream(&body);
    CodedOutputStream out(&stream);
    for (const auto& source : sources_) {
      for (const Offer& o : source->good) {
        out.WriteTag(kOffersTag);
        out.WriteVarint32(static_cast<uint32_t>(o.GetCachedSize()));
        o.SerializeWithCachedSizes(&out);
      }
    }
  }
  tail.AppendToString(&body);
  return body;
}

absl::Status Refresher::WriteOutput() {
  if (catalog::OfferListFileFormatFor(options_.output_path) ==
      catalog::OfferListFileFormat::kText) {
    OfferList list = OutputFrame();
    for (const auto& source : sources_) {
      for (const Offer& o : source->good) *list.add_offers() = o;
    }
    return WriteFileAtomically(
        options_.output_path,
        catalog::EncodeOfferListFile(
            list, catalog::OfferListFileFormat::kText,
            "# proto-file: proto/gpuadvisor/catalog/v1/catalog.proto\n"
            "# proto-message: gpuadvisor.catalog.v1.OfferList\n"
            "# Written by the refresher (services/refresher); do not edit.\n"));
  }
  // Binary (services/catalog/offer_list_file.h): the header and the body
  // written as they are, not concatenated into a third copy.
  const std::string body = OutputBody();
  int offers = 0;
  for (const auto& source : sources_) offers += static_cast<int>(source->good.size());
  return WriteFileAtomically(options_.output_path,
                             {catalog::BinaryOfferListHeader(body, offers), body});
}

absl::Status Refresher::Publish() {
  // The file serving keeps a second name until the catalog took the new one
  // (a hard link: the path itself always names a whole file, old or new).
  namespace fs = std::filesystem;
  const fs::path output = options_.output_path;
  const fs::path before = options_.output_path + ".before";
  std::error_code ignored;
  fs::remove(before, ignored);
  std::error_code link_error;
  fs::create_hard_link(output, before, link_error);
  if (absl::Status s = WriteOutput(); !s.ok()) {
    fs::remove(before, ignored);
    if (options_.on_write_failed) options_.on_write_failed(s);
    return s;
  }
  absl::Status published = publish_();
  if (published.ok()) {
    fs::remove(before, ignored);
    return published;
  }
  // Put the previous file back: a rejected copy must not ride on the next reload.
  if (!link_error) {
    fs::rename(before, output, ignored);
  } else {
    fs::remove(output, ignored);
  }
  return published;
}

std::vector<SourceState> Refresher::States() const {
  absl::MutexLock lock(&states_mu_);
  return states_;
}

std::string Refresher::StatesJson(absl::Time now) const {
  std::string out = "{\"sources\":[";
  bool first = true;
  for (const SourceState& s : States()) {
    const int64_t age =
        s.last_success_unix > 0 ? absl::ToUnixSeconds(now) - s.last_success_unix : -1;
    std::string rejected;
    for (const auto& [reason, n] : s.rows.rejected) {
      absl::StrAppend(&rejected, rejected.empty() ? "" : ",", JsonQuote(reason), ":", n);
    }
    absl::StrAppend(&out, first ? "" : ",", "{\"name\":", JsonQuote(s.name),
                    ",\"result\":", JsonQuote(s.result), ",\"reason\":", JsonQuote(s.reason),
                    ",\"last_attempt_unix\":", s.last_attempt_unix,
                    ",\"last_success_unix\":", s.last_success_unix, ",\"age_seconds\":", age,
                    ",\"stale_after_seconds\":", s.stale_after_seconds,
                    ",\"stale\":", (age < 0 || age > s.stale_after_seconds) ? "true" : "false",
                    ",\"offers\":", s.offers, ",\"rows_read\":", s.rows.read,
                    ",\"rows_kept\":", s.rows.kept, ",\"rows_rejected\":{", rejected, "}}");
    first = false;
  }
  return out + "]}";
}

}  // namespace gpuadvisor::refresher
