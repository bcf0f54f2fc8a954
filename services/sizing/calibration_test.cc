// Calibration: the sizing engine against published measurements.
//
// Every case in data/sizing/calibration.textproto (schema: calibration.proto)
// is a workload and one GPU configuration as a client sends them, sized
// through SizingModel::Estimate (the call the gRPC service makes), and one
// published number with its source and a tolerance the source justifies. The
// test prints every case's error and a summary per quantity (median and worst
// error), and asserts the targets of docs/sizing.md "Calibration" over the
// cases not marked as known engine gaps: at least 60 of them, at least 90%
// within tolerance and none off by more than 2x. Known gaps (`engine_gap`)
// are run and reported; pending cases (setups the contract cannot express
// yet) are listed with their reason and not run.
//
// Reproduce: build/services/sizing/sizing_calibration_test (with
// CALIBRATION_SUMMARY_MD=<file> it also writes the summary as Markdown, with
// CALIBRATION_DUMP=<file> every case's whole answer).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/sizing/calibration.pb.h"
#include "services/sizing/error_interval_fit.h"
#include "services/sizing/shipped_model_for_test.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;
namespace cal = ::gpuadvisor::sizing::calibration;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;

constexpr char kCasesPath[] = GPUADVISOR_SOURCE_DIR "/data/sizing/calibration.textproto";
constexpr char kErrorIntervalsPath[] =
    GPUADVISOR_SOURCE_DIR "/data/sizing/error_intervals.textproto";
constexpr int kMinActiveCases = 60;
constexpr double kMaxRatio = 2.0;

class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    errors += absl::StrFormat("%s:%d:%d: %s\n", kCasesPath, line + 1, column + 1, message);
  }
  std::string errors;
};

absl::StatusOr<cal::CaseList> LoadCases() {
  std::ifstream in(kCasesPath);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", kCasesPath));
  std::stringstream text;
  text << in.rdbuf();
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  cal::CaseList cases;
  if (!parser.ParseFromString(text.str(), &cases)) {
    return absl::InvalidArgumentError(errors.errors);
  }
  return cases;
}

// Units: what one `unit` is in the quantity's base unit (bytes, tokens/s,
// seconds, hours, fraction, count).
enum class Dim { kBytes, kRate, kSeconds, kHours, kFraction, kCount };

Dim DimensionOf(cal::Quantity q) {
  switch (q) {
    case cal::MEMORY_PER_GPU:
    case cal::MODEL_STATES_PER_GPU:
    case cal::ACTIVATIONS_PER_GPU:
    case cal::WEIGHTS_TOTAL:
    case cal::KV_CACHE_PER_GPU:
    case cal::MIN_VRAM_SINGLE_GPU:
    case cal::WEIGHTS_AND_OVERHEAD_PER_GPU:
      return Dim::kBytes;
    case cal::TRAIN_TOKENS_PER_SECOND_PER_GPU:
    case cal::TRAIN_TOKENS_PER_SECOND:
    case cal::DECODE_TOKENS_PER_SECOND:
    case cal::BATCH_OUTPUT_TOKENS_PER_SECOND_PER_GPU:
    case cal::BATCH_OUTPUT_TOKENS_PER_SECOND:
      return Dim::kRate;
    case cal::STEP_SECONDS:
    case cal::TIME_TO_FIRST_TOKEN_SECONDS:
      return Dim::kSeconds;
    case cal::GPU_HOURS:
    case cal::WALL_HOURS:
      return Dim::kHours;
    case cal::MFU:
      return Dim::kFraction;
    default:
      return Dim::kCount;
  }
}

