// gateway_server: ranked, explained GPU recommendations (gpuadvisor.gateway.v1),
// composed from the catalog, sizing and pricing services.
//
//   gateway_server --port=50050 --metrics_port=9460
//       --catalog_address=127.0.0.1:50051 --sizing_address=127.0.0.1:50052
//       --pricing_address=127.0.0.1:50053 [--catalog_cache_file=FILE] [--data_dir=data]
//       [--http_port=8080] [--http_max_body_bytes=1048576] [--http_*: limits, CORS]
//       [--trusted_proxies=10.0.0.0/8] [--http_plaintext]
//
// Identical Recommend requests are answered from a response cache while the
// catalog and price-book versions stay the same (--response_cache_entries=0
// turns it off). The gateway follows pricing's book over WatchPrices and
// prices answers in process while its copy is current (--local_quotes=false:
// every answer calls pricing's Quote).
//
// Addresses are gRPC targets: "host:port", or "dns:///name:port" to spread
// calls over every replica behind a headless Service (round_robin). Reports
// SERVING once it holds a catalog replica. Serves HTTP/JSON, the OpenAPI
// document and the comparison page on --http_port (docs/http.md), calling
// the gRPC service in-process (Recommend directly, without the in-process
// channel). Prints
// "gateway listening grpc=HOST:PORT metrics=HOST:PORT http=HOST:PORT".

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/grpc/channel.h"
#include "common/grpc/client_address.h"
#include "common/grpc/service_main.h"
#include "common/metrics/write_failures.h"
#include "services/gateway/gateway_service_impl.h"
#include "services/gateway/http/http_server.h"
#include "services/gateway/offer_index.h"
#include "services/pricing/price_follower.h"

ABSL_FLAG(std::string, catalog_address, "127.0.0.1:50051", "Catalog service target.");
ABSL_FLAG(std::string, sizing_address, "127.0.0.1:50052", "Sizing service target.");
ABSL_FLAG(std::string, pricing_address, "127.0.0.1:50053", "Pricing service target.");
ABSL_FLAG(int, backend_timeout_ms, 2000, "Deadline for each backend call, capped by the caller's.");
ABSL_FLAG(std::string, data_dir, "data",
          "Data directory: reads <data_dir>/gateway/regions.textproto and overheads.textproto.");
ABSL_FLAG(int, http_port, 8080,
          "HTTP/JSON API and web page port; 0 picks a free port, -1 turns HTTP off.");
ABSL_FLAG(int64_t, http_max_body_bytes, 1 << 20,
          "Largest HTTP request body, chunked bodies included; larger ones get 413.");
ABSL_FLAG(double, http_header_timeout_seconds, 10,
          "Time a client has from connecting (or, on a kept-alive connection, from the first byte "
          "of its next request) to the end of its request headers, TLS handshake included; a total "
          "deadline, not renewed by each byte. Past it: 408 and close.");
ABSL_FLAG(double, http_body_timeout_seconds, 30,
          "Time a client has from the end of its headers to the end of its body (total). Past it: "
          "408 and close.");
ABSL_FLAG(double, http_idle_timeout_seconds, 30,
          "A kept-alive HTTP connection with no new request for this long is closed.");
ABSL_FLAG(double, http_write_timeout_seconds, 30,
          "Time to write one answer to a client; past it the connection is closed.");
ABSL_FLAG(int, http_max_requests_per_connection, 1000,
          "Requests served on one HTTP connection; the last answer says Connection: close.");
ABSL_FLAG(int, http_max_connections, 2048,
          "HTTP connections open at once; further ones are refused at once (503, close).");
ABSL_FLAG(int64_t, http_max_header_bytes, 16 << 10,
          "Largest request line plus headers; larger ones get 431.");
ABSL_FLAG(int, http_max_header_count, 100, "Most header fields in a request; more get 431.");
ABSL_FLAG(int, http_threads, 8,
          "Threads running the HTTP handlers of the routes other than Recommend (each blocks on "
          "its in-process call; Recommend runs on the event loop and the service's callbacks); "
          "connections wait on the event loop, not on these.");
