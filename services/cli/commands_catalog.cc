#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/io/json_quote.h"
#include "common/io/text_proto.h"
#include "common/status/grpc_status.h"
#include "common/status/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "gpuadvisor/gateway/v1/gateway.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "services/cli/assumed_topology.h"
#include "services/cli/cli_docs.h"
#include "services/cli/commands.h"
#include "services/cli/completion.h"
#include "services/cli/offers_view.h"
#include "services/cli/proto_flags.h"
#include "services/cli/table.h"
#include "services/gateway/export.h"

namespace gpuadvisor::cli {

using google::protobuf::Message;

// `sort`: "" for the catalog's order, else a key of OfferSortKeys();
// `group_by`: "" or "gpu". Both read every matching offer (all pages).
absl::StatusOr<int> Commands::Offers(const ProtoFlags& flags, const std::string& sort,
                                     const std::string& group_by) {
  catalog::v1::ListOffersRequest request;
  RETURN_IF_ERROR(flags.Apply(&request));
  auto stub = gw::GatewayService::NewStub(Channel());
  catalog::v1::ListOffersResponse response;
  const bool whole = !sort.empty() || !group_by.empty();
  // Sorted or grouped: the whole filtered catalog, then the first page_size.
  const int shown = request.page_size() > 0 ? request.page_size() : 100;
  if (whole) {
    ASSIGN_OR_RETURN(response, AllOffers(request));
  } else {
    RETURN_IF_ERROR(Rpc(stub->ListOffers(Context().get(), request, &response)));
  }
  const int code = response.offers().empty() ? 3 : 0;
  std::vector<catalog::v1::Offer> offers(response.offers().begin(), response.offers().end());
  GpuMemory memory;
  if (!response.offers().empty() && (!g_.json || sort == "vram")) {
    ASSIGN_OR_RETURN(memory, GpuMemories());
  }
  if (!sort.empty()) {
    RETURN_IF_ERROR(SortOffers(sort, request.purchase_option(), memory, &offers));
  }
  if (whole && group_by.empty() && static_cast<int>(offers.size()) > shown) offers.resize(shown);
  if (g_.json) {
    response.clear_offers();
    for (catalog::v1::Offer& o : offers) *response.add_offers() = std::move(o);
    PrintJson(response);
    return code;
  }
  if (response.offers().empty()) {
    std::cerr << "gpu-advisor: no offer matches "
              << (flags.Given().empty() ? "(no filters)" : flags.Given()) << " in catalog "
              << response.catalog_version()
              << "; `gpu-advisor offers` lists every provider, region and GPU\n";
    return code;
  }
  if (group_by == "gpu") {
    const std::vector<std::vector<std::string>> rows =
        GpuGroupRows(offers, request.purchase_option(), memory);
    std::cout << RenderTable(rows)
              << absl::StrFormat("%d offers of %d GPU models (catalog %s)\n", offers.size(),
                                 rows.size() - 1, response.catalog_version());
    return code;
  }
  std::cout << RenderTable(OfferRows(offers, request.purchase_option(), memory))
            << absl::StrFormat("%d of %d offers%s (catalog %s)\n", offers.size(),
                               response.total_size(),
                               sort.empty() ? "" : absl::StrCat(", sorted by ", sort),
                               response.catalog_version());
  if (!whole && !response.next_page_token().empty()) {
    std::cout << "more: --page_token=" << response.next_page_token() << " (same filters)\n";
  }
  return code;
}

// Every offer matching `request`'s filters, page after page.
absl::StatusOr<catalog::v1::ListOffersResponse> Commands::AllOffers(
    catalog::v1::ListOffersRequest request) {
  auto stub = gw::GatewayService::NewStub(Channel());
  request.set_page_size(1000);
  catalog::v1::ListOffersResponse all;
  for (int page = 0; page < 1000; ++page) {
    catalog::v1::ListOffersResponse response;
    RETURN_IF_ERROR(Rpc(stub->ListOffers(Context().get(), request, &response)));
    for (catalog::v1::Offer& o : *response.mutable_offers()) *all.add_offers() = std::move(o);
    all.set_total_size(response.total_size());
    all.set_catalog_version(response.catalog_version());
    if (response.next_page_token().empty()) break;
    request.set_page_token(response.next_page_token());
  }
  return all;
}

// GPU model -> memory per GPU, from ListGpus.
absl::StatusOr<GpuMemory> Commands::GpuMemories() {
  ASSIGN_OR_RETURN(const catalog::v1::ListGpusResponse gpus, ListGpus());
  GpuMemory memory;
  for (const catalog::v1::Gpu& g : gpus.gpus()) memory[g.name()] = g.memory_bytes();
  return memory;
}

absl::StatusOr<catalog::v1::ListGpusResponse> Commands::ListGpus() {
  auto stub = gw::GatewayService::NewStub(Channel());
  catalog::v1::ListGpusResponse response;
  RETURN_IF_ERROR(Rpc(stub->ListGpus(Context().get(), catalog::v1::ListGpusRequest(), &response)));
  return response;
}

absl::StatusOr<int> Commands::Gpus() {
  auto stub = gw::GatewayService::NewStub(Channel());
  catalog::v1::ListGpusResponse response;
  RETURN_IF_ERROR(Rpc(stub->ListGpus(Context().get(), catalog::v1::ListGpusRequest(), &response)));
  if (g_.json) {
    PrintJson(response);
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {{"GPU", "VENDOR", "MEMORY", "TYPE", "BW TB/S",
                                                 "BF16 TFLOPS", "FP8 TFLOPS", "KIND", "ALIASES"}};
  for (const catalog::v1::Gpu& g : response.gpus()) {
    rows.push_back(
        {g.name(), g.vendor(), absl::StrFormat("%.0f GiB", g.memory_bytes() / 1073741824.0),
         absl::AsciiStrToUpper(Short(catalog::v1::MemoryType_descriptor(), g.memory_type())),
         absl::StrFormat("%.2f", g.memory_bandwidth_bytes_per_second() / 1e12),
         g.bf16_flops() > 0 ? absl::StrFormat("%.0f", g.bf16_flops() / 1e12) : "-",
         g.fp8_flops() > 0 ? absl::StrFormat("%.0f", g.fp8_flops() / 1e12) : "-",
         g.accelerator_kind() == catalog::v1::ACCELERATOR_KIND_UNSPECIFIED
             ? "gpu"
             : Short(catalog::v1::AcceleratorKind_descriptor(), g.accelerator_kind()),
         absl::StrJoin(g.aliases(), ",")});
  }
  std::cout << RenderTable(rows);
  return response.gpus().empty() ? 3 : 0;
}

absl::StatusOr<int> Commands::Models() {
  auto stub = gw::GatewayService::NewStub(Channel());
  sizing::v1::ListModelsResponse response;
  RETURN_IF_ERROR(
      Rpc(stub->ListModels(Context().get(), sizing::v1::ListModelsRequest(), &response)));
  if (g_.json) {
    PrintJson(response);
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {
      {"PRESET", "PARAMS", "ACTIVE", "LAYERS", "HIDDEN", "KV HEADS", "CONTEXT", "KIND"}};
  for (const sizing::v1::Model& m : response.models()) {
    rows.push_back({m.preset(), absl::StrFormat("%.2fB", m.params() / 1e9),
                    m.active_params() > 0 ? absl::StrFormat("%.2fB", m.active_params() / 1e9) : "-",
                    absl::StrCat(m.layers()), absl::StrCat(m.hidden_size()),
                    absl::StrCat(m.kv_heads()), absl::StrCat(m.max_context_length()),
                    m.kind() == sizing::v1::MODEL_KIND_UNSPECIFIED
                        ? "decoder"
                        : Short(sizing::v1::ModelKind_descriptor(), m.kind())});
  }
  std::cout << RenderTable(rows);
  return response.models().empty() ? 3 : 0;
}

namespace {

std::string Age(int64_t seconds) {
  if (seconds < 0) return "never";
  if (seconds < 120) return absl::StrCat(seconds, "s");
  if (seconds < 2 * 3600) return absl::StrCat(seconds / 60, "m");
  if (seconds < 2 * 86400) return absl::StrCat(seconds / 3600, "h");
  return absl::StrCat(seconds / 86400, "d");
}

std::string When(int64_t unix_seconds) {
  if (unix_seconds <= 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M", absl::FromUnixSeconds(unix_seconds),
                          absl::UTCTimeZone());
}

}  // namespace

absl::StatusOr<int> Commands::Sources() {
  auto stub = gw::GatewayService::NewStub(Channel());
  catalog::v1::ListSourcesResponse response;
  RETURN_IF_ERROR(
      Rpc(stub->ListSources(Context().get(), catalog::v1::ListSourcesRequest(), &response)));
  if (g_.json) {
    PrintJson(response);
    return response.sources().empty() ? 3 : 0;
  }
  std::vector<std::vector<std::string>> rows = {{"SOURCE", "KIND", "RESULT", "AGE", "BUDGET",
                                                 "STALE", "LAST SUCCESS", "LAST ATTEMPT", "OFFERS",
                                                 "PRICES", "ROWS READ/KEPT", "REJECTED"}};
  for (const catalog::v1::SourceState& s : response.sources()) {
    std::vector<std::string> rejected;
    for (const catalog::v1::RejectedRows& r : s.rows_rejected()) {
      rejected.push_back(absl::StrCat(r.reason(), ": ", r.rows()));
    }
    rows.push_back({s.name(), s.kind(),
                    s.reason().empty() ? s.result() : absl::StrCat(s.result(), ": ", s.reason()),
                    Age(s.age_seconds()),
                    s.stale_after_seconds() > 0 ? Age(s.stale_after_seconds()) : "-",
                    s.stale() ? "STALE" : "", When(s.last_success_unix_seconds()),
                    When(s.last_attempt_unix_seconds()), absl::StrCat(s.offers()),
                    s.oldest_as_of() == s.newest_as_of()
                        ? s.oldest_as_of()
                        : absl::StrCat(s.oldest_as_of(), " .. ", s.newest_as_of()),
                    s.kind() == "refresh" ? absl::StrCat(s.rows_read(), "/", s.rows_kept()) : "-",
                    rejected.empty() ? "" : absl::StrJoin(rejected, ", ")});
  }
  std::cout << RenderTable(rows, g_.wide ? 0 : TerminalWidth());
  std::cout << "Catalog " << response.catalog_version() << ", ages at "
            << When(response.now_unix_seconds()) << " UTC\n";
  return response.sources().empty() ? 3 : 0;
}

absl::StatusOr<int> Commands::Health(const std::string& target, const std::string& service) {
  const std::string address = target.empty() ? g_.gateway : target;
  auto stub = grpc::health::v1::Health::NewStub(grpc::CreateChannel(address, g_.credentials));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(Context().get(), request, &response);
  if (!status.ok()) {
    const absl::Status s = FromGrpcStatus(status);
    return absl::Status(s.code(), absl::StrCat(address, ": ", s.message()));
  }
  const std::string name =
      grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
  if (g_.json) {
    std::cout << absl::StrFormat("{\"target\": %s, \"service\": %s, \"status\": %s}\n",
                                 JsonQuote(address), JsonQuote(service), JsonQuote(name));
  } else {
    std::cout << address << ": " << name << "\n";
  }
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

}  // namespace gpuadvisor::cli
