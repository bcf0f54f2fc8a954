#include "services/catalog/import/price_import.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "absl/strings/match.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/catalog_loader.h"
#include "services/catalog/import/import_report.h"
#include "services/catalog/import/import_test_util.h"
#include "services/catalog/provenance.h"
#include "services/catalog/skypilot_import.h"
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

// The embedded offers as a guarded, refreshed catalog hands them to an
// import (the refresher's known offers): every AWS, GCP, Azure and OCI row
// carries a reserved term, a flagged price, a warning, a spot price dated
// apart, a host record and a sighting. None of it is the machine's.
google::protobuf::RepeatedPtrField<Offer> KnownRowsWithPriceFacts() {
  v1::OfferList list;
  const absl::Status s =
      LoadTextProtoFile(std::string(kDataDir) + "/catalog/offers.textproto", &list);
  EXPECT_TRUE(s.ok()) << s;
  for (Offer& o : *list.mutable_offers()) {
    if (o.provider() != "aws" && o.provider() != "gcp" && o.provider() != "azure" &&
        o.provider() != "oci") {
      continue;
    }
    v1::CommitmentTerm& term = *o.add_commitments();
    term.set_name("EC2 Capacity Block of " + o.region());
    term.set_kind(v1::COMMITMENT_KIND_CAPACITY_BLOCK);
    term.set_term_hours(24);
    term.set_upfront(v1::UPFRONT_PAYMENT_ALL);
    term.set_upfront_usd(943.92);
    term.set_as_of("2024-12-31");
    v1::PriceFlag& flag = *o.add_price_flags();
    flag.set_purchase_option(v1::PURCHASE_OPTION_SPOT);
    flag.set_listed_usd_per_hour(1);
    flag.set_reason("spot price 89% below on-demand: likely stale");
    o.add_warnings("spot price 89% below on-demand: likely stale");
    o.set_spot_as_of("2024-09-16");
    o.set_spot_price_source("C-GCPB");
    o.set_spot_priced_at_unix_seconds(1726444800);
    o.set_price_source("C-" + o.provider());
    o.set_priced_at_unix_seconds(1764374400);
    o.set_host_reliability(0.99);
    o.set_last_seen_available_unix_seconds(1764374400);
  }
  return std::move(*list.mutable_offers());
}

// Issue 19: an import that prices a known machine in a region copies the
// machine (GPUs, memory, topology) and nothing of the known row's prices:
// not its commitments (us-east-1's Capacity Block is not eu-central-1's),
// flags, warnings, dates or sightings. Real files: AWS's p4d offer file
// excerpt, GCP's A3 billing SKUs; Azure's and OCI's sample pages.
TEST(PriceImport, ShapeCopiesTakeTheMachineNotThePrice) {
  const google::protobuf::RepeatedPtrField<Offer> known = KnownRowsWithPriceFacts();
  std::map<std::string, const Offer*> shape_of;  // the importers' shape: first row of a type
  for (const Offer& o : known) shape_of.emplace(o.provider() + "/" + o.instance_type(), &o);
  const std::string families = std::string(kDataDir) + "/catalog/gcp_billing_families.csv";
  PriceImportContext context{&TestGpuResolver(), "", families, &known};
  struct File {
    const char* format;
    std::string path;
    const char* as_of;  // the file's own date; OCI's list has none: the caller's
  };
  // The caller's as-of dates only what a file leaves undated.
  const ImportAsOf read_at{absl::FromUnixSeconds(1796378400), "test"};  // 2026-12-04T10:00:00Z
  const File files[] = {
      {"aws-price-list", "/aws-price-list/AmazonEC2-us-east-1.p4d.excerpt.json", "2024-05-28"},
      {"gcp-billing", "/gcp-billing-catalog/compute-engine-skus.a3-h100.excerpt.json",
       "2024-09-16"},
      {"azure-retail", "/azure-retail/prices.json", "2024-11-01"},
      {"oci-price-list", "/oci-price-list/products.json", "2026-12-04"}};
  for (const auto& [format, file, as_of] : files) {
    SCOPED_TRACE(format);
    GPUADVISOR_REQUIRE_FIXTURE(kFixtures + file);
    absl::StatusOr<ImportedOffers> imported =
        ImportPriceFile({format, kFixtures + file, "", read_at}, context);
    ASSERT_OK(imported);
    ExpectConsistent(*imported);
    ASSERT_FALSE(imported->offers.empty());
    for (const Offer& o : imported->offers) {
      SCOPED_TRACE(o.id());
      const Offer& shape = *shape_of.at(o.provider() + "/" + o.instance_type());
      ASSERT_GT(shape.commitments_size(), 0);  // what there was to leak
      EXPECT_EQ(o.commitments_size(), 0);
      EXPECT_EQ(o.price_flags_size(), 0);
      EXPECT_EQ(o.warnings_size(), 0);
      EXPECT_EQ(o.spot_as_of(), "");
      EXPECT_EQ(o.spot_price_source(), "");
      EXPECT_EQ(o.spot_priced_at_unix_seconds(), 0);
      EXPECT_EQ(o.price_source(), "");  // the load names the import
      const bool dateless = std::string(format) == "oci-price-list";
      EXPECT_EQ(o.priced_at_unix_seconds(), dateless ? 1796378400 : 0);  // else: from as_of
      EXPECT_FALSE(o.has_host_reliability());
      EXPECT_EQ(o.last_seen_available_unix_seconds(), 0);
      EXPECT_EQ(o.availability(), v1::AVAILABILITY_UNSPECIFIED);
      EXPECT_EQ(o.as_of(), as_of);  // the file's date (or none), never the row's
      // The machine is the known row's.
      EXPECT_EQ(o.gpu_model(), shape.gpu_model());
      EXPECT_EQ(o.gpus_per_node(), shape.gpus_per_node());
      EXPECT_EQ(o.link(), shape.link());
      EXPECT_EQ(o.max_nodes(), shape.max_nodes());
      EXPECT_EQ(o.stale_after_seconds(), shape.stale_after_seconds());
    }
  }
}

