// Checks the embedded default data under data/catalog/: it loads, and it
// covers what issue 4 promises (providers, GPUs, shapes, interconnect).

#include <fstream>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog.h"
#include "services/catalog/catalog_loader.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::CatalogSnapshot;
using ::gpuadvisor::catalog::v1::Offer;

CatalogSources DefaultSources() {
  CatalogSources sources;
  sources.gpus_path = GPUADVISOR_SOURCE_DIR "/data/catalog/gpus.textproto";
  sources.offer_paths = {GPUADVISOR_SOURCE_DIR "/data/catalog/offers.textproto"};
  return sources;
}

TEST(EmbeddedData, LoadsAndCoversTheIssue) {
  absl::StatusOr<CatalogSnapshot> snapshot = LoadCatalogSnapshot(DefaultSources());
  ASSERT_OK(snapshot);
  EXPECT_EQ(snapshot->prices_as_of(), "2026-11-29");
  EXPECT_THAT(snapshot->version(), ::testing::MatchesRegex("[0-9a-f]{16}"));
  EXPECT_GE(snapshot->offers_size(), 100);
  EXPECT_LE(snapshot->offers_size(), 250);

  std::map<std::string, std::set<std::string>> regions_by_provider;
  std::map<std::string, std::set<int>> shapes_by_gpu;
  int multi_node = 0;
  for (const Offer& o : snapshot->offers()) {
    EXPECT_EQ(o.id(), absl::StrCat(o.provider(), "/", o.instance_type(), "/", o.region()));
    EXPECT_FALSE(o.source().empty()) << o.id();
    EXPECT_NE(o.link(), v1::LINK_TYPE_UNSPECIFIED) << o.id();
    if (o.gpus_per_node() == 1) {
      EXPECT_EQ(o.link(), v1::LINK_TYPE_NONE) << o.id();
    }
    if (o.fabric() == v1::FABRIC_TYPE_NONE) {
      EXPECT_EQ(o.max_nodes(), 1) << o.id();
    }
    if (o.max_nodes() > 1) ++multi_node;
    regions_by_provider[o.provider()].insert(o.region());
    shapes_by_gpu[o.gpu_model()].insert(o.gpus_per_node());
  }
  for (const char* provider : {"aws", "gcp", "azure", "lambda", "coreweave", "nebius", "runpod",
                               "vast", "oci", "hyperstack", "crusoe"}) {
    EXPECT_TRUE(regions_by_provider.count(provider)) << provider;
  }
  // Several regions for the hyperscalers PRICES.md prices in more than one
  // region (Azure is quoted for East US only).
  EXPECT_GE(regions_by_provider["aws"].size(), 5u);
  EXPECT_GE(regions_by_provider["gcp"].size(), 2u);
  EXPECT_GE(regions_by_provider["nebius"].size(), 3u);
  for (const char* gpu : {"B200", "H200", "H100-SXM", "H100-PCIE", "A100-40GB", "A100-80GB", "L40S",
                          "L4", "A10G", "T4", "V100", "RTX-4090", "RTX-A6000", "MI300X"}) {
    EXPECT_TRUE(shapes_by_gpu.count(gpu)) << gpu;
  }
  for (const char* gpu : {"B200", "H200", "H100-SXM", "A100-40GB", "A100-80GB", "L40S", "L4",
                          "A10G", "V100", "MI300X"}) {
    EXPECT_TRUE(shapes_by_gpu[gpu].count(8)) << gpu;
  }
  for (const char* gpu : {"H100-SXM", "L40S", "L4", "A10G", "T4", "V100", "RTX-4090", "RTX-A6000",
                          "A100-80GB", "A100-40GB"}) {
    EXPECT_TRUE(shapes_by_gpu[gpu].count(1)) << gpu;
  }
  EXPECT_GE(multi_node, 15);

  absl::StatusOr<std::shared_ptr<const Catalog>> catalog = Catalog::Create(*snapshot);
  ASSERT_OK(catalog);
  std::printf("embedded catalog: %d offers, %zu providers\n", snapshot->offers_size(),
              regions_by_provider.size());
}

// The embedded offers plus every SkyPilot fixture (when ../shared is present):
// overlapping ids refresh prices, the rest are added, and the whole validates.
TEST(EmbeddedData, LoadsTogetherWithTheSkyPilotFixtures) {
  const std::string fixtures =
      GPUADVISOR_SOURCE_DIR "/../shared/fixtures/skypilot-catalog/catalogs/v8";
  GPUADVISOR_REQUIRE_FIXTURE(fixtures + "/lambda/vms.csv");  // a failure under CI=true
  CatalogSources sources = DefaultSources();
  sources.skypilot_csv_paths = {fixtures + "/aws/vms.p4de-p5.excerpt.csv",
                                fixtures + "/lambda/vms.csv",
                                fixtures + "/nebius/vms.csv",
                                fixtures + "/vast/vms.csv",
                                fixtures + "/hyperstack/vms.csv",
                                fixtures + "/shadeform/vms.csv"};
  absl::StatusOr<CatalogSnapshot> snapshot = LoadCatalogSnapshot(sources);
  ASSERT_OK(snapshot);
  // 130 embedded + 575 imported - the ids both have.
  EXPECT_GT(snapshot->offers_size(), 600);
  std::map<std::string, const Offer*> by_id;
  for (const Offer& o : snapshot->offers()) by_id[o.id()] = &o;
  const Offer& p5 = *by_id.at("aws/p5.48xlarge/us-east-1");
  EXPECT_EQ(p5.fabric(), v1::FABRIC_TYPE_EFA);   // curated
  EXPECT_EQ(p5.reserved_usd_per_hour(), 39.33);  // curated
  EXPECT_EQ(p5.spot_usd_per_hour(), 10.2397);    // refreshed from the CSV
  EXPECT_THAT(p5.source(), ::testing::HasSubstr("prices skypilot:"));
  std::printf("embedded + fixtures: %d offers\n", snapshot->offers_size());
}

}  // namespace
}  // namespace gpuadvisor::catalog
