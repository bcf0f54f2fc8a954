#include "services/cli/table.h"

#include <string>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuadvisor::cli {
namespace {

TEST(Table, CutsTheLastColumnToTheWidth) {
  const std::string warning(400, 'w');
  const std::string table = RenderTable({{"RANK", "TOP WARNING"}, {"1", warning}}, 80);
  for (absl::string_view line : absl::StrSplit(table, '\n', absl::SkipEmpty())) {
    EXPECT_LE(DisplayWidth(line), 80u) << line;
  }
  EXPECT_NE(table.find("www..."), std::string::npos);
  // No limit: the whole text.
  EXPECT_NE(RenderTable({{"RANK", "TOP WARNING"}, {"1", warning}}, 0).find(warning),
            std::string::npos);
}

TEST(Table, KeepsAtLeastSomeOfTheLastColumnAndWholeCharacters) {
  // The other columns alone pass the width: the last keeps 24 characters.
  const std::string table =
      RenderTable({{std::string(100, 'x'), "W"}, {"y", "ünïcödé ünïcödé ünïcödé ünïcödé"}}, 80);
  EXPECT_NE(table.find("ünïcödé ünïcödé ünïcö..."), std::string::npos) << table;
  EXPECT_EQ(CutToWidth("short", 10), "short");
  EXPECT_EQ(CutToWidth("exactly ten", 11), "exactly ten");
  EXPECT_EQ(CutToWidth("a long warning", 9), "a long...");
}

}  // namespace
}  // namespace gpuadvisor::cli
