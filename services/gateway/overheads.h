#ifndef GPUADVISOR_SERVICES_GATEWAY_OVERHEADS_H_
#define GPUADVISOR_SERVICES_GATEWAY_OVERHEADS_H_

// Start-up, image pull and model and dataset download, from
// data/gateway/overheads.textproto (gpuadvisor.gateway.v1.OverheadRules): the
// hours a run spends outside the model's own computation, added to every
// candidate's hours before pricing. Checkpoint writes are not counted here:
// pricing's Quote counts them for every purchase option
// (Quote.checkpoint_hours, per node in parallel at the provider's storage
// bandwidth; docs/pricing.md), so checkpoint_hours is 0.
//
//   absl::StatusOr<OverheadModel> model =
//   OverheadModel::FromFile("data/gateway/overheads.textproto"); v1::Overheads o =
//   model->For("aws", {.run_hours = 10, .weights_gb = 16});
//
// Immutable after construction; thread-safe.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"

namespace gpuadvisor::gateway {

struct RunData {
  double run_hours = 0;   // the computation alone
  double weights_gb = 0;  // downloaded before the run
  double dataset_gb = 0;  // downloaded before the run
  // The offer's published instance network (catalog Offer.network.gbps); 0 =
  // not published. Downloads run at the rule's download_gbps, capped by it.
  double network_gbps = 0;
};

class OverheadModel {
 public:
  OverheadModel() = default;  // no overheads

  // kInvalidArgument naming the field for a negative or non-finite value, a
  // zero download bandwidth, a duplicate provider, no default rule (provider "") or a
  // serving default without its source.
  static absl::StatusOr<OverheadModel> FromProto(const v1::OverheadRules& rules);
  static absl::StatusOr<OverheadModel> FromFile(const std::string& path);

  bool empty() const { return rules_.empty(); }
  // The serving SLO defaults of the file (all zero for an empty model: no
  // default floor), and the file's date.
  const v1::ServingDefaults& serving_defaults() const { return serving_defaults_; }
  const std::string& as_of() const { return as_of_; }
  // Hours only (usd = 0); all zero for an empty model.
  v1::Overheads For(absl::string_view provider, const RunData& run) const;

  // The same in two steps, for callers that ask per candidate: the rule of a
  // provider (nullptr for an empty model), then For(RuleFor(p), run) ==
  // For(p, run), and TotalHours(rule, run) == its total_hours without
  // building the message.
  const v1::OverheadRule* RuleFor(absl::string_view provider) const;
  v1::Overheads For(const v1::OverheadRule* rule, const RunData& run) const;
  double TotalHours(const v1::OverheadRule* rule, const RunData& run) const;

 private:
  struct Hours {
    double download_gbps = 0, startup = 0, image_pull = 0, download = 0, checkpoint = 0, total = 0;
  };
  static Hours Compute(const v1::OverheadRule& rule, const RunData& run);

  std::vector<v1::OverheadRule> rules_;  // rules_[0] is the default
  v1::ServingDefaults serving_defaults_;
  std::string as_of_;
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_OVERHEADS_H_
