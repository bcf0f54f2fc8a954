#include "services/gateway/export.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/gateway/orchestrators_data.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::gateway {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto kSpot = catalog::v1::PURCHASE_OPTION_SPOT;
constexpr auto kOnDemand = catalog::v1::PURCHASE_OPTION_ON_DEMAND;
constexpr auto kReserved = catalog::v1::PURCHASE_OPTION_RESERVED;

// One recommendation; `price` is the offer's list price per node-hour for
// `option` (spot: median, min 90%, max 110%).
v1::Recommendation* Add(v1::RecommendResponse& response, const std::string& provider,
                        const std::string& type, const std::string& region, const std::string& gpu,
                        int gpus, int nodes, catalog::v1::PurchaseOption option, double price) {
  v1::Recommendation* r = response.add_recommendations();
  r->set_rank(response.recommendations_size());
  r->set_purchase_option(option);
  auto* o = r->mutable_offer();
  o->set_id(provider + "/" + type + "/" + region);
  o->set_provider(provider);
  o->set_instance_type(type);
  o->set_region(region);
  o->set_gpu_model(gpu);
  o->set_gpus_per_node(gpus);
  o->set_nodes(nodes);
  if (option == kSpot) {
    o->set_spot_usd_per_hour(price);
    o->set_spot_min_usd_per_hour(price * 0.9);
    o->set_spot_max_usd_per_hour(price * 1.1);
  } else if (option == kReserved) {
    o->set_reserved_usd_per_hour(price);
  } else {
    o->set_on_demand_usd_per_hour(price);
  }
  r->set_estimated_hours(3.5);
  r->set_gpu_memory_bytes(int64_t{80} << 30);
  r->mutable_cost()->set_usd_per_hour(price * nodes);
  r->mutable_cost()->set_total_usd(price * nodes * 3.5);
  return r;
}

// A training answer across clouds: SkyPilot and dstack keep what they can,
// Karpenter one AWS region.
v1::RecommendResponse Answer() {
  v1::RecommendResponse response;
  Add(response, "aws", "p5.48xlarge", "us-east-1", "H100-SXM", 8, 1, kSpot, 30);
  Add(response, "coreweave", "hgx-h100-8x", "global", "H100-SXM", 8, 1, kOnDemand, 49);
  Add(response, "lambda", "gpu_8x_h100_sxm5", "us-east-1", "H100-SXM", 8, 1, kOnDemand, 31.92);
  Add(response, "aws", "p5.48xlarge", "us-east-1", "H100-SXM", 8, 1, kOnDemand, 55);
  Add(response, "aws", "p4d.24xlarge", "us-east-1", "A100-40GB", 8, 2, kOnDemand, 22);
  Add(response, "aws", "p5en.48xlarge", "us-east-1", "H200", 8, 1, kReserved, 39);
  Add(response, "crusoe", "crusoe_A100-80GB", "culpeper-usa-1", "A100-80GB", 1, 1, kOnDemand, 2);
  Add(response, "runpod", "1x_H100_SXM_SECURE", "global", "H100-SXM", 1, 1, kOnDemand, 3.29);
  response.set_catalog_version("c1");
  response.set_price_book_version("p1");
  response.set_prices_as_of("2026-11-29");
  response.set_objective(v1::OBJECTIVE_CHEAPEST);
  return response;
}

v1::RecommendRequest Request(sizing::v1::Task task = sizing::v1::TASK_LORA) {
  v1::RecommendRequest request;
  request.mutable_workload()->set_task(task);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  return request;
}

std::string Text(ExportFormat format, const v1::RecommendResponse& response, int alternative = 1,
                 sizing::v1::Task task = sizing::v1::TASK_LORA) {
  absl::StatusOr<ExportFile> file = ExportAnswer(format, Request(task), response, alternative);
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? file->text : "";
}

TEST(ExportFormat, ParsesNamesCaseInsensitively) {
  EXPECT_EQ(ParseExportFormat("SkyPilot").value(), ExportFormat::kSkyPilot);
  EXPECT_EQ(ParseExportFormat("dstack").value(), ExportFormat::kDstack);
  EXPECT_EQ(ParseExportFormat("KARPENTER").value(), ExportFormat::kKarpenter);
  EXPECT_THAT(ParseExportFormat("terraform").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("format: \"terraform\"")));
}

