#ifndef GPUADVISOR_SERVICES_SIZING_PROFILES_H_
#define GPUADVISOR_SERVICES_SIZING_PROFILES_H_

// Framework profiles, efficiency bases per GPU generation and the goodput
// model (data/sizing/profiles.textproto) and the measured error per quantity
// (data/sizing/error_intervals.textproto), validated and indexed. Immutable
// after Build(); thread-safe for concurrent const use.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"

namespace gpuadvisor::sizing {

class Profiles {
 public:
  // Validates every entry: kInvalidArgument naming it
  // ("frameworks[2].training_efficiency: must be in (0, 2]"). Names must be
  // unique and at most one framework may be the default of a task. An empty
  // SizingProfiles is valid: every framework factor is then 1 and no goodput
  // is applied (what SizingModel::Create without profiles gives). Hazards
  // need a code, a text and a source, and unique codes. The engine
  // constants, when present, must all be set, positive and finite, the
  // efficiencies and fractions at most 1, with a source per group.
  static absl::StatusOr<Profiles> Build(gpuadvisor::sizing::v1::SizingProfiles data);

  // The named profile (case-insensitive), or nullptr.
  const gpuadvisor::sizing::v1::FrameworkProfile* Find(const std::string& name) const;
  // The default profile of `task`, or a neutral built-in one when the data
  // names none.
  const gpuadvisor::sizing::v1::FrameworkProfile& DefaultFor(
      gpuadvisor::sizing::v1::Task task) const;
  // The most specific efficiency base for a GPU (vendor + architecture, then
  // vendor alone), or nullptr.
  const gpuadvisor::sizing::v1::EfficiencyBase* Efficiency(const std::string& vendor,
                                                           const std::string& architecture) const;
  const gpuadvisor::sizing::v1::GoodputModel& goodput() const { return data_.goodput(); }
  // The engine's link, memory and kernel constants (SizingProfiles.engine);
  // has_engine() is false when the data has none (then nothing can be
  // estimated).
  bool has_engine() const { return data_.has_engine(); }
  const gpuadvisor::sizing::v1::EngineConstants& engine() const { return data_.engine(); }
  // The hazards (SizingProfiles.hazards) that apply to `task` at `precision`
  // on a GPU of `vendor` (case-insensitive) with the framework profile
  // `framework` (empty = any), in file order.
  std::vector<const gpuadvisor::sizing::v1::Hazard*> HazardsFor(
      gpuadvisor::sizing::v1::Task task, const std::string& vendor,
      gpuadvisor::sizing::v1::Precision precision, const std::string& framework = "") const;
  // The measured error of `quantity` for `framework` (its own entry, else
  // the quantity's catch-all entry), or nullptr when the data has none.
  const gpuadvisor::sizing::v1::ErrorInterval* ErrorIntervalFor(
      gpuadvisor::sizing::v1::ErrorQuantity quantity, const std::string& framework) const;
  // The default global batch of `task` (SizingProfiles.batch_defaults), or
  // nullptr.
  const gpuadvisor::sizing::v1::BatchDefault* BatchDefaultFor(
      gpuadvisor::sizing::v1::Task task) const;
  // Names of the profiles for `job`, for error messages.
  std::string Names(gpuadvisor::sizing::v1::JobKind job) const;

 private:
  gpuadvisor::sizing::v1::SizingProfiles data_;
  gpuadvisor::sizing::v1::FrameworkProfile neutral_training_;
  gpuadvisor::sizing::v1::FrameworkProfile neutral_serving_;
};

}  // namespace gpuadvisor::sizing

#endif  // GPUADVISOR_SERVICES_SIZING_PROFILES_H_
