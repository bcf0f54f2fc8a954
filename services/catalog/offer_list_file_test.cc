#include "services/catalog/offer_list_file.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::catalog::v1::OfferList;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

OfferList Sample(int n) {
  OfferList list;
  list.set_source("refresher: bench");
  for (int i = 0; i < n; ++i) {
    v1::Offer* o = list.add_offers();
    o->set_id(absl::StrCat("p/i/r-", i));
    o->set_on_demand_usd_per_hour(1.5 + i);
    o->set_source("refresh bench at 2026-12-04T00:00:00Z");
  }
  list.add_sources()->set_name("bench");
  return list;
}

TEST(OfferListFile, FormatFollowsTheName) {
  EXPECT_EQ(OfferListFileFormatFor("/x/refreshed.textproto"), OfferListFileFormat::kText);
  EXPECT_EQ(OfferListFileFormatFor("refreshed.txtpb"), OfferListFileFormat::kText);
  EXPECT_EQ(OfferListFileFormatFor("/x/refreshed.binpb"), OfferListFileFormat::kBinary);
  EXPECT_EQ(OfferListFileFormatFor("/x/refreshed"), OfferListFileFormat::kBinary);
}

TEST(OfferListFile, BothFormsReadBackTheSameList) {
  const OfferList list = Sample(3);
  for (OfferListFileFormat format : {OfferListFileFormat::kBinary, OfferListFileFormat::kText}) {
    const std::string bytes = EncodeOfferListFile(list, format, "# a comment\n");
    absl::StatusOr<OfferList> back = DecodeOfferListFile(bytes, "f");
    ASSERT_TRUE(back.ok()) << back.status();
    ASSERT_EQ(back->offers_size(), 3);
    EXPECT_EQ(back->offers(2).id(), "p/i/r-2");
    EXPECT_EQ(back->offers(2).on_demand_usd_per_hour(), 3.5);
    EXPECT_EQ(back->source(), "refresher: bench");
    EXPECT_EQ(back->sources(0).name(), "bench");
  }
  EXPECT_THAT(EncodeOfferListFile(list, OfferListFileFormat::kBinary),
              StartsWith("gpuadvisor-offer-list 1 offers=3 bytes="));
}

// A binary file cut short, appended to, flipped or with a wrong count is
// never read as a (partial) list.
TEST(OfferListFile, DamagedBinaryFilesAreDataLoss) {
  const std::string good = EncodeOfferListFile(Sample(50), OfferListFileFormat::kBinary);
  EXPECT_THAT(DecodeOfferListFile(good.substr(0, good.size() - 7), "f").status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("truncated")));
  EXPECT_THAT(DecodeOfferListFile(good + "x", "f").status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("appended")));
  std::string flipped = good;
  flipped[flipped.size() - 3] ^= 0x5a;
  EXPECT_THAT(DecodeOfferListFile(flipped, "f").status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum")));
  std::string counted = good;
  counted.replace(counted.find("offers=50"), 9, "offers=51");
  EXPECT_THAT(DecodeOfferListFile(counted, "f").status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("header says 51")));
  EXPECT_THAT(DecodeOfferListFile("gpuadvisor-offer-list 1\n", "f").status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("f: ")));
}

TEST(OfferListFile, TextSyntaxErrorsNameTheLine) {
  EXPECT_THAT(DecodeOfferListFile("offers {\n  id: \"a\"\n  nope: 1\n}\n", "r.textproto").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("r.textproto:3")));
}

}  // namespace
}  // namespace gpuadvisor::catalog
