// Topology rules: matching order, derivation of bandwidths from the GPU,
// legacy-field consistency, the fallback when no rule matches, and errors
// with file:line. Uses the real data/catalog files where it reads one.

#include "services/catalog/topology.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/catalog/gpu_name_resolver.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::Gpu;
using ::gpuadvisor::catalog::v1::GpuList;
using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::catalog::v1::TopologyRules;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

const GpuList& RealGpus() {
  static const GpuList& gpus = *[] {
    auto* list = new GpuList();
    absl::Status s = LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/catalog/gpus.textproto", list);
    if (!s.ok()) std::abort();
    return list;
  }();
  return gpus;
}

const Gpu& GpuNamed(const std::string& name) {
  for (const Gpu& g : RealGpus().gpus()) {
    if (g.name() == name) return g;
  }
  std::abort();
}

Offer MakeOffer(const std::string& provider, const std::string& type, const std::string& gpu,
                int gpus) {
  Offer o;
  o.set_id(absl::StrCat(provider, "/", type, "/r"));
  o.set_provider(provider);
  o.set_instance_type(type);
  o.set_region("r");
  o.set_gpu_model(gpu);
  o.set_gpus_per_node(gpus);
  o.set_nodes(1);
  o.set_max_nodes(1);
  o.set_on_demand_usd_per_hour(1);
  return o;
}

TopologyRules Rules(const std::string& text) {
  TopologyRules rules;
  if (!google::protobuf::TextFormat::ParseFromString(text, &rules)) std::abort();
  return rules;
}

TEST(Topology, FirstMatchingRuleWinsPerField) {
  const TopologyRules rules = Rules(R"pb(
    rules {
      provider: "x"
      instance_type: "big"
      scale_out { type: FABRIC_TYPE_INFINIBAND gbps_per_node: 3200 max_nodes: 16 }
      source: "a"
    }
    rules {
      provider: "x"
      scale_up { kind: SCALE_UP_KIND_PCIE_P2P }
      source: "b"
    }
    rules {
      gpu_model: "H100-SXM"
      scale_up { kind: SCALE_UP_KIND_NVSWITCH }
      source: "c"
    }
    rules {
      scale_out { type: FABRIC_TYPE_NONE max_nodes: 1 }
      source: "d"
    }
  )pb");
  Offer big = MakeOffer("X", "big", "H100-SXM", 8);  // provider ignores case
  ApplyTopology(rules, GpuNamed("H100-SXM"), big);
  EXPECT_EQ(big.scale_up().kind(), v1::SCALE_UP_KIND_PCIE_P2P);  // rule b, before c
  EXPECT_EQ(big.scale_up().source(), "b");
  EXPECT_EQ(big.scale_out().type(), v1::FABRIC_TYPE_INFINIBAND);
  EXPECT_EQ(big.scale_out().source(), "a");
  EXPECT_EQ(big.max_nodes(), 16);
  EXPECT_EQ(big.fabric_gbps(), 3200);

  Offer other = MakeOffer("y", "small", "H100-SXM", 8);
  ApplyTopology(rules, GpuNamed("H100-SXM"), other);
  EXPECT_EQ(other.scale_up().kind(), v1::SCALE_UP_KIND_NVSWITCH);
  EXPECT_EQ(other.scale_out().type(), v1::FABRIC_TYPE_NONE);
  EXPECT_EQ(other.max_nodes(), 1);
}