// Issue 19: SkyPilot CSVs, gpuhunt and Vast files carry no price date. The
// caller's as-of (the refresher's fetch, --import_as_of, else the file's
// modification time) dates their prices, spot included: never "an unknown
// date".
TEST(PriceImport, DatelessFilesTakeTheCallersAsOf) {
  const ImportAsOf read_at{absl::FromUnixSeconds(1796378400), "test"};  // 2026-12-04T10:00:00Z
  const google::protobuf::RepeatedPtrField<Offer> none;
  PriceImportContext context{&TestGpuResolver(), "", "", &none};
  const std::string vast = std::string(kFixtures) + "/vast/vastai-search-offers.excerpt.json";
  const std::string gpuhunt = std::string(kFixtures) + "/gpuhunt/lambdalabs.csv";
  const std::string skypilot = std::string(kFixtures) + "/skypilot/lambda/vms.csv";
  GPUADVISOR_REQUIRE_FIXTURE(vast);
  GPUADVISOR_REQUIRE_FIXTURE(gpuhunt);
  GPUADVISOR_REQUIRE_FIXTURE(skypilot);
  std::vector<Offer> offers;
  for (const PriceImportSource& source :
       {PriceImportSource{"vast", vast, "", read_at},
        PriceImportSource{"gpuhunt", gpuhunt, "lambdalabs", read_at}}) {
    absl::StatusOr<ImportedOffers> imported = ImportPriceFile(source, context);
    ASSERT_OK(imported);
    ASSERT_FALSE(imported->offers.empty()) << source.format;
    for (Offer& o : imported->offers) offers.push_back(std::move(o));
  }
  absl::StatusOr<std::string> csv = ReadFile(skypilot);
  ASSERT_OK(csv);
  absl::StatusOr<SkyPilotImport> sky =
      ImportSkyPilotCsv(*csv, "lambda", skypilot, TestGpuResolver(), nullptr, read_at);
  ASSERT_OK(sky);
  ASSERT_FALSE(sky->offers.empty());
  for (Offer& o : sky->offers) offers.push_back(std::move(o));
  int spot = 0;
  for (Offer& o : offers) {
    SCOPED_TRACE(o.id());
    EXPECT_EQ(o.as_of(), "2026-12-04");
    EXPECT_EQ(o.priced_at_unix_seconds(), 1796378400);
    EXPECT_THAT(o.source(), HasSubstr("; priced as of 2026-12-04T10:00:00Z (test)"));
    FillPriceProvenance(o, 0);  // as the load does
    EXPECT_EQ(PricedAtText(o), "2026-12-04T10:00:00Z");
    if (o.spot_usd_per_hour() > 0) {
      ++spot;
      EXPECT_EQ(SpotPricedAtText(o), "2026-12-04T10:00:00Z");
    }
  }
  EXPECT_GT(spot, 0);  // Vast's interruptible prices

  // Without an as-of: the file's modification time, said so.
  absl::StatusOr<ImportedOffers> by_mtime = ImportPriceFile({"vast", vast, "", {}}, context);
  ASSERT_OK(by_mtime);
  ASSERT_FALSE(by_mtime->offers.empty());
  const ImportAsOf modified = FileModifiedAsOf(vast);
  ASSERT_TRUE(modified.known());
  EXPECT_EQ(by_mtime->offers[0].priced_at_unix_seconds(), absl::ToUnixSeconds(modified.time));
  EXPECT_THAT(by_mtime->offers[0].source(), HasSubstr("(file modified)"));
  // A text with no as-of stays undated (the caller said nothing).
  absl::StatusOr<std::string> text = ReadFile(vast);
  ASSERT_OK(text);
  absl::StatusOr<ImportedOffers> undated = ImportPriceText({"vast", vast, "", {}}, *text, context);
  ASSERT_OK(undated);
  ASSERT_FALSE(undated->offers.empty());
  EXPECT_EQ(undated->offers[0].priced_at_unix_seconds(), 0);
}

