// pricing_server: price books and whole-job quotes (gpuadvisor.pricing.v1).
//
//   pricing_server --port=50053 --metrics_port=9463 --data_dir=data
//       [--skypilot_csv=...] [--admin_token_file=FILE]
//
// The price book is <data_dir>/pricing/billing.textproto (billing rules,
// storage, egress, spot risk) plus the list prices of the catalog's offers
// (<data_dir>/catalog/offers.textproto and any SkyPilot CSVs). With
// --catalog_address it then follows the catalog service, so a reloaded
// catalog's offers and list prices reach the price book too. UpdatePrices
// (admin token from --admin_token_file or $GPUADVISOR_ADMIN_TOKEN) replaces
// prices while serving, and those updates outlive catalog reloads. Prints
// "pricing listening grpc=... metrics=..." once serving.

#include <unistd.h>

#include <cstdio>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "common/grpc/channel.h"
#include "common/io/durable_file.h"
#include "common/io/text_proto.h"
#include "google/protobuf/text_format.h"
#include "common/grpc/service_main.h"
#include "services/catalog/catalog_flags.h"
#include "services/catalog/catalog_loader.h"
#include "services/catalog/catalog_replica.h"
#include "services/pricing/pricing_service_impl.h"

ABSL_FLAG(std::string, price_updates_file, "",
          "Where accepted UpdatePrices are kept (text UpdatePricesRequest, written durably before an update "
          "goes live) and re-applied from at start; empty = in memory only.");
ABSL_FLAG(std::string, catalog_address, "",
          "Catalog service to follow for new offers and list prices; empty = the files only.");

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);
  const std::string data_dir = gpuadvisor::catalog::DataDirFromFlags();

  const gpuadvisor::catalog::CatalogSources sources = gpuadvisor::catalog::CatalogSourcesFromFlags();

  absl::StatusOr<std::string> token = gpuadvisor::catalog::AdminTokenFromFlags();
  if (!token.ok()) return gpuadvisor::FailStartup("pricing", token.status());

  gpuadvisor::Metrics metrics("pricing");
  absl::StatusOr<gpuadvisor::catalog::v1::CatalogSnapshot> catalog =
      gpuadvisor::catalog::LoadCatalogSnapshot(sources);
  absl::StatusOr<std::shared_ptr<const gpuadvisor::pricing::PriceBook>> book =
      catalog.ok() ? gpuadvisor::pricing::LoadPriceBook(data_dir + "/pricing/billing.textproto", *catalog)
                   : catalog.status();
  metrics.DataLoaded(book.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  if (!book.ok()) return gpuadvisor::FailStartup("pricing", book.status());

  gpuadvisor::pricing::PriceStore store;
  store.Set(*book);

  // Updates accepted before a restart: re-applied on top of the files'
  // prices. An update for an offer the catalog no longer has is dropped (and
  // said so); an unreadable file stops the start rather than lose updates.
  const std::string updates_path = absl::GetFlag(FLAGS_price_updates_file);
  gpuadvisor::pricing::PriceStore::Persist persist;
  if (!updates_path.empty()) {
    if (access(updates_path.c_str(), F_OK) == 0) {
      gpuadvisor::pricing::v1::UpdatePricesRequest saved;
      if (absl::Status loaded = gpuadvisor::LoadTextProtoFile(updates_path, &saved); !loaded.ok()) {
        return gpuadvisor::FailStartup("pricing", loaded);
      }
      gpuadvisor::pricing::v1::UpdatePricesRequest known = saved;
      known.clear_prices();
      for (const auto& price : saved.prices()) {
        if ((*book)->HasOffer(price.offer_id())) {
          *known.add_prices() = price;
        } else {
          std::fprintf(stderr, "pricing: dropping the saved update of %s: not in the catalog any more\n",
                       price.offer_id().c_str());
        }
      }
      if (known.prices_size() > 0) {
        absl::StatusOr<std::shared_ptr<const gpuadvisor::pricing::PriceBook>> replayed = store.Update(known);
        if (!replayed.ok()) return gpuadvisor::FailStartup("pricing", replayed.status());
        std::fprintf(stderr, "pricing: re-applied %d saved price updates from %s\n", known.prices_size(),
                     updates_path.c_str());
      }
    }
    persist = [updates_path](const gpuadvisor::pricing::v1::UpdatePricesRequest& all) {
      std::string text;
      google::protobuf::TextFormat::PrintToString(all, &text);
      return gpuadvisor::WriteFileDurably(
          updates_path, "# Accepted UpdatePrices, newest per offer (written by pricing_server).\n" + text);
    };
  }
  gpuadvisor::pricing::PricingServiceImpl service(&store, &metrics,
                                                  {.admin_token = *token, .persist = persist});

  // Each new catalog snapshot brings new list prices; billing rules come from
  // the file, and live updates are re-applied on top.
  const std::string billing_path = data_dir + "/pricing/billing.textproto";
  std::unique_ptr<gpuadvisor::catalog::CatalogReplica> replica;
  if (const std::string address = absl::GetFlag(FLAGS_catalog_address); !address.empty()) {
    gpuadvisor::catalog::CatalogReplica::Options replica_options;
    replica_options.on_snapshot = [&](const std::shared_ptr<const gpuadvisor::catalog::Catalog>& latest) {
      absl::StatusOr<std::shared_ptr<const gpuadvisor::pricing::PriceBook>> next =
          gpuadvisor::pricing::LoadPriceBook(billing_path, latest->snapshot());
      const absl::Status status = next.ok() ? store.Rebase(*next) : next.status();
      metrics.DataLoaded(status.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
      if (!status.ok()) std::fprintf(stderr, "pricing: kept the old prices: %s\n", status.ToString().c_str());
    };
    replica = std::make_unique<gpuadvisor::catalog::CatalogReplica>(
        gpuadvisor::catalog::v1::CatalogService::NewStub(
            gpuadvisor::BackendChannel(address)),
        replica_options);
    replica->Start();
  }

  gpuadvisor::ServiceMainOptions options = gpuadvisor::ServiceMainOptionsFromFlags(
      "pricing", 50053, 9463, {"gpuadvisor.pricing.v1.PricingService"});
  const int code = gpuadvisor::ServeUntilSignal(options, metrics, {&service}, [&] { service.Shutdown(); });
  if (replica != nullptr) replica->Stop();
  return code;
}