TEST(Topology, BandwidthsDerivedFromTheGpuOneWay) {
  const TopologyRules rules = Rules(R"pb(
    rules {
      gpu_model: "H100-SXM"
      scale_up { kind: SCALE_UP_KIND_NVSWITCH }
      source: "s"
    }
    rules {
      gpu_model: "H100-PCIE"
      scale_up { kind: SCALE_UP_KIND_NVLINK_BRIDGE_PAIRS domain_size: 2 }
      source: "s"
    }
    rules {
      gpu_model: "L40S"
      scale_up { kind: SCALE_UP_KIND_PCIE_P2P }
      source: "s"
    }
  )pb");
  Offer sxm = MakeOffer("p", "a", "H100-SXM", 8);
  ApplyTopology(rules, GpuNamed("H100-SXM"), sxm);
  EXPECT_EQ(sxm.scale_up().domain_size(), 8);  // 0 = the whole node
  EXPECT_EQ(sxm.scale_up().bytes_per_second_per_gpu(), 450e9);
  EXPECT_EQ(sxm.scale_up().cross_domain_bytes_per_second_per_gpu(), 0);  // one domain
  EXPECT_EQ(sxm.link(), v1::LINK_TYPE_NVLINK);
  EXPECT_EQ(sxm.link_bytes_per_second(), 900e9);  // legacy: bidirectional

  Offer pairs = MakeOffer("p", "b", "H100-PCIE", 8);
  ApplyTopology(rules, GpuNamed("H100-PCIE"), pairs);
  EXPECT_EQ(pairs.scale_up().domain_size(), 2);
  EXPECT_EQ(pairs.scale_up().bytes_per_second_per_gpu(), 300e9);              // 600 GB/s bridge / 2
  EXPECT_EQ(pairs.scale_up().cross_domain_bytes_per_second_per_gpu(), 64e9);  // Gen5 128 / 2
  EXPECT_EQ(pairs.link(), v1::LINK_TYPE_NVLINK);

  Offer pcie = MakeOffer("p", "c", "L40S", 4);
  ApplyTopology(rules, GpuNamed("L40S"), pcie);
  EXPECT_EQ(pcie.scale_up().bytes_per_second_per_gpu(), 32e9);  // Gen4 64 / 2
  EXPECT_EQ(pcie.link(), v1::LINK_TYPE_PCIE);
}

TEST(Topology, HostLinkFromRuleOrTheGpusOwnPcieAndNetworkOnlyFromRules) {
  const TopologyRules rules = Rules(R"pb(
    rules {
      gpu_model: "GH200"
      host_link { kind: HOST_LINK_KIND_NVLINK_C2C bytes_per_second_per_gpu: 450e9 }
      source: "c2c"
    }
    rules {
      provider: "x"
      host_link { kind: HOST_LINK_KIND_PCIE pcie_generation: 4 }
      source: "gen4 slot"
    }
    rules {
      provider: "x"
      instance_type: "big"
      network { gbps: 400 }
      source: "net"
    }
    rules {
      scale_up { kind: SCALE_UP_KIND_NVSWITCH }
      source: "any"
    }
  )pb");
  // No host-link rule: the card's own x16 link from gpus.textproto, one way.
  Offer h100 = MakeOffer("y", "t", "H100-SXM", 8);
  ApplyTopology(rules, GpuNamed("H100-SXM"), h100);
  EXPECT_EQ(h100.host_link().kind(), v1::HOST_LINK_KIND_PCIE);
  EXPECT_EQ(h100.host_link().pcie_generation(), 5);
  EXPECT_EQ(h100.host_link().lanes(), 16);
  EXPECT_EQ(h100.host_link().bytes_per_second_per_gpu(), 64e9);
  EXPECT_THAT(h100.host_link().source(), HasSubstr("gpus.textproto"));
  EXPECT_FALSE(h100.has_network());  // not published: unset
  Offer t4 = MakeOffer("y", "t", "T4", 1);
  ApplyTopology(rules, GpuNamed("T4"), t4);
  EXPECT_EQ(t4.host_link().pcie_generation(), 3);
  EXPECT_EQ(t4.host_link().bytes_per_second_per_gpu(), 16e9);
  // A rule with a generation and no rate: 16 lanes of Gen4, 32e9 one way,
  // even for a Gen5 card (the host slot decides).
  Offer big = MakeOffer("x", "big", "H100-PCIE", 2);
  ApplyTopology(rules, GpuNamed("H100-PCIE"), big);
  EXPECT_EQ(big.host_link().pcie_generation(), 4);
  EXPECT_EQ(big.host_link().lanes(), 16);
  EXPECT_EQ(big.host_link().bytes_per_second_per_gpu(), 32e9);
  EXPECT_EQ(big.host_link().source(), "gen4 slot");
  EXPECT_EQ(big.network().gbps(), 400);
  EXPECT_EQ(big.network().source(), "net");
  // Grace Hopper: NVLink-C2C, no PCIe generation.
  Offer gh = MakeOffer("y", "t", "GH200", 1);
  ApplyTopology(rules, GpuNamed("GH200"), gh);
  EXPECT_EQ(gh.host_link().kind(), v1::HOST_LINK_KIND_NVLINK_C2C);
  EXPECT_EQ(gh.host_link().bytes_per_second_per_gpu(), 450e9);
  EXPECT_EQ(gh.host_link().pcie_generation(), 0);
  // A GPU without a PCIe figure (TPU chips) gets no host link.
  Offer tpu = MakeOffer("gcp", "v6e-8", "TPU-V6E", 8);
  ApplyTopology(rules, GpuNamed("TPU-V6E"), tpu);
  EXPECT_FALSE(tpu.has_host_link());
  // An offer's own host link and network are kept.
  Offer own = MakeOffer("x", "big", "H100-PCIE", 2);
  own.mutable_host_link()->set_kind(v1::HOST_LINK_KIND_PCIE);
  own.mutable_host_link()->set_bytes_per_second_per_gpu(8e9);
  own.mutable_network()->set_gbps(25);
  ApplyTopology(rules, GpuNamed("H100-PCIE"), own);
  EXPECT_EQ(own.host_link().bytes_per_second_per_gpu(), 8e9);
  EXPECT_EQ(own.network().gbps(), 25);
}

