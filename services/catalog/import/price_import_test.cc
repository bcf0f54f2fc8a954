#include "services/catalog/import/price_import.h"

#include <map>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog_loader.h"
#include "services/catalog/provenance.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::CatalogSnapshot;
using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kDataDir[] = GPUADVISOR_SOURCE_DIR "/data";
constexpr char kFixtures[] = GPUADVISOR_SOURCE_DIR "/tests/data";

// The embedded catalog plus the real price files, through the loader the
// catalog server uses: imported offers pass the whole-snapshot validation,
// and each import's report lands in the snapshot's source.
TEST(PriceImportLoader, EmbeddedCatalogPlusRealPriceFiles) {
  const std::string vast = std::string(kFixtures) + "/vast/vastai-search-offers.excerpt.json";
  GPUADVISOR_REQUIRE_FIXTURE(vast);
  CatalogSources sources = CatalogSourcesFor(kDataDir, "", "");
  const absl::StatusOr<CatalogSnapshot> base = LoadCatalogSnapshot(sources);
  ASSERT_OK(base);
  sources.price_imports = PriceImportSources("vast", vast);
  ASSERT_EQ(sources.price_imports.size(), 1u);
  const absl::StatusOr<CatalogSnapshot> loaded = LoadCatalogSnapshot(sources);
  ASSERT_OK(loaded);
  EXPECT_GE(loaded->offers_size(), base->offers_size() + 21);
  EXPECT_THAT(loaded->source(), HasSubstr("vast " + vast + ": read 30, kept "));
  int imported = 0;
  for (const Offer& o : loaded->offers()) {
    if (absl::StrContains(o.source(), "vast:")) {
      ++imported;
      EXPECT_THAT(o.region(), ::testing::EndsWith(", NA")) << o.id();
      break;
    }
  }
  EXPECT_EQ(imported, 1);
}

