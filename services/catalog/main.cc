// catalog_server: serves GPU specs and cloud offers (gpuadvisor.catalog.v1).
//
//   catalog_server --port=50051 --metrics_port=9461 --data_dir=data
//       [--skypilot_csv=aws=path/vms.csv,...] [--vast_json=search.json,...]
//       [--gcp_billing_json=skus.json,...] [--aws_price_list_json=index.json,...]
//       [--gpuhunt_csv=[provider=]path.csv,...] [--admin_token_file=FILE]
//
//   catalog_server --writer_address=HOST:PORT [--writer_host=NAME] [--catalog_cache_file=FILE]
//       a follower replica: serves the writer's snapshots (WatchCatalog) and
//       sends ReloadCatalog on to the writer (single writer,
//       docs/reliability.md); the replica on --writer_host is the writer.
//
//   catalog_server --check [--data_dir=data] [FILES...]
//       lints the data offline: loads gpus, offers, topology and the load
//       guards (FILES replace the files of their kind, see CheckSources; the
//       catalog of --data_dir is the one a shrink is measured against), prints
//       "error: file:line: ..." / "warning: file:line: ..." lines and a
//       summary, and exits 0 when the data would load, 1 when it would not.
//
// Prints "catalog listening grpc=HOST:PORT metrics=HOST:PORT" once serving.
// The admin token (ReloadCatalog) comes from --admin_token_file or the
// GPUADVISOR_ADMIN_TOKEN environment variable. Reloads go through the
// ReloadCatalog RPC (the caller learns whether they took) or, with
// --reload_interval_seconds, happen by polling the files.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/grpc/channel.h"
#include "common/grpc/replication.h"
#include "common/grpc/server.h"
#include "common/grpc/service_main.h"
#include "common/metrics/function_metric.h"
#include "common/metrics/write_failures.h"
#include "services/catalog/catalog_flags.h"
#include "services/catalog/catalog_replica.h"
#include "services/catalog/catalog_service_impl.h"

ABSL_FLAG(
    bool, check, false,
    "Lint the catalog files (those of --data_dir, or the FILES given) and exit: 0 = they load.");
ABSL_FLAG(
    int, reload_interval_seconds, 0,
    "Re-read the files this often (0 = only on ReloadCatalog); unchanged files keep the version.");

ABSL_FLAG(std::string, writer_address, "",
          "The catalog writer to follow (single writer, docs/reliability.md): this replica then "
          "serves the "
          "writer's snapshots (never its own files) and sends ReloadCatalog on to it. Empty = this "
          "is the writer.");
ABSL_FLAG(
    std::string, writer_host, "",
    "With --writer_address: the writer's hostname; the replica running on that host is the writer "
    "(so every pod of a StatefulSet can take the same flags).");
ABSL_FLAG(std::string, catalog_cache_file, "",
          "A follower's copy of the writer's catalog across restarts (serves it while the writer "
          "is down); "
          "empty = none.");
ABSL_FLAG(int, max_watchers, 1000,
          "Most concurrent WatchCatalog streams; more get RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, watch_chunk_bytes, gpuadvisor::catalog::kDefaultWatchChunkBytes,
          "Snapshot data per WatchCatalog chunk (followers that set accept_chunks; at least 1024). "
          "Followers that did not get the snapshot whole while it fits the 64 MiB message limit.");
ABSL_FLAG(int, reload_nice, 0,
          "Nice value (SCHED_BATCH) of a thread of its own that reads, checks and indexes a "
          "reload, below the threads answering calls (e.g. 10); 0 = the caller's thread and "
          "priority. Off by default (docs/performance.md, \"A refresh under load\").");
ABSL_FLAG(
    double, watch_slow_seconds, 30,
    "A watcher whose write has not drained for this long is dropped with RESOURCE_EXHAUSTED.");