TEST(Topology, OffersKeepTheirOwnTopology) {
  const TopologyRules rules = Rules(R"pb(
    rules {
      scale_up { kind: SCALE_UP_KIND_PCIE_NO_P2P }
      scale_out { type: FABRIC_TYPE_NONE max_nodes: 1 }
      source: "s"
    }
  )pb");
  Offer o = MakeOffer("p", "a", "H100-SXM", 8);
  o.mutable_scale_up()->set_kind(v1::SCALE_UP_KIND_NVSWITCH);
  o.mutable_scale_up()->set_bytes_per_second_per_gpu(400e9);
  o.mutable_scale_out()->set_type(v1::FABRIC_TYPE_ROCE);
  o.mutable_scale_out()->set_gbps_per_node(800);
  o.mutable_scale_out()->set_max_nodes(4);
  ApplyTopology(rules, GpuNamed("H100-SXM"), o);
  EXPECT_EQ(o.scale_up().kind(), v1::SCALE_UP_KIND_NVSWITCH);
  EXPECT_EQ(o.scale_up().bytes_per_second_per_gpu(), 400e9);
  EXPECT_EQ(o.link_bytes_per_second(), 800e9);
  EXPECT_EQ(o.fabric(), v1::FABRIC_TYPE_ROCE);
  EXPECT_EQ(o.fabric_gbps(), 800);
  EXPECT_EQ(o.max_nodes(), 4);
}

TEST(Topology, WithoutARuleTheLegacyFieldsAreReadCautiously) {
  const TopologyRules none;
  Offer nvlink = MakeOffer("p", "a", "H100-SXM", 8);
  nvlink.set_link(v1::LINK_TYPE_NVLINK);
  nvlink.set_fabric(v1::FABRIC_TYPE_INFINIBAND);
  nvlink.set_fabric_gbps(1600);
  nvlink.set_max_nodes(8);
  ApplyTopology(none, GpuNamed("H100-SXM"), nvlink);
  EXPECT_EQ(nvlink.scale_up().kind(), v1::SCALE_UP_KIND_NVSWITCH);
  EXPECT_EQ(nvlink.scale_up().bytes_per_second_per_gpu(), 450e9);
  EXPECT_EQ(nvlink.scale_out().type(), v1::FABRIC_TYPE_INFINIBAND);
  EXPECT_EQ(nvlink.scale_out().gbps_per_node(), 1600);
  EXPECT_EQ(nvlink.max_nodes(), 8);
  EXPECT_THAT(nvlink.scale_up().source(), HasSubstr("no topology rule"));

  Offer pcie = MakeOffer("p", "b", "RTX-4090", 4);
  pcie.set_link(v1::LINK_TYPE_PCIE);
  ApplyTopology(none, GpuNamed("RTX-4090"), pcie);
  EXPECT_EQ(pcie.scale_up().kind(), v1::SCALE_UP_KIND_PCIE_NO_P2P);

  Offer one = MakeOffer("p", "c", "L4", 1);
  ApplyTopology(none, GpuNamed("L4"), one);
  EXPECT_EQ(one.scale_up().kind(), v1::SCALE_UP_KIND_NONE);
  EXPECT_EQ(one.scale_out().type(), v1::FABRIC_TYPE_NONE);
  EXPECT_EQ(one.link(), v1::LINK_TYPE_NONE);
  EXPECT_EQ(one.link_bytes_per_second(), 0);
}

