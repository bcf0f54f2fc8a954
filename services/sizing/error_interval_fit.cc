#include "services/sizing/error_interval_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;

double Round3(double x) { return std::round(x * 1000.0) / 1000.0; }

struct PoolFit {
  double p10 = 1, p50 = 1, p90 = 1, in10 = 1, in90 = 1;
  int rows = 0;
  std::vector<std::string> sources;
  std::string method;
};

// Log ratios of `rows`, each weighted 1 / (sources x rows of its source).
PoolFit FitPool(const std::vector<const ErrorRow*>& rows) {
  std::map<std::string, std::vector<double>> by_source;
  for (const ErrorRow* r : rows) by_source[r->source].push_back(std::log(r->ratio));
  PoolFit fit;
  fit.rows = static_cast<int>(rows.size());
  std::vector<double> x, w;
  for (const auto& [source, logs] : by_source) {
    fit.sources.push_back(source);
    for (double l : logs) {
      x.push_back(l);
      w.push_back(1.0 / (by_source.size() * logs.size()));
    }
  }
  const double centre = WeightedPercentile(x, w, 0.5);
  fit.in10 = std::exp(WeightedPercentile(x, w, 0.1));
  fit.in90 = std::exp(WeightedPercentile(x, w, 0.9));
  if (by_source.size() < 2) {
    std::vector<double> tolerances;
    for (const ErrorRow* r : rows) tolerances.push_back(r->tolerance);
    std::sort(tolerances.begin(), tolerances.end());
    const double tol = tolerances.empty() ? 0 : tolerances[tolerances.size() / 2];
    fit.p10 = std::min(fit.in10, 1.0 / (1.0 + tol));
    fit.p90 = std::max(fit.in90, 1.0 + tol);
    fit.p50 = std::clamp(std::exp(centre), fit.p10, fit.p90);
    fit.method = absl::StrFormat(
        "in-sample, one source (leave-one-source-out needs two), widened to the rows' "
        "tolerance (%.0f%%)",
        tol * 100);
    return fit;
  }
  // Held-out residuals: each source against the centre of the others.
  std::vector<double> y, wy;
  for (const auto& [source, logs] : by_source) {
    std::vector<double> ox, ow;
    for (const auto& [other, other_logs] : by_source) {
      if (other == source) continue;
      for (double l : other_logs) {
        ox.push_back(l);
        ow.push_back(1.0 / other_logs.size());
      }
    }
    const double centre_without = WeightedPercentile(ox, ow, 0.5);
    for (double l : logs) {
      y.push_back(centre + (l - centre_without));
      wy.push_back(1.0 / logs.size());
    }
  }
  fit.p10 = std::exp(WeightedPercentile(y, wy, 0.1));
  fit.p90 = std::exp(WeightedPercentile(y, wy, 0.9));
  fit.p50 = std::clamp(std::exp(centre), fit.p10, fit.p90);
  fit.method = "leave-one-source-out";
  return fit;
}

v1::ErrorInterval ToProto(v1::ErrorQuantity q, std::vector<std::string> frameworks,
                          const PoolFit& f) {
  v1::ErrorInterval e;
  e.set_quantity(q);
  for (std::string& name : frameworks) e.add_frameworks(std::move(name));
  e.set_p10_ratio(Round3(f.p10));
  e.set_p50_ratio(Round3(f.p50));
  e.set_p90_ratio(Round3(f.p90));
  e.set_in_sample_p10_ratio(Round3(f.in10));
  e.set_in_sample_p90_ratio(Round3(f.in90));
  e.set_rows(f.rows);
  e.set_sources(static_cast<int>(f.sources.size()));
  e.set_method(f.method);
  e.set_source(
      absl::StrCat("data/sizing/calibration.textproto, rows of: ", absl::StrJoin(f.sources, "; ")));
  return e;
}

}  // namespace

std::string SourceKey(const std::string& source) {
  const size_t end = source.find_first_of("(,;");
  return std::string(absl::StripAsciiWhitespace(source.substr(0, end)));
}

double WeightedPercentile(std::vector<double> values, std::vector<double> weights, double q) {
  if (values.empty()) return 0;
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<double> mid(order.size());
  double cum = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    mid[k] = (cum + weights[order[k]] / 2) / total;
    cum += weights[order[k]];
  }
  if (q <= mid.front()) return values[order.front()];
  if (q >= mid.back()) return values[order.back()];
  for (size_t k = 1; k < order.size(); ++k) {
    if (q <= mid[k]) {
      const double t = (q - mid[k - 1]) / (mid[k] - mid[k - 1]);
      return values[order[k - 1]] + t * (values[order[k]] - values[order[k - 1]]);
    }
  }
  return values[order.back()];
}

std::vector<v1::ErrorInterval> FitErrorIntervals(const std::vector<ErrorRow>& rows,
                                                 int min_sources) {
  std::map<int, std::vector<const ErrorRow*>> by_quantity;
  for (const ErrorRow& r : rows) {
    if (r.ratio > 0 && std::isfinite(r.ratio)) by_quantity[r.quantity].push_back(&r);
  }
  std::vector<v1::ErrorInterval> out;
  for (const auto& [q, all] : by_quantity) {
    std::map<std::string, std::vector<const ErrorRow*>> by_framework;
    for (const ErrorRow* r : all) by_framework[absl::AsciiStrToLower(r->framework)].push_back(r);
    for (const auto& [framework, frows] : by_framework) {
      std::set<std::string> sources;
      for (const ErrorRow* r : frows) sources.insert(r->source);
      if (static_cast<int>(sources.size()) < min_sources) continue;
      out.push_back(ToProto(static_cast<v1::ErrorQuantity>(q), {framework}, FitPool(frows)));
    }
    out.push_back(ToProto(static_cast<v1::ErrorQuantity>(q), {}, FitPool(all)));
  }
  return out;
}

std::string ErrorIntervalsFileText(const std::vector<v1::ErrorInterval>& intervals) {
  v1::SizingProfiles data;
  for (const v1::ErrorInterval& e : intervals) *data.add_error_intervals() = e;
  std::string body;
  google::protobuf::TextFormat::PrintToString(data, &body);
  return absl::StrCat(
      "# Measured error of the sizing engine per quantity and framework class, as\n"
      "# ratios true / estimated at the 10th, 50th and 90th percentile: the P10-P90\n"
      "# intervals of every estimate (ConfigurationEstimate.*_interval). Format:\n"
      "# gpuadvisor.sizing.v1.SizingProfiles, error_intervals only.\n"
      "#\n"
      "# GENERATED from data/sizing/calibration.textproto by sizing_calibration_test,\n"
      "# which fails when this file differs from what the calibration rows give:\n"
      "#   CALIBRATION_WRITE_ERROR_INTERVALS=1 build/services/sizing/sizing_calibration_test\n"
      "# Method (services/sizing/error_interval_fit.h, docs/sizing.md \"Intervals\"):\n"
      "# each publication weighs the same; leave one source out (the centre is fitted\n"
      "# on the other sources, the held-out rows give the spread); one source only:\n"
      "# in-sample, widened to the rows' tolerance. Do not edit by hand.\n\n",
      body);
}

}  // namespace gpuadvisor::sizing
