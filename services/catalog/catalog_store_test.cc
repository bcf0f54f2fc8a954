#include "services/catalog/catalog_store.h"

#include <stdlib.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::testing::ScopedTempDir;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

constexpr char kGpus[] = R"txt(# test GPUs
gpus {
  name: "H100-SXM"
  aliases: ["H100"]
  vendor: "NVIDIA"
  memory_bytes: 80000000000
  memory_type: MEMORY_TYPE_HBM
  nvlink_bytes_per_second: 900e9
}
gpus {
  name: "L4"
  vendor: "NVIDIA"
  memory_bytes: 24000000000
  memory_type: MEMORY_TYPE_GDDR
}
gpus {
  name: "RTX-4090"
  aliases: ["RTX4090"]
  vendor: "NVIDIA"
  memory_bytes: 24000000000
  memory_type: MEMORY_TYPE_GDDR
}
)txt";

// Line 13 holds the second offer's gpu_model, line 15 its price.
constexpr char kOffers[] = R"txt(source: "test"
prices_as_of: "2026-11-29"
offers {
  id: "aws/p5.48xlarge/us-east-1"
  provider: "aws" instance_type: "p5.48xlarge" region: "us-east-1"
  gpu_model: "H100" gpus_per_node: 8 max_nodes: 64
  fabric: FABRIC_TYPE_EFA fabric_gbps: 3200
  on_demand_usd_per_hour: 55.04
}
offers {
  id: "gcp/g2-standard-4/us-central1"
  provider: "gcp" instance_type: "g2-standard-4" region: "us-central1"
  gpu_model: "L4"
  gpus_per_node: 1 max_nodes: 1
  on_demand_usd_per_hour: 0.707
}
)txt";

class CatalogStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    dir_ = temp_.path();
    gpus_path_ = dir_ + "/gpus.textproto";
    offers_path_ = dir_ + "/offers.textproto";
    Write(gpus_path_, kGpus);
    Write(offers_path_, kOffers);
    sources_.gpus_path = gpus_path_;
    sources_.offer_paths = {offers_path_};
  }

  // Plain (non-atomic) write: the store must cope with whatever is on disk.
  static void Write(const std::string& path, const std::string& contents) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << contents;
  }

  ScopedTempDir temp_{"catalog_store_test"};
  std::string dir_, gpus_path_, offers_path_;
  CatalogSources sources_;
};

TEST_F(CatalogStoreTest, EmptyBeforeFirstLoad) {
  CatalogStore store(sources_);
  EXPECT_EQ(store.Current(), nullptr);
  EXPECT_EQ(store.WaitForChange("", absl::Now() + absl::Milliseconds(10)), nullptr);
}

TEST_F(CatalogStoreTest, LoadsAndVersions) {
  CatalogStore store(sources_);
  ASSERT_OK(store.Reload());
  std::shared_ptr<const Catalog> first = store.Current();
  ASSERT_NE(first, nullptr);
  EXPECT_THAT(first->snapshot().version(), MatchesRegex("v1-[0-9a-f]{16}"));
  EXPECT_EQ(first->snapshot().offers_size(), 2);
  EXPECT_EQ(first->snapshot().prices_as_of(), "2026-11-29");
  EXPECT_GT(first->snapshot().loaded_at_unix_seconds(), 0);
  EXPECT_EQ(first->FindOffer("aws/p5.48xlarge/us-east-1")->gpu_model(), "H100-SXM");

  // Same content: same catalog, same version.
  ASSERT_OK(store.Reload());
  EXPECT_EQ(store.Current(), first);

  // New content: next sequence, new hash.
  Write(offers_path_, absl::StrReplaceAll(kOffers, {{"55.04", "54.00"}}));
  ASSERT_OK(store.Reload());
  std::shared_ptr<const Catalog> second = store.Current();
  EXPECT_THAT(second->snapshot().version(), StartsWith("v2-"));
  EXPECT_NE(second->snapshot().version().substr(3), first->snapshot().version().substr(3));
  EXPECT_EQ(second->FindOffer("aws/p5.48xlarge/us-east-1")->on_demand_usd_per_hour(), 54.0);
  // Whoever held the first catalog still has it, intact.
  EXPECT_EQ(first->FindOffer("aws/p5.48xlarge/us-east-1")->on_demand_usd_per_hour(), 55.04);
}