TEST(Export, NamesDataIsCompiledInWithVersions) {
  for (const char* section :
       {"\"skypilot\"", "\"dstack\"", "\"karpenter\"", "\"version\"", "\"sources\"", "\"as_of\""}) {
    EXPECT_THAT(OrchestratorsJson(), HasSubstr(section));
  }
}

TEST(Export, SkyPilotPinsRankedFallbacksAndLeavesOutWhatItCannotRun) {
  const std::string y = Text(ExportFormat::kSkyPilot, Answer());
  const size_t first = y.find("instance_type: \"p5.48xlarge\"");
  const size_t lambda = y.find("instance_type: \"gpu_8x_h100_sxm5\"");
  ASSERT_NE(first, std::string::npos) << y;
  ASSERT_NE(lambda, std::string::npos) << y;
  EXPECT_LT(first, lambda);
  EXPECT_THAT(y, HasSubstr("infra: \"aws/us-east-1\"\n      instance_type: \"p5.48xlarge\"\n"
                           "      use_spot: true\n      max_hourly_cost: 33\n"));
  EXPECT_THAT(y, HasSubstr("num_nodes: 1"));
  // A marketplace's listing under SkyPilot's shadeform cloud; RunPod's own
  // instance name; no "global" region.
  EXPECT_THAT(y, HasSubstr("infra: \"shadeform/culpeper-usa-1\"\n      instance_type: "
                           "\"crusoe_A100-80GB\""));
  EXPECT_THAT(y, HasSubstr("infra: \"runpod\"\n      instance_type: \"1x_H100-SXM_SECURE\""));
  EXPECT_THAT(y, Not(HasSubstr("global\"")));
  EXPECT_THAT(y, HasSubstr("rank 2 coreweave/hgx-h100-8x/global: SkyPilot lists CoreWeave as a "
                           "storage-only cloud"));
  EXPECT_THAT(y, HasSubstr("rank 6 aws/p5en.48xlarge/us-east-1: reserved"));
  // The 2-node fallback is the second file, named in the header.
  EXPECT_THAT(y, HasSubstr("alternative=2: 2 nodes (ranks 5)"));
  const std::string two = Text(ExportFormat::kSkyPilot, Answer(), 2);
  EXPECT_THAT(two, HasSubstr("num_nodes: 2"));
  EXPECT_THAT(two, HasSubstr("instance_type: \"p4d.24xlarge\""));
  EXPECT_THAT(ExportAnswer(ExportFormat::kSkyPilot, Request(), Answer(), 3).status(),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST(Export, DstackKeepsOnlyFallbacksThatLeaveRankOneTheCheapestMatch) {
  absl::StatusOr<ExportFile> file = ExportAnswer(ExportFormat::kDstack, Request(), Answer());
  ASSERT_TRUE(file.ok()) << file.status();
  const std::string& y = file->text;
  EXPECT_THAT(y, HasSubstr("type: task\n"));
  EXPECT_THAT(y, HasSubstr("nodes: 1\n"));
  EXPECT_THAT(y, HasSubstr("backends: [\"aws\"]"));
  EXPECT_THAT(y, HasSubstr("instance_types: [\"p5.48xlarge\"]"));
  EXPECT_THAT(y, HasSubstr("spot_policy: auto"));
  EXPECT_THAT(y, HasSubstr("max_price: 55\n"));
  // Lambda is cheaper per hour than rank 4 but dearer than rank 1's spot; with
  // both it would let dstack pick unplanned combinations.
  EXPECT_THAT(y,
              HasSubstr("rank 3 lambda/gpu_8x_h100_sxm5/us-east-1: in alternative=2 or later: with "
                        "it the filters would also match lambda gpu_8x_h100_sxm5 us-east-1 spot"));
  EXPECT_THAT(y, HasSubstr("rank 6 aws/p5en.48xlarge/us-east-1: reserved"));
  // Cheaper per node-hour than rank 1: dstack would take it first.
  EXPECT_THAT(y, HasSubstr("rank 7 crusoe/crusoe_A100-80GB/culpeper-usa-1: no dstack offer name"));
  EXPECT_THAT(y, HasSubstr("below rank 1's"));
  EXPECT_FALSE(file->left_out.empty());
  // Same-shape fallbacks that cannot share rank 1's filters survive in files
  // of their own; the 2-node fallback is the last.
  EXPECT_EQ(file->alternatives, 4);
  EXPECT_THAT(Text(ExportFormat::kDstack, Answer(), 2),
              HasSubstr("instance_types: [\"gpu_8x_h100_sxm5\"]"));
  EXPECT_THAT(Text(ExportFormat::kDstack, Answer(), 4), HasSubstr("nodes: 2\n"));
  EXPECT_THAT(ExportHeaderValue(file->left_out), Not(HasSubstr("\n")));
}

TEST(Export, GcpAttachedGpusAndTpusUseTheOrchestratorsForms) {
  v1::RecommendResponse response;
  Add(response, "gcp", "n1-standard-8+T4x1", "us-central1", "T4", 1, 1, kOnDemand, 0.73);
  Add(response, "gcp", "v5litepod-4", "us-central1", "TPU-V5E", 4, 1, kOnDemand, 4.8);
  const std::string sky = Text(ExportFormat::kSkyPilot, response);
  EXPECT_THAT(sky, HasSubstr("instance_type: \"n1-standard-8\"\n      accelerators: {\"T4\": 1}"));
  EXPECT_THAT(sky, HasSubstr("rank 2 gcp/v5litepod-4/us-central1: a TPU slice"));
  const std::string dstack = Text(ExportFormat::kDstack, response);
  EXPECT_THAT(dstack, HasSubstr("instance_types: [\"n1-standard-8\"]"));
  EXPECT_THAT(dstack, HasSubstr("name: [\"T4\"]"));
  EXPECT_THAT(dstack, HasSubstr("rank 2 gcp/v5litepod-4/us-central1: GPU TPU-V5E has no dstack"));
}

TEST(Export, DstackUsesGpuhuntOfferNames) {
  v1::RecommendResponse response;
  Add(response, "nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb", "eu-north1", "H100-SXM", 8, 2,
      kOnDemand, 23.6);
  Add(response, "lambda", "gpu_8x_h100_sxm5", "us-east-1", "H100-SXM", 8, 2, kOnDemand, 31.92);
  const std::string y = Text(ExportFormat::kDstack, response);
  EXPECT_THAT(y, HasSubstr("instance_types: [\"gpu-h100-sxm 8gpu-128vcpu-1600gb\"]"));
  EXPECT_THAT(y, HasSubstr("nodes: 2"));
  EXPECT_THAT(y, HasSubstr("rank 2 lambda/gpu_8x_h100_sxm5/us-east-1: dstack runs multi-node "
                           "tasks only on multi-node backends"));
}

TEST(Export, KarpenterSpreadsWeightsTaintsAndLimitsInOneCluster) {
  const std::string y = Text(ExportFormat::kKarpenter, Answer());
  EXPECT_THAT(y, HasSubstr("weight: 100"));
  EXPECT_THAT(y, HasSubstr("weight: 90"));
  EXPECT_THAT(y, HasSubstr("weight: 80"));
  EXPECT_THAT(y, HasSubstr("values: [\"spot\"]"));
  EXPECT_THAT(y, HasSubstr("kind: \"EC2NodeClass\""));
  EXPECT_THAT(y, HasSubstr("taints:\n        - key: \"nvidia.com/gpu\"\n          effect: "
                           "NoSchedule"));
  EXPECT_THAT(y, HasSubstr("tolerations: [{key: nvidia.com/gpu"));
  // The 2-node p4d pool admits the plan's 16 GPUs.
  EXPECT_THAT(y, HasSubstr("nvidia.com/gpu: 16"));
  EXPECT_THAT(y, HasSubstr("rank 3 lambda/gpu_8x_h100_sxm5/us-east-1: no Karpenter provider"));
  EXPECT_THAT(y, HasSubstr("rank 6 aws/p5en.48xlarge/us-east-1: left out: Karpenter launches "
                           "reserved capacity only"));
  EXPECT_THAT(y, Not(HasSubstr("values: [\"reserved\"]")));
  EXPECT_THAT(y, HasSubstr("name: \"gpu-advisor-4-p5-48xlarge-on-demand\""));
}

TEST(Export, KarpenterKeepsAMultiNodeJobInOneZone) {
  v1::RecommendResponse response;
  Add(response, "aws", "p5.48xlarge", "us-east-1", "H100-SXM", 8, 4, kSpot, 30);
  Add(response, "aws", "p4d.24xlarge", "us-east-1", "A100-40GB", 8, 4, kOnDemand, 22);
  const std::string y = Text(ExportFormat::kKarpenter, response);
  // p5.48xlarge's zones are in the catalog data: one zone id pinned.
  EXPECT_THAT(y, HasSubstr("- key: \"topology.k8s.aws/zone-id\"\n          operator: In\n"
                           "          values: [\"use1-"));
  // p4d.24xlarge has none: the region's first zone, by AWS's naming rule.
  EXPECT_THAT(y, HasSubstr("No zone data for p4d.24xlarge in us-east-1"));
  EXPECT_THAT(y, HasSubstr("- key: \"topology.kubernetes.io/zone\"\n          operator: In\n"
                           "          values: [\"us-east-1a\"]"));
  EXPECT_THAT(y, HasSubstr("nvidia.com/gpu: 32"));
  // Azure (AKS zones are <region>-<n>) as much as AWS: every provider with a
  // Karpenter provider pins one zone.
  v1::RecommendResponse azure;
  Add(azure, "azure", "Standard_ND96isr_H100_v5", "eastus", "H100-SXM", 8, 2, kOnDemand, 98);
  EXPECT_THAT(Text(ExportFormat::kKarpenter, azure),
              HasSubstr("- key: \"topology.kubernetes.io/zone\"\n          operator: In\n"
                        "          values: [\"eastus-1\"]"));
}

TEST(Export, KarpenterTaintsAmdGpusWithTheirKey) {
  v1::RecommendResponse response;
  Add(response, "azure", "Standard_ND96isr_MI300X_v5", "eastus", "MI300X", 8, 1, kOnDemand, 48);
  const std::string y = Text(ExportFormat::kKarpenter, response);
  EXPECT_THAT(y, HasSubstr("key: \"amd.com/gpu\""));
  EXPECT_THAT(y, HasSubstr("kind: \"AKSNodeClass\""));
}

TEST(Export, EndpointsExportAsServicesWithReplicas) {
  v1::RecommendResponse response;
  v1::Recommendation* r =
      Add(response, "aws", "g6e.xlarge", "us-east-1", "L40S", 1, 3, kOnDemand, 1.86);
  r->mutable_serving()->set_replicas(3);
  const auto task = sizing::v1::TASK_INFERENCE;
  const std::string sky = Text(ExportFormat::kSkyPilot, response, 1, task);
  EXPECT_THAT(sky, HasSubstr("service:\n  readiness_probe: \"/health\"\n  replicas: 3\n  ports: "
                             "8000\n"));
  EXPECT_THAT(sky, Not(HasSubstr("num_nodes")));
  // SkyServe takes all-spot or all-on-demand resources: a spot fallback is
  // the second file.
  v1::Recommendation* spot =
      Add(response, "aws", "g6e.xlarge", "us-west-2", "L40S", 1, 3, kSpot, 1);
  spot->mutable_serving()->set_replicas(3);
  EXPECT_THAT(Text(ExportFormat::kSkyPilot, response, 1, task), Not(HasSubstr("use_spot: true")));
  EXPECT_THAT(Text(ExportFormat::kSkyPilot, response, 2, task), HasSubstr("use_spot: true"));
  response.mutable_recommendations()->RemoveLast();
  const std::string dstack = Text(ExportFormat::kDstack, response, 1, task);
  EXPECT_THAT(dstack, HasSubstr("type: service\n"));
  EXPECT_THAT(dstack, HasSubstr("port: 8000\nreplicas: 3\n"));
  const std::string karpenter = Text(ExportFormat::kKarpenter, response, 1, task);
  EXPECT_THAT(karpenter, HasSubstr("nvidia.com/gpu: 3"));
  EXPECT_THAT(karpenter, HasSubstr("Deployment of 3 GPU pods"));
}

TEST(Export, NothingToExportIsNotFound) {
  v1::RecommendResponse empty;
  EXPECT_THAT(ExportAnswer(ExportFormat::kSkyPilot, Request(), empty).status(),
              StatusIs(absl::StatusCode::kNotFound));
  v1::RecommendResponse only_coreweave;
  *only_coreweave.add_recommendations() = Answer().recommendations(1);
  EXPECT_THAT(ExportAnswer(ExportFormat::kKarpenter, Request(), only_coreweave).status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("coreweave")));
}

}  // namespace
}  // namespace gpuadvisor::gateway
