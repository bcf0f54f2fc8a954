#include "services/gateway/gateway_metrics.h"

#include <memory>
#include <utility>

#include "common/metrics/function_metric.h"
#include "prometheus/counter.h"

namespace gpuadvisor::gateway {
namespace {

constexpr char kService[] = "gpuadvisor.gateway.v1.GatewayService";

prometheus::Counter& Counter(Metrics* metrics, const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(metrics->registry()).Add({});
}

}  // namespace

GatewayMetrics::GatewayMetrics(Metrics* metrics)
    : metrics_(metrics),
      recommendations_(
          prometheus::BuildCounter()
              .Name("gpuadvisor_gateway_recommendations_total")
              .Help("Recommend calls by outcome: ok, empty (nothing qualified), error.")
              .Register(metrics->registry())),
      recommendations_ok_(recommendations_.Add({{"outcome", "ok"}})),
      recommendations_empty_(recommendations_.Add({{"outcome", "empty"}})),
      recommendations_error_(recommendations_.Add({{"outcome", "error"}})),
      cache_hits_(Counter(metrics, "gpuadvisor_gateway_response_cache_hits_total",
                          "Recommend answers served from the response cache.")),
      cache_misses_(Counter(metrics, "gpuadvisor_gateway_response_cache_misses_total",
                            "Recommend answers computed with the response cache on.")),
      local_quotes_(
          Counter(metrics, "gpuadvisor_gateway_local_quotes_total",
                  "Recommend answers priced in process from the gateway's copy of pricing's "
                  "book; the others call pricing's Quote (grpc_client_handled_total).")),
      sizing_model_changes_(
          Counter(metrics, "gpuadvisor_gateway_sizing_model_changes_total",
                  "Times sizing answered with another model fingerprint than the one the "
                  "gateway's caches held (a sizing deploy): the caches started over.")),
      recommend_rpc_(metrics->ServerMethod(kService, "Recommend")),
      sizing_estimate_(metrics->ClientMethod("gpuadvisor.sizing.v1.SizingService", "Estimate")),
      pricing_quote_(metrics->ClientMethod("gpuadvisor.pricing.v1.PricingService", "Quote")) {
  metrics_->InitializeMethods(kService, {{"Recommend", "unary"},
                                         {"Estimate", "unary"},
                                         {"ListOffers", "unary"},
                                         {"ListGpus", "unary"},
                                         {"ListModels", "unary"},
                                         {"ListSources", "unary"}});
}

void GatewayMetrics::AddCatalogAge(Metrics* metrics, const catalog::CatalogReplica* replica) {
  metrics->AddCollectable(std::make_shared<CatalogAgeCollector>(replica));
}

void GatewayMetrics::AddPriceBookCopyAge(Metrics* metrics, std::function<double()> age_seconds) {
  metrics->AddCollectable(std::make_shared<FunctionMetric>(
      "gpuadvisor_gateway_price_book_copy_age_seconds",
      "Seconds since the gateway's copy of pricing's book was last known current (0 while in "
      "step, -1: none yet); while not 0, answers call pricing's Quote and the response cache is "
      "off.",
      std::move(age_seconds)));
}

std::vector<prometheus::MetricFamily> CatalogAgeCollector::Collect() const {
  prometheus::MetricFamily family;
  family.name = "gpuadvisor_gateway_catalog_age_seconds";
  family.help =
      "Seconds since the gateway's catalog replica was last known current (-1: none yet).";
  family.type = prometheus::MetricType::Gauge;
  prometheus::ClientMetric metric;
  metric.gauge.value = replica_->AgeSeconds();
  family.metric.push_back(std::move(metric));
  return {std::move(family)};
}

}  // namespace gpuadvisor::gateway