std::optional<double> UnitFactor(Dim dim, const std::string& unit) {
  static const std::map<std::pair<Dim, std::string>, double> kUnits = {
      {{Dim::kBytes, "B"}, 1.0},
      {{Dim::kBytes, "MB"}, 1e6},
      {{Dim::kBytes, "MiB"}, 1048576.0},
      {{Dim::kBytes, "GB"}, 1e9},
      {{Dim::kBytes, "GiB"}, 1073741824.0},
      {{Dim::kRate, "tokens/s"}, 1.0},
      {{Dim::kSeconds, "s"}, 1.0},
      {{Dim::kSeconds, "ms"}, 1e-3},
      {{Dim::kHours, "h"}, 1.0},
      {{Dim::kHours, "days"}, 24.0},
      {{Dim::kFraction, "fraction"}, 1.0},
      {{Dim::kFraction, "%"}, 0.01},
      {{Dim::kCount, "count"}, 1.0},
      {{Dim::kCount, "bool"}, 1.0},
  };
  auto it = kUnits.find({dim, unit});
  if (it == kUnits.end()) return std::nullopt;
  return it->second;
}

// The first numeric field (depth-first, through singular sub-messages) whose
// name contains `part`: lets a case read an output the contract gains later
// (time to first token, maximum concurrency) without a schema change here.
std::optional<double> FindNumber(const Message& m, const std::string& part, int depth = 0) {
  const auto* d = m.GetDescriptor();
  const auto* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) continue;
    const bool match = absl::StrContains(f->name(), part);
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE:
        if (match) return r->GetDouble(m, f) * (absl::EndsWith(f->name(), "_ms") ? 1e-3 : 1.0);
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        if (match) return r->GetFloat(m, f);
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        if (match) return r->GetInt32(m, f);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        if (match) return static_cast<double>(r->GetInt64(m, f));
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (depth < 2 && r->HasField(m, f)) {
          if (auto v = FindNumber(r->GetMessage(m, f), part, depth + 1)) return v;
        }
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

bool ContractHas(const std::string& part) {
  v1::ConfigurationEstimate probe;
  // Populate every singular sub-message so FindNumber can walk them.
  std::vector<Message*> stack = {&probe};
  for (int depth = 0; depth < 2; ++depth) {
    std::vector<Message*> next;
    for (Message* m : stack) {
      for (int i = 0; i < m->GetDescriptor()->field_count(); ++i) {
        const FieldDescriptor* f = m->GetDescriptor()->field(i);
        if (!f->is_repeated() && f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
          next.push_back(m->GetReflection()->MutableMessage(m, f));
        }
      }
    }
    stack = next;
  }
  return FindNumber(probe, part).has_value();
}

// Why a quantity cannot be read from today's contract, or "".
std::string MissingOutput(cal::Quantity q) {
  if (q == cal::MAX_CONCURRENCY && !ContractHas("max_concurrency")) {
    return "the estimate has no maximum-concurrency output yet";
  }
  if (q == cal::KV_CACHE_CAPACITY_TOKENS && !ContractHas("kv_cache_capacity_tokens")) {
    return "the estimate has no KV-cache capacity output yet";
  }
  return "";
}

double Gpus(const v1::GpuConfiguration& c) {
  return std::max(1, c.gpus_per_node()) * std::max(1, c.nodes());
}