// Through the catalog's loader: a curated row re-priced by a SkyPilot CSV
// carries the import's as-of (--import_as_of here), not the curated date
// with no time, and new rows are dated too.
TEST(PriceImportLoader, SkyPilotCsvPricesCarryTheImportsAsOf) {
  const std::string lambda = std::string(kFixtures) + "/skypilot/lambda/vms.csv";
  const std::string hyperstack = std::string(kFixtures) + "/skypilot/hyperstack/vms.csv";
  const std::string shadeform = std::string(kFixtures) + "/skypilot/shadeform/vms.csv";
  GPUADVISOR_REQUIRE_FIXTURE(lambda);
  GPUADVISOR_REQUIRE_FIXTURE(hyperstack);
  GPUADVISOR_REQUIRE_FIXTURE(shadeform);
  CatalogSources sources = CatalogSourcesFor(
      kDataDir, "", "lambda=" + lambda + ",hyperstack=" + hyperstack + ",shadeform=" + shadeform);
  sources.imports_as_of = {absl::FromUnixSeconds(1796378400), "--import_as_of"};
  const absl::StatusOr<CatalogSnapshot> loaded = LoadCatalogSnapshot(sources);
  ASSERT_OK(loaded);
  int repriced = 0, added = 0;
  for (const Offer& o : loaded->offers()) {
    if (!absl::StrContains(o.source(), "skypilot:")) continue;
    SCOPED_TRACE(o.id());
    absl::StrContains(o.source(), "; prices skypilot:") ? ++repriced : ++added;
    EXPECT_EQ(o.price_source(), "skypilot");
    EXPECT_EQ(o.as_of(), "2026-12-04");
    EXPECT_EQ(PricedAtText(o), "2026-12-04T10:00:00Z");
    EXPECT_THAT(o.source(), HasSubstr("priced as of 2026-12-04T10:00:00Z (--import_as_of)"));
  }
  EXPECT_GT(repriced, 0);
  EXPECT_GT(added, 0);
}

TEST(PriceImportLoader, BadSourcesAreErrors) {
  PriceImportContext context;
  EXPECT_THAT(ImportPriceFile({"vast", "/nonexistent/search.json", "", {}}, context),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("context")));
  const GpuNameResolver gpus(v1::GpuList{});
  const google::protobuf::RepeatedPtrField<Offer> none;
  context.gpus = &gpus;
  context.known_offers = &none;
  EXPECT_THAT(ImportPriceFile({"vast", "/nonexistent/search.json", "", {}}, context),
              StatusIs(absl::StatusCode::kNotFound));
  CatalogSources sources = CatalogSourcesFor(kDataDir, "", "");
  sources.price_imports.push_back({"nope", sources.gpus_path, "", {}});
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

TEST(SortById, PutsEveryOfferInIdOrderWithItsOwnFields) {
  std::vector<Offer> offers(1000);
  for (int i = 0; i < 1000; ++i) {
    offers[static_cast<size_t>(i)].set_id("offer-" + std::to_string(i));
    offers[static_cast<size_t>(i)].set_vcpus(i);
  }
  std::shuffle(offers.begin(), offers.end(), std::mt19937(7));
  SortById(offers);
  ASSERT_EQ(offers.size(), 1000u);
  for (size_t i = 0; i < offers.size(); ++i) {
    EXPECT_EQ(offers[i].id(), "offer-" + std::to_string(offers[i].vcpus()));
    if (i > 0) {
      EXPECT_LT(offers[i - 1].id(), offers[i].id());
    }
  }
}

}  // namespace
}  // namespace gpuadvisor::catalog
