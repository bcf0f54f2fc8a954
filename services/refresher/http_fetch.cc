#include "services/refresher/http_fetch.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace gpuadvisor::refresher {
namespace {

struct Transfer {
  std::string body;
  std::string etag;
  std::string last_modified;
  int64_t max_bytes = 0;
  bool too_big = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (static_cast<int64_t>(t->body.size() + n) > t->max_bytes) {
    t->too_big = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  t->body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const absl::string_view line(data, size * count);
  const size_t colon = line.find(':');
  if (colon != absl::string_view::npos) {
    const std::string name = absl::AsciiStrToLower(line.substr(0, colon));
    const std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    if (name == "etag") t->etag = value;
    if (name == "last-modified") t->last_modified = value;
  }
  return size * count;
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// One attempt. Returns the HTTP status, or an error for transport failures.
absl::StatusOr<long> Attempt(const std::string& url, const FetchOptions& options, Transfer& t) {
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return absl::InternalError("curl_easy_init failed");
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add_header = [&headers](const std::string& h) {
    headers.reset(curl_slist_append(headers.release(), h.c_str()));
  };
  if (!options.etag.empty()) add_header(absl::StrCat("If-None-Match: ", options.etag));
  if (!options.last_modified.empty()) {
    add_header(absl::StrCat("If-Modified-Since: ", options.last_modified));
  }
  add_header("Accept-Encoding: identity");
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https,http");
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout_seconds * 1000));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min(options.timeout_seconds, 30.0) * 1000));
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options.max_bytes));
  curl_easy_setopt(c, CURLOPT_USERAGENT, "gpu-advisor-refresher/1");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  const CURLcode code = curl_easy_perform(c);
  const std::string where = RedactUrl(url);
  if (t.too_big || code == CURLE_FILESIZE_EXCEEDED) {
    return absl::ResourceExhaustedError(
        absl::StrCat(where, ": response larger than ", options.max_bytes, " bytes"));
  }
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return absl::DeadlineExceededError(
        absl::StrCat(where, ": timed out after ", options.timeout_seconds, " s"));
  }
  if (code == CURLE_PARTIAL_FILE) {
    return absl::DataLossError(absl::StrCat(where, ": body cut short of its Content-Length"));
  }
  if (code != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat(where, ": ", curl_easy_strerror(code)));
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

bool Retryable(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnavailable ||
         s.code() == absl::StatusCode::kDeadlineExceeded || s.code() == absl::StatusCode::kDataLoss;
}

}  // namespace

absl::StatusOr<FetchResult> Fetch(const std::string& url, const FetchOptions& options) {
  GlobalInit();
  FetchResult result;
  absl::Status last = absl::UnknownError("no attempt");
  double backoff = options.backoff_seconds;
  for (int attempt = 0; attempt <= options.retries; ++attempt) {
    if (attempt > 0) {
      absl::SleepFor(absl::Seconds(backoff));
      backoff *= 2;
    }
    Transfer t;
    t.max_bytes = options.max_bytes;
    absl::StatusOr<long> status = Attempt(url, options, t);
    result.attempts = attempt + 1;
    if (!status.ok()) {
      last = status.status();
      if (Retryable(last)) continue;
      return last;
    }
    result.status = *status;
    if (*status == 304) {
      result.not_modified = true;
      return result;
    }
    if (*status >= 200 && *status < 300) {
      result.body = std::move(t.body);
      result.etag = std::move(t.etag);
      result.last_modified = std::move(t.last_modified);
      return result;
    }
    const std::string message = absl::StrCat(RedactUrl(url), ": HTTP ", *status);
    if (*status == 429 || *status >= 500) {
      last = absl::UnavailableError(message);
      continue;
    }
    return absl::FailedPreconditionError(message);
  }
  return absl::Status(last.code(),
                      absl::StrCat(last.message(), " (", result.attempts, " attempts)"));
}

std::string RedactUrl(const std::string& url) {
  const size_t q = url.find('?');
  if (q == std::string::npos) return url;
  std::string out = url.substr(0, q + 1);
  bool first = true;
  for (absl::string_view param : absl::StrSplit(absl::string_view(url).substr(q + 1), '&')) {
    if (!first) out += '&';
    first = false;
    const size_t eq = param.find('=');
    const std::string name = absl::AsciiStrToLower(param.substr(0, eq));
    if (eq != absl::string_view::npos && (name == "key" || name == "api_key" || name == "token" ||
                                          name == "access_token" || name == "signature")) {
      absl::StrAppend(&out, param.substr(0, eq), "=<redacted>");
    } else {
      absl::StrAppend(&out, param);
    }
  }
  return out;
}

}  // namespace gpuadvisor::refresher
