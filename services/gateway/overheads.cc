#include "services/gateway/overheads.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/io/text_proto.h"
#include "common/status/status_macros.h"

namespace gpuadvisor::gateway {

absl::StatusOr<OverheadModel> OverheadModel::FromProto(const v1::OverheadRules& rules) {
  OverheadModel model;
  int default_index = -1;
  for (int i = 0; i < rules.rules_size(); ++i) {
    const v1::OverheadRule& r = rules.rules(i);
    for (const auto& [name, value, positive] :
         {std::tuple<const char*, double, bool>{"startup_minutes", r.startup_minutes(), false},
          {"image_gb", r.image_gb(), false},
          {"download_gbps", r.download_gbps(), true}}) {
      if (!std::isfinite(value) || value < 0 || (positive && value == 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("rules[", i, "].", name,
                         positive ? ": must be finite and > 0" : ": must be finite and >= 0"));
      }
    }
    for (int j = 0; j < i; ++j) {
      if (absl::EqualsIgnoreCase(rules.rules(j).provider(), r.provider())) {
        return absl::InvalidArgumentError(
            absl::StrCat("rules[", i, "].provider: duplicate \"", r.provider(), "\""));
      }
    }
    if (r.provider().empty()) default_index = i;
  }
  if (default_index < 0)
    return absl::InvalidArgumentError("rules: needs a default rule (provider \"\")");
  const v1::ServingDefaults& serving = rules.serving_defaults();
  if (!std::isfinite(serving.min_user_tokens_per_second()) ||
      serving.min_user_tokens_per_second() < 0) {
    return absl::InvalidArgumentError(
        "serving_defaults.min_user_tokens_per_second: must be finite and >= 0");
  }
  if (serving.min_user_tokens_per_second() > 0 && serving.source().empty()) {
    return absl::InvalidArgumentError(
        "serving_defaults.source: must name where the floor comes from");
  }
  model.serving_defaults_ = serving;
  model.as_of_ = rules.as_of();
  model.rules_.push_back(rules.rules(default_index));
  for (int i = 0; i < rules.rules_size(); ++i) {
    if (i != default_index) model.rules_.push_back(rules.rules(i));
  }
  return model;
}

absl::StatusOr<OverheadModel> OverheadModel::FromFile(const std::string& path) {
  v1::OverheadRules rules;
  RETURN_IF_ERROR(LoadTextProtoFile(path, &rules));
  absl::StatusOr<OverheadModel> model = FromProto(rules);
  if (!model.ok())
    return absl::Status(model.status().code(), absl::StrCat(path, ": ", model.status().message()));
  return model;
}

const v1::OverheadRule* OverheadModel::RuleFor(absl::string_view provider) const {
  if (rules_.empty()) return nullptr;
  const v1::OverheadRule* rule = &rules_[0];
  for (const v1::OverheadRule& r : rules_) {
    if (!r.provider().empty() && absl::EqualsIgnoreCase(r.provider(), provider)) rule = &r;
  }
  return rule;
}

OverheadModel::Hours OverheadModel::Compute(const v1::OverheadRule& rule, const RunData& run) {
  Hours h;
  // The provider's practical download rate, never more than the instance's
  // published network.
  h.download_gbps = rule.download_gbps();
  if (run.network_gbps > 0 && std::isfinite(run.network_gbps))
    h.download_gbps = std::min(h.download_gbps, run.network_gbps);
  const double gb_per_hour = h.download_gbps / 8.0 * 3600.0;
  h.startup = rule.startup_minutes() / 60.0;
  h.image_pull = rule.image_gb() / gb_per_hour;
  h.download = (run.weights_gb + run.dataset_gb) / gb_per_hour;
  // Checkpoint writes are pricing's (Quote.checkpoint_hours, the same rule
  // for every purchase option): not counted here, so never twice.
  h.total = h.startup + h.image_pull + h.download;
  return h;
}

v1::Overheads OverheadModel::For(absl::string_view provider, const RunData& run) const {
  return For(RuleFor(provider), run);
}

v1::Overheads OverheadModel::For(const v1::OverheadRule* rule, const RunData& run) const {
  v1::Overheads o;
  if (rule == nullptr) return o;
  const Hours h = Compute(*rule, run);
  o.set_download_gbps(h.download_gbps);
  o.set_startup_hours(h.startup);
  o.set_image_pull_hours(h.image_pull);
  o.set_download_hours(h.download);
  o.set_checkpoint_hours(h.checkpoint);
  o.set_total_hours(h.total);
  o.set_source(rule->source());
  return o;
}

double OverheadModel::TotalHours(const v1::OverheadRule* rule, const RunData& run) const {
  return rule == nullptr ? 0 : Compute(*rule, run).total;
}

}  // namespace gpuadvisor::gateway