TEST(Topology, TheRealRulesFileLoads) {
  const GpuNameResolver resolver(RealGpus());
  absl::StatusOr<TopologyRules> rules =
      LoadTopologyRules(GPUADVISOR_SOURCE_DIR "/data/catalog/topology.textproto", resolver);
  ASSERT_OK(rules);
  ASSERT_GT(rules->rules_size(), 40);
  for (const auto& rule : rules->rules()) EXPECT_FALSE(rule.source().empty());
  // A Hyperstack NVLink box is bridge pairs, a plain one PCIe.
  Offer bridged = MakeOffer("hyperstack", "n3-A100x8-NVLink", "A100-80GB-PCIE", 8);
  ApplyTopology(*rules, GpuNamed("A100-80GB-PCIE"), bridged);
  EXPECT_EQ(bridged.scale_up().kind(), v1::SCALE_UP_KIND_NVLINK_BRIDGE_PAIRS);
  EXPECT_EQ(bridged.scale_up().domain_size(), 2);
  Offer plain = MakeOffer("hyperstack", "n3-A100x8", "A100-80GB-PCIE", 8);
  ApplyTopology(*rules, GpuNamed("A100-80GB-PCIE"), plain);
  EXPECT_EQ(plain.scale_up().kind(), v1::SCALE_UP_KIND_PCIE_P2P);
  // Empty path: no rules, no error.
  absl::StatusOr<TopologyRules> empty = LoadTopologyRules("", resolver);
  ASSERT_OK(empty);
  EXPECT_EQ(empty->rules_size(), 0);
}

TEST(Topology, BadRulesNameFileAndLine) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/topology_bad.textproto");
  const GpuNameResolver resolver(RealGpus());
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"rules { gpu_model: \"H100-SXM\" source: \"s\" }\n",
       ":1:1: rules[0].scale_up: a rule must set scale_up, scale_out, host_link or network"},
      {"rules { host_link { kind: HOST_LINK_KIND_PCIE pcie_generation: 9 } source: \"s\" }\n",
       "rules[0].host_link.pcie_generation: must be 0 (not recorded) or 1..7, got 9"},
      {"rules { host_link { kind: HOST_LINK_KIND_NVLINK_C2C pcie_generation: 5 } source: \"s\" }\n",
       "rules[0].host_link.pcie_generation: only with HOST_LINK_KIND_PCIE"},
      {"rules { network { gbps: -5 } source: \"s\" }\n",
       "rules[0].network.gbps: must be finite and >= 0"},
      {"rules {\n  gpu_model: \"X9000\"\n  scale_up { kind: SCALE_UP_KIND_NVSWITCH }\n  source: "
       "\"s\"\n}\n",
       ":2:3: rules[0].gpu_model: unknown GPU \"X9000\""},
      {"rules { scale_up { kind: SCALE_UP_KIND_NVSWITCH } source: \"s\" }\n"
       "rules {\n  scale_out { type: FABRIC_TYPE_NONE max_nodes: 4 }\n  source: \"s\"\n}\n",
       ":3:3: rules[1].scale_out.max_nodes: must be 1 with FABRIC_TYPE_NONE"},
      {"rules { scale_up { bytes_per_second_per_gpu: -1 } source: \"s\" }\n",
       "rules[0].scale_up.bytes_per_second_per_gpu: must be finite and >= 0"},
      {"rules { scale_up { kind: SCALE_UP_KIND_NVSWITCH } }\n", "rules[0].source: must name"},
      {"rules { scale_up { kind: NOPE } source: \"s\" }\n",
       "Unknown enumeration value of \"NOPE\""},
  };
  for (const Case& c : cases) {
    {
      std::ofstream out(path, std::ios::trunc);
      out << c.text;
    }
    absl::StatusOr<TopologyRules> rules = LoadTopologyRules(path, resolver);
    EXPECT_THAT(rules, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)))
        << c.text << rules.status();
    EXPECT_THAT(rules.status().message(), HasSubstr(path)) << c.text;
  }
  EXPECT_THAT(LoadTopologyRules(path + ".missing", resolver),
              StatusIs(absl::StatusCode::kNotFound));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace gpuadvisor::catalog