ABSL_FLAG(std::string, http_cors_origins, "",
          "Comma-separated origins a browser page may call the HTTP API from "
          "(https://ui.example.com), or *; empty: no CORS headers.");
ABSL_FLAG(std::string, trusted_proxies, "",
          "Comma-separated CIDR ranges of proxies whose X-Forwarded-For / Forwarded headers (HTTP) "
          "and x-forwarded-for / forwarded metadata (gRPC) name the client for the per-client rate "
          "limit; empty: the TCP peer is the client.");
ABSL_FLAG(bool, http_plaintext, false,
          "Serve plain HTTP even though gRPC is TLS (--tls_cert); announced loudly. Without it, "
          "the HTTP port serves HTTPS with the same certificate whenever TLS is configured.");
ABSL_FLAG(bool, http_log_requests, false,
          "Log one line per HTTP request (request id, client, path, status, ms); failed requests "
          "are always logged.");
ABSL_FLAG(double, rate_limit_per_second, 100,
          "Calls per second each client IP may make (token bucket); 0 = unlimited.");
ABSL_FLAG(double, rate_limit_burst, 200,
          "Calls a client IP may make at once before the rate applies.");
ABSL_FLAG(std::string, catalog_cache_file, "",
          "Where to keep the catalog replica across restarts; empty = none.");
ABSL_FLAG(int, response_cache_entries, 4096,
          "Recommend answers kept for repeated requests, keyed by request, catalog version, "
          "price-book version and sizing's model fingerprint; 0 turns the response cache off.");

ABSL_FLAG(
    bool, local_quotes, true,
    "Price Recommend answers in process from a copy of pricing's book, followed over WatchPrices, "
    "while the copy is current (heard from within two heartbeats); false: every answer calls "
    "pricing's Quote.");

ABSL_FLAG(
    int, estimate_cache_entries, 50000,
    "Sizing answers kept per (workload, GPU configuration) so repeated workloads skip the sizing "
    "call; 0 turns the estimate cache off.");
ABSL_FLAG(int, estimate_cache_seconds, 600,
          "Age after which a cached sizing answer is asked again (a sizing deploy is heard sooner: "
          "entries are keyed on sizing's model fingerprint, see --sizing_probe_ms).");
ABSL_FLAG(int, sizing_probe_ms, 1000,
          "How often sizing's ListModels is asked which model it runs (its fingerprint keys the "
          "estimate and response caches); 0 = only from Estimate answers.");

namespace {

gpuadvisor::gateway::http::HttpServer::Options HttpOptionsFromFlags(
    const gpuadvisor::ServiceMainOptions& service, const std::vector<std::string>& proxy_ranges,
    gpuadvisor::Metrics& metrics) {
  gpuadvisor::gateway::http::HttpServer::Options http;
  http.host = service.server.host;
  http.port = absl::GetFlag(FLAGS_http_port);
  gpuadvisor::gateway::http::HttpLimits& limits = http.limits;
  limits.max_body_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_http_max_body_bytes));
  limits.header_timeout = absl::Seconds(absl::GetFlag(FLAGS_http_header_timeout_seconds));
  limits.body_timeout = absl::Seconds(absl::GetFlag(FLAGS_http_body_timeout_seconds));
  limits.idle_timeout = absl::Seconds(absl::GetFlag(FLAGS_http_idle_timeout_seconds));
  limits.write_timeout = absl::Seconds(absl::GetFlag(FLAGS_http_write_timeout_seconds));
  limits.max_requests_per_connection = absl::GetFlag(FLAGS_http_max_requests_per_connection);
  limits.max_connections = absl::GetFlag(FLAGS_http_max_connections);
  limits.max_header_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_http_max_header_bytes));
  limits.max_header_count = absl::GetFlag(FLAGS_http_max_header_count);
  http.threads = absl::GetFlag(FLAGS_http_threads);
  if (!absl::GetFlag(FLAGS_http_plaintext)) {
    http.tls = service.server.tls;
    http.client_auth = service.server.client_auth;
  }
  http.cors_origins =
      absl::StrSplit(absl::GetFlag(FLAGS_http_cors_origins), ',', absl::SkipWhitespace());
  http.trusted_proxies = proxy_ranges;
  http.registry = &metrics.registry();
  http.log_requests = absl::GetFlag(FLAGS_http_log_requests);
  return http;
}

