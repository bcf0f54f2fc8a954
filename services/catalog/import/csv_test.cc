#include "services/catalog/import/csv.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::catalog {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseCsv, QuotingLineEndsAndUtf8) {
  const std::string text =
      "\xEF\xBB\xBF"
      "a,b,c\r\n"
      "1,\"x, y\",\"say \"\"hi\"\"\"\r\n"
      "\r\n"
      "2,\"Hafnarfjar\xC3\xB0"
      "arkaupsta\xC3\xB0ur, IS, EU\",\"two\nlines\"\n"
      "3,,\n"
      "4,last,no-newline";
  absl::StatusOr<std::vector<CsvRecord>> records = ParseCsv(text, "t.csv");
  ASSERT_OK(records);
  ASSERT_EQ(records->size(), 5u);
  EXPECT_THAT((*records)[0].fields, ElementsAre("a", "b", "c"));
  EXPECT_THAT((*records)[1].fields, ElementsAre("1", "x, y", "say \"hi\""));
  EXPECT_EQ((*records)[2].line, 4);
  EXPECT_THAT((*records)[2].fields, ElementsAre("2",
                                                "Hafnarfjar\xC3\xB0"
                                                "arkaupsta\xC3\xB0ur, IS, EU",
                                                "two\nlines"));
  EXPECT_EQ((*records)[3].line, 6);
  EXPECT_THAT((*records)[3].fields, ElementsAre("3", "", ""));
  EXPECT_THAT((*records)[4].fields, ElementsAre("4", "last", "no-newline"));
}

TEST(ParseCsv, MalformedInputNamesTheLine) {
  EXPECT_THAT(ParseCsv("a,b\n1,\"open\n2,3\n", "f.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("f.csv:2: unterminated quoted field")));
  EXPECT_THAT(ParseCsv("a,b\n1,\"q\"x\n", "f.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("f.csv:2: text after the closing quote of field 2")));
}

TEST(CsvHeader, FindsColumnsByNameAndToleratesShortRows) {
  absl::StatusOr<std::vector<CsvRecord>> records =
      ParseCsv("instance_name, price ,flags\r\ni1,1.5\r\ni2,2.0,a b\r\n", "g.csv");
  ASSERT_OK(records);
  ASSERT_EQ(records->size(), 3u);
  const CsvHeader header((*records)[0]);
  EXPECT_EQ(header.size(), 3u);
  EXPECT_EQ(header.Find("price"), 1u);
  EXPECT_EQ(header.Find("missing"), std::nullopt);
  EXPECT_EQ(header.Cell((*records)[1], "price"), "1.5");
  EXPECT_EQ(header.Cell((*records)[1], "flags"), "");  // older file: trailing column absent
  EXPECT_EQ(header.Cell((*records)[2], "flags"), "a b");
  EXPECT_EQ(header.Cell((*records)[2], "missing"), "");
}

}  // namespace
}  // namespace gpuadvisor::catalog
