#include "services/gateway/export.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/gateway/orchestrators_data.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::gateway {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

v1::RecommendResponse Answer() {
  v1::RecommendResponse response;
  EXPECT_TRUE(
      google::protobuf::TextFormat::ParseFromString(R"pb(
                                                      recommendations {
                                                        rank: 1
                                                        purchase_option: PURCHASE_OPTION_SPOT
                                                        offer {
                                                          provider: "aws"
                                                          instance_type: "p5.48xlarge"
                                                          region: "us-east-1"
                                                          gpu_model: "H100-SXM"
                                                          gpus_per_node: 8
                                                          nodes: 1
                                                        }
                                                        estimated_hours: 3.5
                                                        gpu_memory_bytes: 80000000000
                                                        cost { usd_per_hour: 30 total_usd: 105 }
                                                      }
                                                      recommendations {
                                                        rank: 2
                                                        purchase_option: PURCHASE_OPTION_ON_DEMAND
                                                        offer {
                                                          provider: "coreweave"
                                                          instance_type: "gd-8xh100ib-i128"
                                                          region: "US-EAST-04"
                                                          gpu_model: "H100-SXM"
                                                          gpus_per_node: 8
                                                          nodes: 1
                                                        }
                                                        estimated_hours: 3.5
                                                        gpu_memory_bytes: 80000000000
                                                        cost { usd_per_hour: 49 total_usd: 171 }
                                                      }
                                                      recommendations {
                                                        rank: 3
                                                        purchase_option: PURCHASE_OPTION_ON_DEMAND
                                                        offer {
                                                          provider: "lambda"
                                                          instance_type: "gpu_8x_a100_80gb_sxm4"
                                                          region: "us-east-1"
                                                          gpu_model: "A100-80GB"
                                                          gpus_per_node: 8
                                                          nodes: 1
                                                        }
                                                        estimated_hours: 6
                                                        gpu_memory_bytes: 80000000000
                                                        cost { usd_per_hour: 14.3 total_usd: 180 }
                                                      }
                                                      recommendations {
                                                        rank: 4
                                                        purchase_option: PURCHASE_OPTION_ON_DEMAND
                                                        offer {
                                                          provider: "aws"
                                                          instance_type: "p5.48xlarge"
                                                          region: "us-east-1"
                                                          gpu_model: "H100-SXM"
                                                          gpus_per_node: 8
                                                          nodes: 1
                                                        }
                                                        estimated_hours: 3.5
                                                        gpu_memory_bytes: 80000000000
                                                        cost { usd_per_hour: 55 total_usd: 190 }
                                                      }
                                                      recommendations {
                                                        rank: 5
                                                        purchase_option: PURCHASE_OPTION_ON_DEMAND
                                                        offer {
                                                          provider: "aws"
                                                          instance_type: "p4d.24xlarge"
                                                          region: "us-east-1"
                                                          gpu_model: "A100-40GB"
                                                          gpus_per_node: 8
                                                          nodes: 2
                                                        }
                                                        estimated_hours: 4
                                                        gpu_memory_bytes: 40000000000
                                                        cost { usd_per_hour: 44 total_usd: 200 }
                                                      }
                                                      catalog_version: "c1"
                                                      price_book_version: "p1"
                                                      prices_as_of: "2026-11-29"
                                                      objective: OBJECTIVE_CHEAPEST
                                                    )pb",
                                                    &response));
  return response;
}

v1::RecommendRequest Request() {
  v1::RecommendRequest request;
  request.mutable_workload()->set_task(sizing::v1::TASK_LORA);
  request.mutable_workload()->mutable_model()->set_preset("llama-3.1-8b");
  return request;
}

TEST(ExportFormat, ParsesNamesCaseInsensitively) {
  EXPECT_EQ(ParseExportFormat("SkyPilot").value(), ExportFormat::kSkyPilot);
  EXPECT_EQ(ParseExportFormat("dstack").value(), ExportFormat::kDstack);
  EXPECT_EQ(ParseExportFormat("KARPENTER").value(), ExportFormat::kKarpenter);
  EXPECT_THAT(ParseExportFormat("terraform").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("format: \"terraform\"")));
}

