// One SizingModel::Estimate over 50 GPU configurations, the gateway's typical
// call (distinct GPU model x count x nodes of a catalog). Target: well under
// 1 ms of CPU per call.

#include <cstdio>
#include <cstdlib>
#include <string>

#include "benchmark/benchmark.h"
#include "services/sizing/sizing_model.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;
namespace cv1 = ::gpuadvisor::catalog::v1;

const SizingModel& Model() {
  static const SizingModel* model = [] {
    auto m = SizingModel::FromDataDir(GPUADVISOR_SOURCE_DIR "/data");
    if (!m.ok()) {
      std::fprintf(stderr, "%s\n", std::string(m.status().message()).c_str());
      std::abort();
    }
    return new SizingModel(*std::move(m));
  }();
  return *model;
}

// 50 configurations: 25 GPU models x {1 GPU, 8 GPUs; 2 nodes of 8 for every
// fifth}.
void AddConfigurations(v1::EstimateRequest* request) {
  const char* gpus[] = {"B200",         "H200",      "H100-SXM",       "H100-PCIE", "H100-NVL",
                        "GH200",        "A100-80GB", "A100-80GB-PCIE", "A100-40GB", "L40S",
                        "L40",          "L4",        "A10G",           "A10",       "T4",
                        "V100",         "V100-32GB", "RTX-4090",       "RTX-3090",  "RTX-A6000",
                        "RTX-6000-ADA", "MI300X",    "MI250X",         "GAUDI2",    "GAUDI3"};
  int i = 0;
  for (const char* gpu : gpus) {
    for (int gpn : {1, 8}) {
      v1::GpuConfiguration* c = request->add_configurations();
      c->set_gpu_model(gpu);
      c->set_gpus_per_node(gpn);
      c->set_nodes(gpn == 8 && i % 5 == 0 ? 2 : 1);
      c->set_link(gpn == 1 ? cv1::LINK_TYPE_NONE
                           : (i % 2 ? cv1::LINK_TYPE_PCIE : cv1::LINK_TYPE_NVLINK));
      c->set_fabric(cv1::FABRIC_TYPE_INFINIBAND);
      ++i;
    }
  }
}

void BM_EstimateTraining50(benchmark::State& state) {
  v1::EstimateRequest request;
  v1::Workload* w = request.mutable_workload();
  w->set_task(v1::TASK_FULL_FINETUNE);
  w->mutable_model()->set_preset("llama-3.1-70b");
  w->set_sequence_length(4096);
  w->set_train_tokens(1e9);
  AddConfigurations(&request);
  for (auto _ : state) {
    auto response = Model().Estimate(request);
    benchmark::DoNotOptimize(response);
  }
  state.SetItemsProcessed(state.iterations() * request.configurations_size());
}
BENCHMARK(BM_EstimateTraining50);

void BM_EstimateServing50(benchmark::State& state) {
  v1::EstimateRequest request;
  v1::Workload* w = request.mutable_workload();
  w->set_task(v1::TASK_INFERENCE);
  w->mutable_model()->set_preset("llama-3.1-8b");
  w->set_context_length(8192);
  w->set_concurrent_sequences(64);
  AddConfigurations(&request);
  for (auto _ : state) {
    auto response = Model().Estimate(request);
    benchmark::DoNotOptimize(response);
  }
  state.SetItemsProcessed(state.iterations() * request.configurations_size());
}
BENCHMARK(BM_EstimateServing50);

}  // namespace
}  // namespace gpuadvisor::sizing
