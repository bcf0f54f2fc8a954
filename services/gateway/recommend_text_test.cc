// Number formatting of the answer texts (recommend_text.h): Fixed() prints
// what printf's "%.<precision>f" prints, whichever path it takes.

#include "services/gateway/recommend_text.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace gpuadvisor::gateway::recommend {
namespace {

std::string Printf(double value, int precision) {
  return absl::StrFormat("%.*f", precision, value);
}

TEST(FixedTest, MatchesPrintfOnEdgeCases) {
  const std::vector<double> values = {0.0,
                                      -0.0,
                                      0.5,
                                      1.5,
                                      2.5,
                                      0.125,
                                      0.375,
                                      1.005,
                                      2.675,
                                      -0.001,
                                      -0.004999,
                                      -2.5,
                                      9.9999999,
                                      99.995,
                                      1e-300,
                                      123456789.123456,
                                      1099511627775.75,  // just under 2^40
                                      1099511627776.0,   // 2^40: to_chars
                                      1e20,
                                      -1e20,
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN()};
  for (double v : values) {
    for (int precision = 0; precision <= 8; ++precision) {
      EXPECT_EQ(Fixed(v, precision), Printf(v, precision)) << v << " at " << precision;
    }
  }
}

TEST(FixedTest, MatchesPrintfOnRandomValues) {
  std::mt19937_64 random(21);
  std::uniform_real_distribution<double> exponent(-8, 13);
  std::uniform_int_distribution<int> precision_of(0, 6);
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    double v = std::pow(10.0, exponent(random)) * (random() % 2 == 0 ? 1 : -1);
    // Values on a grid of halves at the printed precision test the ties.
    if (i % 4 == 0) v = std::round(v * 1000) / 1000 + 0.0005;
    const int precision = precision_of(random);
    ASSERT_EQ(Fixed(v, precision), Printf(v, precision)) << v << " at " << precision;
    ++checked;
  }
  EXPECT_EQ(checked, 200000);
}

TEST(FixedTest, GeneralMatchesPrintfG) {
  for (double v :
       {0.0, -0.0, 1.0, 10.0, -10.0, 999999.0, 1e6, 1234567.0, 0.5, 2.25, 1e-5, 12.3456789, -3.0,
        1e300, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_EQ(General(v), absl::StrFormat("%g", v)) << v;
  }
}

TEST(FixedTest, SignedFixedAlwaysHasASign) {
  EXPECT_EQ(SignedFixed(1.25, 1), "+1.2");
  EXPECT_EQ(SignedFixed(-1.26, 1), "-1.3");
  EXPECT_EQ(SignedFixed(0, 0), "+0");
}

}  // namespace
}  // namespace gpuadvisor::gateway::recommend