// Built here, not inline in the service's designated initialiser: g++ 12
// reports the nested ProxyRanges vector as maybe-uninitialized there.
gpuadvisor::PeerRateLimiter::Options RateLimitFromFlags(const gpuadvisor::ProxyRanges& proxies) {
  gpuadvisor::PeerRateLimiter::Options limit;
  limit.per_second = absl::GetFlag(FLAGS_rate_limit_per_second);
  limit.burst = absl::GetFlag(FLAGS_rate_limit_burst);
  limit.trusted_proxies = proxies;
  return limit;
}

void AnnounceHttp(const gpuadvisor::gateway::http::HttpServer::Options& http, int port,
                  bool grpc_tls) {
  if (http.tls.enabled()) {
    std::fprintf(stderr, "gateway: HTTPS on %s:%d, client certificates %s\n", http.host.c_str(),
                 port,
                 http.client_auth == gpuadvisor::ClientAuth::kRequire    ? "required"
                 : http.client_auth == gpuadvisor::ClientAuth::kOptional ? "verified when presented"
                                                                         : "not requested");
  } else if (grpc_tls) {
    std::fprintf(stderr,
                 "WARNING: gateway serves PLAINTEXT HTTP on %s:%d next to TLS gRPC "
                 "(--http_plaintext): anyone on the path can read and forge HTTP calls. Put a "
                 "TLS-terminating proxy in front of it, or drop --http_plaintext.\n",
                 http.host.c_str(), port);
  }
}

// The data files the gateway reads at start (region groups, overheads).
struct GatewayData {
  gpuadvisor::gateway::RegionGroups region_groups;
  gpuadvisor::gateway::OverheadModel overheads;
};

absl::StatusOr<GatewayData> LoadGatewayData(const std::string& data_dir) {
  absl::StatusOr<gpuadvisor::gateway::RegionGroups> region_groups =
      gpuadvisor::gateway::RegionGroups::FromFile(data_dir + "/gateway/regions.textproto");
  if (!region_groups.ok()) return region_groups.status();
  absl::StatusOr<gpuadvisor::gateway::OverheadModel> overheads =
      gpuadvisor::gateway::OverheadModel::FromFile(data_dir + "/gateway/overheads.textproto");
  if (!overheads.ok()) return overheads.status();
  return GatewayData{*std::move(region_groups), *std::move(overheads)};
}

