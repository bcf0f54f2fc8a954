// gateway_server: ranked, explained GPU recommendations (gpuadvisor.gateway.v1),
// composed from the catalog, sizing and pricing services.
//
//   gateway_server --port=50050 --metrics_port=9460
//       --catalog_address=127.0.0.1:50051 --sizing_address=127.0.0.1:50052
//       --pricing_address=127.0.0.1:50053 [--catalog_cache_file=FILE] [--data_dir=data]
//       [--http_port=8080] [--http_max_body_bytes=1048576]
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
// the gRPC service in-process. Prints
// "gateway listening grpc=HOST:PORT metrics=HOST:PORT http=HOST:PORT".

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc/channel.h"
#include "common/grpc/service_main.h"
#include "services/gateway/gateway_service_impl.h"
#include "services/gateway/http/http_server.h"
#include "services/pricing/price_follower.h"

ABSL_FLAG(std::string, catalog_address, "127.0.0.1:50051", "Catalog service target.");
ABSL_FLAG(std::string, sizing_address, "127.0.0.1:50052", "Sizing service target.");
ABSL_FLAG(std::string, pricing_address, "127.0.0.1:50053", "Pricing service target.");
ABSL_FLAG(int, backend_timeout_ms, 2000, "Deadline for each backend call, capped by the caller's.");
ABSL_FLAG(std::string, data_dir, "data",
          "Data directory: reads <data_dir>/gateway/regions.textproto and overheads.textproto.");
ABSL_FLAG(int, http_port, 8080,
          "HTTP/JSON API and web page port; 0 picks a free port, -1 turns HTTP off.");
