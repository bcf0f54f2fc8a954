#include "services/cli/offers_view.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuadvisor::cli {
namespace {

using catalog::v1::Offer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Offer Make(const std::string& provider, const std::string& gpu, int gpus, double on_demand,
           double spot, int vcpus = 8, double ram_gb = 64) {
  Offer o;
  o.set_provider(provider);
  o.set_instance_type(provider + "-" + gpu + "-" + std::to_string(gpus));
  o.set_region("r1");
  o.set_gpu_model(gpu);
  o.set_gpus_per_node(gpus);
  o.set_nodes(1);
  o.set_on_demand_usd_per_hour(on_demand);
  o.set_spot_usd_per_hour(spot);
  o.set_vcpus(vcpus);
  o.set_ram_bytes(static_cast<int64_t>(ram_gb * 1e9));
  return o;
}

std::vector<std::string> Instances(const std::vector<Offer>& offers) {
  std::vector<std::string> out;
  for (const Offer& o : offers) out.push_back(o.instance_type());
  return out;
}

const GpuMemory kMemory = {{"H100", 80'000'000'000}, {"A10", 24'000'000'000}};

std::vector<Offer> Sample() {
  return {Make("aws", "H100", 8, 98.0, 30.0, 192, 2048), Make("lambda", "H100", 1, 2.99, 0),
          Make("vast", "A10", 1, 0, 0.2, 4, 16), Make("gcp", "A10", 2, 1.5, 0.6)};
}

TEST(OffersView, SortsByThePriceOfThePurchaseOptionAskedForUnsoldLast) {
  std::vector<Offer> offers = Sample();
  ASSERT_TRUE(SortOffers("price", catalog::v1::PURCHASE_OPTION_SPOT, kMemory, &offers).ok());
  EXPECT_THAT(Instances(offers),
              ElementsAre("vast-A10-1", "gcp-A10-2", "aws-H100-8", "lambda-H100-1"));
  ASSERT_TRUE(SortOffers("price", catalog::v1::PURCHASE_OPTION_ON_DEMAND, kMemory, &offers).ok());
  EXPECT_THAT(Instances(offers),
              ElementsAre("gcp-A10-2", "lambda-H100-1", "aws-H100-8", "vast-A10-1"));
}

TEST(OffersView, SortsByPricePerGpuAndSizes) {
  std::vector<Offer> offers = Sample();
  ASSERT_TRUE(
      SortOffers("price_per_gpu", catalog::v1::PURCHASE_OPTION_ON_DEMAND, kMemory, &offers).ok());
  // 0.75, 2.99, 12.25 per GPU-hour; vast has no on-demand price.
  EXPECT_THAT(Instances(offers),
              ElementsAre("gcp-A10-2", "lambda-H100-1", "aws-H100-8", "vast-A10-1"));
  ASSERT_TRUE(SortOffers("vram", {}, kMemory, &offers).ok());
  EXPECT_EQ(offers[0].gpu_model(), "H100");
  EXPECT_EQ(offers[3].gpu_model(), "A10");
  ASSERT_TRUE(SortOffers("vcpus", {}, kMemory, &offers).ok());
  EXPECT_EQ(offers.front().instance_type(), "aws-H100-8");
  EXPECT_EQ(offers.back().instance_type(), "vast-A10-1");
  ASSERT_TRUE(SortOffers("provider", {}, kMemory, &offers).ok());
  EXPECT_THAT(Instances(offers),
              ElementsAre("aws-H100-8", "gcp-A10-2", "lambda-H100-1", "vast-A10-1"));
}

TEST(OffersView, UnknownSortKeyNamesTheFlagAndTheKeys) {
  std::vector<Offer> offers = Sample();
  const absl::Status s = SortOffers("cost", {}, kMemory, &offers);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--sort: unknown key \"cost\"; one of price,"));
}

TEST(OffersView, RowsShowPerGpuPriceVcpusAndRam) {
  const auto rows = OfferRows(Sample(), catalog::v1::PURCHASE_OPTION_SPOT, kMemory);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_THAT(rows[0], ElementsAre("PROVIDER", "INSTANCE", "REGION", "GPUS", "VRAM", "VCPUS", "RAM",
                                   "LINK", "FABRIC", "MAX NODES", "ON-DEMAND", "SPOT",
                                   "USD/GPU-H spot", "PRICED", "FLAG"));
  EXPECT_THAT(rows[1], ElementsAre("aws", "aws-H100-8", "r1", "8x H100", "80 GB", "192", "2048 GB",
                                   "-", "-", "0", "98.00", "30.00", "3.75", "-", ""));
  EXPECT_EQ(rows[2][12], "-");  // lambda sells no spot
}

// A flagged price is marked "!" and FLAG says why; PRICED names the source
// and date the catalog gives.
TEST(OffersView, FlaggedPricesAreMarkedWithTheirReason) {
  std::vector<Offer> offers = Sample();
  offers[0].set_price_source("C-AWS");
  offers[0].set_as_of("2026-11-29");
  catalog::v1::PriceFlag* flag = offers[0].add_price_flags();
  flag->set_purchase_option(catalog::v1::PURCHASE_OPTION_SPOT);
  flag->set_listed_usd_per_hour(30.0);
  flag->set_reason("spot price 69% below on-demand: likely stale");
  const auto rows = OfferRows(offers, catalog::v1::PURCHASE_OPTION_SPOT, kMemory);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1][10], "98.00");
  EXPECT_EQ(rows[1][11], "30.00!");
  EXPECT_EQ(rows[1][13], "C-AWS 2026-11-29");
  EXPECT_EQ(rows[1][14], "spot price 69% below on-demand: likely stale");
  EXPECT_EQ(rows[2][14], "");
}

// A spot price from another source than the on-demand price: PRICED names
// both dates.
TEST(OffersView, ASpotPriceWithItsOwnDateIsNamed) {
  std::vector<Offer> offers = Sample();
  offers[0].set_price_source("C-GCP");
  offers[0].set_as_of("2026-11-29");
  offers[0].set_spot_price_source("C-GCPB");
  offers[0].set_spot_as_of("2024-09-16");
  const auto rows = OfferRows(offers, catalog::v1::PURCHASE_OPTION_SPOT, kMemory);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1][13], "C-GCP 2026-11-29; spot C-GCPB 2024-09-16");
  EXPECT_EQ(rows[2][13], "-");
}

TEST(OffersView, GroupsByGpuLikeSkyShowGpus) {
  const auto rows = GpuGroupRows(Sample(), catalog::v1::PURCHASE_OPTION_UNSPECIFIED, kMemory);
  ASSERT_EQ(rows.size(), 3u);
  // A10 first: its lowest price per GPU-hour (0.75 on-demand at gcp) is below H100's.
  EXPECT_THAT(rows[1], ElementsAre("A10", "24 GB", "1, 2", "gcp,vast", "2", "0.75", "gcp/gcp-A10-2",
                                   "0.20", "vast/vast-A10-1"));
  EXPECT_THAT(rows[2], ElementsAre("H100", "80 GB", "1, 8", "aws,lambda", "2", "2.99",
                                   "lambda/lambda-H100-1", "3.75", "aws/aws-H100-8"));
}

}  // namespace
}  // namespace gpuadvisor::cli