// The catalog replica's options: accepted and rejected snapshots and failed
// cache writes counted in `metrics`; each snapshot indexed into `indexes` on
// the replica's thread before it is swapped in.
gpuadvisor::catalog::CatalogReplica::Options ReplicaOptions(
    gpuadvisor::Metrics& metrics, gpuadvisor::gateway::OfferIndexCache* indexes) {
  gpuadvisor::catalog::CatalogReplica::Options options;
  options.cache_path = absl::GetFlag(FLAGS_catalog_cache_file);
  options.prepare = [indexes](const std::shared_ptr<const gpuadvisor::catalog::Catalog>& catalog) {
    indexes->Prepare(catalog);
  };
  options.on_snapshot = [&metrics](const auto&) {
    metrics.DataLoaded(true, absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  };
  options.on_rejected = [&metrics](const absl::Status&) { metrics.DataLoaded(false, 0); };
  options.on_cache_write_failed =
      gpuadvisor::WriteFailureCounter(metrics.registry(), "gateway", "catalog_cache");
  return options;
}

// Pricing's book, followed: the response cache keys on its version, and
// answers are priced from it while it is current (and, with --local_quotes,
// while its quote rules are this build's).
struct PriceCopy {
  explicit PriceCopy(gpuadvisor::Metrics& metrics)
      : follower(
            gpuadvisor::pricing::v1::PricingService::NewStub(
                gpuadvisor::BackendChannel(absl::GetFlag(FLAGS_pricing_address))),
            &books,
            {.name = "gateway",
             // A rejected book keeps the copy held; counted like a rejected snapshot.
             .on_rejected = [&metrics](const absl::Status&) { metrics.DataLoaded(false, 0); }}) {}

  // The current book for `catalog_version` ("" = any); null when the copy is
  // not current.
  std::shared_ptr<const gpuadvisor::pricing::PriceBook> Current(
      const std::string& catalog_version) {
    if (follower.AgeSeconds() != 0) return nullptr;  // none yet, or the stream went quiet
    return books.ForCatalog(catalog_version);
  }
  std::shared_ptr<const gpuadvisor::pricing::PriceBook> ForLocalQuotes(const std::string& version) {
    if (follower.AgeSeconds() != 0) return nullptr;
    return gpuadvisor::pricing::BookForLocalQuotes(books, version);
  }

  gpuadvisor::pricing::PriceBooks books;
  gpuadvisor::pricing::PriceFollower follower;
};

gpuadvisor::gateway::GatewayServiceImpl::Options ServiceOptions(
    const GatewayData& data, const gpuadvisor::ProxyRanges& trusted_proxies,
    gpuadvisor::gateway::ResponseCache* response_cache,
    gpuadvisor::gateway::EstimateCache* estimate_cache, PriceCopy* prices,
    gpuadvisor::gateway::OfferIndexCache* indexes) {
  return {.backend_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_backend_timeout_ms)),
          .response_cache = response_cache,
          .price_book_version =
              [prices] {
                std::shared_ptr<const gpuadvisor::pricing::PriceBook> book = prices->Current("");
                return book == nullptr ? std::string() : book->version();
              },
          // In process only while the copy's quote rules are this build's.
          .price_book = absl::GetFlag(FLAGS_local_quotes)
                            ? std::function([prices](const std::string& version) {
                                return prices->ForLocalQuotes(version);
                              })
                            : nullptr,
          .index_cache = indexes,
          .estimate_cache = estimate_cache,
          .region_groups = &data.region_groups,
          .overheads = &data.overheads,
          .rate_limit = RateLimitFromFlags(trusted_proxies),
          .sizing_probe_interval = absl::Milliseconds(absl::GetFlag(FLAGS_sizing_probe_ms))};
}

