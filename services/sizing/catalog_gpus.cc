#include "services/sizing/catalog_gpus.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/client_context.h"

namespace gpuadvisor::sizing {

namespace cv1 = ::gpuadvisor::catalog::v1;

absl::StatusOr<cv1::GpuList> FetchCatalogGpus(cv1::CatalogService::StubInterface& stub,
                                              absl::Duration wait, absl::Duration retry) {
  const absl::Time deadline = absl::Now() + wait;
  std::string last = "no answer";
  while (true) {
    grpc::ClientContext context;
    context.set_wait_for_ready(true);
    context.set_deadline(absl::ToChronoTime(std::min(deadline, absl::Now() + absl::Seconds(10))));
    cv1::ListGpusResponse response;
    const grpc::Status s = stub.ListGpus(&context, cv1::ListGpusRequest(), &response);
    if (s.ok() && response.gpus_size() > 0) {
      cv1::GpuList gpus;
      *gpus.mutable_gpus() = std::move(*response.mutable_gpus());
      return gpus;
    }
    last = s.ok() ? "the catalog lists no GPUs" : s.error_message();
    if (absl::Now() + retry >= deadline) break;
    absl::SleepFor(retry);
  }
  return absl::UnavailableError(
      absl::StrCat("catalog ListGpus: ", last, " (asked for ", absl::FormatDuration(wait), ")"));
}

absl::StatusOr<cv1::GpuList> WaitForCatalogGpus(cv1::CatalogService::StubInterface& stub,
                                                const absl::Notification& stop,
                                                absl::Duration round) {
  for (int rounds = 1; !stop.HasBeenNotified(); ++rounds) {
    absl::StatusOr<cv1::GpuList> gpus = FetchCatalogGpus(stub, round, round / 4);
    if (gpus.ok()) return gpus;
    if (rounds % 15 != 1) continue;  // the first failure, then one line every 15 rounds
    std::fprintf(stderr, "sizing: NOT_SERVING, %s; still asking after %s\n",
                 std::string(gpus.status().message()).c_str(),
                 absl::FormatDuration(rounds * round).c_str());
  }
  return absl::CancelledError("stopped before the catalog answered ListGpus");
}

}  // namespace gpuadvisor::sizing
