// AMD and other non-NVIDIA accelerators, through Estimate: MI300X (CDNA 3)
// trains below H100 as independent measurements found
// (data/sizing/profiles.textproto, efficiency "CDNA 3"), and every framework
// profile sized on ROCm or Gaudi carries a framework-support warning.

#include <string>

#include "common/io/text_proto.h"
#include "gtest/gtest.h"
#include "services/sizing/shipped_model_for_test.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;

v1::EstimateRequest Request(v1::Task task, const std::string& framework) {
  v1::EstimateRequest r;
  v1::Workload* w = r.mutable_workload();
  w->set_task(task);
  w->set_framework(framework);
  w->mutable_model()->set_preset("llama-3.1-8b");
  if (task == v1::TASK_INFERENCE) {
    w->set_context_length(4096);
  } else {
    w->set_sequence_length(4096);
    w->set_train_tokens(1e9);
  }
  for (const char* gpu : {"H100-SXM", "MI300X", "GAUDI3"}) {
    v1::GpuConfiguration* c = r.add_configurations();
    c->set_gpu_model(gpu);
    c->set_gpus_per_node(8);
    c->set_nodes(1);
  }
  return r;
}

TEST(NonNvidia, Mi300xTrainsBelowH100) {
  for (v1::Task task : {v1::TASK_PRETRAIN, v1::TASK_FULL_FINETUNE, v1::TASK_LORA}) {
    auto resp = ShippedSizingModel().Estimate(Request(task, ""));
    ASSERT_TRUE(resp.ok()) << resp.status();
    const v1::ConfigurationEstimate& h100 = resp->estimates(0);
    const v1::ConfigurationEstimate& mi300x = resp->estimates(1);
    ASSERT_TRUE(h100.fits() && mi300x.fits()) << v1::Task_Name(task);
    EXPECT_LT(mi300x.tokens_per_second(), h100.tokens_per_second()) << v1::Task_Name(task);
    EXPECT_GT(mi300x.tokens_per_second(), 0.6 * h100.tokens_per_second()) << v1::Task_Name(task);
  }
}

TEST(NonNvidia, EveryFrameworkOnRocmAndGaudiIsWarned) {
  v1::SizingProfiles profiles;
  ASSERT_TRUE(
      LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/sizing/profiles.textproto", &profiles).ok());
  ASSERT_GT(profiles.frameworks_size(), 0);
  for (const v1::FrameworkProfile& f : profiles.frameworks()) {
    const v1::Task task =
        f.job() == v1::JOB_KIND_TRAINING ? v1::TASK_FULL_FINETUNE : v1::TASK_INFERENCE;
    auto resp = ShippedSizingModel().Estimate(Request(task, f.name()));
    ASSERT_TRUE(resp.ok()) << f.name() << ": " << resp.status();
    for (int i = 1; i <= 2; ++i) {
      const v1::ConfigurationEstimate& e = resp->estimates(i);
      int warnings = 0;
      for (const v1::Note& n : e.structured_notes()) {
        if (n.severity() == v1::NOTE_SEVERITY_WARNING && !n.source().empty()) ++warnings;
      }
      EXPECT_GT(warnings, 0) << f.name() << " on " << e.configuration().gpu_model()
                             << " has no framework-support warning";
    }
    // Not on NVIDIA.
    for (const v1::Note& n : resp->estimates(0).structured_notes()) {
      EXPECT_TRUE(n.source().empty()) << f.name() << " on H100: " << n.code();
    }
  }
}

}  // namespace
}  // namespace gpuadvisor::sizing
