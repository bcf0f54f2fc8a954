#include "services/cli/workload_flags.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"

namespace gpuadvisor::cli {
namespace {

template <typename Enum>
absl::StatusOr<Enum> Lookup(absl::string_view what, absl::string_view name,
                            std::initializer_list<std::pair<const char*, Enum>> table) {
  const std::string key = absl::AsciiStrToLower(name);
  std::vector<std::string> known;
  for (const auto& [spelling, value] : table) {
    if (key == spelling) return value;
    known.push_back(spelling);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ", what, " \"", name, "\"; use one of: ",
                                                 absl::StrJoin(known, ", ")));
}

}  // namespace

absl::StatusOr<sizing::v1::Task> ParseTask(absl::string_view name) {
  return Lookup<sizing::v1::Task>("task", name,
                                  {{"pretrain", sizing::v1::TASK_PRETRAIN},
                                   {"full_finetune", sizing::v1::TASK_FULL_FINETUNE},
                                   {"finetune", sizing::v1::TASK_FULL_FINETUNE},
                                   {"lora", sizing::v1::TASK_LORA},
                                   {"qlora", sizing::v1::TASK_QLORA},
                                   {"inference", sizing::v1::TASK_INFERENCE},
                                   {"serve", sizing::v1::TASK_INFERENCE},
                                   {"batch_inference", sizing::v1::TASK_BATCH_INFERENCE},
                                   {"batch", sizing::v1::TASK_BATCH_INFERENCE}});
}

absl::StatusOr<sizing::v1::Precision> ParsePrecision(absl::string_view name) {
  return Lookup<sizing::v1::Precision>("precision", name,
                                       {{"fp32", sizing::v1::PRECISION_FP32},
                                        {"bf16", sizing::v1::PRECISION_BF16},
                                        {"fp16", sizing::v1::PRECISION_FP16},
                                        {"fp8", sizing::v1::PRECISION_FP8},
                                        {"int8", sizing::v1::PRECISION_INT8},
                                        {"int4", sizing::v1::PRECISION_INT4},
                                        {"nf4", sizing::v1::PRECISION_NF4}});
}

absl::StatusOr<sizing::v1::Optimizer> ParseOptimizer(absl::string_view name) {
  return Lookup<sizing::v1::Optimizer>("optimizer", name,
                                       {{"adamw", sizing::v1::OPTIMIZER_ADAMW},
                                        {"adamw_8bit", sizing::v1::OPTIMIZER_ADAMW_8BIT},
                                        {"sgd", sizing::v1::OPTIMIZER_SGD},
                                        {"adafactor", sizing::v1::OPTIMIZER_ADAFACTOR}});
}

absl::StatusOr<gateway::v1::Objective> ParseObjective(absl::string_view name) {
  return Lookup<gateway::v1::Objective>("objective", name,
                                        {{"cheapest", gateway::v1::OBJECTIVE_CHEAPEST},
                                         {"fastest", gateway::v1::OBJECTIVE_FASTEST},
                                         {"best_value", gateway::v1::OBJECTIVE_BEST_VALUE},
                                         {"value", gateway::v1::OBJECTIVE_BEST_VALUE},
                                         {"deadline", gateway::v1::OBJECTIVE_DEADLINE}});
}

absl::StatusOr<catalog::v1::PurchaseOption> ParsePurchaseOption(absl::string_view name) {
  return Lookup<catalog::v1::PurchaseOption>("purchase option", name,
                                             {{"on_demand", catalog::v1::PURCHASE_OPTION_ON_DEMAND},
                                              {"spot", catalog::v1::PURCHASE_OPTION_SPOT},
                                              {"reserved", catalog::v1::PURCHASE_OPTION_RESERVED}});
}

absl::StatusOr<catalog::v1::LinkType> ParseLink(absl::string_view name) {
  return Lookup<catalog::v1::LinkType>("link", name,
                                       {{"nvlink", catalog::v1::LINK_TYPE_NVLINK},
                                        {"pcie", catalog::v1::LINK_TYPE_PCIE},
                                        {"none", catalog::v1::LINK_TYPE_NONE}});
}

std::string PurchaseOptionName(catalog::v1::PurchaseOption option) {
  switch (option) {
    case catalog::v1::PURCHASE_OPTION_SPOT: return "spot";
    case catalog::v1::PURCHASE_OPTION_RESERVED: return "reserved";
    case catalog::v1::PURCHASE_OPTION_ON_DEMAND: return "on-demand";
    default: return "-";
  }
}

std::string LinkName(catalog::v1::LinkType link) {
  switch (link) {
    case catalog::v1::LINK_TYPE_NVLINK: return "nvlink";
    case catalog::v1::LINK_TYPE_PCIE: return "pcie";
    case catalog::v1::LINK_TYPE_INFINITY_FABRIC: return "infinity-fabric";
    case catalog::v1::LINK_TYPE_NONE: return "none";
    default: return "-";
  }
}

std::string FabricName(catalog::v1::FabricType fabric) {
  switch (fabric) {
    case catalog::v1::FABRIC_TYPE_INFINIBAND: return "infiniband";
    case catalog::v1::FABRIC_TYPE_EFA: return "efa";
    case catalog::v1::FABRIC_TYPE_ROCE: return "roce";
    case catalog::v1::FABRIC_TYPE_ETHERNET: return "ethernet";
    case catalog::v1::FABRIC_TYPE_NONE: return "none";
    default: return "-";
  }
}

std::vector<std::string> SplitList(absl::string_view list) {
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    items.emplace_back(absl::StripAsciiWhitespace(item));
  }
  return items;
}

absl::StatusOr<gateway::v1::RecommendRequest> ParseRequestJson(absl::string_view json,
                                                                absl::string_view file_name) {
  gateway::v1::RecommendRequest request;
  google::protobuf::util::JsonParseOptions options;
  const auto status =
      google::protobuf::util::JsonStringToMessage(std::string(json), &request, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": not a RecommendRequest in protobuf JSON: ", status.message().ToString()));
  }
  return request;
}

std::string RenderTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&line, row[i]);
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 2, ' ');
    }
    absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(line), "\n");
  }
  return out;
}

}  // namespace gpuadvisor::cli
