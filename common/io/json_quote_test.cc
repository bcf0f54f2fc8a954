#include "common/io/json_quote.h"

#include "gtest/gtest.h"

namespace gpuadvisor {
namespace {

TEST(JsonQuote, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonQuote(""), "\"\"");
  EXPECT_EQ(JsonQuote("Sweden, SE, EU"), "\"Sweden, SE, EU\"");
  EXPECT_EQ(JsonQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonQuote("line\nnext\ttab"), "\"line\\nnext\\ttab\"");
  EXPECT_EQ(JsonQuote(std::string("\x01", 1)), "\"\\u0001\"");
  EXPECT_EQ(JsonQuote("Zürich"), "\"Zürich\"");  // UTF-8 passes through
}

}  // namespace
}  // namespace gpuadvisor
