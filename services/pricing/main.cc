// pricing_server: price books and whole-job quotes (gpuadvisor.pricing.v1).
//
//   pricing_server --port=50053 --metrics_port=9463 --data_dir=data
//       --catalog_address=127.0.0.1:50051 [--catalog_cache_file=FILE]
//       [--price_updates_file=FILE] [--admin_token_file=FILE]
//   pricing_server --writer_address=HOST:PORT [--writer_host=NAME] ...
//       a follower replica: quotes from the books the writer publishes on
//       WatchPrices (for the same catalog versions) and sends UpdatePrices on
//       to the writer (single writer, docs/reliability.md); the replica on
//       --writer_host is the writer.
//
// The price book is <data_dir>/pricing/billing.textproto (billing rules,
// storage, egress, spot risk) plus the list prices of the catalog's offers.
// Offers come only through CatalogService.WatchCatalog (the catalog client
// library, never the catalog's file loader): each snapshot the replica
// receives becomes a book for that catalog version, and the books of the last
// few versions are kept so a Quote naming a catalog version is priced by that
// version (FAILED_PRECONDITION for one not held). Reports SERVING once it
// holds a book. UpdatePrices (admin token from --admin_token_file or
// $GPUADVISOR_ADMIN_TOKEN) replaces prices while serving; with
// --price_updates_file the accepted updates are written durably before they
// go live and re-applied at start, and they outlive catalog reloads. Prints
// "pricing listening grpc=... metrics=..." once started.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "common/grpc/channel.h"
#include "common/grpc/replication.h"
#include "common/grpc/server.h"
#include "common/grpc/service_main.h"
#include "common/grpc/watch_chunks.h"
#include "common/io/durable_file.h"
#include "common/io/text_proto.h"
#include "common/metrics/function_metric.h"
#include "common/metrics/write_failures.h"
#include "google/protobuf/text_format.h"
#include "services/catalog/catalog_replica.h"
#include "services/pricing/price_follower.h"
#include "services/pricing/price_loader.h"
#include "services/pricing/pricing_service_impl.h"

ABSL_FLAG(std::string, data_dir, "data", "Folder with pricing/billing.textproto.");
ABSL_FLAG(std::string, admin_token_file, "",
          "File holding the admin token; else $GPUADVISOR_ADMIN_TOKEN.");
ABSL_FLAG(std::string, price_updates_file, "",
          "Where accepted UpdatePrices are kept (text UpdatePricesRequest, written durably before "
          "an update "
          "goes live) and re-applied from at start; empty = in memory only.");
ABSL_FLAG(std::string, catalog_address, "127.0.0.1:50051",
          "Catalog service to follow (WatchCatalog): the offers and list prices the books price.");
ABSL_FLAG(std::string, writer_address, "",
          "The pricing writer to follow (single writer, docs/reliability.md): this replica then "
          "quotes from "
          "the writer's books and sends UpdatePrices on to it. Empty = this is the writer.");
ABSL_FLAG(std::string, writer_host, "",
          "With --writer_address: the writer's hostname; the replica running on that host is the "
          "writer.");
ABSL_FLAG(
    int64_t, watch_chunk_bytes, gpuadvisor::kDefaultWatchChunkBytes,
    "Price book data per WatchPrices chunk (followers that set accept_chunks; at least 1024). "
    "Followers that did not get the book whole while it fits the 64 MiB message limit.");
ABSL_FLAG(
    std::string, catalog_cache_file, "",
    "Where to keep the followed catalog across restarts (so pricing can start while the catalog is "
    "down); empty = none.");

namespace {

// Updates accepted before a restart: re-applied on top of the first
// catalog's list prices (offers it no longer has are dropped then); the
// returned Persist writes every accepted update durably to `path` (none when
// `path` is empty). An unreadable file stops the start rather than lose
// updates.
absl::StatusOr<gpuadvisor::pricing::PriceStore::Persist> RestoreUpdates(
    const std::string& path, gpuadvisor::pricing::PriceStore& store, gpuadvisor::Metrics& metrics) {
  if (path.empty()) return gpuadvisor::pricing::PriceStore::Persist();
  if (access(path.c_str(), F_OK) == 0) {
    gpuadvisor::pricing::v1::UpdatePricesRequest saved;
    if (absl::Status loaded = gpuadvisor::LoadTextProtoFile(path, &saved); !loaded.ok()) {
      return loaded;
    }
    store.Restore(saved);
    std::fprintf(stderr,
                 "pricing: %d saved price updates from %s, applied with the first catalog\n",
                 saved.prices_size(), path.c_str());
  }
  return [path,
          failed = gpuadvisor::WriteFailureCounter(metrics.registry(), "pricing", "price_updates")](
             const gpuadvisor::pricing::v1::UpdatePricesRequest& all) {
    std::string text;
    google::protobuf::TextFormat::PrintToString(all, &text);
    absl::Status written = gpuadvisor::WriteFileDurably(
        path, "# Accepted UpdatePrices, newest per offer (written by pricing_server).\n" + text);
    if (!written.ok()) failed(written);
    return written;
  };
}

// A follower sends UpdatePrices on to the writer and answers once this
// replica quotes what the writer now quotes.
auto ForwardUpdatesTo(gpuadvisor::pricing::v1::PricingService::Stub* writer,
                      gpuadvisor::pricing::PriceFollower* follower) {
  return [writer, follower](grpc::ServerContext* context,
                            const gpuadvisor::pricing::v1::UpdatePricesRequest& request,
                            gpuadvisor::pricing::v1::UpdatePricesResponse* response) {
    std::unique_ptr<grpc::ClientContext> forward =
        gpuadvisor::ForwardingContext(*context, std::chrono::seconds(30));
    const grpc::Status status = writer->UpdatePrices(forward.get(), request, response);
    if (!status.ok()) return status;
    if (!follower->WaitForVersion(response->price_book_version(),
                                  absl::Now() + absl::Seconds(10))) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          "the writer applied the update (" + response->price_book_version() +
                              ") but this replica has not received it yet; it will follow");
    }
    return grpc::Status::OK;
  };
}