absl::StatusOr<double> Measure(const cal::Case& c, const v1::EstimateResponse& resp) {
  if (resp.estimates_size() != 1) return absl::InternalError("expected one estimate");
  const v1::ConfigurationEstimate& e = resp.estimates(0);
  const v1::Workload& w = c.request().workload();
  const double gpus = Gpus(c.request().configurations(0));
  switch (c.quantity()) {
    case cal::MEMORY_PER_GPU:
      return static_cast<double>(e.memory().total_bytes());
    case cal::MODEL_STATES_PER_GPU:
      return static_cast<double>(e.memory().weights_bytes() + e.memory().gradients_bytes() +
                                 e.memory().optimizer_bytes());
    case cal::ACTIVATIONS_PER_GPU:
      return static_cast<double>(e.memory().activations_bytes());
    case cal::WEIGHTS_TOTAL:
      return static_cast<double>(resp.totals().weights_bytes());
    case cal::KV_CACHE_PER_GPU:
      return static_cast<double>(e.memory().kv_cache_bytes());
    case cal::MIN_VRAM_SINGLE_GPU:
      return static_cast<double>(resp.totals().min_vram_bytes_single_gpu());
    case cal::WEIGHTS_AND_OVERHEAD_PER_GPU:
      return static_cast<double>(e.memory().weights_bytes() + e.memory().overhead_bytes());
    case cal::FITS:
      return e.fits() ? 1.0 : 0.0;
    case cal::TRAIN_TOKENS_PER_SECOND_PER_GPU:
      return e.tokens_per_second() / gpus;
    case cal::TRAIN_TOKENS_PER_SECOND:
    case cal::DECODE_TOKENS_PER_SECOND:
      return e.tokens_per_second();
    case cal::BATCH_OUTPUT_TOKENS_PER_SECOND_PER_GPU:
      if (e.estimated_hours() <= 0) return absl::InternalError("no estimated_hours");
      return w.requests() * w.output_tokens() / (e.estimated_hours() * 3600.0) / gpus;
    case cal::BATCH_OUTPUT_TOKENS_PER_SECOND:
      if (e.estimated_hours() <= 0) return absl::InternalError("no estimated_hours");
      return w.requests() * w.output_tokens() / (e.estimated_hours() * 3600.0);
    case cal::MFU:
      return e.utilization();
    case cal::STEP_SECONDS:
      if (e.tokens_per_second() <= 0) return absl::InternalError("no tokens_per_second");
      return static_cast<double>(w.global_batch_size()) * w.sequence_length() /
             e.tokens_per_second();
    case cal::TIME_TO_FIRST_TOKEN_SECONDS: {
      if (auto v = FindNumber(e, "first_token")) return *v;
      if (auto v = FindNumber(e, "ttft")) return *v;
      if (e.prefill_tokens_per_second() <= 0) return absl::InternalError("no prefill rate");
      // Without a TTFT output: one request's prompt at the prefill rate of
      // one replica (prefill_tokens_per_second covers all replicas).
      const double replicas = std::max(1, e.plan().replicas());
      return w.prompt_tokens() / (e.prefill_tokens_per_second() / replicas);
    }
    case cal::GPU_HOURS:
      return e.estimated_hours() * gpus;
    case cal::WALL_HOURS:
      return e.estimated_hours();
    case cal::MAX_CONCURRENCY:
      if (auto v = FindNumber(e, "max_concurrency")) return *v;
      return absl::InternalError("no maximum-concurrency output");
    case cal::KV_CACHE_CAPACITY_TOKENS:
      if (auto v = FindNumber(e, "kv_cache_capacity_tokens")) return *v;
      return absl::InternalError("no KV-cache capacity output");
    default:
      return absl::InvalidArgumentError("quantity not set");
  }
}

struct Result {
  const cal::Case* c = nullptr;
  double expected = 0;  // base units
  double got = 0;
  double error = 0;  // got / expected - 1 (distance to the bound for AT_MOST/AT_LEAST)
  bool within = false;
  bool gross = false;     // off by more than kMaxRatio (or a wrong fit)
  std::string plan;       // the engine's plan, for reading a miss
  std::string framework;  // the profile the estimate used
};

Result Evaluate(const cal::Case& c, double expected, double got) {
  Result r;
  r.c = &c;
  r.expected = expected;
  r.got = got;
  const double ratio = expected != 0 ? got / expected : (got == 0 ? 1.0 : INFINITY);
  switch (c.check()) {
    case cal::AT_MOST:
      r.within = got <= expected;
      r.error = r.within ? 0.0 : ratio - 1;
      r.gross = ratio > kMaxRatio;
      break;
    case cal::AT_LEAST:
      r.within = got >= expected;
      r.error = r.within ? 0.0 : ratio - 1;
      r.gross = ratio < 1.0 / kMaxRatio;
      break;
    case cal::EQUALS:
      r.within = got == expected;
      r.error = r.within ? 0.0 : 1.0;
      r.gross = !r.within;  // a wrong fit verdict is never a near miss
      break;
    default:
      r.error = ratio - 1;
      r.within = std::fabs(r.error) <= c.tolerance() * (1 + 1e-12);
      r.gross = ratio > kMaxRatio || ratio < 1.0 / kMaxRatio;
      break;
  }
  return r;
}

std::string Name(cal::Quantity q) { return cal::Quantity_Name(q); }

