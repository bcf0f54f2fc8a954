#ifndef GPUADVISOR_SERVICES_CLI_WORKLOAD_FLAGS_H_
#define GPUADVISOR_SERVICES_CLI_WORKLOAD_FLAGS_H_

// Turning the CLI's words into contract messages: enum names ("qlora",
// "bf16", "cheapest"), comma lists and JSON request files. Pure functions so
// they can be tested without a terminal.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuadvisor/gateway/v1/gateway.pb.h"

namespace gpuadvisor::cli {

// "pretrain", "full_finetune" (or "finetune"), "lora", "qlora", "inference"
// (or "serve"), "batch_inference" (or "batch"). kInvalidArgument otherwise.
absl::StatusOr<sizing::v1::Task> ParseTask(absl::string_view name);
// "fp32", "bf16", "fp16", "fp8", "int8", "int4", "nf4".
absl::StatusOr<sizing::v1::Precision> ParsePrecision(absl::string_view name);
// "adamw", "adamw_8bit", "sgd", "adafactor".
absl::StatusOr<sizing::v1::Optimizer> ParseOptimizer(absl::string_view name);
// "cheapest", "fastest", "best_value" (or "value"), "deadline".
absl::StatusOr<gateway::v1::Objective> ParseObjective(absl::string_view name);
// "on_demand", "spot", "reserved".
absl::StatusOr<catalog::v1::PurchaseOption> ParsePurchaseOption(absl::string_view name);
// "nvlink", "pcie", "none".
absl::StatusOr<catalog::v1::LinkType> ParseLink(absl::string_view name);

// Short lower-case names for tables ("on-demand", "spot", "nvlink").
std::string PurchaseOptionName(catalog::v1::PurchaseOption option);
std::string LinkName(catalog::v1::LinkType link);
std::string FabricName(catalog::v1::FabricType fabric);

// Splits "a,b,,c" into {"a","b","c"}.
std::vector<std::string> SplitList(absl::string_view list);

// Parses a RecommendRequest from protobuf JSON (field names as in the proto
// or lowerCamelCase). kInvalidArgument naming the file.
absl::StatusOr<gateway::v1::RecommendRequest> ParseRequestJson(absl::string_view json,
                                                                absl::string_view file_name);

// Renders rows as an aligned text table; the first row is the header.
std::string RenderTable(const std::vector<std::vector<std::string>>& rows);

}  // namespace gpuadvisor::cli

#endif  // GPUADVISOR_SERVICES_CLI_WORKLOAD_FLAGS_H_
