#include "common/validation/name_match.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuadvisor::validation {
namespace {

using ::testing::ElementsAre;

TEST(ClosestNames, ContainingNamesFirstThenEditDistance) {
  EXPECT_THAT(ClosestNames("AWS", {"azure", "aws", "lambda"}, 2), ElementsAre("aws", "azure"));
  EXPECT_THAT(ClosestNames("eu-centrl-1", {"us-east-1", "eu-central-1", "eu-west-1"}, 1),
              ElementsAre("eu-central-1"));
  EXPECT_THAT(ClosestNames("x", {}, 3), ::testing::IsEmpty());
}

TEST(ClosestNames, NamesAModelPresetOfAnotherSize) {
  const std::vector<std::string> presets = {"llama-3.1-8b", "qwen2.5-7b", "qwen2.5-32b",
                                            "mistral-7b"};
  const std::vector<std::string> closest = ClosestNames("qwen2.5-14b", presets, 2);
  ASSERT_FALSE(closest.empty());
  EXPECT_THAT(closest, ElementsAre("qwen2.5-32b", "qwen2.5-7b"));  // ties by name
}

}  // namespace
}  // namespace gpuadvisor::validation
