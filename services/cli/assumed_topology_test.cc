#include "services/cli/assumed_topology.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuadvisor::cli {
namespace {

using catalog::v1::Offer;
using ::testing::HasSubstr;

Offer MakeOffer(const std::string& id, int gpus, catalog::v1::LinkType link,
                catalog::v1::ScaleUpKind kind, double host_link = 0) {
  Offer o;
  o.set_id(id);
  o.set_gpu_model("A100-80GB-PCIE");
  o.set_gpus_per_node(gpus);
  o.set_link(link);
  o.mutable_scale_up()->set_kind(kind);
  o.mutable_scale_up()->set_source("rule " + id);  // sources differ, the hardware does not
  if (kind == catalog::v1::SCALE_UP_KIND_NVLINK_BRIDGE_PAIRS)
    o.mutable_scale_up()->set_domain_size(2);
  if (host_link > 0) o.mutable_host_link()->set_bytes_per_second_per_gpu(host_link);
  return o;
}

sizing::v1::GpuConfiguration Config(int gpus) {
  sizing::v1::GpuConfiguration c;
  c.set_gpu_model("A100-80GB-PCIE");
  c.set_gpus_per_node(gpus);
  c.set_nodes(1);
  return c;
}

// A PCIe card is sized as PCIe, as recommend sizes its offers: not NVLink.
TEST(AssumeTopology, TakesTheTopologyMostOffersOfThatShapeHave) {
  const std::vector<Offer> offers = {
      MakeOffer("a/2x", 2, catalog::v1::LINK_TYPE_PCIE, catalog::v1::SCALE_UP_KIND_PCIE_P2P, 32e9),
      MakeOffer("b/2x", 2, catalog::v1::LINK_TYPE_NVLINK,
                catalog::v1::SCALE_UP_KIND_NVLINK_BRIDGE_PAIRS, 32e9),
      MakeOffer("c/2x", 2, catalog::v1::LINK_TYPE_PCIE, catalog::v1::SCALE_UP_KIND_PCIE_P2P, 32e9),
      MakeOffer("d/8x", 8, catalog::v1::LINK_TYPE_NVLINK,
                catalog::v1::SCALE_UP_KIND_NVLINK_BRIDGE_PAIRS, 32e9),
      MakeOffer("e/8x", 8, catalog::v1::LINK_TYPE_NVLINK,
                catalog::v1::SCALE_UP_KIND_NVLINK_BRIDGE_PAIRS, 32e9),
  };
  sizing::v1::GpuConfiguration config = Config(2);
  const AssumedTopology t = AssumeTopology(offers, &config);
  EXPECT_TRUE(t.assumed);
  EXPECT_EQ(config.link(), catalog::v1::LINK_TYPE_PCIE);
  EXPECT_EQ(config.scale_up().kind(), catalog::v1::SCALE_UP_KIND_PCIE_P2P);
  EXPECT_EQ(config.scale_up().source(), "");
  EXPECT_EQ(config.host_link_bytes_per_second(), 32e9);
  EXPECT_EQ(t.link_flag, "--link=pcie");
  EXPECT_THAT(t.reason, HasSubstr("scale-up pcie-p2p"));
  EXPECT_THAT(t.reason,
              HasSubstr("as 2 of 3 catalog offers of 2x A100-80GB-PCIE; the others differ"));
  EXPECT_THAT(t.reason, HasSubstr("--link=... to choose"));
}

TEST(AssumeTopology, OtherMultiGpuShapesWhenNoneHasThatCount) {
  const std::vector<Offer> offers = {
      MakeOffer("a/1x", 1, catalog::v1::LINK_TYPE_NONE, catalog::v1::SCALE_UP_KIND_NONE),
      MakeOffer("d/8x", 8, catalog::v1::LINK_TYPE_PCIE, catalog::v1::SCALE_UP_KIND_PCIE_P2P),
  };
  sizing::v1::GpuConfiguration config = Config(4);
  const AssumedTopology t = AssumeTopology(offers, &config);
  EXPECT_EQ(config.link(), catalog::v1::LINK_TYPE_PCIE);
  EXPECT_EQ(config.scale_up().kind(), catalog::v1::SCALE_UP_KIND_PCIE_P2P);
  EXPECT_FALSE(config.has_host_link_bytes_per_second());
  EXPECT_THAT(
      t.reason,
      HasSubstr("as 1 of 1 catalog offers of A100-80GB-PCIE with several GPUs (none has 4)"));
}

TEST(AssumeTopology, NoOffersMeansPcieForSeveralGpusAndNothingForOne) {
  sizing::v1::GpuConfiguration config = Config(2);
  AssumedTopology t = AssumeTopology({}, &config);
  EXPECT_TRUE(t.assumed);
  EXPECT_EQ(config.link(), catalog::v1::LINK_TYPE_PCIE);
  EXPECT_THAT(t.reason, HasSubstr("no catalog offer has A100-80GB-PCIE"));

  config = Config(1);
  t = AssumeTopology({}, &config);
  EXPECT_FALSE(t.assumed);
  EXPECT_EQ(config.link(), catalog::v1::LINK_TYPE_UNSPECIFIED);
}

TEST(AssumeTopology, WhatTheUserGaveIsKept) {
  const std::vector<Offer> offers = {
      MakeOffer("a/2x", 2, catalog::v1::LINK_TYPE_PCIE, catalog::v1::SCALE_UP_KIND_PCIE_P2P)};
  sizing::v1::GpuConfiguration config = Config(2);
  config.set_link(catalog::v1::LINK_TYPE_NVLINK);
  EXPECT_FALSE(AssumeTopology(offers, &config).assumed);
  EXPECT_EQ(config.link(), catalog::v1::LINK_TYPE_NVLINK);
  EXPECT_FALSE(config.has_scale_up());

  config = Config(2);
  config.mutable_scale_up()->set_kind(catalog::v1::SCALE_UP_KIND_NVSWITCH);
  EXPECT_FALSE(AssumeTopology(offers, &config).assumed);
  EXPECT_EQ(config.scale_up().kind(), catalog::v1::SCALE_UP_KIND_NVSWITCH);
}

}  // namespace
}  // namespace gpuadvisor::cli
