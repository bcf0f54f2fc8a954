#include "services/gateway/region_groups.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::gateway {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

TEST(GlobMatch, StarsAndCase) {
  EXPECT_TRUE(GlobMatchIgnoringCase("eu-*", "EU-central-1"));
  EXPECT_TRUE(GlobMatchIgnoringCase("*, DE, EU", "Bavaria, DE, EU"));
  EXPECT_TRUE(GlobMatchIgnoringCase("*us", "eastus"));
  EXPECT_FALSE(GlobMatchIgnoringCase("*us", "eastus2"));
  EXPECT_TRUE(GlobMatchIgnoringCase("*", ""));
  EXPECT_FALSE(GlobMatchIgnoringCase("eu-central-1", "eu-central-10"));
  EXPECT_TRUE(GlobMatchIgnoringCase("a*b*c", "axxbyybc"));
}

// The shipped data file: it must load (CI runs from a clean clone), and the
// political and continental groups must differ where geography says so.
TEST(RegionGroups, DataFileLoadsAndDistinguishesEuFromEurope) {
  absl::StatusOr<RegionGroups> groups =
      RegionGroups::FromFile(GPUADVISOR_SOURCE_DIR "/data/gateway/regions.textproto");
  ASSERT_OK(groups);
  ASSERT_FALSE(groups->names().empty());
  const RegionGroups::Group* eu = groups->Find("EU");
  const RegionGroups::Group* europe = groups->Find("europe");
  const RegionGroups::Group* us = groups->Find("USA");
  const RegionGroups::Group* de = groups->Find("de");
  ASSERT_NE(eu, nullptr);
  ASSERT_NE(europe, nullptr);
  ASSERT_NE(us, nullptr);
  ASSERT_NE(de, nullptr);
  EXPECT_TRUE(RegionGroups::Contains(*eu, "aws", "eu-central-1"));
  EXPECT_TRUE(RegionGroups::Contains(*eu, "vast", "Bavaria, DE, EU"));
  EXPECT_FALSE(RegionGroups::Contains(*eu, "aws", "eu-west-2"));  // London
  EXPECT_TRUE(RegionGroups::Contains(*europe, "aws", "eu-west-2"));
  EXPECT_FALSE(RegionGroups::Contains(*eu, "vast", "United Kingdom, GB, EU"));
  EXPECT_TRUE(RegionGroups::Contains(*europe, "vast", "United Kingdom, GB, EU"));
  EXPECT_TRUE(RegionGroups::Contains(*europe, "hyperstack", "NORWAY-1"));
  EXPECT_TRUE(RegionGroups::Contains(*us, "hyperstack", "US-1"));
  EXPECT_TRUE(RegionGroups::Contains(*us, "azure", "eastus"));
  EXPECT_FALSE(RegionGroups::Contains(*us, "hyperstack", "CANADA-1"));
  EXPECT_FALSE(RegionGroups::Contains(*us, "aws", "eu-central-1"));
  EXPECT_TRUE(RegionGroups::Contains(*de, "gcp", "europe-west3"));
  // A Vast host that gives no place: "<country>, <continent>", no empty part.
  EXPECT_TRUE(RegionGroups::Contains(*us, "vast", "US, NA"));
  EXPECT_TRUE(RegionGroups::Contains(*us, "vast", "Texas, US, NA"));
  EXPECT_FALSE(RegionGroups::Contains(*us, "vast", "CA, NA"));
  EXPECT_TRUE(RegionGroups::Contains(*eu, "vast", "FR, EU"));
  EXPECT_TRUE(RegionGroups::Contains(*de, "vast", "DE, EU"));
  EXPECT_FALSE(RegionGroups::Contains(*eu, "vast", "GB, EU"));
  EXPECT_TRUE(RegionGroups::Contains(*europe, "vast", "GB, EU"));
  EXPECT_FALSE(RegionGroups::Contains(*europe, "vast", "US, NA"));
  // "<city>-<country>-<n>" names, whichever neocloud uses them.
  EXPECT_TRUE(RegionGroups::Contains(*eu, "scaleway", "paris-france-1"));
  EXPECT_TRUE(RegionGroups::Contains(*us, "crusoe", "houston-usa-2"));
  EXPECT_FALSE(RegionGroups::Contains(*us, "denvr", "calgary-canada-1"));
  // A pattern for one provider does not match another's region of that name.
  EXPECT_FALSE(RegionGroups::Contains(*eu, "crusoe", "eu-central-1"));
  EXPECT_EQ(groups->Find("global"), nullptr);
}

TEST(RegionGroups, RejectsBadFilesNamingTheField) {
  auto parse = [](const std::string& text) {
    v1::RegionGroupList list;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &list));
    return RegionGroups::FromProto(list);
  };
  EXPECT_THAT(
      parse(
          R"(groups { name: "a" regions { pattern: "x" } } groups { name: "A" regions { pattern: "y" } })"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("groups[1].name: duplicate")));
  EXPECT_THAT(parse(R"(groups { name: "a" includes: "b" } groups { name: "b" includes: "a" })"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cycle")));
  EXPECT_THAT(parse(R"(groups { name: "a" includes: "nope" })"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("groups[0].includes[0]: unknown group")));
  EXPECT_THAT(
      parse(R"(groups { name: "a" regions { provider: "aws" } })"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("groups[0].regions[0].pattern")));
  EXPECT_THAT(parse(R"(groups { name: "a" })"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("groups[0]")));
}

}  // namespace
}  // namespace gpuadvisor::gateway
