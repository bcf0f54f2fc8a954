#include "services/catalog/import/aws_price_list_import.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/import/import_test_util.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::catalog::v1::OfferList;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kFixtures[] = GPUADVISOR_SOURCE_DIR "/tests/data/aws-price-list";

const OfferList& EmbeddedOffers() {
  static const OfferList* offers = [] {
    auto* list = new OfferList;
    const absl::Status s =
        LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/catalog/offers.textproto", list);
    EXPECT_TRUE(s.ok()) << s;
    return list;
  }();
  return *offers;
}

TEST(AwsPriceListImport, P4dOnDemandKeptCapacityBlockRejected) {
  const std::string file = std::string(kFixtures) + "/AmazonEC2-us-east-1.p4d.excerpt.json";
  GPUADVISOR_REQUIRE_FIXTURE(file);
  absl::StatusOr<std::string> text = ReadFile(file);
  ASSERT_OK(text);
  absl::StatusOr<ImportedOffers> imported =
      ImportAwsPriceList(*text, "index.json", EmbeddedOffers().offers());
  ASSERT_OK(imported);
  ExpectConsistent(*imported);
  EXPECT_FALSE(imported->has_spot_prices);
  EXPECT_EQ(imported->report.rows_read, 2);
  EXPECT_EQ(imported->report.rows_kept, 1);
  EXPECT_EQ(imported->report.rejected_by_reason.at("marketoption CapacityBlock"), 1);
  ASSERT_EQ(imported->offers.size(), 1u);
  const Offer& p4d = imported->offers[0];
  EXPECT_EQ(p4d.id(), "aws/p4d.24xlarge/us-east-1");
  EXPECT_DOUBLE_EQ(p4d.on_demand_usd_per_hour(), 32.7726);
  EXPECT_EQ(p4d.vcpus(), 96);
  EXPECT_EQ(p4d.ram_bytes(), 1152LL * 1024 * 1024 * 1024);
  EXPECT_EQ(p4d.gpu_model(), "A100-40GB");  // from the catalog: the file says "NA"
  EXPECT_EQ(p4d.gpus_per_node(), 8);
  // Topology is not the importer's: the loader applies topology.textproto.
  EXPECT_FALSE(p4d.has_scale_out());
  EXPECT_THAT(p4d.source(),
              HasSubstr("sku H7NGEAC6UEHNTKSJ, offer version 20240528203522 (2024-05-28)"));
}

TEST(AwsPriceListImport, ChinaStorageProductIsNotAnInstance) {
  const std::string file = std::string(kFixtures) + "/AmazonEC2-cn-northwest-1.gp3.excerpt.json";
  GPUADVISOR_REQUIRE_FIXTURE(file);
  absl::StatusOr<std::string> text = ReadFile(file);
  ASSERT_OK(text);
  absl::StatusOr<ImportedOffers> imported =
      ImportAwsPriceList(*text, "cn.json", EmbeddedOffers().offers());
  ASSERT_OK(imported);
  ExpectConsistent(*imported);
  EXPECT_EQ(imported->report.rows_read, 1);
  EXPECT_EQ(imported->report.rows_kept, 0);
  EXPECT_EQ(imported->report.rejected_by_reason.at("not an instance (Storage)"), 1);
}

TEST(AwsPriceListImport, FiltersAndCurrency) {
  auto product = [](const char* sku, const char* type, const char* os, const char* gpu) {
    return absl::StrCat("\"", sku, "\": {\"sku\": \"", sku,
                        "\", \"productFamily\": \"Compute Instance\", \"attributes\": {"
                        "\"instanceType\": \"",
                        type, "\", \"operatingSystem\": \"", os,
                        "\", \"tenancy\": \"Shared\", \"capacitystatus\": \"Used\", "
                        "\"preInstalledSw\": \"NA\", \"marketoption\": \"OnDemand\", "
                        "\"regionCode\": \"eu-central-1\", \"vcpu\": \"192\", "
                        "\"memory\": \"2,048 GiB\", \"gpu\": \"",
                        gpu, "\"}}");
  };
  auto term = [](const char* sku, const char* currency, const char* price) {
    return absl::StrCat("\"", sku, "\": {\"", sku, ".JRTCKXETXF\": {\"priceDimensions\": {\"", sku,
                        ".JRTCKXETXF.6YS6EN2CT7\": {\"unit\": \"Hrs\", \"pricePerUnit\": {\"",
                        currency, "\": \"", price, "\"}}}}}");
  };
  const std::string json = absl::StrCat(
      "{\"version\": \"1\", \"products\": {", product("A", "p5.48xlarge", "Linux", "8"), ",",
      product("B", "p5.48xlarge", "Windows", "8"), ",", product("C", "p9.48xlarge", "Linux", "8"),
      ",", product("D", "m7i.large", "Linux", "NA"), ",", product("E", "g5.xlarge", "Linux", "1"),
      ",", product("F", "g6.xlarge", "Linux", "1"), "}, \"terms\": {\"OnDemand\": {",
      term("A", "USD", "55.04"), ",", term("C", "USD", "1"), ",", term("D", "USD", "0.1"), ",",
      term("E", "CNY", "7.0"), ",", term("F", "USD", "0.0000000000"), "}}}");
  absl::StatusOr<ImportedOffers> imported =
      ImportAwsPriceList(json, "t.json", EmbeddedOffers().offers());
  ASSERT_OK(imported);
  ExpectConsistent(*imported);
  EXPECT_EQ(imported->report.rows_read, 6);
  EXPECT_THAT(imported->report.rejected_by_reason,
              ::testing::UnorderedElementsAre(
                  ::testing::Pair("operatingSystem Windows", 1),
                  ::testing::Pair("instance type not in the catalog (GPU model unknown)", 1),
                  ::testing::Pair("no GPU", 1), ::testing::Pair("currency CNY", 1),
                  ::testing::Pair("zero price", 1)));
  ASSERT_EQ(imported->offers.size(), 1u);
  EXPECT_EQ(imported->offers[0].id(), "aws/p5.48xlarge/eu-central-1");
  EXPECT_EQ(imported->offers[0].gpu_model(), "H100-SXM");
  EXPECT_EQ(imported->offers[0].ram_bytes(), 2048LL * 1024 * 1024 * 1024);
  // The machine is us-east-1's p5, its Capacity Block term is not: that is
  // sold per region at its own price (the file has none for eu-central-1).
  bool shape_has_block = false;
  for (const Offer& o : EmbeddedOffers().offers()) {
    shape_has_block |= o.instance_type() == "p5.48xlarge" && o.commitments_size() > 0;
  }
  ASSERT_TRUE(shape_has_block);
  EXPECT_EQ(imported->offers[0].commitments_size(), 0);
  EXPECT_EQ(imported->offers[0].reserved_usd_per_hour(), 0);
  EXPECT_EQ(imported->offers[0].spot_usd_per_hour(), 0);
  EXPECT_EQ(imported->offers[0].as_of(), "");  // this file has no publicationDate
  EXPECT_THAT(ImportAwsPriceList("[]", "t.json", EmbeddedOffers().offers()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no \"products\"")));
}

}  // namespace
}  // namespace gpuadvisor::catalog