TEST_F(CatalogStoreTest, AReloadNamesItsVersionAndEncodesItFromOneSerialization) {
  CatalogStore store(sources_);
  ASSERT_OK(store.Reload());
  std::shared_ptr<const Catalog> catalog = store.Current();
  ASSERT_NE(catalog, nullptr);
  const v1::CatalogSnapshot& snapshot = catalog->snapshot();
  // The version's hash is the content hash of what is served.
  EXPECT_EQ(snapshot.version(), absl::StrCat("v1-", SnapshotContentHash(snapshot)));
  // The bytes kept for WatchCatalog are the served snapshot's, handed out once.
  const std::string bytes = store.TakeSerialized(*catalog);
  EXPECT_EQ(bytes, snapshot.SerializeAsString());
  EXPECT_EQ(store.TakeSerialized(*catalog), "");
  // Another catalog (a follower's copy) has none.
  absl::StatusOr<std::shared_ptr<const Catalog>> copy = Catalog::Create(snapshot);
  ASSERT_OK(copy.status());
  EXPECT_EQ(store.TakeSerialized(**copy), "");
}

struct BadFile {
  const char* name;
  std::string contents;
  std::string error;  // substring, after "<offers_path>:"
};

TEST_F(CatalogStoreTest, BadFilesAreRejectedAndTheOldCatalogKeepsServing) {
  CatalogStore store(sources_);
  ASSERT_OK(store.Reload());
  const std::shared_ptr<const Catalog> good = store.Current();
  const std::string text = kOffers;
  const BadFile cases[] = {
      {"corrupt", "offers { id: \"x\" \x01\x02 garbage", ":1:"},
      {"truncated mid-offer", text.substr(0, text.find("gpu_model: \"L4\"")),
       ":13:3: Expected identifier"},
      {"half-written value", text.substr(0, text.find("0.707") + 2), ":"},
      {"empty", "", ":1:1: offers: no offer listed"},
      {"unknown gpu", absl::StrReplaceAll(text, {{"\"L4\"", "\"TPU-v5\""}}),
       ":13:3: offers[1].gpu_model: unknown GPU \"TPU-v5\""},
      {"negative price", absl::StrReplaceAll(text, {{"0.707", "-0.707"}}),
       ":15:3: offers[1].on_demand_usd_per_hour: must be >= 0"},
      {"duplicate id",
       absl::StrReplaceAll(text, {{"gcp/g2-standard-4/us-central1", "aws/p5.48xlarge/us-east-1"}}),
       ":11:3: offers[1].id: \"aws/p5.48xlarge/us-east-1\" duplicates"},
      {"unknown field", absl::StrReplaceAll(text, {{"max_nodes: 1", "max_node: 1"}}),
       ":14:28: Message type \"gpuadvisor.catalog.v1.Offer\" has no field named \"max_node\""},
  };
  for (const BadFile& c : cases) {
    Write(offers_path_, c.contents);
    const absl::Status status = store.Reload();
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr(absl::StrCat(offers_path_, c.error))))
        << c.name;
    EXPECT_EQ(store.Current(), good) << c.name;
    EXPECT_EQ(store.last_reload_status(), status);
  }
  EXPECT_EQ(store.failed_reloads(), 8);

  // A bad GPU list is reported against its own file.
  Write(offers_path_, kOffers);
  Write(gpus_path_,
        absl::StrReplaceAll(kGpus, {{"24000000000\n  memory_type: MEMORY_TYPE_GDDR\n}\ngpus",
                                     "0\n  memory_type: MEMORY_TYPE_GDDR\n}\ngpus"}}));
  EXPECT_THAT(store.Reload(), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr(gpus_path_ + ":13:3: gpus[1].memory_bytes")));
  EXPECT_EQ(store.Current(), good);

  // A missing file is NotFound, and still nothing changes.
  Write(gpus_path_, kGpus);
  sources_.offer_paths.push_back(dir_ + "/missing.textproto");
  CatalogStore other(sources_);
  EXPECT_THAT(other.Reload(), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(other.Current(), nullptr);

  // Fixed file: accepted, same content as before so the same version.
  ASSERT_OK(store.Reload());
  EXPECT_EQ(store.Current()->snapshot().version(), good->snapshot().version());
}

