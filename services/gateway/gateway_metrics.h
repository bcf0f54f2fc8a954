#ifndef GPUADVISOR_SERVICES_GATEWAY_GATEWAY_METRICS_H_
#define GPUADVISOR_SERVICES_GATEWAY_GATEWAY_METRICS_H_

// Every metric family the gateway adds to the shared registry (Metrics,
// common/metrics/metrics.h), registered here and nowhere else, and resolved
// once: recording takes no lock and builds no label map. Thread-safe.
//
//   gpuadvisor_gateway_recommendations_total{outcome}      ok, empty, error
//   gpuadvisor_gateway_response_cache_hits_total
//   gpuadvisor_gateway_response_cache_misses_total
//   gpuadvisor_gateway_local_quotes_total                  priced from the book's copy
//   gpuadvisor_gateway_sizing_model_changes_total          sizing fingerprint changed
//   gpuadvisor_gateway_catalog_age_seconds                 at scrape time (CatalogAgeCollector)
//   gpuadvisor_gateway_price_book_copy_age_seconds         at scrape time (AddPriceBookCopyAge)
//   grpc_server_* of GatewayService, grpc_client_* of sizing's Estimate and pricing's Quote

#include <functional>
#include <vector>

#include "common/metrics/metrics.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/metric_family.h"
#include "services/catalog/catalog_replica.h"

namespace gpuadvisor::gateway {

class GatewayMetrics {
 public:
  // `metrics` must outlive this.
  explicit GatewayMetrics(Metrics* metrics);

  // The ages read at scrape time, so an idle gateway still reports stale
  // data: of the catalog replica, and of the copy of pricing's book (-1:
  // none yet).
  static void AddCatalogAge(Metrics* metrics, const catalog::CatalogReplica* replica);
  static void AddPriceBookCopyAge(Metrics* metrics, std::function<double()> age_seconds);

  Metrics& shared() { return *metrics_; }
  prometheus::Counter& recommendations_ok() { return recommendations_ok_; }
  prometheus::Counter& recommendations_empty() { return recommendations_empty_; }
  prometheus::Counter& recommendations_error() { return recommendations_error_; }
  prometheus::Counter& cache_hits() { return cache_hits_; }
  prometheus::Counter& cache_misses() { return cache_misses_; }
  prometheus::Counter& local_quotes() { return local_quotes_; }
  prometheus::Counter& sizing_model_changes() { return sizing_model_changes_; }
  MethodMetrics& recommend_rpc() { return recommend_rpc_; }
  MethodMetrics& sizing_estimate() { return sizing_estimate_; }
  MethodMetrics& pricing_quote() { return pricing_quote_; }

 private:
  Metrics* const metrics_;
  prometheus::Family<prometheus::Counter>& recommendations_;
  prometheus::Counter& recommendations_ok_;
  prometheus::Counter& recommendations_empty_;
  prometheus::Counter& recommendations_error_;
  prometheus::Counter& cache_hits_;
  prometheus::Counter& cache_misses_;
  prometheus::Counter& local_quotes_;
  prometheus::Counter& sizing_model_changes_;
  MethodMetrics& recommend_rpc_;
  MethodMetrics& sizing_estimate_;
  MethodMetrics& pricing_quote_;
};

// gpuadvisor_gateway_catalog_age_seconds, read from the replica at scrape
// time (AddCatalogAge registers one).
class CatalogAgeCollector final : public prometheus::Collectable {
 public:
  explicit CatalogAgeCollector(const catalog::CatalogReplica* replica) : replica_(replica) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const catalog::CatalogReplica* replica_;
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_GATEWAY_METRICS_H_
