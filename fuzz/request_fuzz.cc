// libFuzzer: request validation on the two public entry points, with the
// bytes decoded as the wire messages a client sends: sizing's Estimate
// validation and the gateway's RecommendationRun::Start (constraints checked,
// candidates enumerated over the embedded catalog). Errors are expected;
// crashes, hangs, sanitizer reports are bugs.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "gpuadvisor/gateway/v1/gateway.pb.h"
#include "gpuadvisor/sizing/v1/sizing.pb.h"
#include "services/catalog/catalog.h"
#include "services/catalog/catalog_loader.h"
#include "services/gateway/recommender.h"
#include "services/sizing/workload_validation.h"

namespace {

std::shared_ptr<const gpuadvisor::catalog::Catalog> EmbeddedCatalog() {
  static std::shared_ptr<const gpuadvisor::catalog::Catalog> catalog = [] {
    gpuadvisor::catalog::CatalogSources sources;
    sources.gpus_path = GPUADVISOR_SOURCE_DIR "/data/catalog/gpus.textproto";
    sources.offer_paths = {GPUADVISOR_SOURCE_DIR "/data/catalog/offers.textproto"};
    auto snapshot = gpuadvisor::catalog::LoadCatalogSnapshot(sources);
    if (!snapshot.ok()) __builtin_trap();
    auto created = gpuadvisor::catalog::Catalog::Create(*std::move(snapshot));
    if (!created.ok()) __builtin_trap();
    return *created;
  }();
  return catalog;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpuadvisor::sizing::v1::EstimateRequest estimate;
  if (estimate.ParseFromArray(data, static_cast<int>(size))) {
    (void)gpuadvisor::sizing::ValidateEstimateRequest(estimate);
  }
  gpuadvisor::gateway::v1::RecommendRequest recommend;
  if (recommend.ParseFromArray(data, static_cast<int>(size))) {
    (void)gpuadvisor::gateway::RecommendationRun::Start(EmbeddedCatalog(), recommend);
  }
  return 0;
}