TEST_F(CatalogStoreTest, WaitForChangeWakesOnReload) {
  CatalogStore store(sources_);
  ASSERT_OK(store.Reload());
  const std::string v1 = store.Current()->snapshot().version();

  // Times out when nothing changes.
  const absl::Time start = absl::Now();
  EXPECT_EQ(store.WaitForChange(v1, absl::Now() + absl::Milliseconds(50))->snapshot().version(),
            v1);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(45));
  // Returns at once for an outdated version.
  EXPECT_EQ(store.WaitForChange("v0-old", absl::InfiniteFuture())->snapshot().version(), v1);

  std::atomic<bool> woke{false};
  std::string seen;
  std::thread waiter([&] {
    seen = store.WaitForChange(v1, absl::Now() + absl::Seconds(30))->snapshot().version();
    woke = true;
  });
  while (store.waiters() == 0) std::this_thread::yield();  // the waiter is blocked
  EXPECT_FALSE(woke);
  // A rejected reload changes no version, so it wakes no one.
  Write(offers_path_, "offers {");
  EXPECT_FALSE(store.Reload().ok());
  EXPECT_EQ(store.Current()->snapshot().version(), v1);
  EXPECT_EQ(store.waiters(), 1);
  EXPECT_FALSE(woke);
  Write(offers_path_, absl::StrReplaceAll(kOffers, {{"0.707", "0.70683"}}));
  ASSERT_OK(store.Reload());
  waiter.join();
  EXPECT_TRUE(woke);
  EXPECT_THAT(seen, StartsWith("v2-"));
}

TEST_F(CatalogStoreTest, ShutdownWakesWaiters) {
  CatalogStore store(sources_);
  ASSERT_OK(store.Reload());
  const std::string v1 = store.Current()->snapshot().version();
  std::thread waiter([&] { store.WaitForChange(v1, absl::InfiniteFuture()); });
  while (store.waiters() == 0) std::this_thread::yield();  // the waiter is blocked
  store.Shutdown();
  waiter.join();  // would hang without the wake-up
  EXPECT_EQ(store.WaitForChange(v1, absl::InfiniteFuture())->snapshot().version(), v1);
}

TEST_F(CatalogStoreTest, ConcurrentReadersAlwaysSeeAWholeCatalog) {
  // Generation i has prices 55 + i and 0.707 + i / 1000; start at 0.
  Write(offers_path_, absl::StrReplaceAll(kOffers, {{"55.04", "55"}}));
  CatalogStore store(sources_);
  ASSERT_OK(store.Reload());
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!stop) {
      std::shared_ptr<const Catalog> c = store.Current();
      // Both offers always carry the same price generation.
      const double a = c->FindOffer("aws/p5.48xlarge/us-east-1")->on_demand_usd_per_hour();
      const double b = c->FindOffer("gcp/g2-standard-4/us-central1")->on_demand_usd_per_hour();
      EXPECT_NEAR(a - 55, (b - 0.707) * 1000, 1e-6) << a << " " << b;
      ++reads;
    }
  });
  for (int i = 1; i <= 20; ++i) {
    Write(offers_path_,
          absl::StrReplaceAll(kOffers, {{"55.04", absl::StrCat(55 + i)},
                                        {"0.707", absl::StrCat(0.707 + i / 1000.0)}}));
    ASSERT_OK(store.Reload());
  }
  stop = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_THAT(store.Current()->snapshot().version(), StartsWith("v21-"));
}

