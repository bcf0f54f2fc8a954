#include "common/io/deterministic.h"

#include "common/io/units.h"
#include "gpuadvisor/catalog/v1/catalog.pb.h"
#include "gtest/gtest.h"

namespace gpuadvisor {
namespace {

TEST(DeterministicBytes, EqualMessagesGiveEqualBytesAfterAPrefix) {
  catalog::v1::Offer a;
  a.set_id("aws/p5.48xlarge/us-east-1");
  a.set_gpus_per_node(8);
  a.set_on_demand_usd_per_hour(55.04);
  catalog::v1::Offer b;  // the same fields, set in another order
  b.set_on_demand_usd_per_hour(55.04);
  b.set_gpus_per_node(8);
  b.set_id("aws/p5.48xlarge/us-east-1");
  EXPECT_EQ(DeterministicBytes(a), DeterministicBytes(b));
  EXPECT_EQ(DeterministicBytes(a), a.SerializeAsString());
  std::string key = "v1:";
  AppendDeterministicBytes(a, &key);
  EXPECT_EQ(key, "v1:" + a.SerializeAsString());
  b.set_gpus_per_node(4);
  EXPECT_NE(DeterministicBytes(a), DeterministicBytes(b));
  EXPECT_EQ(DeterministicBytes(catalog::v1::Offer()), "");
}

TEST(Units, GigabytesAndTheMarginDefault) {
  EXPECT_EQ(FormatGb(80e9), "80.0 GB");
  EXPECT_EQ(FormatGb(1.5e9, 2), "1.50 GB");
  EXPECT_EQ(FormatGb(0), "0.0 GB");
  EXPECT_DOUBLE_EQ(kDefaultVramMargin, 0.1);
}

}  // namespace
}  // namespace gpuadvisor