namespace {

// --check: exit 0 when the files would load (warnings allowed), 1 otherwise.
int Check(const std::vector<char*>& positional) {
  using gpuadvisor::catalog::CatalogSources;
  const CatalogSources base = gpuadvisor::catalog::CatalogSourcesFromFlags();
  std::vector<std::string> files(positional.begin() + 1, positional.end());
  absl::StatusOr<CatalogSources> sources = gpuadvisor::catalog::CheckSources(base, files);
  if (!sources.ok()) {
    std::printf("error: %s\n", std::string(sources.status().message()).c_str());
    return 1;
  }
  // A reload is measured against what is serving: here, the catalog of
  // --data_dir, when other files were named and it loads.
  gpuadvisor::catalog::LoadOptions options;
  absl::StatusOr<gpuadvisor::catalog::LoadedCatalog> baseline;
  if (!files.empty()) {
    baseline = gpuadvisor::catalog::LoadCatalog(base, {});
    if (baseline.ok()) options.current = &baseline->snapshot;
  }
  absl::StatusOr<gpuadvisor::catalog::LoadedCatalog> loaded =
      gpuadvisor::catalog::LoadCatalog(*sources, options);
  if (!loaded.ok()) {
    for (absl::string_view line : absl::StrSplit(loaded.status().message(), '\n')) {
      std::printf("error: %s\n", std::string(line).c_str());
    }
    std::printf("catalog check: FAILED\n");
    return 1;
  }
  for (const std::string& warning : loaded->warnings) std::printf("warning: %s\n", warning.c_str());
  std::printf("catalog check: OK: %d accelerators, %d offers, %zu warnings\n",
              loaded->snapshot.gpus_size(), loaded->snapshot.offers_size(),
              loaded->warnings.size());
  return 0;
}

gpuadvisor::catalog::CatalogServiceImpl::Options ServiceOptionsFromFlags(std::string token) {
  gpuadvisor::catalog::CatalogServiceImpl::Options options;
  options.admin_token = std::move(token);
  options.watch.max_watchers = absl::GetFlag(FLAGS_max_watchers);
  options.watch.slow_watcher = absl::Seconds(absl::GetFlag(FLAGS_watch_slow_seconds));
  options.snapshot_encoding.chunk_bytes =
      std::max<int64_t>(1024, absl::GetFlag(FLAGS_watch_chunk_bytes));
  return options;
}

// A follower sends ReloadCatalog on to the writer and answers once this
// replica serves what the writer now serves.
auto ForwardReloadsTo(gpuadvisor::catalog::v1::CatalogService::Stub* writer,
                      gpuadvisor::catalog::CatalogStore* store) {
  return [writer, store](grpc::ServerContext* context,
                         const gpuadvisor::catalog::v1::ReloadCatalogRequest& request,
                         gpuadvisor::catalog::v1::ReloadCatalogResponse* response) {
    std::unique_ptr<grpc::ClientContext> forward =
        gpuadvisor::ForwardingContext(*context, std::chrono::seconds(30));
    const grpc::Status status = writer->ReloadCatalog(forward.get(), request, response);
    if (!status.ok()) return status;
    if (!store->WaitForVersion(response->catalog_version(), absl::Now() + absl::Seconds(10))) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          "the writer reloaded (" + response->catalog_version() +
                              ") but this replica has not received it yet; it will follow");
    }
    return grpc::Status::OK;
  };
}

// The writer reads the files, and says what it holds (for the memory per
// offer, docs/performance.md).
absl::Status LoadAsWriter(gpuadvisor::catalog::CatalogServiceImpl& service,
                          const gpuadvisor::catalog::CatalogStore& store) {
  const absl::Time load_start = absl::Now();
  if (absl::Status loaded = service.Reload(); !loaded.ok()) return loaded;
  const gpuadvisor::catalog::v1::CatalogSnapshot& loaded = store.Current()->snapshot();
  std::fprintf(stderr,
               "catalog: loaded %d offers (%s) in %.1f s; snapshot %.0f MB in memory, %.0f MB "
               "serialized\n",
               loaded.offers_size(), loaded.version().c_str(),
               absl::ToDoubleSeconds(absl::Now() - load_start),
               static_cast<double>(loaded.SpaceUsedLong()) / 1e6,
               static_cast<double>(loaded.ByteSizeLong()) / 1e6);
  return absl::OkStatus();
}

