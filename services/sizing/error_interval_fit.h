#ifndef GPUADVISOR_SERVICES_SIZING_ERROR_INTERVAL_FIT_H_
#define GPUADVISOR_SERVICES_SIZING_ERROR_INTERVAL_FIT_H_

// Fits the measured error per quantity and framework class
// (gpuadvisor.sizing.v1.ErrorInterval, data/sizing/error_intervals.textproto)
// from the calibration rows' errors. Test-side: sizing_calibration_test runs
// every published row through Estimate, fits these and checks them against the
// data file (or writes it). docs/sizing.md "Intervals" describes the method:
//
// - A row's error is the ratio true / estimated of the quantity as the
//   estimate reads it (a speed: published tokens/s over estimated; a time
//   such as hours is converted to the speed it implies).
// - Each publication (source) weighs the same, whatever its number of rows.
// - Leave one source out: for each source, the centre (weighted median of
//   log ratios) is taken over the other sources only, and that source's rows
//   are measured against it; the interval is the centre of all sources plus
//   the 10th and 90th weighted percentiles of those held-out residuals.
// - With one source only, leave-one-source-out has nothing to fit on: the
//   in-sample percentiles, widened to at least the rows' median tolerance.
// - A framework with at least `min_sources` sources gets its own entry; every
//   quantity gets a catch-all entry over all its rows.

#include <string>
#include <vector>

#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::sizing {

struct ErrorRow {
  gpuadvisor::sizing::v1::ErrorQuantity quantity =
      gpuadvisor::sizing::v1::ERROR_QUANTITY_UNSPECIFIED;
  std::string framework;  // the profile the estimate used
  std::string source;     // publication key (SourceKey)
  double ratio = 1;       // true / estimated, > 0
  double tolerance = 0;   // the row's calibration tolerance
};

// The publication a calibration `source` text names: the text up to its first
// '(', ',' or ';', trimmed ("Llama 3 paper (Dubey et al., ...) Table 4" ->
// "Llama 3 paper").
std::string SourceKey(const std::string& source);

// Weighted percentile (0..1) with linear interpolation between the weighted
// mid-points of the sorted values. `values` and `weights` have equal sizes.
double WeightedPercentile(std::vector<double> values, std::vector<double> weights, double q);

// Entries ordered by quantity, frameworks with their own entry first (by
// name), then the catch-all. Ratios rounded to 3 decimals.
std::vector<gpuadvisor::sizing::v1::ErrorInterval> FitErrorIntervals(
    const std::vector<ErrorRow>& rows, int min_sources = 3);

// The data file's text: a header saying how it is made, then a
// SizingProfiles with only error_intervals.
std::string ErrorIntervalsFileText(
    const std::vector<gpuadvisor::sizing::v1::ErrorInterval>& intervals);

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_ERROR_INTERVAL_FIT_H_