ABSL_FLAG(int64_t, http_max_body_bytes, 1 << 20, "Largest HTTP request body; larger ones get 413.");
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

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<gpuadvisor::gateway::RegionGroups> region_groups =
      gpuadvisor::gateway::RegionGroups::FromFile(absl::GetFlag(FLAGS_data_dir) +
                                                  "/gateway/regions.textproto");
  if (!region_groups.ok()) {
    std::fprintf(stderr, "gateway: %s\n", std::string(region_groups.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<gpuadvisor::gateway::OverheadModel> overheads =
      gpuadvisor::gateway::OverheadModel::FromFile(absl::GetFlag(FLAGS_data_dir) +
                                                   "/gateway/overheads.textproto");
  if (!overheads.ok()) {
    std::fprintf(stderr, "gateway: %s\n", std::string(overheads.status().message()).c_str());
    return 1;
  }

  gpuadvisor::Metrics metrics("gateway");
  gpuadvisor::catalog::CatalogReplica::Options replica_options;
  replica_options.cache_path = absl::GetFlag(FLAGS_catalog_cache_file);
  replica_options.on_snapshot = [&metrics](const auto&) {
    metrics.DataLoaded(true, absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  };
  replica_options.on_rejected = [&metrics](const absl::Status&) { metrics.DataLoaded(false, 0); };
  gpuadvisor::catalog::CatalogReplica replica(
      gpuadvisor::catalog::v1::CatalogService::NewStub(
          gpuadvisor::BackendChannel(absl::GetFlag(FLAGS_catalog_address))),
      replica_options);
  replica.Start();
  gpuadvisor::gateway::GatewayMetrics::AddCatalogAge(&metrics, &replica);
  // The response cache needs to know the live price-book version.
  gpuadvisor::gateway::ResponseCache response_cache(
      {.max_entries =
           static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_response_cache_entries)))});
  gpuadvisor::gateway::EstimateCache estimate_cache(
      {.max_estimates =
           static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_estimate_cache_entries))),
       .max_age = absl::Seconds(absl::GetFlag(FLAGS_estimate_cache_seconds))});
  // Pricing's book, followed: the response cache keys on its version, and
  // answers are priced from it while it is current.
  gpuadvisor::pricing::PriceBooks price_copy;
  gpuadvisor::pricing::PriceFollower prices(
      gpuadvisor::pricing::v1::PricingService::NewStub(
          gpuadvisor::BackendChannel(absl::GetFlag(FLAGS_pricing_address))),
      &price_copy,
      {.name = "gateway",
       // A rejected book keeps the copy held; counted like a rejected snapshot.
       .on_rejected = [&metrics](const absl::Status&) { metrics.DataLoaded(false, 0); }});
  const bool local_quotes = absl::GetFlag(FLAGS_local_quotes);
  if (response_cache.enabled() || local_quotes) prices.Start();
  const auto current_copy = [&prices, &price_copy](const std::string& catalog_version)
      -> std::shared_ptr<const gpuadvisor::pricing::PriceBook> {
    if (prices.AgeSeconds() != 0) return nullptr;  // none yet, or the stream went quiet
    return price_copy.ForCatalog(catalog_version);
  };
  gpuadvisor::gateway::GatewayMetrics::AddPriceBookCopyAge(
      &metrics, [&prices] { return prices.AgeSeconds(); });
  gpuadvisor::gateway::GatewayServiceImpl service(
      &replica,
      gpuadvisor::sizing::v1::SizingService::NewStub(
          gpuadvisor::BackendChannel(absl::GetFlag(FLAGS_sizing_address))),
      gpuadvisor::pricing::v1::PricingService::NewStub(
          gpuadvisor::BackendChannel(absl::GetFlag(FLAGS_pricing_address))),
      &metrics,
      {.backend_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_backend_timeout_ms)),
       .response_cache = &response_cache,
       .price_book_version =
           [&current_copy] {
             std::shared_ptr<const gpuadvisor::pricing::PriceBook> book = current_copy("");
             return book == nullptr ? std::string() : book->version();
           },
       // In process only while the copy's quote rules are this build's.
       .price_book =
           local_quotes
               ? std::function([&prices, &price_copy](const std::string& version)
                                   -> std::shared_ptr<const gpuadvisor::pricing::PriceBook> {
                   if (prices.AgeSeconds() != 0) return nullptr;
                   return gpuadvisor::pricing::BookForLocalQuotes(price_copy, version);
                 })
               : nullptr,
       .estimate_cache = &estimate_cache,
       .region_groups = &*region_groups,
       .overheads = &*overheads,

       .rate_limit = {.per_second = absl::GetFlag(FLAGS_rate_limit_per_second),
                      .burst = absl::GetFlag(FLAGS_rate_limit_burst)},
       .sizing_probe_interval = absl::Milliseconds(absl::GetFlag(FLAGS_sizing_probe_ms))});

  gpuadvisor::ServiceMainOptions options = gpuadvisor::ServiceMainOptionsFromFlags(
      "gateway", 50050, 9460, {"gpuadvisor.gateway.v1.GatewayService"});
  options.ready = [&] { return replica.Current() != nullptr; };

  std::unique_ptr<gpuadvisor::gateway::http::HttpServer> http;
  if (absl::GetFlag(FLAGS_http_port) >= 0) {
    gpuadvisor::gateway::http::HttpServer::Options http_options;
    http_options.host = options.server.host;
    http_options.port = absl::GetFlag(FLAGS_http_port);
    http_options.max_body_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_http_max_body_bytes));
    options.on_started = [&http, http_options, max_message_bytes = options.server.max_send_bytes](
                             grpc::Server& server) -> absl::StatusOr<std::vector<std::string>> {
      grpc::ChannelArguments args;
      args.SetMaxReceiveMessageSize(max_message_bytes);
      absl::StatusOr<std::unique_ptr<gpuadvisor::gateway::http::HttpServer>> started =
          gpuadvisor::gateway::http::HttpServer::Start(server.InProcessChannel(args), http_options);
      if (!started.ok()) return started.status();
      http = *std::move(started);
      return std::vector<std::string>{absl::StrCat("http=", http_options.host, ":", http->port())};
    };
  }
  // HTTP stops taking requests before the gRPC server drains.
  const int code = gpuadvisor::ServeUntilSignal(options, metrics, {&service}, [&] {
    if (http) http->Stop();
  });
  prices.Stop();
  replica.Stop();
  return code;
}
