#include "services/catalog/skypilot_import.h"

#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/catalog/import/spot_statistics.h"
#include "services/catalog/topology.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::GpuList;
using ::gpuadvisor::catalog::v1::Offer;
using ::gpuadvisor::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr char kExcerpts[] = GPUADVISOR_SOURCE_DIR "/tests/data/skypilot";
constexpr char kFixtures[] = GPUADVISOR_SOURCE_DIR "/tests/data/skypilot-catalog/catalogs/v8";
constexpr double kMiB = 1024.0 * 1024.0;

// The real GPU list: the importer's job is to map real names onto it.
const GpuNameResolver& Resolver() {
  static const GpuNameResolver* resolver = [] {
    GpuList gpus;
    const absl::Status s =
        LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/catalog/gpus.textproto", &gpus);
    EXPECT_TRUE(s.ok()) << s;
    return new GpuNameResolver(gpus);
  }();
  return *resolver;
}

// The real GCP machine table (data/catalog/gcp_machines.csv).
const GcpMachines& Machines() {
  static const GcpMachines* machines = [] {
    absl::StatusOr<GcpMachines> m =
        LoadGcpMachines(GPUADVISOR_SOURCE_DIR "/data/catalog/gcp_machines.csv");
    EXPECT_TRUE(m.ok()) << m.status();
    return new GcpMachines(m.ok() ? *std::move(m) : GcpMachines());
  }();
  return *machines;
}

absl::StatusOr<SkyPilotImport> ImportFile(const std::string& path, const std::string& cloud) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ImportSkyPilotCsv(*text, cloud, path, Resolver(), &Machines());
}

