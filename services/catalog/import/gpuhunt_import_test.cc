#include "services/catalog/import/gpuhunt_import.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/import/import_test_util.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kHeader[] =
    "instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size,"
    "gpu_vendor,flags,cpu_arch,provider_data\r\n";

// No published gpuhunt rows are available (fixtures/gpuhunt/SOURCE.md), so
// these rows are written the way storage.py writes them (csv.DictWriter:
// CRLF, minimal quoting, Python str(float)) with the real values of the other
// fixtures: AWS's p4d.24xlarge on-demand price (offer file 2024-05-28), the
// GCP a3-highgpu-8g price assembled from the 2024-09-16 SKUs, and Vast offer
// 13482712 (4x H100 SXM, Thailand) with its min_bid as the spot row.
TEST(GpuhuntImport, RowsBuiltFromTheOtherFixtures) {
  const std::string aws = std::string(kHeader) +
                          "p4d.24xlarge,us-east-1,32.7726,96,1236.950581248,8,A100,40.0,False,,"
                          "nvidia,,x86,{}\r\n"
                          "p4d.24xlarge,us-east-1,9.8318,96,1236.950581248,8,A100,40.0,True,,"
                          "nvidia,,x86,{}\r\n"
                          "m7i.large,us-east-1,0.1008,2,8.0,0,,,False,,,,x86,{}\r\n";
  absl::StatusOr<ImportedOffers> a = ImportGpuhuntCsv(aws, "aws", "aws.csv", TestGpuResolver());
  ASSERT_OK(a);
  ExpectConsistent(*a);
  EXPECT_EQ(a->report.rows_read, 3);
  EXPECT_EQ(a->report.rows_kept, 2);
  EXPECT_EQ(a->report.rejected_by_reason.at("no GPU"), 1);
  ASSERT_EQ(a->offers.size(), 1u);  // on-demand and spot rows are one offer
  const Offer& p4d = a->offers[0];
  EXPECT_EQ(p4d.id(), "aws/p4d.24xlarge/us-east-1");  // the same id the other importers give
  EXPECT_EQ(p4d.gpu_model(), "A100-40GB");            // "A100" + 40 GB per GPU
  EXPECT_DOUBLE_EQ(p4d.on_demand_usd_per_hour(), 32.7726);
  EXPECT_DOUBLE_EQ(p4d.spot_usd_per_hour(), 9.8318);
  EXPECT_EQ(p4d.ram_bytes(), 1236950581248);
  EXPECT_EQ(p4d.link(), v1::LINK_TYPE_NVLINK);

  // GCP rows are per zone: they become the region, lowest price kept.
  const std::string gcp = std::string(kHeader) +
                          "a3-highgpu-8g,us-central1-a,87.83283,208,2010.044694528,8,H100,80.0,"
                          "False,,nvidia,,x86,{}\r\n"
                          "a3-highgpu-8g,us-central1-c,87.83283,208,2010.044694528,8,H100,80.0,"
                          "False,,nvidia,,x86,{}\r\n"
                          "a3-highgpu-8g,us-central1-a,48.33637,208,2010.044694528,8,H100,80.0,"
                          "True,,nvidia,,x86,{}\r\n"
                          "v3-8,us-central1-a,8.0,96,340.0,8,tpu-v3,16.0,False,,google,,x86,{}\r\n";
  absl::StatusOr<ImportedOffers> g = ImportGpuhuntCsv(gcp, "gcp", "gcp.csv", TestGpuResolver());
  ASSERT_OK(g);
  ExpectConsistent(*g);
  const auto by_id = ById(g->offers);
  const Offer& a3 = *by_id.at("gcp/a3-highgpu-8g/us-central1");
  EXPECT_EQ(a3.gpu_model(), "H100-SXM");
  EXPECT_DOUBLE_EQ(a3.spot_usd_per_hour(), 48.33637);
  EXPECT_EQ(a3.spot_zones(), 0);  // one spot row: a price, no zone statistic
  EXPECT_EQ(g->report.rows_kept, 3);

  // Spot rows of three zones of one region: the median, not the cheapest.
  const std::string zones =
      std::string(kHeader) +
      "a3-highgpu-8g,us-central1-a,30.0,208,2010.0,8,H100,80.0,True,,nvidia,,x86,{}\r\n"
      "a3-highgpu-8g,us-central1-b,48.33637,208,2010.0,8,H100,80.0,True,,nvidia,,x86,{}\r\n"
      "a3-highgpu-8g,us-central1-c,60.0,208,2010.0,8,H100,80.0,True,,nvidia,,x86,{}\r\n";
  absl::StatusOr<ImportedOffers> z = ImportGpuhuntCsv(zones, "gcp", "gcp.csv", TestGpuResolver());
  ASSERT_OK(z);
  ASSERT_EQ(z->offers.size(), 1u);
  EXPECT_DOUBLE_EQ(z->offers[0].spot_usd_per_hour(), 48.33637);
  EXPECT_DOUBLE_EQ(z->offers[0].spot_min_usd_per_hour(), 30.0);
  EXPECT_DOUBLE_EQ(z->offers[0].spot_max_usd_per_hour(), 60.0);
  EXPECT_EQ(z->offers[0].spot_zones(), 3);
  EXPECT_EQ(g->report.rows_read, 4);  // the TPU row: not a GPU of the list

  // Vast: provider "vastai" becomes "vast"; provider_data is a quoted JSON cell.
  const std::string vast = std::string(kHeader) +
                           "13482712,th,8.53472,64,515.681,4,H100,80.0,False,3032.1,nvidia,,x86,"
                           "\"{\"\"min_bid\"\": 5.333333}\"\r\n"
                           "13482712,th,5.33472,64,515.681,4,H100,80.0,True,3032.1,nvidia,,x86,"
                           "\"{\"\"min_bid\"\": 5.333333}\"\r\n";
  absl::StatusOr<ImportedOffers> v =
      ImportGpuhuntCsv(vast, "vastai", "vastai.csv", TestGpuResolver());
  ASSERT_OK(v);
  ExpectConsistent(*v);
  ASSERT_EQ(v->offers.size(), 1u);
  EXPECT_EQ(v->offers[0].provider(), "vast");
  EXPECT_EQ(v->offers[0].local_disk_bytes(), 3032100000000);
  EXPECT_EQ(v->offers[0].gpus_per_node(), 4);
  EXPECT_EQ(v->offers[0].host_tier(), v1::HOST_TIER_COMMUNITY);  // no hosting type in gpuhunt

  // RunPod: Secure Cloud by datacenter id, Community Cloud by country code.
  const std::string runpod = std::string(kHeader) +
                             "NVIDIA A100 80GB PCIe,EU-RO-1,1.64,8,117,1,A100,80.0,False,,nvidia,,"
                             "x86,\r\n"
                             "NVIDIA A100 80GB PCIe,CA,1.19,8,117,1,A100,80.0,False,,nvidia,,"
                             "x86,\r\n";
  absl::StatusOr<ImportedOffers> pod =
      ImportGpuhuntCsv(runpod, "runpod", "runpod.csv", TestGpuResolver());
  ASSERT_OK(pod);
  ASSERT_EQ(pod->offers.size(), 2u);
  for (const v1::Offer& o : pod->offers) {
    EXPECT_EQ(o.host_tier(),
              o.region() == "CA" ? v1::HOST_TIER_COMMUNITY : v1::HOST_TIER_DATACENTER)
        << o.id();
  }
}

