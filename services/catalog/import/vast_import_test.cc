#include "services/catalog/import/vast_import.h"

#include <map>
#include <string>

#include "absl/strings/str_split.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/import/csv.h"
#include "services/catalog/import/import_test_util.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kVastFile[] =
    GPUADVISOR_SOURCE_DIR "/tests/data/vast/vastai-search-offers.excerpt.json";
constexpr char kContinents[] = GPUADVISOR_SOURCE_DIR "/data/catalog/country_continents.csv";

VastImportOptions Options() {
  VastImportOptions options;
  absl::StatusOr<std::string> text = ReadFile(kContinents);
  EXPECT_TRUE(text.ok()) << text.status();
  absl::StatusOr<ContinentTable> table = ParseContinentTable(text.value_or(""), kContinents);
  EXPECT_TRUE(table.ok()) << table.status();
  if (table.ok()) options.continents = *std::move(table);
  return options;
}

TEST(ContinentTable, EmbeddedFileCoversTheMarketplaceCountries) {
  const VastImportOptions options = Options();
  ASSERT_FALSE(options.continents.empty());
  EXPECT_GT(options.continents.size(), 190u);
  EXPECT_EQ(options.continents.at("US"), "NA");
  EXPECT_EQ(options.continents.at("NA"), "AF");  // Namibia, not North America
  EXPECT_EQ(options.continents.at("TW"), "AS");
  EXPECT_EQ(options.continents.at("IS"), "EU");
  EXPECT_EQ(options.continents.at("AU"), "OC");
  EXPECT_THAT(ParseContinentTable("continent,countries\nEU,FR\nAS,FR\n", "c.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("c.csv:3: countries: FR")));
}

// SkyPilot's Vast catalog writes "State, CC, Continent": the table gives the
// same continent for every country in it, so both sources name a place alike.
TEST(ContinentTable, AgreesWithSkyPilotsVastRegions) {
  const std::string file =
      GPUADVISOR_SOURCE_DIR "/tests/data/skypilot-catalog/catalogs/v8/vast/vms.csv";
  GPUADVISOR_REQUIRE_FIXTURE(file);
  absl::StatusOr<std::string> text = ReadFile(file);
  ASSERT_OK(text);
  absl::StatusOr<std::vector<CsvRecord>> records = ParseCsv(*text, file);
  ASSERT_OK(records);
  ASSERT_GT(records->size(), 1u);
  const CsvHeader header(records->front());
  const VastImportOptions options = Options();
  int checked = 0;
  for (size_t r = 1; r < records->size(); ++r) {
    const std::vector<std::string> parts =
        absl::StrSplit(header.Cell((*records)[r], "Region"), ", ");
    ASSERT_GE(parts.size(), 3u);
    const std::string& country = parts[parts.size() - 2];
    ASSERT_TRUE(options.continents.contains(country)) << country;
    EXPECT_EQ(options.continents.at(country), parts.back()) << country;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(records->size()) - 1);
}

TEST(VastImport, RealSearchOutput) {
  GPUADVISOR_REQUIRE_FIXTURE(kVastFile);
  absl::StatusOr<std::string> text = ReadFile(kVastFile);
  ASSERT_OK(text);
  absl::StatusOr<ImportedOffers> imported =
      ImportVastOffers(*text, "search.json", TestGpuResolver(), Options());
  ASSERT_OK(imported);
  const ImportReport& report = imported->report;
  EXPECT_EQ(report.rows_read, 30);
  ExpectConsistent(*imported);
  EXPECT_EQ(report.rejected_by_reason.at("deverified host"), 6);
  // Every GPU the fixture names is known except the converged A100X (and A40
  // until the GPU list has it).
  for (const auto& [reason, n] : report.rejected_by_reason) {
    if (reason == "deverified host") continue;
    EXPECT_THAT(reason, ::testing::AnyOf("unknown GPU \"A100X\"", "unknown GPU \"A40\"")) << n;
  }
  ASSERT_GE(imported->offers.size(), 21u);

  const std::map<std::string, const Offer*> by_id = ById(imported->offers);
  // 4x H100 SXM in Thailand, offer 13482712: compute price only, min_bid as spot.
  const Offer& h100x4 = *by_id.at("vast/4x-H100_SXM-m27587/Thailand, TH, AS");
  EXPECT_EQ(h100x4.gpu_model(), "H100-SXM");
  EXPECT_EQ(h100x4.gpus_per_node(), 4);
  EXPECT_DOUBLE_EQ(h100x4.on_demand_usd_per_hour(), 8.533333333333333);  // dph_base, not dph_total
  EXPECT_DOUBLE_EQ(h100x4.spot_usd_per_hour(), 5.333333);
  EXPECT_EQ(h100x4.vcpus(), 64);
  EXPECT_EQ(h100x4.ram_bytes(), 515681000000);
  EXPECT_EQ(h100x4.link(), v1::LINK_TYPE_NVLINK);
  EXPECT_EQ(h100x4.max_nodes(), 1);
  EXPECT_EQ(h100x4.availability(), v1::AVAILABILITY_LIMITED);
  EXPECT_THAT(h100x4.source(), HasSubstr("offer 13482712"));
  EXPECT_THAT(h100x4.source(), HasSubstr("storage $0.200/GB-month not included"));
  // hosting_type 0: a community host; its reliability as published.
  EXPECT_EQ(h100x4.host_tier(), v1::HOST_TIER_COMMUNITY);
  ASSERT_TRUE(h100x4.has_host_reliability());
  EXPECT_DOUBLE_EQ(h100x4.host_reliability(), 0.9711703);
  // hosting_type 1 (offer 11572791): a datacenter host.
  const Offer& datacenter = *by_id.at("vast/1x-H100_NVL-m25258/California, US, NA");
  EXPECT_EQ(datacenter.host_tier(), v1::HOST_TIER_DATACENTER);
  EXPECT_DOUBLE_EQ(datacenter.host_reliability(), 0.9985967);
  int datacenters = 0;
  for (const Offer& o : imported->offers) {
    datacenters += o.host_tier() == v1::HOST_TIER_DATACENTER;
    EXPECT_NE(o.host_tier(), v1::HOST_TIER_UNSPECIFIED) << o.id();
    EXPECT_TRUE(o.has_host_reliability()) << o.id();
  }
  EXPECT_GT(datacenters, 0);
  EXPECT_LT(datacenters, static_cast<int>(imported->offers.size()));

  // Variant by memory and name: 95830 MiB "H100 NVL", "A100 PCIE", "RTX 6000Ada".
  EXPECT_EQ(by_id.at("vast/1x-H100_NVL-m25258/California, US, NA")->gpu_model(), "H100-NVL");
  EXPECT_EQ(by_id.at("vast/1x-A100_PCIE-m16297/Oklahoma, US, NA")->gpu_model(), "A100-80GB-PCIE");
  EXPECT_EQ(by_id.at("vast/1x-A100_SXM4-m25097/Sweden, SE, EU")->gpu_model(), "A100-80GB");
  EXPECT_EQ(by_id.at("vast/1x-Tesla_V100-m26522/Sweden, SE, EU")->gpu_model(), "V100");
  // A host with no state (geolocation ", US") is "US, NA": no empty part. The
  // slice's share of a machine (cpu_cores_effective), not the whole machine's
  // cores.
  const Offer& nvl8 = *by_id.at("vast/8x-H100_NVL-m26506/US, NA");
  EXPECT_EQ(nvl8.region(), "US, NA");
  EXPECT_EQ(nvl8.vcpus(), 128);
  EXPECT_DOUBLE_EQ(nvl8.spot_usd_per_hour(), 3.221333);
  // min_bid equal to the price is no spot discount.
  EXPECT_EQ(by_id.at("vast/8x-A100_SXM4-m16365/Washington, US, NA")->spot_usd_per_hour(), 0);
  for (const Offer& o : imported->offers) {
    EXPECT_EQ(o.provider(), "vast");
    EXPECT_GT(o.on_demand_usd_per_hour(), 0) << o.id();
    EXPECT_LT(o.spot_usd_per_hour(), o.on_demand_usd_per_hour()) << o.id();
    EXPECT_THAT(o.region(),
                ::testing::MatchesRegex("([^ ,][^,]*[^ ,], )?[A-Z][A-Z], (NA|EU|AS|OC)"))
        << o.id();
  }
}

TEST(VastImport, DuplicateSlicesKeepTheCheapestAndBadOffersAreCounted) {
  const std::string text = R"({"offers": [
    {"id": 1, "machine_id": 7, "num_gpus": 2, "gpu_name": "RTX 4090", "gpu_ram": 24564,
     "dph_base": 0.9, "min_bid": 0.5, "geolocation": "Texas, US", "rentable": true,
     "rented": false, "verification": "verified"},
    {"id": 2, "machine_id": 7, "num_gpus": 2, "gpu_name": "RTX 4090", "gpu_ram": 24564,
     "dph_base": 0.8, "min_bid": null, "geolocation": "Texas, US", "rentable": true,
     "rented": false, "verification": "unverified"},
    {"id": 3, "machine_id": 8, "num_gpus": 1, "gpu_name": "Fancy 9000", "dph_base": 1},
    {"id": 4, "machine_id": 9, "num_gpus": 1, "gpu_name": "L4", "dph_base": 0},
    {"id": 5, "machine_id": 9, "num_gpus": 1, "gpu_name": "L4", "dph_base": 1, "rented": true},
    {"id": 6, "num_gpus": 1, "gpu_name": "L4", "dph_base": 1},
    "junk",
    {"id": 8, "machine_id": 10, "num_gpus": 1, "gpu_name": "L4", "dph_base": 0.4,
     "geolocation": "Atlantis, QQ", "verification": "deverified"},
    {"id": 9, "machine_id": 11, "num_gpus": 1, "gpu_name": "L4", "dph_base": 0.3,
     "geolocation": " , US ", "verification": "verified", "hosting_type": 1,
     "reliability": 1.5}
  ]})";
  VastImportOptions keep;
  keep.keep_deverified = true;
  keep.continents = {{"US", "NA"}};
  absl::StatusOr<ImportedOffers> imported =
      ImportVastOffers(text, "t.json", TestGpuResolver(), keep);
  ASSERT_OK(imported);
  ExpectConsistent(*imported);
  EXPECT_EQ(imported->report.rows_read, 9);
  EXPECT_EQ(imported->report.rows_kept, 3);
  EXPECT_THAT(imported->report.rejected_by_reason,
              ::testing::UnorderedElementsAre(
                  ::testing::Pair("duplicate slice of machine", 1),
                  ::testing::Pair("unknown GPU \"Fancy 9000\"", 1), ::testing::Pair("no price", 1),
                  ::testing::Pair("already rented", 1),
                  ::testing::Pair("missing gpu_name, num_gpus or machine_id", 1),
                  ::testing::Pair("not an object", 1)));
  ASSERT_EQ(imported->offers.size(), 3u);
  EXPECT_EQ(imported->offers[1].id(), "vast/1x-L4-m11/US, NA");  // no city: no empty part
  // hosting_type 1 is a datacenter; a reliability outside [0, 1] is no figure.
  EXPECT_EQ(imported->offers[1].host_tier(), v1::HOST_TIER_DATACENTER);
  EXPECT_FALSE(imported->offers[1].has_host_reliability());
  const Offer& cheap = imported->offers[2];
  EXPECT_EQ(cheap.id(), "vast/2x-RTX_4090-m7/Texas, US, NA");
  EXPECT_DOUBLE_EQ(cheap.on_demand_usd_per_hour(), 0.8);
  EXPECT_EQ(cheap.spot_usd_per_hour(), 0);
  EXPECT_EQ(cheap.host_tier(), v1::HOST_TIER_COMMUNITY);  // no hosting_type
  EXPECT_FALSE(cheap.has_host_reliability());
  EXPECT_THAT(cheap.source(), HasSubstr("offer 2"));
  EXPECT_EQ(imported->offers[0].region(), "Atlantis, QQ");  // unknown country: as written
  EXPECT_THAT(imported->report.Summary(),
              HasSubstr("vast t.json: read 9, kept 3, rejected 6 (already rented: 1"));
}

TEST(VastImport, RejectsFilesThatAreNotOfferLists) {
  EXPECT_THAT(ImportVastOffers("{\"offers\": 3}", "x.json", TestGpuResolver(), {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x.json: expected a list")));
  EXPECT_THAT(ImportVastOffers("[{]", "x.json", TestGpuResolver(), {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x.json: not JSON")));
}

}  // namespace
}  // namespace gpuadvisor::catalog
