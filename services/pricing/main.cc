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

#include <cstdio>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "common/grpc/channel.h"
#include "common/grpc/service_main.h"
#include "services/catalog/catalog_flags.h"
#include "services/catalog/catalog_loader.h"
#include "services/catalog/catalog_replica.h"
#include "services/pricing/pricing_service_impl.h"

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
  gpuadvisor::pricing::PricingServiceImpl service(&store, &metrics, {.admin_token = *token});

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