TEST(Export, MappingDataIsCompiledIn) {
  EXPECT_THAT(OrchestratorsJson(), HasSubstr("\"skypilot_clouds\""));
  EXPECT_THAT(OrchestratorsJson(), HasSubstr("\"as_of\""));
}

TEST(Export, SkyPilotListsSupportedOffersInRankOrder) {
  absl::StatusOr<std::string> yaml =
      ExportRecommendations(ExportFormat::kSkyPilot, Request(), Answer());
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  const size_t first = yaml->find("instance_type: \"p5.48xlarge\"");
  const size_t third = yaml->find("instance_type: \"gpu_8x_a100_80gb_sxm4\"");
  ASSERT_NE(first, std::string::npos) << *yaml;
  ASSERT_NE(third, std::string::npos) << *yaml;
  EXPECT_LT(first, third);
  EXPECT_THAT(*yaml, HasSubstr("infra: \"aws/us-east-1\""));
  EXPECT_THAT(*yaml, HasSubstr("use_spot: true"));
  EXPECT_THAT(*yaml, HasSubstr("num_nodes: 1"));
  EXPECT_THAT(*yaml,
              HasSubstr("rank 2 coreweave/gd-8xh100ib-i128/US-EAST-04: SkyPilot has no cloud"));
  EXPECT_THAT(*yaml, HasSubstr("rank 5 aws/p4d.24xlarge/us-east-1: 2 nodes; this task has 1"));
}

TEST(Export, DstackCarriesProfileFields) {
  absl::StatusOr<std::string> yaml =
      ExportRecommendations(ExportFormat::kDstack, Request(), Answer());
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  EXPECT_THAT(*yaml, HasSubstr("type: task"));
  EXPECT_THAT(*yaml, HasSubstr("backends: [\"aws\", \"lambda\"]"));
  EXPECT_THAT(*yaml, HasSubstr("instance_types: [\"p5.48xlarge\", \"gpu_8x_a100_80gb_sxm4\"]"));
  EXPECT_THAT(*yaml, HasSubstr("name: [\"H100\", \"A100\"]"));
  EXPECT_THAT(*yaml, HasSubstr("memory: \"80GB..\""));
  EXPECT_THAT(*yaml, HasSubstr("spot_policy: auto"));
}

TEST(Export, KarpenterWeighsNodePoolsByRankInOneCluster) {
  absl::StatusOr<std::string> yaml =
      ExportRecommendations(ExportFormat::kKarpenter, Request(), Answer());
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  EXPECT_THAT(*yaml, HasSubstr("weight: 100"));
  EXPECT_THAT(*yaml, HasSubstr("weight: 99"));
  EXPECT_THAT(*yaml, HasSubstr("values: [\"spot\"]"));
  EXPECT_THAT(*yaml, HasSubstr("kind: \"EC2NodeClass\""));
  EXPECT_THAT(
      *yaml,
      HasSubstr("rank 3 lambda/gpu_8x_a100_80gb_sxm4/us-east-1: Karpenter has no node class"));
  // rank 4 is the same instance type on demand: its own pool.
  EXPECT_THAT(*yaml, HasSubstr("name: \"gpu-advisor-4-p5-48xlarge-on-demand\""));
  EXPECT_THAT(*yaml, Not(HasSubstr("weight: 97")));
}

TEST(Export, NothingToExportIsNotFound) {
  v1::RecommendResponse empty;
  EXPECT_THAT(ExportRecommendations(ExportFormat::kSkyPilot, Request(), empty).status(),
              StatusIs(absl::StatusCode::kNotFound));
  v1::RecommendResponse only_coreweave;
  *only_coreweave.add_recommendations() = Answer().recommendations(1);
  absl::StatusOr<std::string> none =
      ExportRecommendations(ExportFormat::kKarpenter, Request(), only_coreweave);
  EXPECT_THAT(none.status(), StatusIs(absl::StatusCode::kNotFound, HasSubstr("coreweave")));
}

}  // namespace
}  // namespace gpuadvisor::gateway