// The topology is data: the real rules, applied as the catalog loader does.
void ApplyRealTopology(SkyPilotImport& imported) {
  GpuList gpus;
  ASSERT_OK(LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/catalog/gpus.textproto", &gpus));
  absl::StatusOr<v1::TopologyRules> rules =
      LoadTopologyRules(GPUADVISOR_SOURCE_DIR "/data/catalog/topology.textproto", Resolver());
  ASSERT_OK(rules);
  for (Offer& offer : imported.offers) {
    for (const v1::Gpu& gpu : gpus.gpus()) {
      if (gpu.name() == offer.gpu_model()) ApplyTopology(*rules, gpu, offer);
    }
  }
}

std::map<std::string, const Offer*> ById(const SkyPilotImport& imported) {
  std::map<std::string, const Offer*> by_id;
  for (const Offer& o : imported.offers) by_id[o.id()] = &o;
  return by_id;
}

std::map<std::string, int> CountByModel(const SkyPilotImport& imported) {
  std::map<std::string, int> counts;
  for (const Offer& o : imported.offers) ++counts[o.gpu_model()];
  return counts;
}

// ---------------------------------------------------------------------------
// CSV and GpuInfo parsing

TEST(SkyPilotGpuMemory, UnitsPerCloud) {
  // AWS, Lambda, Nebius, Hyperstack: MiB per GPU.
  EXPECT_EQ(*SkyPilotGpuMemoryPerGpuBytes(
                "{'Gpus': [{'Name': 'A100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 81920}}], "
                "'TotalGpuMemoryInMiB': 655360}",
                8, "aws"),
            static_cast<int64_t>(81920 * kMiB));
  // Lambda's total equals the per-GPU figure; the per-GPU field is what counts.
  EXPECT_EQ(*SkyPilotGpuMemoryPerGpuBytes(
                "{'Gpus': [{'Name': 'A100', 'Manufacturer': 'NVIDIA', 'Count': 8.0, "
                "'MemoryInfo': {'SizeInMiB': 40960}}], 'TotalGpuMemoryInMiB': 40960}",
                8, "lambda"),
            static_cast<int64_t>(40960 * kMiB));
  // Vast: MiB for all GPUs together.
  EXPECT_EQ(*SkyPilotGpuMemoryPerGpuBytes(
                "{'Gpus': [{'Name': 'H200', 'Count': 2, 'MemoryInfo': {'SizeInMiB': 287542}}], "
                "'TotalGpuMemoryInMiB': 287542}",
                2, "vast"),
            static_cast<int64_t>(143771 * kMiB));
  // Shadeform: GB per GPU, with the total inside the Gpus element.
  EXPECT_EQ(*SkyPilotGpuMemoryPerGpuBytes(
                "{'Gpus': [{'Name': 'A6000', 'Manufacturer': 'NVIDIA', 'Count': 8.0, "
                "'MemoryInfo': {'SizeInMiB': 48}, 'TotalGpuMemoryInMiB': 384}]}",
                8, "shadeform"),
            48'000'000'000);
  // RunPod: GB per GPU.
  EXPECT_EQ(*SkyPilotGpuMemoryPerGpuBytes(
                "{'Gpus': [{'Name': 'A100 PCIe', 'Manufacturer': 'Nvidia', 'Count': 1, "
                "'MemoryInfo': {'SizeInMiB': 80}}]}",
                1, "runpod"),
            80'000'000'000);
  // Hyperstack: JSON null inside the Python dict.
  EXPECT_EQ(*SkyPilotGpuMemoryPerGpuBytes(
                "{'Gpus': [{'Name': 'L40', 'Manufacturer': null, 'Count': 1, "
                "'MemoryInfo': {'SizeInMiB': 49152}}], 'TotalGpuMemoryInMiB': 49152}",
                1, "hyperstack"),
            static_cast<int64_t>(49152 * kMiB));
  // No figure: empty cell, or a bare name as some clouds write.
  EXPECT_EQ(*SkyPilotGpuMemoryPerGpuBytes("", 1, "gcp"), 0);
  EXPECT_EQ(*SkyPilotGpuMemoryPerGpuBytes("A100", 1, "azure"), 0);
  EXPECT_EQ(*SkyPilotGpuMemoryPerGpuBytes("{'Gpus': []}", 1, "aws"), 0);
  // A dict that does not parse is an error.
  EXPECT_THAT(SkyPilotGpuMemoryPerGpuBytes("{'Gpus': [{'Name': 'A100'", 1, "aws"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(SkyPilotGpuMemoryPerGpuBytes("{'Gpus': nil}", 1, "aws"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown word")));
}

TEST(ImportSkyPilotCsv, RejectsMalformedFilesWithLineAndColumn) {
  const GpuNameResolver& gpus = Resolver();
  EXPECT_THAT(
      ImportSkyPilotCsv("InstanceType,AcceleratorName,AcceleratorCount,Region\n", "aws", "x.csv",
                        gpus),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x.csv:1: missing column \"Price\"")));
  EXPECT_THAT(ImportSkyPilotCsv("", "aws", "x.csv", gpus),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x.csv:1: empty file")));
  const std::string header = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region,GpuInfo\n";
  EXPECT_THAT(
      ImportSkyPilotCsv(header + "a,L4,1,0.5,r1,\nb,L4,1,0.5\n", "aws", "x.csv", gpus),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x.csv:3: expected 6 fields, got 4")));
  EXPECT_THAT(ImportSkyPilotCsv(header + "a,L4,one,0.5,r1,\n", "aws", "x.csv", gpus),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("x.csv:2: AcceleratorCount: not a number: \"one\"")));
  EXPECT_THAT(ImportSkyPilotCsv(header + "a,L4,1,-3,r1,\n", "aws", "x.csv", gpus),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x.csv:2: Price: negative")));
  EXPECT_THAT(ImportSkyPilotCsv(header + "a,L4,1,0.5,r1,\"{'Gpus': [\"\n", "aws", "x.csv", gpus),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x.csv:2: GpuInfo: ")));
}

TEST(ImportSkyPilotCsv, GcpNeedsTheMachineTable) {
  absl::StatusOr<std::string> text = ReadFile(absl::StrCat(kExcerpts, "/gcp/vms.csv"));
  ASSERT_OK(text);
  EXPECT_THAT(ImportSkyPilotCsv(*text, "gcp", "g.csv", Resolver()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gcp_machines.csv")));
  // The table is data: a machine type it does not list is not paired.
  absl::StatusOr<GcpMachines> partial = ParseGcpMachines(
      "machine_type,accelerator,gpus,kind,source\n"
      "a3-highgpu-8g,H100,8,built_in,test\n",
      "m.csv");
  ASSERT_OK(partial);
  absl::StatusOr<SkyPilotImport> imported =
      ImportSkyPilotCsv(*text, "gcp", "g.csv", Resolver(), &*partial);
  ASSERT_OK(imported);
  ASSERT_EQ(imported->offers.size(), 1u);
  EXPECT_EQ(imported->offers[0].id(), "gcp/a3-highgpu-8g/us-central1");
}

TEST(GcpMachines, TheRealTableAndBadFiles) {
  const GcpMachines& m = Machines();
  ASSERT_FALSE(m.built_in.empty());
  ASSERT_NE(m.BuiltIn("g2-standard-24"), nullptr);
  EXPECT_EQ(m.BuiltIn("g2-standard-24")->gpus, 2);
  EXPECT_EQ(m.BuiltIn("a3-megagpu-8g")->accelerator, "H100-MEGA");
  EXPECT_EQ(m.BuiltIn("n1-standard-8"), nullptr);
  ASSERT_NE(m.AttachedHost("t4", 1), nullptr);  // names compared as resolver keys
  EXPECT_EQ(*m.AttachedHost("t4", 1), "n1-standard-8");
  EXPECT_EQ(*m.AttachedHost("V100", 8), "n1-standard-64");
  EXPECT_TRUE(m.Attachable("P100"));
  EXPECT_FALSE(m.Attachable("H100"));
  const std::string header = "machine_type,accelerator,gpus,kind,source\n";
  EXPECT_THAT(
      ParseGcpMachines(header + "a,L4,0,built_in,s\n", "m.csv"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("m.csv:2: gpus: must be a positive")));
  EXPECT_THAT(ParseGcpMachines(header + "a,L4,1,other,s\n", "m.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("m.csv:2: kind")));
  EXPECT_THAT(ParseGcpMachines(header + "a,L4,1,built_in,s\na,L4,2,built_in,s\n", "m.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("m.csv:3: machine_type")));
  EXPECT_THAT(
      ParseGcpMachines(header + "a,L4,1,built_in,\n", "m.csv"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("m.csv:2: source: must be set")));
  EXPECT_THAT(ParseGcpMachines("machine_type,gpus\n", "m.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("missing column")));
}

TEST(SkyPilotSpot, MedianMinMaxAndZones) {
  Offer o;
  SetSpotStatistics({3, 1, 0, 2, 10}, o);  // 0 = no spot in that zone
  EXPECT_EQ(o.spot_usd_per_hour(), 2.5);   // even count: mean of the middle two
  EXPECT_EQ(o.spot_min_usd_per_hour(), 1);
  EXPECT_EQ(o.spot_max_usd_per_hour(), 10);
  EXPECT_EQ(o.spot_zones(), 4);
  SetSpotStatistics({0, 0}, o);
  EXPECT_EQ(o.spot_usd_per_hour(), 0);
  EXPECT_EQ(o.spot_zones(), 0);
  EXPECT_EQ(o.spot_max_usd_per_hour(), 0);
}

TEST(ImportSkyPilotCsv, SkipsFractionalAndUnpricedRows) {
  const std::string csv =
      "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\n"
      "Standard_NV6ads_A10_v5,A10,0.167,0.454,,eastus\n"
      "p5e.48xlarge,H100,8,,,us-east-2\n"
      "p5e.48xlarge,H200,8,,18.74,us-east-2\n";
  absl::StatusOr<SkyPilotImport> imported = ImportSkyPilotCsv(csv, "aws", "x.csv", Resolver());
  ASSERT_OK(imported);
  EXPECT_EQ(imported->rows, 3);
  EXPECT_EQ(imported->skipped_rows, 2);
  EXPECT_THAT(imported->skipped_by_reason,
              ElementsAre(Pair("fractional GPU count", 1), Pair("no price", 1)));
  ASSERT_EQ(imported->offers.size(), 1u);
  EXPECT_EQ(imported->offers[0].on_demand_usd_per_hour(), 0);  // Capacity Blocks / spot only
  EXPECT_EQ(imported->offers[0].spot_usd_per_hour(), 18.74);
}

TEST(ImportSkyPilotCsv, RunPodSpotEqualToPriceMeansNoSpot) {
  const std::string csv =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,"
      "AvailabilityZone,Price,SpotPrice\n"
      "1x_A100-80GB_SECURE,A100-80GB,1,8,117,\"{'Gpus': [{'Name': 'A100 PCIe', 'Manufacturer': "
      "'Nvidia', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 80}}]}\",CA,CA-MTL-1,1.39,1.39\n"
      "1x_A6000_SECURE,A6000,1,8,50,,US,US-KS-2,0.491,0.232\n";
  absl::StatusOr<SkyPilotImport> imported = ImportSkyPilotCsv(csv, "runpod", "r.csv", Resolver());
  ASSERT_OK(imported);
  std::map<std::string, const Offer*> by_id = ById(*imported);
  ASSERT_EQ(by_id.size(), 2u);
  const Offer* a100 = by_id.at("runpod/1x_A100-80GB_SECURE/CA");
  EXPECT_EQ(a100->gpu_model(), "A100-80GB-PCIE");  // "A100 PCIe" in GpuInfo
  EXPECT_EQ(a100->spot_usd_per_hour(), 0);
  EXPECT_EQ(by_id.at("runpod/1x_A6000_SECURE/US")->spot_usd_per_hour(), 0.232);
  EXPECT_EQ(a100->host_tier(), v1::HOST_TIER_DATACENTER);  // Secure Cloud
}

// The embedded RunPod Secure RTX 4090 row (C-RP) is the vendored excerpt's
// price: 0.74 in every data center, Secure Cloud, no spot tier.
TEST(ImportSkyPilotCsv, EmbeddedRunPodRtx4090IsTheExcerptsPrice) {
  const std::string file = absl::StrCat(kFixtures, "/runpod/vms.1x_RTX4090_SECURE.excerpt.csv");
  GPUADVISOR_REQUIRE_FIXTURE(file);
  absl::StatusOr<std::string> csv = ReadFile(file);
  ASSERT_OK(csv);
  absl::StatusOr<SkyPilotImport> imported = ImportSkyPilotCsv(*csv, "runpod", file, Resolver());
  ASSERT_OK(imported);
  ASSERT_FALSE(imported->offers.empty());
  v1::OfferList embedded;
  ASSERT_OK(LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/catalog/offers.textproto", &embedded));
  const v1::Offer* row = nullptr;
  for (const v1::Offer& o : embedded.offers()) {
    if (o.id() == "runpod/1x_RTX4090_SECURE/global") row = &o;
  }
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->host_tier(), v1::HOST_TIER_DATACENTER);
  EXPECT_EQ(row->spot_usd_per_hour(), 0);
  for (const v1::Offer& o : imported->offers) {
    EXPECT_EQ(o.gpu_model(), row->gpu_model()) << o.id();
    EXPECT_EQ(o.gpus_per_node(), row->gpus_per_node()) << o.id();
    EXPECT_EQ(o.host_tier(), row->host_tier()) << o.id();
    EXPECT_EQ(o.on_demand_usd_per_hour(), row->on_demand_usd_per_hour()) << o.id();
    EXPECT_EQ(o.spot_usd_per_hour(), 0) << o.id();  // SpotPrice = Price: no spot tier
  }
}

// docs/catalog.md, "Host tier and reliability".
TEST(ImportSkyPilotCsv, HostTierOfMarketplaceRows) {
  const std::string runpod =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,"
      "AvailabilityZone,Price,SpotPrice\n"
      "1x_A6000_SECURE,A6000,1,8,50,,US,US-KS-2,0.76,0.76\n"
      "1x_A6000_COMMUNITY,A6000,1,8,50,,US,US,0.49,0.49\n";
  absl::StatusOr<SkyPilotImport> pod = ImportSkyPilotCsv(runpod, "runpod", "r.csv", Resolver());
  ASSERT_OK(pod);
  std::map<std::string, const Offer*> by_id = ById(*pod);
  ASSERT_EQ(by_id.size(), 2u);
  EXPECT_EQ(by_id.at("runpod/1x_A6000_SECURE/US")->host_tier(), v1::HOST_TIER_DATACENTER);
  EXPECT_EQ(by_id.at("runpod/1x_A6000_COMMUNITY/US")->host_tier(), v1::HOST_TIER_COMMUNITY);
  // Vast: community unless a HostingType column says datacenter (>= 1).
  const std::string vast =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
      "Region,HostingType\n"
      "1x-L4-32-65536,L4,1,32,64,,0.30,0.00,\"Texas, US, NA\",1\n"
      "1x-L4-32-65536,L4,1,32,64,,0.25,0.00,\"Oregon, US, NA\",0\n";
  absl::StatusOr<SkyPilotImport> hosts = ImportSkyPilotCsv(vast, "vast", "v.csv", Resolver());
  ASSERT_OK(hosts);
  by_id = ById(*hosts);
  ASSERT_EQ(by_id.size(), 2u);
  EXPECT_EQ(by_id.at("vast/1x-L4-32-65536/Texas, US, NA")->host_tier(), v1::HOST_TIER_DATACENTER);
  EXPECT_EQ(by_id.at("vast/1x-L4-32-65536/Oregon, US, NA")->host_tier(), v1::HOST_TIER_COMMUNITY);
  // A cloud's own hosts: unset.
  absl::StatusOr<SkyPilotImport> lambda = ImportSkyPilotCsv(
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region\n"
      "gpu_1x_a10,A10,1,30,200,0.75,us-east-1\n",
      "lambda", "l.csv", Resolver());
  ASSERT_OK(lambda);
  ASSERT_EQ(lambda->offers.size(), 1u);
  EXPECT_EQ(lambda->offers[0].host_tier(), v1::HOST_TIER_UNSPECIFIED);
}

// ---------------------------------------------------------------------------
// The excerpts under tests/data/skypilot (run everywhere).

TEST(SkyPilotExcerpts, Aws) {
  absl::StatusOr<SkyPilotImport> imported =
      ImportFile(absl::StrCat(kExcerpts, "/aws/vms.csv"), "aws");
  ASSERT_OK(imported);
  EXPECT_EQ(imported->rows, 9);
  EXPECT_EQ(imported->skipped_rows, 0);
  std::map<std::string, const Offer*> by_id = ById(*imported);
  ASSERT_EQ(by_id.size(), 4u);
  const Offer& p5 = *by_id.at("aws/p5.48xlarge/us-east-1");
  EXPECT_EQ(p5.gpu_model(), "H100-SXM");
  EXPECT_EQ(p5.gpus_per_node(), 8);
  EXPECT_EQ(p5.on_demand_usd_per_hour(), 55.04);
  EXPECT_EQ(p5.vcpus(), 192);
  EXPECT_EQ(p5.ram_bytes(), 2048LL << 30);
  EXPECT_EQ(p5.link(), v1::LINK_TYPE_NVLINK);
  EXPECT_EQ(p5.link_bytes_per_second(), 900e9);
  // The bare import is single node: the fabric is data (topology.textproto).
  EXPECT_EQ(p5.fabric(), v1::FABRIC_TYPE_UNSPECIFIED);
  EXPECT_EQ(p5.max_nodes(), 1);
  EXPECT_EQ(p5.nodes(), 1);
  EXPECT_EQ(p5.availability(), v1::AVAILABILITY_UNSPECIFIED);
  // Spot over the 3 us-east-1 zones: the median, min and max kept; the zone
  // selling at the on-demand price counts.
  EXPECT_EQ(p5.spot_usd_per_hour(), 25.7522);
  EXPECT_EQ(p5.spot_min_usd_per_hour(), 17.6289);
  EXPECT_EQ(p5.spot_max_usd_per_hour(), 55.04);
  EXPECT_EQ(p5.spot_zones(), 3);
  const Offer& eun = *by_id.at("aws/p5.48xlarge/eu-north-1");
  EXPECT_EQ(eun.on_demand_usd_per_hour(), 58.8928);
  EXPECT_EQ(eun.spot_usd_per_hour(), 28.3188);  // two zones have an empty SpotPrice
  EXPECT_EQ(eun.spot_zones(), 1);
  const Offer& p4de = *by_id.at("aws/p4de.24xlarge/eu-central-1");
  EXPECT_EQ(p4de.gpu_model(), "A100-80GB");
  EXPECT_EQ(p4de.on_demand_usd_per_hour(), 34.29122);
  // Two zones: the median is their mean.
  EXPECT_DOUBLE_EQ(p4de.spot_usd_per_hour(), (8.8218 + 8.0274) / 2);
  EXPECT_EQ(p4de.spot_min_usd_per_hour(), 8.0274);
  EXPECT_EQ(p4de.spot_max_usd_per_hour(), 8.8218);
  // With the real topology rules applied, as the loader does.
  ApplyRealTopology(*imported);
  by_id = ById(*imported);
  EXPECT_EQ(by_id.at("aws/p5.48xlarge/us-east-1")->fabric(), v1::FABRIC_TYPE_EFA);
  EXPECT_EQ(by_id.at("aws/p5.48xlarge/us-east-1")->fabric_gbps(), 3200);
  EXPECT_EQ(by_id.at("aws/p5.48xlarge/us-east-1")->max_nodes(), 64);
  EXPECT_EQ(by_id.at("aws/p4de.24xlarge/eu-central-1")->fabric_gbps(), 400);
  const Offer& single = *by_id.at("aws/p5.4xlarge/us-east-1");
  EXPECT_EQ(single.gpus_per_node(), 1);
  EXPECT_EQ(single.link(), v1::LINK_TYPE_NONE);
  EXPECT_EQ(single.spot_usd_per_hour(), 0);  // empty SpotPrice
  EXPECT_EQ(single.max_nodes(), 1);
  EXPECT_THAT(single.source(), HasSubstr("skypilot:"));
}

TEST(SkyPilotExcerpts, Gcp) {
  absl::StatusOr<SkyPilotImport> imported =
      ImportFile(absl::StrCat(kExcerpts, "/gcp/vms.csv"), "gcp");
  ASSERT_OK(imported);
  EXPECT_EQ(imported->rows, 15);
  EXPECT_EQ(imported->skipped_rows, 2);
  EXPECT_THAT(imported->skipped_by_reason,
              ElementsAre(Pair("gcp: no accelerator row for a2-ultragpu-1g", 1),
                          Pair("gcp: no host row for V100 x1", 1)));
  std::map<std::string, const Offer*> by_id = ById(*imported);
  ASSERT_EQ(by_id.size(), 6u);
  struct Expected {
    const char* id;
    const char* gpu;
    int count;
    double on_demand;
    double spot;
  };
  const Expected expected[] = {
      {"gcp/a2-highgpu-1g/us-central1", "A100-40GB", 1, 3.67339, 1.804},
      {"gcp/a3-highgpu-8g/us-central1", "H100-SXM", 8, 43.06615, 26.83},
      {"gcp/a4-highgpu-8g/us-central1", "B200", 8, 90.216, 32.6064},
      {"gcp/g2-standard-4/us-central1", "L4", 1, 0.70683, 0.282},
      {"gcp/n1-standard-8+T4x1/us-central1", "T4", 1, 0.73, 0.279},
      {"gcp/n1-standard-8+V100x1/us-central1", "V100", 1, 2.86, 1.193},
  };
  for (const Expected& e : expected) {
    ASSERT_TRUE(by_id.count(e.id)) << e.id;
    const Offer& o = *by_id.at(e.id);
    EXPECT_EQ(o.gpu_model(), e.gpu) << e.id;
    EXPECT_EQ(o.gpus_per_node(), e.count) << e.id;
    EXPECT_NEAR(o.on_demand_usd_per_hour(), e.on_demand, 1e-9) << e.id;
    EXPECT_NEAR(o.spot_usd_per_hour(), e.spot, 1e-9) << e.id;
  }
  EXPECT_EQ(by_id.at("gcp/a3-highgpu-8g/us-central1")->vcpus(), 208);
  ApplyRealTopology(*imported);
  by_id = ById(*imported);
  EXPECT_EQ(by_id.at("gcp/a3-highgpu-8g/us-central1")->fabric(), v1::FABRIC_TYPE_ETHERNET);
  // A3 High: 4 GPU NICs x 200 Gbps (G5's 1,000 also counts the host's gVNIC).
  EXPECT_EQ(by_id.at("gcp/a3-highgpu-8g/us-central1")->fabric_gbps(), 800);
  EXPECT_EQ(by_id.at("gcp/a4-highgpu-8g/us-central1")->fabric(), v1::FABRIC_TYPE_ROCE);
}

TEST(SkyPilotExcerpts, LambdaNebiusHyperstackShadeformVast) {
  struct Case {
    const char* cloud;
    int rows;
    int skipped;
    std::map<std::string, int> models;
  };
  const Case cases[] = {
      {"lambda", 7, 2, {{"A100-40GB", 1}, {"H100-PCIE", 1}, {"H100-SXM", 2}, {"RTX-A6000", 1}}},
      {"nebius", 8, 3, {{"H100-SXM", 1}, {"H200", 3}, {"L40S", 1}}},
      {"hyperstack",
       6,
       1,
       {{"A100-80GB-PCIE", 1}, {"H100-PCIE", 1}, {"H100-SXM", 2}, {"RTX-A6000", 1}}},
      {"shadeform",
       8,
       0,
       {{"A100-80GB", 2},
        {"GAUDI2", 1},
        {"RTX-6000-ADA", 2},
        {"RTX-A6000", 1},
        {"RTX-PRO-6000", 2}}},
      {"vast",
       10,
       0,
       {{"A100-40GB", 1},
        {"A100-80GB-PCIE", 1},
        {"B200", 1},
        {"H100-NVL", 1},
        {"H200", 2},
        {"RTX-4090", 3},
        {"RTX-5090", 1}}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SkyPilotImport> imported =
        ImportFile(absl::StrCat(kExcerpts, "/", c.cloud, "/vms.csv"), c.cloud);
    ASSERT_OK(imported);
    EXPECT_EQ(imported->rows, c.rows) << c.cloud;
    EXPECT_EQ(imported->skipped_rows, c.skipped) << c.cloud;
    EXPECT_EQ(CountByModel(*imported), c.models) << c.cloud;
  }
}

TEST(SkyPilotExcerpts, Details) {
  absl::StatusOr<SkyPilotImport> lambda =
      ImportFile(absl::StrCat(kExcerpts, "/lambda/vms.csv"), "lambda");
  ASSERT_OK(lambda);
  std::map<std::string, const Offer*> by_id = ById(*lambda);
  const Offer& h100 = *by_id.at("lambda/gpu_8x_h100_sxm5/us-east-1");
  EXPECT_EQ(h100.gpus_per_node(), 8);  // "8.0" in the file
  EXPECT_EQ(h100.on_demand_usd_per_hour(), 31.92);
  EXPECT_EQ(h100.fabric(), v1::FABRIC_TYPE_UNSPECIFIED);
  EXPECT_EQ(h100.max_nodes(), 1);
  EXPECT_EQ(by_id.at("lambda/gpu_1x_h100_pcie/us-east-1")->gpu_model(), "H100-PCIE");
  EXPECT_EQ(by_id.at("lambda/gpu_8x_a100/us-east-1")->link(), v1::LINK_TYPE_NVLINK);
  EXPECT_EQ(lambda->skipped_by_reason.at("unknown GPU \"RTX6000\""), 1);
  EXPECT_EQ(lambda->skipped_by_reason.at("no accelerator"), 1);

  absl::StatusOr<SkyPilotImport> hyperstack =
      ImportFile(absl::StrCat(kExcerpts, "/hyperstack/vms.csv"), "hyperstack");
  ASSERT_OK(hyperstack);
  by_id = ById(*hyperstack);
  const Offer& bridged = *by_id.at("hyperstack/n3-H100x8-NVLink/CANADA-1");
  EXPECT_EQ(bridged.gpu_model(), "H100-PCIE");
  EXPECT_EQ(bridged.link(), v1::LINK_TYPE_NVLINK);
  EXPECT_EQ(by_id.at("hyperstack/n3-RTX-A6000x8/CANADA-1")->link(), v1::LINK_TYPE_PCIE);
  EXPECT_EQ(by_id.at("hyperstack/n3-RTX-A6000x8/CANADA-1")->link_bytes_per_second(), 64e9);
  EXPECT_TRUE(by_id.count("hyperstack/n3-H100-SXM5x8/US-1"));

  absl::StatusOr<SkyPilotImport> vast =
      ImportFile(absl::StrCat(kExcerpts, "/vast/vms.csv"), "vast");
  ASSERT_OK(vast);
  ASSERT_FALSE(vast->offers.empty());
  for (const Offer& o : vast->offers) {
    EXPECT_EQ(o.host_tier(), v1::HOST_TIER_COMMUNITY) << o.id();  // no HostingType column
    EXPECT_EQ(o.spot_usd_per_hour(), 0) << o.id();                // 0.00 = no spot
    EXPECT_EQ(o.vcpus(), 0) << o.id();                            // placeholders dropped
    EXPECT_EQ(o.ram_bytes(), 0) << o.id();
  }
  by_id = ById(*vast);
  // SkyPilot writes a host with no city as ", US, NA": the empty part is
  // dropped, as the Vast importer and the embedded data write it.
  EXPECT_EQ(by_id.at("vast/2x-B200-32-65536/US, NA")->gpu_model(), "B200");
  EXPECT_EQ(by_id.at("vast/2x-B200-32-65536/US, NA")->region(), "US, NA");
  EXPECT_EQ(by_id.count("vast/2x-B200-32-65536/, US, NA"), 0u);
  EXPECT_EQ(by_id.at("vast/1x-H100_NVL-32-65536/Bulgaria, BG, EU")->gpu_model(), "H100-NVL");
}

TEST(CleanRegion, DropsEmptyPartsAndStrayWhitespace) {
  const struct {
    const char* in;
    const char* want;
  } cases[] = {
      {", US, NA", "US, NA"},
      {"Texas, US, NA", "Texas, US, NA"},
      {" Texas ,US,  NA ", "Texas, US, NA"},
      {"Texas,, US, NA,", "Texas, US, NA"},
      {" us-east-1 ", "us-east-1"},
      {"us-east-1", "us-east-1"},
      {"", ""},
      {" , ", ""},
  };
  for (const auto& c : cases) EXPECT_EQ(CleanRegion(c.in), c.want) << "[" << c.in << "]";
}

// ---------------------------------------------------------------------------
// Every vendored fixture file (tests/data/skypilot-catalog; a missing one
// fails the test).

struct FixtureCase {
  const char* path;  // relative to catalogs/v8
  const char* cloud;
  int rows;
  int skipped;
  int offers;
  std::map<std::string, int> models;  // offers per canonical GPU
};

TEST(SkyPilotFixtures, EveryFile) {
  GPUADVISOR_REQUIRE_FIXTURE(kFixtures);
  const FixtureCase cases[] = {
      {"aws/vms.p4de-p5.excerpt.csv", "aws", 56, 0, 22, {{"A100-80GB", 4}, {"H100-SXM", 18}}},
      {"lambda/vms.csv",
       "lambda",
       408,
       51,
       357,
       {{"A10", 17},
        {"A100-40GB", 85},
        {"A100-80GB", 17},
        {"B200", 51},
        {"GH200", 17},
        {"H100-PCIE", 17},
        {"H100-SXM", 68},
        {"RTX-A6000", 51},
        {"V100", 34}}},
      {"nebius/vms.csv",
       "nebius",
       61,
       40,
       21,
       {{"B200", 1}, {"H100-SXM", 2}, {"H200", 6}, {"L40S", 12}}},
      {"vast/vms.csv",
       "vast",
       67,
       10,
       57,
       {{"A100-40GB", 4},
        {"A100-80GB-PCIE", 1},
        {"A40", 2},
        {"B200", 2},
        {"H100-NVL", 2},
        {"H100-SXM", 5},
        {"H200", 6},
        {"RTX-3090", 2},
        {"RTX-4090", 13},
        {"RTX-5090", 11},
        {"RTX-6000-ADA", 1},
        {"RTX-A6000", 2},
        {"RTX-PRO-6000", 1},
        {"L40S", 4},
        {"V100", 1}}},
      {"hyperstack/vms.csv",
       "hyperstack",
       25,
       5,
       20,
       {{"A100-80GB-PCIE", 5}, {"H100-PCIE", 5}, {"H100-SXM", 2}, {"L40", 4}, {"RTX-A6000", 4}}},
      {"shadeform/vms.csv",
       "shadeform",
       118,
       7,
       111,
       {{"A10", 2},
        {"A100-40GB", 9},
        {"A100-80GB", 17},
        {"GAUDI2", 1},
        {"H100-SXM", 12},
        {"H200", 1},
        {"L4", 6},
        {"L40", 8},
        {"L40S", 13},
        {"RTX-6000-ADA", 6},
        {"RTX-A6000", 27},
        {"RTX-PRO-6000", 5},
        {"V100", 1},
        {"V100-32GB", 3}}},
  };
  int files = 0;
  for (const FixtureCase& c : cases) {
    const std::string path = absl::StrCat(kFixtures, "/", c.path);
    absl::StatusOr<SkyPilotImport> imported = ImportFile(path, c.cloud);
    ASSERT_OK(imported) << c.path;
    ++files;
    EXPECT_EQ(imported->rows, c.rows) << c.path;
    EXPECT_EQ(imported->skipped_rows, c.skipped) << c.path;
    EXPECT_EQ(static_cast<int>(imported->offers.size()), c.offers) << c.path;
    EXPECT_EQ(CountByModel(*imported), c.models) << c.path;
    // The same account the other importers give: read = kept + rejected.
    const ImportReport report = imported->Report(c.cloud, c.path);
    EXPECT_EQ(report.rows_read, c.rows);
    EXPECT_EQ(report.rows_kept + report.rows_rejected(), report.rows_read) << report.Summary();
    EXPECT_EQ(report.rows_kept, c.rows - c.skipped);
    for (const Offer& o : imported->offers) {
      EXPECT_EQ(o.id(), absl::StrCat(c.cloud, "/", o.instance_type(), "/", o.region()));
      EXPECT_GE(o.gpus_per_node(), 1) << o.id();
      EXPECT_TRUE(o.on_demand_usd_per_hour() > 0 || o.spot_usd_per_hour() > 0) << o.id();
      EXPECT_NE(Resolver().FactsOf(o.gpu_model()), nullptr) << o.id();
    }
  }
  EXPECT_EQ(files, 6);
}

TEST(SkyPilotFixtures, Quirks) {
  GPUADVISOR_REQUIRE_FIXTURE(kFixtures);
  // Lambda: "8.0" counts, CPU rows, and TotalGpuMemoryInMiB = per-GPU memory.
  absl::StatusOr<SkyPilotImport> lambda =
      ImportFile(absl::StrCat(kFixtures, "/lambda/vms.csv"), "lambda");
  ASSERT_OK(lambda);
  EXPECT_EQ(lambda->skipped_by_reason.at("no accelerator"), 34);
  EXPECT_EQ(lambda->skipped_by_reason.at("unknown GPU \"RTX6000\""), 17);
  std::map<std::string, const Offer*> by_id = ById(*lambda);
  EXPECT_EQ(by_id.at("lambda/gpu_8x_a100/us-east-1")->gpus_per_node(), 8);
  EXPECT_EQ(by_id.at("lambda/gpu_8x_a100/us-east-1")->gpu_model(), "A100-40GB");
  EXPECT_EQ(by_id.at("lambda/gpu_8x_a100_80gb_sxm4/us-east-1")->gpu_model(), "A100-80GB");
  EXPECT_EQ(by_id.at("lambda/gpu_8x_b200_sxm6/us-east-1")->on_demand_usd_per_hour(), 53.52);

  // Vast: quoted regions with commas and UTF-8 survive parsing.
  absl::StatusOr<std::string> vast_text = ReadFile(absl::StrCat(kFixtures, "/vast/vms.csv"));
  ASSERT_OK(vast_text);
  absl::StatusOr<std::vector<CsvRecord>> records = ParseCsv(*vast_text, "vast");
  ASSERT_OK(records);
  ASSERT_EQ(records->size(), 68u);
  std::set<std::string> regions;
  for (const CsvRecord& r : *records) regions.insert(r.fields.back());
  EXPECT_TRUE(
      regions.count("Hafnarfjar\xC3\xB0"
                    "arkaupsta\xC3\xB0ur, IS, EU"));
  EXPECT_TRUE(
      regions.count("B\xC3\xA1"
                    "cs-Kiskun, HU, EU"));
  EXPECT_TRUE(regions.count(", US, NA"));
  EXPECT_TRUE(regions.count("Texas, US, NA"));
  absl::StatusOr<SkyPilotImport> vast =
      ImportFile(absl::StrCat(kFixtures, "/vast/vms.csv"), "vast");
  ASSERT_OK(vast);
  ASSERT_FALSE(vast->offers.empty());
  for (const Offer& o : vast->offers) EXPECT_EQ(o.region(), CleanRegion(o.region())) << o.id();
  by_id = ById(*vast);
  EXPECT_EQ(by_id.at("vast/4x-H200-32-65536/US, NA")->gpus_per_node(), 4);
  EXPECT_EQ(by_id.at("vast/1x-H200-32-65536/France, FR, EU")->on_demand_usd_per_hour(), 2.65);
  EXPECT_EQ(by_id.at("vast/1x-H200-32-65536/France, FR, EU")->spot_usd_per_hour(), 0);
  EXPECT_EQ(by_id.at("vast/2x-A100_SXM4-32-65536/Slovenia, SI, EU")->gpu_model(), "A100-40GB");
  EXPECT_EQ(by_id.at("vast/1x-A100_PCIE-32-65536/Oklahoma, US, NA")->gpu_model(), "A100-80GB-PCIE");
  EXPECT_EQ(vast->skipped_by_reason.count("unknown GPU \"RTX5090\""), 0u);  // in gpus.textproto
  EXPECT_EQ(by_id.at("vast/1x-RTX_5090-32-65536/Texas, US, NA")->gpu_model(), "RTX-5090");

  // Hyperstack: JSON null, LF endings, PCIe-NVLink bridges.
  absl::StatusOr<SkyPilotImport> hyperstack =
      ImportFile(absl::StrCat(kFixtures, "/hyperstack/vms.csv"), "hyperstack");
  ASSERT_OK(hyperstack);
  by_id = ById(*hyperstack);
  EXPECT_EQ(by_id.at("hyperstack/n3-A100x8-NVLink/CANADA-1")->gpu_model(), "A100-80GB-PCIE");
  EXPECT_EQ(by_id.at("hyperstack/n3-A100x8-NVLink/CANADA-1")->link(), v1::LINK_TYPE_NVLINK);
  EXPECT_EQ(by_id.at("hyperstack/n3-A100x8/CANADA-1")->link(), v1::LINK_TYPE_PCIE);
  EXPECT_EQ(hyperstack->skipped_by_reason.at("unknown GPU \"RTX-A4000\""), 5);

  // Shadeform: memory in GB; names like RTX6000Ada and GAUDI2.
  absl::StatusOr<SkyPilotImport> shadeform =
      ImportFile(absl::StrCat(kFixtures, "/shadeform/vms.csv"), "shadeform");
  ASSERT_OK(shadeform);
  by_id = ById(*shadeform);
  EXPECT_EQ(by_id.at("shadeform/massedcompute_A6000x8/kansascity-usa-1")->gpu_model(), "RTX-A6000");
  EXPECT_EQ(by_id.at("shadeform/denvr_Gaudi2x8/houston-usa-1")->gpu_model(), "GAUDI2");
  EXPECT_EQ(by_id.at("shadeform/denvr_A100-sxm4/calgary-canada-1")->gpu_model(), "A100-40GB");

  // AWS excerpt: empty SpotPrice in some zones.
  absl::StatusOr<SkyPilotImport> aws =
      ImportFile(absl::StrCat(kFixtures, "/aws/vms.p4de-p5.excerpt.csv"), "aws");
  ASSERT_OK(aws);
  by_id = ById(*aws);
  // Seven us-east-1 zones (two at the on-demand price): the median zone, not
  // the cheapest (10.2397), is the price; the same figures as the embedded
  // offer (catalog_data_test).
  const Offer& p5 = *by_id.at("aws/p5.48xlarge/us-east-1");
  EXPECT_EQ(p5.spot_zones(), 7);
  EXPECT_EQ(p5.spot_usd_per_hour(), 21.1543);
  EXPECT_EQ(p5.spot_min_usd_per_hour(), 10.2397);
  EXPECT_EQ(p5.spot_max_usd_per_hour(), 55.04);
  for (const Offer& o : aws->offers) {
    if (o.spot_zones() == 0) continue;
    EXPECT_LE(o.spot_min_usd_per_hour(), o.spot_usd_per_hour()) << o.id();
    EXPECT_LE(o.spot_usd_per_hour(), o.spot_max_usd_per_hour()) << o.id();
  }
  EXPECT_EQ(by_id.at("aws/p5.48xlarge/ap-northeast-2")->spot_usd_per_hour(), 0);
  EXPECT_EQ(by_id.at("aws/p5.4xlarge/us-east-1")->spot_usd_per_hour(), 0);
}

}  // namespace
}  // namespace gpuadvisor::catalog