// The writer builds each catalog snapshot's book: its offers and list
// prices, billing rules from the file, live updates re-applied on top.
std::unique_ptr<gpuadvisor::catalog::CatalogReplica> FollowCatalog(
    const std::string& billing_path, const std::string& catalog_address,
    gpuadvisor::pricing::PriceStore& store, gpuadvisor::Metrics& metrics) {
  gpuadvisor::catalog::CatalogReplica::Options options;
  options.cache_path = absl::GetFlag(FLAGS_catalog_cache_file);
  options.on_snapshot = [&store, &metrics, billing_path](
                            const std::shared_ptr<const gpuadvisor::catalog::Catalog>& latest) {
    absl::StatusOr<std::shared_ptr<const gpuadvisor::pricing::PriceBook>> next =
        gpuadvisor::pricing::LoadPriceBook(billing_path, latest->snapshot());
    const absl::Status status = next.ok() ? store.Rebase(*next) : next.status();
    metrics.DataLoaded(status.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
    if (!status.ok())
      std::fprintf(stderr, "pricing: kept the old prices: %s\n", status.ToString().c_str());
  };
  auto replica = std::make_unique<gpuadvisor::catalog::CatalogReplica>(
      gpuadvisor::catalog::v1::CatalogService::NewStub(gpuadvisor::BackendChannel(catalog_address)),
      options);
  replica->Start();
  return replica;
}

// A follower takes the writer's books, with its age as
// gpuadvisor_follower_writer_age_seconds.
void FollowWriter(const std::string& writer_address, gpuadvisor::pricing::PriceFollower& follower,
                  gpuadvisor::Metrics& metrics) {
  follower.Start();
  metrics.AddCollectable(std::make_shared<gpuadvisor::FunctionMetric>(
      "gpuadvisor_follower_writer_age_seconds",
      "Seconds since this follower replica was last known to be current with its writer (0 while "
      "in step).",
      [f = &follower] { return f->AgeSeconds(); }));
  std::fprintf(stderr, "pricing: following the writer at %s\n", writer_address.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<std::string> token =
      gpuadvisor::ReadAdminToken(absl::GetFlag(FLAGS_admin_token_file), "GPUADVISOR_ADMIN_TOKEN");
  if (!token.ok()) return gpuadvisor::FailStartup("pricing", token.status());
  const std::string catalog_address = absl::GetFlag(FLAGS_catalog_address);
  if (catalog_address.empty()) {
    return gpuadvisor::FailStartup(
        "pricing",
        absl::InvalidArgumentError("--catalog_address: must name the catalog to follow"));
  }

  gpuadvisor::Metrics metrics("pricing");
  gpuadvisor::pricing::PriceStore store;
  absl::StatusOr<gpuadvisor::pricing::PriceStore::Persist> persist =
      RestoreUpdates(absl::GetFlag(FLAGS_price_updates_file), store, metrics);
  if (!persist.ok()) return gpuadvisor::FailStartup("pricing", persist.status());
  const std::string writer_address = absl::GetFlag(FLAGS_writer_address);
  const bool writer = gpuadvisor::IsWriter(writer_address, absl::GetFlag(FLAGS_writer_host));
  gpuadvisor::pricing::PricingServiceImpl::Options service_options;
  service_options.admin_token = *token;
  service_options.persist = writer ? *persist : nullptr;  // the writer persists
  service_options.watch_encoding.chunk_bytes =
      std::max<int64_t>(1024, absl::GetFlag(FLAGS_watch_chunk_bytes));
  std::unique_ptr<gpuadvisor::pricing::v1::PricingService::Stub> writer_stub;
  std::unique_ptr<gpuadvisor::pricing::PriceFollower> follower;
  if (!writer) {
    writer_stub = gpuadvisor::pricing::v1::PricingService::NewStub(
        gpuadvisor::BackendChannel(writer_address));
    follower = std::make_unique<gpuadvisor::pricing::PriceFollower>(
        gpuadvisor::pricing::v1::PricingService::NewStub(
            gpuadvisor::BackendChannel(writer_address)),
        &store, gpuadvisor::pricing::PriceFollower::Options{.name = "pricing follower"});
    service_options.forward_update = ForwardUpdatesTo(writer_stub.get(), follower.get());
  }
  gpuadvisor::pricing::PricingServiceImpl service(&store, &metrics, service_options);
  std::unique_ptr<gpuadvisor::catalog::CatalogReplica> replica;
  if (writer) {
    replica = FollowCatalog(absl::GetFlag(FLAGS_data_dir) + "/pricing/billing.textproto",
                            catalog_address, store, metrics);
  } else {
    FollowWriter(writer_address, *follower, metrics);
  }

  gpuadvisor::ServiceMainOptions options = gpuadvisor::ServiceMainOptionsFromFlags(
      "pricing", 50053, 9463, {"gpuadvisor.pricing.v1.PricingService"});
  options.ready = [&store] { return store.Current() != nullptr; };
  const int code =
      gpuadvisor::ServeUntilSignal(options, metrics, {&service}, [&] { service.Shutdown(); });
  if (replica != nullptr) replica->Stop();
  if (follower != nullptr) follower->Stop();
  return code;
}