TEST_F(CatalogStoreTest, SkyPilotCsvRefreshesCuratedPricesAndAddsOffers) {
  const std::string csv_dir = dir_ + "/catalogs/v8/aws";
  ASSERT_EQ(system(absl::StrCat("mkdir -p '", csv_dir, "'").c_str()), 0);
  Write(csv_dir + "/vms.csv",
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
        "Region,AvailabilityZone,Arch\n"
        "p5.48xlarge,H100,8.0,192.0,2048.0,,55.04,17.63,us-east-1,use1-az1,x86_64\n"
        "p5.48xlarge,H100,8.0,192.0,2048.0,,55.04,25.75,us-east-1,use1-az2,x86_64\n"
        "g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.35,us-east-1,use1-az1,x86_64\n");
  sources_.skypilot_csv_paths = {csv_dir + "/vms.csv"};
  CatalogStore store(sources_);
  ASSERT_OK(store.Reload());
  std::shared_ptr<const Catalog> catalog = store.Current();
  ASSERT_EQ(catalog->snapshot().offers_size(), 3);
  const v1::Offer* p5 = catalog->FindOffer("aws/p5.48xlarge/us-east-1");
  EXPECT_DOUBLE_EQ(p5->spot_usd_per_hour(), (17.63 + 25.75) / 2);  // the CSV's two zones: median
  EXPECT_EQ(p5->spot_min_usd_per_hour(), 17.63);
  EXPECT_EQ(p5->spot_zones(), 2);
  EXPECT_EQ(p5->fabric(), v1::FABRIC_TYPE_EFA);  // curated, kept
  EXPECT_EQ(p5->max_nodes(), 64);
  EXPECT_EQ(p5->vcpus(), 192);  // filled in
  EXPECT_THAT(p5->source(), HasSubstr("prices skypilot:"));
  const v1::Offer* g6 = catalog->FindOffer("aws/g6.xlarge/us-east-1");
  ASSERT_NE(g6, nullptr);
  EXPECT_EQ(g6->gpu_model(), "L4");

  // "<cloud>=<path>" names the cloud explicitly.
  sources_.skypilot_csv_paths = {"lambda=" + csv_dir + "/vms.csv"};
  CatalogStore lambda(sources_);
  ASSERT_OK(lambda.Reload());
  EXPECT_NE(lambda.Current()->FindOffer("lambda/g6.xlarge/us-east-1"), nullptr);

  // A broken CSV is rejected with file and line.
  Write(csv_dir + "/vms.csv",
        "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n"
        "g6.xlarge,L4,1,0.8048,us-east-1\n"
        "g6.xlarge,L4,1,cheap,us-west-2\n");
  sources_.skypilot_csv_paths = {csv_dir + "/vms.csv"};
  EXPECT_THAT(store.Reload(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(csv_dir + "/vms.csv:3: Price: not a number: \"cheap\"")));
  EXPECT_EQ(store.Current(), catalog);
}

// How long a reload takes is measured in bench/, not asserted here (a loaded
// machine or a sanitizer build makes any time limit flaky).
TEST_F(CatalogStoreTest, ReloadsTenThousandOffers) {
  std::string text = "prices_as_of: \"2026-11-29\"\n";
  for (int i = 0; i < 10000; ++i) {
    absl::StrAppend(&text, "offers { id: \"p/t", i, "/r\" provider: \"p\" instance_type: \"t", i,
                    "\" region: \"r\" gpu_model: \"", i % 2 ? "H100" : "rtx 4090",
                    "\" gpus_per_node: 8 max_nodes: 1 on_demand_usd_per_hour: ", 1 + i % 90,
                    " }\n");
  }
  Write(offers_path_, text);
  CatalogStore store(sources_);
  ASSERT_OK(store.Reload());
  EXPECT_EQ(store.Current()->snapshot().offers_size(), 10000);
}

}  // namespace
}  // namespace gpuadvisor::catalog
