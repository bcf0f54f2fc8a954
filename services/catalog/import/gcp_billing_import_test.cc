#include "services/catalog/import/gcp_billing_import.h"

#include <string>

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

constexpr char kFixtures[] = GPUADVISOR_SOURCE_DIR "/tests/data/gcp-billing-catalog";
constexpr char kFamilies[] = GPUADVISOR_SOURCE_DIR "/data/catalog/gcp_billing_families.csv";

std::vector<GcpSkuFamily> Families() {
  absl::StatusOr<std::string> text = ReadFile(kFamilies);
  EXPECT_TRUE(text.ok()) << text.status();
  absl::StatusOr<std::vector<GcpSkuFamily>> families =
      ParseGcpSkuFamilies(text.value_or(""), kFamilies);
  EXPECT_TRUE(families.ok()) << families.status();
  return families.value_or(std::vector<GcpSkuFamily>{});
}

// The machine shapes the importer prices: the embedded catalog's offers.
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

TEST(GcpSkuFamilies, EmbeddedTable) {
  const std::vector<GcpSkuFamily> families = Families();
  ASSERT_FALSE(families.empty());
  EXPECT_EQ(families[3].machine_prefix, "a3-megagpu");
  EXPECT_EQ(families[3].sku_family, "A3Plus");
  EXPECT_THAT(families[3].gpu_skus,
              ::testing::ElementsAre("Nvidia H100 80GB Mega", "Nvidia H100 80GB Plus"));
  EXPECT_THAT(ParseGcpSkuFamilies("machine_prefix,sku_family,gpu_skus\na3,,x\n", "f.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("f.csv:2:")));
}

TEST(GcpBillingImport, A3MachinesAssembledFromGpuCoreAndRamSkus) {
  const std::string file = std::string(kFixtures) + "/compute-engine-skus.a3-h100.excerpt.json";
  GPUADVISOR_REQUIRE_FIXTURE(file);
  absl::StatusOr<std::string> text = ReadFile(file);
  ASSERT_OK(text);
  absl::StatusOr<ImportedOffers> imported =
      ImportGcpBillingSkus(*text, "skus.json", Families(), EmbeddedOffers().offers());
  ASSERT_OK(imported);
  ExpectConsistent(*imported);
  const ImportReport& r = imported->report;
  EXPECT_EQ(r.rows_read, 73);
  // 72 A3/A3Plus/H100 SKUs minus the 3-year commitments (18) price machines;
  // the Doha snapshot SKU is storage.
  EXPECT_EQ(r.rows_kept, 54) << r.Summary();
  EXPECT_EQ(r.rejected_by_reason.at("usage type Commit3Yr not imported"), 18);
  EXPECT_EQ(r.rejected_by_reason.at("not a GPU machine component (PDSnapshot)"), 1);

  const auto by_id = ById(imported->offers);
  ASSERT_FALSE(by_id.empty());
  // a3-highgpu-8g in us-central1 (Americas): 8 x H100 + 208 vCPU + 1872 GiB.
  const Offer& a3 = *by_id.at("gcp/a3-highgpu-8g/us-central1");
  const double ram_gib = 1872;
  EXPECT_NEAR(a3.on_demand_usd_per_hour(),
              8 * 9.796550569 + 208 * 0.025498003 + ram_gib * 0.002220340, 1e-6);
  EXPECT_NEAR(a3.spot_usd_per_hour(), 8 * 5.3881 + 208 * 0.01402 + ram_gib * 0.001221, 1e-6);
  EXPECT_NEAR(a3.reserved_usd_per_hour(),
              8 * 6.798808570 + 208 * 0.017732476 + ram_gib * 0.001544125, 1e-6);
  EXPECT_EQ(a3.gpu_model(), "H100-SXM");  // shape and topology from the catalog
  EXPECT_EQ(a3.gpus_per_node(), 8);
  EXPECT_FALSE(a3.has_scale_out());  // the loader applies topology.textproto
  EXPECT_THAT(a3.source(), HasSubstr("effective 2024-09-16"));
  // Netherlands prices differ; us-east4 (Virginia) has its own SKUs.
  EXPECT_NEAR(by_id.at("gcp/a3-highgpu-8g/europe-west4")->on_demand_usd_per_hour(),
              8 * 12.735516 + 208 * 0.0267729 + ram_gib * 0.002331357, 1e-6);
  ASSERT_TRUE(by_id.count("gcp/a3-highgpu-8g/us-east4"));
  // A3 Mega: "A3Plus" cores/RAM, GPUs spelled "Mega" (Virginia) or "Plus" (Americas).
  const Offer& mega_va = *by_id.at("gcp/a3-megagpu-8g/us-east4");
  const Offer& mega_us = *by_id.at("gcp/a3-megagpu-8g/us-central1");
  EXPECT_GT(mega_va.on_demand_usd_per_hour(), 8 * 10.34428);
  EXPECT_NEAR(mega_us.on_demand_usd_per_hour() - mega_va.on_demand_usd_per_hour(), 0, 1e-3);
  for (const Offer& o : imported->offers) {
    EXPECT_GT(o.on_demand_usd_per_hour(), o.spot_usd_per_hour()) << o.id();
    EXPECT_GT(o.on_demand_usd_per_hour(), o.reserved_usd_per_hour()) << o.id();
  }
}

TEST(GcpBillingImport, PageShapeForeignCurrencyAndA2) {
  const std::string file = std::string(kFixtures) + "/opencost-skus-page.json";
  GPUADVISOR_REQUIRE_FIXTURE(file);
  absl::StatusOr<std::string> text = ReadFile(file);
  ASSERT_OK(text);
  absl::StatusOr<ImportedOffers> imported =
      ImportGcpBillingSkus(*text, "page.json", Families(), EmbeddedOffers().offers());
  ASSERT_OK(imported);
  ExpectConsistent(*imported);
  EXPECT_EQ(imported->report.rows_read, 7);
  EXPECT_EQ(imported->report.rows_kept, 3);
  // The IDR-priced T2D/E2 SKUs are CPU/RAM of families no GPU machine uses.
  EXPECT_EQ(imported->report.rejected_by_reason.at("no machine family uses CPU SKU \"E2\""), 1);
  const auto by_id = ById(imported->offers);
  // a2-highgpu-1g: 1 x A100 + 12 vCPU + 85 GiB at the 2023 A2 prices.
  const Offer& a2 = *by_id.at("gcp/a2-highgpu-1g/us-central1");
  EXPECT_NEAR(a2.on_demand_usd_per_hour(),
              2.933908 + a2.vcpus() * 0.031611 + a2.ram_bytes() / 1073741824.0 * 0.004237, 1e-6);
  EXPECT_EQ(a2.spot_usd_per_hour(), 0);  // no Preemptible SKUs in this page
}

TEST(GcpBillingImport, ForeignCurrencyIsConverted) {
  const std::string skus = R"({"skus": [
    {"skuId": "G", "description": "Nvidia Tesla A100 GPU running in Americas",
     "category": {"resourceFamily": "Compute", "resourceGroup": "GPU", "usageType": "OnDemand"},
     "serviceRegions": ["us-central1"], "pricingInfo": [{"currencyConversionRate": 15000,
       "pricingExpression": {"usageUnit": "h", "tieredRates": [
         {"startUsageAmount": 0, "unitPrice": {"currencyCode": "IDR", "units": "0", "nanos": 0}},
         {"startUsageAmount": 1, "unitPrice": {"currencyCode": "IDR", "units": "30000", "nanos": 0}}]}}]},
    {"skuId": "C", "description": "A2 Instance Core running in Americas",
     "category": {"resourceFamily": "Compute", "resourceGroup": "CPU", "usageType": "OnDemand"},
     "serviceRegions": ["us-central1"], "pricingInfo": [{"pricingExpression": {"usageUnit": "h",
       "tieredRates": [{"unitPrice": {"currencyCode": "USD", "units": "0", "nanos": 100000000}}]}}]},
    {"skuId": "R", "description": "A2 Instance Ram running in Americas",
     "category": {"resourceFamily": "Compute", "resourceGroup": "RAM", "usageType": "OnDemand"},
     "serviceRegions": ["us-central1"], "pricingInfo": [{"pricingExpression": {"usageUnit": "GiBy.h",
       "tieredRates": [{"unitPrice": {"currencyCode": "USD", "units": "0", "nanos": 10000000}}]}}]},
    {"skuId": "M", "description": "A2 Instance Ram running in Americas",
     "category": {"resourceFamily": "Compute", "resourceGroup": "RAM", "usageType": "OnDemand"},
     "serviceRegions": ["us-west1"], "pricingInfo": [{"pricingExpression": {"usageUnit": "GiBy.mo",
       "tieredRates": [{"unitPrice": {"currencyCode": "USD", "units": "1", "nanos": 0}}]}}]}
  ], "nextPageToken": ""})";
  absl::StatusOr<ImportedOffers> imported =
      ImportGcpBillingSkus(skus, "t.json", Families(), EmbeddedOffers().offers());
  ASSERT_OK(imported);
  ExpectConsistent(*imported);
  // 30000 IDR at 15000 IDR/USD, from the first priced tier (the first is free).
  const auto by_id = ById(imported->offers);
  const Offer& a2 = *by_id.at("gcp/a2-highgpu-1g/us-central1");
  EXPECT_NEAR(a2.on_demand_usd_per_hour(), 2.0 + 12 * 0.1 + a2.ram_bytes() / 1073741824.0 * 0.01,
              1e-9);
  EXPECT_EQ(imported->report.rows_kept, 3);
  EXPECT_EQ(imported->report.rejected_by_reason.at("unit GiBy.mo for RAM"), 1);
  EXPECT_THAT(
      ImportGcpBillingSkus("{\"skus\": 1}", "t.json", Families(), EmbeddedOffers().offers()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("t.json: \"skus\" is not a list")));
}

}  // namespace
}  // namespace gpuadvisor::catalog