// With --http_port >= 0: the HTTP/JSON front end starts once the gRPC server
// has (over its in-process channel) and is kept in `http`.
// Recommend over HTTP calls `service` in process (RecommendLocal: no gRPC
// encoding, no thread hop); the other routes use the in-process channel.
void ServeHttpOnStart(const std::vector<std::string>& proxy_ranges, gpuadvisor::Metrics& metrics,
                      gpuadvisor::gateway::GatewayServiceImpl* service,
                      std::unique_ptr<gpuadvisor::gateway::http::HttpServer>* http,
                      gpuadvisor::ServiceMainOptions* options) {
  if (absl::GetFlag(FLAGS_http_port) < 0) return;
  gpuadvisor::gateway::http::HttpServer::Options http_options =
      HttpOptionsFromFlags(*options, proxy_ranges, metrics);
  http_options.recommend = [service](const auto& call,
                                     gpuadvisor::gateway::v1::RecommendRequest request, auto done) {
    service->RecommendLocal({.client_key = call.client_key, .deadline = call.deadline},
                            std::move(request), std::move(done));
  };
  options->on_started = [http, http_options, max_message_bytes = options->server.max_send_bytes,
                         grpc_tls = options->server.tls.enabled()](
                            grpc::Server& server) -> absl::StatusOr<std::vector<std::string>> {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(max_message_bytes);
    absl::StatusOr<std::unique_ptr<gpuadvisor::gateway::http::HttpServer>> started =
        gpuadvisor::gateway::http::HttpServer::Start(server.InProcessChannel(args), http_options);
    if (!started.ok()) return started.status();
    *http = *std::move(started);
    AnnounceHttp(http_options, (*http)->port(), grpc_tls);
    return std::vector<std::string>{absl::StrCat("http=", http_options.host, ":", (*http)->port())};
  };
}

}  // namespace

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<GatewayData> data = LoadGatewayData(absl::GetFlag(FLAGS_data_dir));
  if (!data.ok()) {
    std::fprintf(stderr, "gateway: %s\n", std::string(data.status().message()).c_str());
    return 1;
  }
  const std::vector<std::string> proxy_ranges =
      absl::StrSplit(absl::GetFlag(FLAGS_trusted_proxies), ',', absl::SkipWhitespace());
  absl::StatusOr<gpuadvisor::ProxyRanges> trusted_proxies =
      gpuadvisor::ProxyRanges::Parse(proxy_ranges);
  if (!trusted_proxies.ok()) {
    std::fprintf(stderr, "gateway: --%s\n",
                 std::string(trusted_proxies.status().message()).c_str());
    return 1;
  }

  gpuadvisor::Metrics metrics("gateway");
  gpuadvisor::gateway::OfferIndexCache indexes;
  gpuadvisor::catalog::CatalogReplica replica(
      gpuadvisor::catalog::v1::CatalogService::NewStub(
          gpuadvisor::BackendChannel(absl::GetFlag(FLAGS_catalog_address))),
      ReplicaOptions(metrics, &indexes));
  replica.Start();
  gpuadvisor::gateway::GatewayMetrics::AddCatalogAge(&metrics, &replica);
  gpuadvisor::gateway::ResponseCache response_cache(
      {.max_entries =
           static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_response_cache_entries)))});
  gpuadvisor::gateway::EstimateCache estimate_cache(
      {.max_estimates =
           static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_estimate_cache_entries))),
       .max_age = absl::Seconds(absl::GetFlag(FLAGS_estimate_cache_seconds))});
  PriceCopy prices(metrics);
  if (response_cache.enabled() || absl::GetFlag(FLAGS_local_quotes)) prices.follower.Start();
  gpuadvisor::gateway::GatewayMetrics::AddPriceBookCopyAge(
      &metrics, [&prices] { return prices.follower.AgeSeconds(); });
  gpuadvisor::gateway::GatewayServiceImpl service(
      &replica,
      gpuadvisor::sizing::v1::SizingService::NewStub(
          gpuadvisor::BackendChannel(absl::GetFlag(FLAGS_sizing_address))),
      gpuadvisor::pricing::v1::PricingService::NewStub(
          gpuadvisor::BackendChannel(absl::GetFlag(FLAGS_pricing_address))),
      &metrics,
      ServiceOptions(*data, *trusted_proxies, &response_cache, &estimate_cache, &prices, &indexes));

  gpuadvisor::ServiceMainOptions options = gpuadvisor::ServiceMainOptionsFromFlags(
      "gateway", 50050, 9460, {"gpuadvisor.gateway.v1.GatewayService"});
  options.ready = [&] { return replica.Current() != nullptr; };
  std::unique_ptr<gpuadvisor::gateway::http::HttpServer> http;
  ServeHttpOnStart(proxy_ranges, metrics, &service, &http, &options);
  // HTTP stops taking requests before the gRPC server drains.
  const int code = gpuadvisor::ServeUntilSignal(options, metrics, {&service}, [&] {
    if (http) http->Stop();
  });
  prices.follower.Stop();
  replica.Stop();
  return code;
}