// A follower serves the writer's snapshots through a replica, with its age
// as gpuadvisor_follower_writer_age_seconds.
std::unique_ptr<gpuadvisor::catalog::CatalogReplica> FollowWriter(
    const std::string& writer_address, gpuadvisor::catalog::CatalogStore& store,
    gpuadvisor::catalog::CatalogServiceImpl& service, gpuadvisor::Metrics& metrics) {
  gpuadvisor::catalog::CatalogReplica::Options options;
  options.cache_path = absl::GetFlag(FLAGS_catalog_cache_file);
  options.on_cache_write_failed =
      gpuadvisor::WriteFailureCounter(metrics.registry(), "catalog", "catalog_cache");
  options.on_snapshot = [&](const std::shared_ptr<const gpuadvisor::catalog::Catalog>& latest) {
    store.Install(latest);
    service.Followed();
  };
  auto replica = std::make_unique<gpuadvisor::catalog::CatalogReplica>(
      gpuadvisor::catalog::v1::CatalogService::NewStub(gpuadvisor::BackendChannel(writer_address)),
      options);
  replica->Start();
  metrics.AddCollectable(std::make_shared<gpuadvisor::FunctionMetric>(
      "gpuadvisor_follower_writer_age_seconds",
      "Seconds since this follower replica was last known to be current with its writer (0 while "
      "in step).",
      [r = replica.get()] { return r->AgeSeconds(); }));
  std::fprintf(stderr, "catalog: following the writer at %s\n", writer_address.c_str());
  return replica;
}

// Optional polling, for files replaced in place (a mounted ConfigMap). The
// store keeps the version of identical content, so an unchanged file wakes
// no watcher; a bad one is rejected and counted like a bad ReloadCatalog.
std::thread PollFiles(int seconds, gpuadvisor::catalog::CatalogServiceImpl& service,
                      absl::Notification& stop) {
  return std::thread([&service, &stop, seconds] {
    while (!stop.WaitForNotificationWithTimeout(absl::Seconds(seconds))) {
      if (absl::Status reloaded = service.Reload(); !reloaded.ok()) {
        std::fprintf(stderr, "catalog: reload rejected, previous catalog still serving: %s\n",
                     reloaded.ToString().c_str());
      }
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  gpuadvisor::BlockTerminationSignals();
  const std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_check)) return Check(positional);
  absl::StatusOr<std::string> token = gpuadvisor::catalog::AdminTokenFromFlags();
  if (!token.ok()) return gpuadvisor::FailStartup("catalog", token.status());

  gpuadvisor::Metrics metrics("catalog");
  gpuadvisor::catalog::CatalogStore store(gpuadvisor::catalog::CatalogSourcesFromFlags(),
                                          absl::GetFlag(FLAGS_reload_nice));
  // Single writer: a follower serves the writer's snapshots through a
  // replica and sends admin reloads on to it; the writer reads the files.
  const std::string writer_address = absl::GetFlag(FLAGS_writer_address);
  const bool writer = gpuadvisor::IsWriter(writer_address, absl::GetFlag(FLAGS_writer_host));
  std::unique_ptr<gpuadvisor::catalog::v1::CatalogService::Stub> writer_stub;
  gpuadvisor::catalog::CatalogServiceImpl::Options service_options =
      ServiceOptionsFromFlags(*std::move(token));
  if (!writer) {
    writer_stub = gpuadvisor::catalog::v1::CatalogService::NewStub(
        gpuadvisor::BackendChannel(writer_address));
    service_options.forward_reload = ForwardReloadsTo(writer_stub.get(), &store);
  }
  gpuadvisor::catalog::CatalogServiceImpl service(&store, &metrics, service_options);
  std::unique_ptr<gpuadvisor::catalog::CatalogReplica> replica;
  if (writer) {
    if (absl::Status loaded = LoadAsWriter(service, store); !loaded.ok()) {
      return gpuadvisor::FailStartup("catalog", loaded);
    }
  } else {
    replica = FollowWriter(writer_address, store, service, metrics);
  }
  absl::Notification stop;
  std::thread poller;
  if (const int seconds = absl::GetFlag(FLAGS_reload_interval_seconds); writer && seconds > 0) {
    poller = PollFiles(seconds, service, stop);
  }

  gpuadvisor::ServiceMainOptions options = gpuadvisor::ServiceMainOptionsFromFlags(
      "catalog", 50051, 9461, {"gpuadvisor.catalog.v1.CatalogService"});
  options.ready = [&store] { return store.Current() != nullptr; };
  return gpuadvisor::ServeUntilSignal(options, metrics, {&service}, [&] {
    stop.Notify();
    if (poller.joinable()) poller.join();
    if (replica != nullptr) replica->Stop();
    service.Shutdown();
  });
}