// The count of tuned settings (the framework and GPU-generation factors of
// data/sizing/profiles.textproto that are not 1 or unset) next to the count
// of independent sources (publications) the calibration rows come from.
std::string CountsLine(const cal::CaseList& cases, const std::vector<Result>& results) {
  v1::SizingProfiles profiles;
  std::ifstream in(GPUADVISOR_SOURCE_DIR "/data/sizing/profiles.textproto");
  std::stringstream text;
  text << in.rdbuf();
  google::protobuf::TextFormat::ParseFromString(text.str(), &profiles);
  int tuned = 0;
  for (const v1::FrameworkProfile& f : profiles.frameworks()) {
    for (double x :
         {f.training_efficiency(), f.lora_efficiency(), f.moe_efficiency(), f.decode_efficiency(),
          f.prefill_efficiency(), f.comm_overlap(), f.fp8_efficiency()}) {
      tuned += x != 0 && x != 1;
    }
  }
  // A not-measured base is a stated conservative default, not a setting
  // tuned on anything; it is counted apart.
  int defaults = 0;
  for (const v1::EfficiencyBase& e : profiles.efficiency()) {
    const int n = (e.training() != 0) + (e.decode_bandwidth() != 0) + (e.fp8_training() != 0);
    (e.not_measured() ? defaults : tuned) += n;
  }
  std::set<std::string> sources, held;
  for (const Result& r : results) {
    (r.c->held_out() ? held : sources).insert(SourceKey(r.c->source()));
  }
  return absl::StrFormat(
      "%d tuned settings (framework and GPU-generation factors in profiles.textproto) against %d "
      "independent sources in %d cases; %d held-out source(s); %d not-measured conservative "
      "defaults",
      tuned, sources.size(), cases.cases_size(), held.size(), defaults);
}

// A row's error as the intervals read it (error_interval_fit.h): the
// quantity it measures and true / estimated of the estimate's own number (a
// time row is converted to the speed it implies). Unset quantity: not used.
ErrorRow ErrorRowOf(const Result& r) {
  ErrorRow row;
  if (r.c->check() != cal::WITHIN && r.c->check() != cal::CHECK_UNSPECIFIED) return row;
  if (r.expected <= 0 || r.got <= 0) return row;
  const double speed_ratio = r.expected / r.got;
  switch (r.c->quantity()) {
    case cal::TRAIN_TOKENS_PER_SECOND_PER_GPU:
    case cal::TRAIN_TOKENS_PER_SECOND:
    case cal::MFU:
      row.quantity = v1::ERROR_QUANTITY_TRAINING_SPEED;
      row.ratio = speed_ratio;
      break;
    case cal::STEP_SECONDS:
    case cal::GPU_HOURS:
    case cal::WALL_HOURS:
      row.quantity = v1::ERROR_QUANTITY_TRAINING_SPEED;
      row.ratio = 1 / speed_ratio;
      break;
    case cal::DECODE_TOKENS_PER_SECOND:
    case cal::BATCH_OUTPUT_TOKENS_PER_SECOND_PER_GPU:
    case cal::BATCH_OUTPUT_TOKENS_PER_SECOND:
      row.quantity = v1::ERROR_QUANTITY_SERVING_THROUGHPUT;
      row.ratio = speed_ratio;
      break;
    case cal::TIME_TO_FIRST_TOKEN_SECONDS:
      row.quantity = v1::ERROR_QUANTITY_TIME_TO_FIRST_TOKEN;
      row.ratio = r.expected / r.got;
      break;
    default:
      return row;
  }
  row.framework = r.framework;
  row.source = SourceKey(r.c->source());
  row.tolerance = r.c->tolerance();
  return row;
}