TEST(GpuhuntImport, HistoricalColumnsAndBadRows) {
  // A historical catalog: the last four columns missing, LF line ends.
  const std::string csv =
      "instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size\n"
      "gpu_8x_a100,europe-central-1,15.92,124,1800.0,8,A100,40.0,FALSE,\n"
      "gpu_1x_h100_pcie,us-east-1,2.49,26,200.0,1,H100,80.0,false,\n"
      ",us-east-1,1.0,1,1,1,L4,24.0,False,\n"
      "x,us-east-1,abc,1,1,1,L4,24.0,False,\n"
      "y,us-east-1,1.0,1,1,0.5,L4,24.0,False,\n"
      "z,us-east-1,1.0,1,1,1,Fancy9000,24.0,False,\n"
      "w,us-east-1,1.0,1,1,1,L4,24.0,maybe,\n"
      "u,us-east-1,0.0,1,1,1,L4,24.0,False,\n";
  absl::StatusOr<ImportedOffers> imported =
      ImportGpuhuntCsv(csv, "lambdalabs", "lambdalabs.csv", TestGpuResolver());
  ASSERT_OK(imported);
  ExpectConsistent(*imported);
  EXPECT_EQ(imported->report.rows_read, 8);
  EXPECT_EQ(imported->report.rows_kept, 2);
  EXPECT_THAT(imported->report.rejected_by_reason,
              ::testing::UnorderedElementsAre(
                  ::testing::Pair("required cell empty", 1), ::testing::Pair("not a number", 1),
                  ::testing::Pair("fractional GPU count", 1),
                  ::testing::Pair("unknown GPU \"Fancy9000\"", 1),
                  ::testing::Pair("spot not True/False", 1), ::testing::Pair("no price", 1)));
  const auto by_id = ById(imported->offers);
  EXPECT_EQ(by_id.at("lambda/gpu_8x_a100/europe-central-1")->gpu_model(), "A100-40GB");
  EXPECT_EQ(by_id.at("lambda/gpu_1x_h100_pcie/us-east-1")->gpu_model(), "H100-PCIE");

  EXPECT_THAT(ImportGpuhuntCsv("instance_name,price\n", "aws", "a.csv", TestGpuResolver()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("a.csv:1: missing column \"location\"")));
  EXPECT_EQ(ProviderFromGpuhunt("LambdaLabs"), "lambda");
  EXPECT_EQ(ProviderFromGpuhunt("vastai"), "vast");
  EXPECT_EQ(ProviderFromGpuhunt("gcp"), "gcp");
}

}  // namespace
}  // namespace gpuadvisor::catalog
