#include "services/catalog/import/gpu_match.h"

#include "gtest/gtest.h"
#include "services/catalog/import/import_test_util.h"

namespace gpuadvisor::catalog {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

// The same GPU as each source spells it gets one canonical name.
TEST(MatchGpu, EverySourcesSpellingOfAGpu) {
  struct Case {
    const char* name;
    int64_t memory_per_gpu;
    const char* hints;
    const char* canonical;
  } const cases[] = {
      {"H100 SXM", 81559 * kMiB, "", "H100-SXM"},        // Vast
      {"H100", 80000000000, "p5.48xlarge", "H100-SXM"},  // gpuhunt
      {"H100-SXM", 0, "", "H100-SXM"},                   // SkyPilot
      {"H100 PCIE", 81559 * kMiB, "", "H100-PCIE"},      // Vast
      {"H100", 80000000000, "gpu_1x_h100_pcie", "H100-PCIE"},
      {"H100 NVL", 95830 * kMiB, "", "H100-NVL"},
      {"A100 SXM4", 81920 * kMiB, "", "A100-80GB"},
      {"A100 PCIE", 81920 * kMiB, "", "A100-80GB-PCIE"},
      {"A100", 40000000000, "", "A100-40GB"},
      {"Nvidia Tesla A100", 0, "", "A100-40GB"},  // GCP SKU spelling
      {"RTX 6000Ada", 49140 * kMiB, "", "RTX-6000-ADA"},
      {"RTX A6000", 49140 * kMiB, "", "RTX-A6000"},
      {"Tesla V100", 16384 * kMiB, "", "V100"},
      {"RTX 4090", 24564 * kMiB, "", "RTX-4090"},
      {"L40S", 46068 * kMiB, "", "L40S"},
  };
  for (const Case& c : cases) {
    const std::optional<std::string> got =
        MatchGpu(TestGpuResolver(), c.name, c.memory_per_gpu, c.hints);
    ASSERT_TRUE(got.has_value()) << c.name;
    EXPECT_EQ(*got, c.canonical) << c.name << " / " << c.hints;
  }
  EXPECT_FALSE(MatchGpu(TestGpuResolver(), "Fancy 9000", 0).has_value());
  EXPECT_FALSE(MatchGpu(TestGpuResolver(), "PCIE", 0).has_value());
}

}  // namespace
}  // namespace gpuadvisor::catalog
