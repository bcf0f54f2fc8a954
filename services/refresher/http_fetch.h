#ifndef GPUADVISOR_SERVICES_REFRESHER_HTTP_FETCH_H_
#define GPUADVISOR_SERVICES_REFRESHER_HTTP_FETCH_H_

// HTTP GET through libcurl for the refresher: TLS verified (the system CA
// store, or `ca_file`), a timeout per attempt, a size limit, conditional
// requests (If-None-Match / If-Modified-Since), retries with exponential
// backoff on transport errors, 429 and 5xx, and the proxy settings of the
// environment (https_proxy, no_proxy: libcurl reads them). Errors name the
// URL with secrets removed (RedactUrl), never the secret itself.
//
//   FetchOptions options;
//   options.etag = previous.etag;
//   absl::StatusOr<FetchResult> r = Fetch("https://host/vms.csv", options);
//   if (r.ok() && r->not_modified) ...  // 304: the previous body still holds

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace gpuadvisor::refresher {

struct FetchOptions {
  double timeout_seconds = 60;     // whole attempt, connect included
  int64_t max_bytes = 64ll << 20;  // a larger body fails with kResourceExhausted
  int retries = 2;                 // further attempts after the first
  double backoff_seconds = 1;      // before the first retry; doubles
  std::string ca_file;             // extra CA bundle; empty = the system store
  std::string etag;                // sent as If-None-Match when set
  std::string last_modified;       // sent as If-Modified-Since when set
};

struct FetchResult {
  long status = 0;  // HTTP status of the last attempt (200, 304)
  bool not_modified = false;
  std::string body;
  std::string etag;
  std::string last_modified;
  int attempts = 0;
};

// kDeadlineExceeded (timeout), kResourceExhausted (over max_bytes),
// kDataLoss (body shorter than its Content-Length), kUnavailable (transport
// error, 429 or 5xx after the retries), kFailedPrecondition (other 4xx).
absl::StatusOr<FetchResult> Fetch(const std::string& url, const FetchOptions& options);

// `url` without the values of query parameters that carry secrets (key,
// api_key, token, access_token, signature): "...?key=<redacted>".
std::string RedactUrl(const std::string& url);

}  // namespace gpuadvisor::refresher

#endif  // GPUADVISOR_SERVICES_REFRESHER_HTTP_FETCH_H_
