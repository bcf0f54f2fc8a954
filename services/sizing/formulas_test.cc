#include "services/sizing/formulas.h"

#include "gtest/gtest.h"

namespace gpuadvisor::sizing {
namespace {

TEST(Formulas, CollectivesAreZeroForOneRank) {
  EXPECT_EQ(AllReduceSeconds(1e9, 1, 1e9), 0.0);
  EXPECT_EQ(AllGatherSeconds(1e9, 1, 1e9), 0.0);
  EXPECT_DOUBLE_EQ(AllReduceSeconds(1e9, 2, 1e9), 1.0);
  EXPECT_DOUBLE_EQ(AllGatherSeconds(1e9, 2, 1e9), 0.5);
}

TEST(Formulas, KvCacheMhaAndMla) {
  // Llama-2-7B: 2 x 32 x 32 x 128 x 2 bytes = 512 KiB per token.
  EXPECT_DOUBLE_EQ(KvCacheBytesPerToken(32, 32, 128, 0, 0, 2.0), 524288.0);
  // DeepSeek-V3 MLA: 61 x (512 + 64) x 2 = 70,272 bytes per token.
  EXPECT_DOUBLE_EQ(KvCacheBytesPerToken(61, 128, 128, 512, 64, 2.0), 70272.0);
}

}  // namespace
}  // namespace gpuadvisor::sizing