// GCP and AWS files price the catalog's own machine shapes: known offers get
// fresh prices (AWS keeps the spot price it has: the offer file has none),
// other regions become new offers with the known shape.
TEST(PriceImportLoader, BillingAndPriceListRefreshKnownShapes) {
  const std::string gcp =
      std::string(kFixtures) + "/gcp-billing-catalog/compute-engine-skus.a3-h100.excerpt.json";
  const std::string aws =
      std::string(kFixtures) + "/aws-price-list/AmazonEC2-us-east-1.p4d.excerpt.json";
  GPUADVISOR_REQUIRE_FIXTURE(gcp);
  GPUADVISOR_REQUIRE_FIXTURE(aws);
  CatalogSources sources = CatalogSourcesFor(kDataDir, "", "");
  const absl::StatusOr<CatalogSnapshot> base = LoadCatalogSnapshot(sources);
  ASSERT_OK(base);
  sources.price_imports = PriceImportSources("gcp-billing", gcp);
  for (auto& s : PriceImportSources("aws-price-list", aws)) sources.price_imports.push_back(s);
  const absl::StatusOr<CatalogSnapshot> loaded = LoadCatalogSnapshot(sources);
  ASSERT_OK(loaded);
  std::map<std::string, const Offer*> before, after;
  for (const Offer& o : base->offers()) before[o.id()] = &o;
  for (const Offer& o : loaded->offers()) after[o.id()] = &o;
  ASSERT_TRUE(before.count("aws/p4d.24xlarge/us-east-1"));
  const Offer& p4d = *after.at("aws/p4d.24xlarge/us-east-1");
  EXPECT_DOUBLE_EQ(p4d.on_demand_usd_per_hour(), 32.7726);
  EXPECT_DOUBLE_EQ(p4d.spot_usd_per_hour(),
                   before.at("aws/p4d.24xlarge/us-east-1")->spot_usd_per_hour());
  EXPECT_THAT(p4d.source(), HasSubstr("; prices aws-price-list:"));
  // The on-demand price is the price list's now, with its date; the spot
  // price it kept keeps its own (the curated row's C-AWS, 2026-11-29).
  EXPECT_EQ(p4d.spot_price_source(), "C-AWS");
  EXPECT_EQ(p4d.spot_as_of(), "2026-11-29");
  EXPECT_EQ(p4d.spot_priced_at_unix_seconds(),
            before.at("aws/p4d.24xlarge/us-east-1")->priced_at_unix_seconds());
  EXPECT_EQ(p4d.price_source(), "aws-price-list");
  EXPECT_EQ(PricedAtText(p4d), "2024-05-28");  // the offer file's publicationDate
  EXPECT_EQ(p4d.as_of(), "2024-05-28");
  EXPECT_EQ(SpotPriceSource(p4d), "C-AWS");
  EXPECT_EQ(SpotPricedAtText(p4d), "2026-11-29");
  // The shipped us-central1 and europe-west4 rows come from these billing
  // SKUs (C-GCPB in offers.textproto); the import refreshes them at the same
  // price, and the topology rules give them the A3 High network.
  ASSERT_TRUE(before.count("gcp/a3-highgpu-8g/us-central1"));
  const Offer& a3 = *after.at("gcp/a3-highgpu-8g/us-central1");
  EXPECT_NEAR(a3.on_demand_usd_per_hour(), 87.8326, 1e-3);
  EXPECT_THAT(a3.source(), HasSubstr("; prices gcp-billing:"));
  // Was: an import started from the known row and kept its provenance, so a
  // price from these SKUs said "C-GCPB" only by luck and AWS's "C-AWS".
  EXPECT_EQ(a3.price_source(), "gcp-billing");
  EXPECT_EQ(PricedAtText(a3), "2024-09-16");  // the SKUs' effectiveTime
  EXPECT_EQ(a3.as_of(), "2024-09-16");
  EXPECT_EQ(a3.fabric(), v1::FABRIC_TYPE_ETHERNET);
  EXPECT_EQ(a3.scale_out().gbps_per_node(), 800);  // GPU NICs, not the host's gVNIC
  // us-east4's curated spot price had its own date (C-GCPB under a C-GCP
  // row); the import brings on-demand and spot together, so that goes.
  ASSERT_EQ(before.at("gcp/a3-highgpu-8g/us-east4")->spot_as_of(), "2024-09-16");
  const Offer& east4 = *after.at("gcp/a3-highgpu-8g/us-east4");
  EXPECT_THAT(east4.source(), HasSubstr("; prices gcp-billing:"));
  EXPECT_GT(east4.spot_usd_per_hour(), 0);
  EXPECT_EQ(east4.spot_as_of(), "");
  EXPECT_EQ(east4.spot_price_source(), "");
  EXPECT_EQ(east4.spot_priced_at_unix_seconds(), 0);
  ASSERT_TRUE(before.count("gcp/a3-highgpu-8g/europe-west4"));
  EXPECT_NEAR(after.at("gcp/a3-highgpu-8g/europe-west4")->on_demand_usd_per_hour(),
              before.at("gcp/a3-highgpu-8g/europe-west4")->on_demand_usd_per_hour(), 1e-3);
  EXPECT_THAT(loaded->source(), HasSubstr("gcp-billing " + gcp + ": read 73, kept 54"));
  EXPECT_THAT(loaded->source(), HasSubstr("aws-price-list " + aws + ": read 2, kept 1"));
}

TEST(PriceImportLoader, BadSourcesAreErrors) {
  PriceImportContext context;
  EXPECT_THAT(ImportPriceFile({"vast", "/nonexistent/search.json", ""}, context),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("context")));
  const GpuNameResolver gpus(v1::GpuList{});
  const google::protobuf::RepeatedPtrField<Offer> none;
  context.gpus = &gpus;
  context.known_offers = &none;
  EXPECT_THAT(ImportPriceFile({"vast", "/nonexistent/search.json", ""}, context),
              StatusIs(absl::StatusCode::kNotFound));
  CatalogSources sources = CatalogSourcesFor(kDataDir, "", "");
  sources.price_imports.push_back({"nope", sources.gpus_path, ""});
  EXPECT_THAT(LoadCatalogSnapshot(sources),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown import format")));
  EXPECT_TRUE(PriceImportSources("vast", "").empty());
  EXPECT_EQ(PriceImportSources("vast", "a.json,b.json")[1].path, "b.json");
  const auto gpuhunt = PriceImportSources("gpuhunt", "x/y/lambdalabs.csv,aws=/tmp/c.csv");
  ASSERT_EQ(gpuhunt.size(), 2u);
  EXPECT_EQ(gpuhunt[0].provider, "lambdalabs");
  EXPECT_EQ(gpuhunt[0].path, "x/y/lambdalabs.csv");
  EXPECT_EQ(gpuhunt[1].provider, "aws");
  EXPECT_EQ(gpuhunt[1].path, "/tmp/c.csv");
}

}  // namespace
}  // namespace gpuadvisor::catalog