// The intervals data file must be what the calibration rows give now, so a
// change that moves the engine's error moves the intervals with it. With
// CALIBRATION_WRITE_ERROR_INTERVALS set the file is rewritten instead.
void CheckErrorIntervals(const std::vector<Result>& results) {
  std::vector<ErrorRow> rows;
  for (const Result& r : results) {
    if (r.c->held_out()) continue;  // the check set stays out of every fit
    ErrorRow row = ErrorRowOf(r);
    if (row.quantity != v1::ERROR_QUANTITY_UNSPECIFIED) rows.push_back(std::move(row));
  }
  ASSERT_FALSE(rows.empty()) << "no calibration rows for the error intervals";
  const std::vector<v1::ErrorInterval> fitted = FitErrorIntervals(rows);
  const std::string text = ErrorIntervalsFileText(fitted);
  std::printf("\nError intervals (true / estimated, P10 P50 P90; in-sample P10 P90):\n");
  for (const v1::ErrorInterval& e : fitted) {
    std::printf("  %-36s %-12s %.3f %.3f %.3f (in-sample %.3f %.3f) %d rows, %d sources, %s\n",
                v1::ErrorQuantity_Name(e.quantity()).c_str(),
                e.frameworks().empty() ? "(all)" : e.frameworks(0).c_str(), e.p10_ratio(),
                e.p50_ratio(), e.p90_ratio(), e.in_sample_p10_ratio(), e.in_sample_p90_ratio(),
                e.rows(), e.sources(), e.method().c_str());
  }
  if (std::getenv("CALIBRATION_WRITE_ERROR_INTERVALS") != nullptr) {
    std::ofstream(kErrorIntervalsPath) << text;
    std::printf("wrote %s\n", kErrorIntervalsPath);
    return;
  }
  std::ifstream in(kErrorIntervalsPath);
  ASSERT_TRUE(in) << "cannot read " << kErrorIntervalsPath;
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(file.str(), text) << kErrorIntervalsPath
                              << " is not what the calibration rows give now; rerun with "
                                 "CALIBRATION_WRITE_ERROR_INTERVALS=1 and review the change";
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A case's data is complete: source, what was measured, a unit of the
// quantity's dimension, a tolerance for WITHIN, one configuration.
std::string DataProblem(const cal::Case& c) {
  if (c.id().empty()) return "id is empty";
  if (c.source().size() < 10) return "source must name the publication and table";
  if (c.measured().size() < 10) return "measured must say what the number is";
  if (c.quantity() == cal::QUANTITY_UNSPECIFIED) return "quantity is not set";
  if (!UnitFactor(DimensionOf(c.quantity()), c.unit())) {
    return absl::StrCat("unit '", c.unit(), "' does not fit ", Name(c.quantity()));
  }
  if ((c.check() == cal::WITHIN || c.check() == cal::CHECK_UNSPECIFIED) &&
      (c.tolerance() <= 0 || c.tolerance() >= 1 || c.tolerance_basis().empty())) {
    return "WITHIN needs a tolerance in (0, 1) and its basis";
  }
  if (c.request().configurations_size() != 1) return "request needs exactly one configuration";
  if (!c.engine_gap().empty() && c.engine_gap().size() < 40) {
    return "engine_gap must give the reason (the physics the engine misses)";
  }
  if (c.held_out() && !c.engine_gap().empty()) return "a held-out case is never a known gap";
  if (c.quantity() == cal::STEP_SECONDS && c.request().workload().global_batch_size() <= 0) {
    return "STEP_SECONDS needs workload.global_batch_size";
  }
  return "";
}

TEST(Calibration, PublishedMeasurementsThroughEstimate) {
  auto loaded = LoadCases();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const cal::CaseList& cases = *loaded;
  ASSERT_GT(cases.cases_size(), 0) << "no calibration cases in " << kCasesPath;

  std::set<std::string> ids;
  std::vector<Result> results;
  std::vector<std::pair<const cal::Case*, std::string>> pending;
  // CALIBRATION_DUMP=<file>: every case's whole EstimateResponse, to show
  // that a refactor or a move of constants into data changes no answer.
  std::ofstream dump;
  if (const char* path = std::getenv("CALIBRATION_DUMP")) dump.open(path);
  for (const cal::Case& c : cases.cases()) {
    const std::string problem = DataProblem(c);
    EXPECT_EQ(problem, "") << c.id();
    EXPECT_TRUE(ids.insert(c.id()).second) << "duplicate id " << c.id();
    if (!problem.empty()) continue;
    std::string why = c.pending();
    if (why.empty()) why = MissingOutput(c.quantity());
    if (!why.empty()) {
      pending.push_back({&c, why});
      continue;
    }
    auto resp = ShippedSizingModel().Estimate(c.request());
    if (dump.is_open()) {
      // Every answer in full (text format round-trips doubles): two builds
      // that answer alike write the same file.
      dump << "# " << c.id() << "\n"
           << (resp.ok() ? resp->DebugString() : resp.status().ToString()) << "\n";
    }
    if (!resp.ok()) {
      ADD_FAILURE() << c.id() << ": Estimate failed: " << resp.status();
      continue;
    }
    auto got = Measure(c, *resp);
    if (!got.ok()) {
      ADD_FAILURE() << c.id() << ": " << got.status();
      continue;
    }
    const double factor = *UnitFactor(DimensionOf(c.quantity()), c.unit());
    results.push_back(Evaluate(c, c.expected() * factor, *got));
    const v1::ConfigurationEstimate& e = resp->estimates(0);
    results.back().plan = e.plan().description();
    results.back().framework = e.framework();
    if (std::getenv("CAL_VERBOSE") != nullptr) {
      results.back().plan += absl::StrFormat(
          " | step %.3g s, comm %.0f%%, bubble %.0f%%, MFU %.1f%%, mem %.1f GB (w %.1f g %.1f o "
          "%.1f a %.1f ov %.1f)",
          e.plan().step_seconds(), 100 * e.communication_fraction(),
          100 * e.plan().bubble_fraction(), 100 * e.utilization(), e.memory().total_bytes() / 1e9,
          e.memory().weights_bytes() / 1e9, e.memory().gradients_bytes() / 1e9,
          e.memory().optimizer_bytes() / 1e9, e.memory().activations_bytes() / 1e9,
          e.memory().overhead_bytes() / 1e9);
    }
    if (!e.fits()) results.back().plan += " -- DOES NOT FIT: " + e.not_fit_reason();
  }

  // Every case, in file order.
  std::printf("%-5s %-58s %-38s %12s %12s %8s %6s\n", "", "case", "quantity", "expected", "got",
              "error", "tol");
  for (const Result& r : results) {
    const double f = *UnitFactor(DimensionOf(r.c->quantity()), r.c->unit());
    const std::string label = r.c->engine_gap().empty() ? r.c->id() : "[gap] " + r.c->id();
    const std::string tol = r.c->check() == cal::AT_MOST    ? "<="
                            : r.c->check() == cal::AT_LEAST ? ">="
                            : r.c->check() == cal::EQUALS
                                ? "=="
                                : absl::StrFormat("%.0f%%", r.c->tolerance() * 100);
    std::printf("%-5s %-58s %-38s %12.5g %12.5g %+7.1f%% %6s  %s\n",
                r.gross ? "GROSS" : (r.within ? "ok" : "OUT"), label.c_str(),
                (Name(r.c->quantity()) + " [" + r.c->unit() + "]").c_str(), r.expected / f,
                r.got / f, r.error * 100, tol.c_str(), r.c->source().c_str());
    if (!r.within || std::getenv("CAL_VERBOSE") != nullptr)
      std::printf("      plan: %s\n", r.plan.c_str());
    if (!r.c->engine_gap().empty()) std::printf("      gap: %s\n", r.c->engine_gap().c_str());
  }
  for (const auto& [c, why] : pending) {
    std::printf("%-5s %-58s %s\n", "PEND", c->id().c_str(), why.c_str());
  }

  // Summary per quantity over every case run (known gaps included): median
  // and worst |error|.
  std::map<std::string, std::vector<const Result*>> by_quantity;
  for (const Result& r : results) {
    if (!r.c->held_out()) by_quantity[Name(r.c->quantity())].push_back(&r);
  }
  std::string md =
      "| quantity | cases | within tolerance | median abs. error | worst error (case) |\n"
      "|---|---:|---:|---:|---|\n";
  for (const auto& [q, rs] : by_quantity) {
    std::vector<double> errs;
    const Result* worst = rs.front();
    int in = 0;
    for (const Result* r : rs) {
      errs.push_back(std::fabs(r->error));
      if (std::fabs(r->error) > std::fabs(worst->error)) worst = r;
      in += r->within;
    }
    md += absl::StrFormat("| %s | %d | %d | %.1f%% | %+.1f%% (%s) |\n", q, rs.size(), in,
                          Median(errs) * 100, worst->error * 100, worst->c->id());
  }
  struct Tally {
    int n = 0, within = 0, gross = 0;
    std::vector<double> errors;
  };
  Tally all, asserted, held;
  std::vector<const Result*> misses, promoted;
  for (const Result& r : results) {
    const bool gap = !r.c->engine_gap().empty();
    if (r.c->held_out()) {
      ++held.n;
      held.within += r.within;
      held.gross += r.gross;
      held.errors.push_back(std::fabs(r.error));
      continue;
    }
    for (Tally* t : {&all, gap ? nullptr : &asserted}) {
      if (t == nullptr) continue;
      ++t->n;
      t->within += r.within;
      t->gross += r.gross;
      t->errors.push_back(std::fabs(r.error));
    }
    if (gap && r.within && !r.gross) promoted.push_back(&r);
    if (!gap && (!r.within || r.gross)) misses.push_back(&r);
  }
  auto line = [](const char* what, const Tally& t) {
    return absl::StrFormat("| **%s** | %d | %d (%.0f%%) | %.1f%% | %d off by more than 2x |\n",
                           what, t.n, t.within, t.n ? 100.0 * t.within / t.n : 0.0,
                           Median(t.errors) * 100, t.gross);
  };
  md += line("all cases run", all);
  md += line("asserted (without known engine gaps)", asserted);
  md += line("held-out check set (no setting tuned on it)", held);
  md += absl::StrFormat(
      "\n%d case(s) run as known engine gaps, %d pending (not run), %d held out; %s.\n",
      all.n - asserted.n, pending.size(), held.n, CountsLine(cases, results));
  md += "\nKnown engine gaps (run and reported, not asserted):\n\n";
  for (const Result& r : results) {
    if (r.c->engine_gap().empty()) continue;
    md += absl::StrFormat("- %s (%+.1f%%): %s\n", r.c->id(), r.error * 100, r.c->engine_gap());
  }
  md += "\nHeld-out check set:\n\n";
  for (const Result& r : results) {
    if (!r.c->held_out()) continue;
    md += absl::StrFormat("- %s: %+.1f%% (tolerance %.0f%%)%s\n", r.c->id(), r.error * 100,
                          r.c->tolerance() * 100, r.within ? "" : " -- outside");
  }
  std::printf("\n%s", md.c_str());
  if (const char* out = std::getenv("CALIBRATION_SUMMARY_MD")) {
    std::ofstream(out) << md;
  }
  for (const Result* r : promoted) {
    std::printf("known engine gap now within tolerance, remove its engine_gap: %s\n",
                r->c->id().c_str());
  }

  // Targets, over the asserted cases.
  std::sort(misses.begin(), misses.end(), [](const Result* a, const Result* b) {
    return std::fabs(std::log1p(a->error)) > std::fabs(std::log1p(b->error));
  });
  std::string worst;
  for (size_t i = 0; i < misses.size() && i < 15; ++i) {
    const Result* r = misses[i];
    const double f = *UnitFactor(DimensionOf(r->c->quantity()), r->c->unit());
    worst += absl::StrFormat("  %s%s: expected %.4g %s, got %.4g (%+.0f%%) [%s]\n    plan: %s\n",
                             r->gross ? "[>2x] " : "", r->c->id(), r->expected / f, r->c->unit(),
                             r->got / f, r->error * 100, r->c->source(), r->plan);
  }
  EXPECT_GE(asserted.n, kMinActiveCases) << "too few asserted calibration cases";
  EXPECT_GT(held.n, 0) << "no held-out check cases (held_out: true)";
  EXPECT_EQ(asserted.within, asserted.n)
      << asserted.within << " of " << asserted.n
      << " asserted cases within tolerance (every asserted case must be; a case the engine is "
         "known to miss needs engine_gap with the reason); worst:\n"
      << worst;
  EXPECT_EQ(asserted.gross, 0) << asserted.gross
                               << " asserted case(s) off by more than 2x; worst:\n"
                               << worst;
  CheckErrorIntervals(results);
}

}  // namespace
}  // namespace gpuadvisor::sizing
