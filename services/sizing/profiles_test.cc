// Profiles: hazards (SizingProfiles.hazards) are validated on load and
// matched by task, vendor and precision; the shipped data carries QLoRA on
// ROCm.

#include "services/sizing/profiles.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/io/text_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::sizing {
namespace {

namespace v1 = ::gpuadvisor::sizing::v1;
using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

v1::SizingProfiles Parse(const std::string& text) {
  v1::SizingProfiles profiles;
  EXPECT_TRUE(ParseTextProto(text, "test", &profiles).ok());
  return profiles;
}

TEST(Profiles, HazardNeedsCodeTextAndSourceAndUniqueCodes) {
  struct Case {
    const char* text;
    const char* error;
  };
  for (
      const Case& c : {
          Case{R"(hazards { text: "t" source: "s" })", "hazards[0].code: must be set"},
          Case{R"(hazards { code: "c" source: "s" })", "hazards[0].text: must be set"},
          Case{R"(hazards { code: "c" text: "t" })", "hazards[0].source: must be set"},
          Case{
              R"(hazards { code: "c" text: "t" source: "s" } hazards { code: "c" text: "u" source: "s" })",
              "hazards[1].code: duplicate \"c\""},
      }) {
    EXPECT_THAT(Profiles::Build(Parse(c.text)).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)))
        << c.text;
  }
}

TEST(Profiles, HazardsMatchTaskVendorIgnoringCaseAndPrecision) {
  absl::StatusOr<Profiles> p = Profiles::Build(Parse(R"(
    hazards { code: "qlora_amd" tasks: [TASK_QLORA] vendor: "AMD" text: "t" source: "s" }
    hazards { code: "fp8_any" precisions: [PRECISION_FP8] text: "t" source: "s" }
  )"));
  ASSERT_TRUE(p.ok()) << p.status();
  auto codes = [&](v1::Task task, const std::string& vendor, v1::Precision precision) {
    std::vector<std::string> out;
    for (const v1::Hazard* h : p->HazardsFor(task, vendor, precision)) out.push_back(h->code());
    return out;
  };
  EXPECT_THAT(codes(v1::TASK_QLORA, "amd", v1::PRECISION_BF16),
              ::testing::ElementsAre("qlora_amd"));
  EXPECT_THAT(codes(v1::TASK_QLORA, "NVIDIA", v1::PRECISION_BF16), ::testing::IsEmpty());
  EXPECT_THAT(codes(v1::TASK_LORA, "AMD", v1::PRECISION_BF16), ::testing::IsEmpty());
  EXPECT_THAT(codes(v1::TASK_QLORA, "AMD", v1::PRECISION_FP8),
              ::testing::ElementsAre("qlora_amd", "fp8_any"));
}

TEST(Profiles, ShippedDataWarnsAboutQloraOnRocm) {
  v1::SizingProfiles data;
  ASSERT_TRUE(
      LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/sizing/profiles.textproto", &data).ok());
  absl::StatusOr<Profiles> p = Profiles::Build(data);
  ASSERT_TRUE(p.ok()) << p.status();
  // QLoRA with HF/PEFT on ROCm: the bitsandbytes hazard and the framework's
  // ROCm support warning; none on NVIDIA.
  const auto hazards = p->HazardsFor(v1::TASK_QLORA, "AMD", v1::PRECISION_BF16, "hf-trainer");
  ASSERT_EQ(hazards.size(), 2u);
  EXPECT_EQ(hazards[0]->code(), "qlora_rocm");
  EXPECT_THAT(hazards[0]->text(), HasSubstr("QLoRA on ROCm"));
  EXPECT_EQ(hazards[1]->code(), "rocm_pytorch_training");
  // A hazard for other frameworks does not apply.
  for (const v1::Hazard* h : hazards) EXPECT_NE(h->code(), "rocm_megatron");
  EXPECT_THAT(p->HazardsFor(v1::TASK_QLORA, "NVIDIA", v1::PRECISION_BF16, "hf-trainer"),
              ::testing::IsEmpty());
}

}  // namespace
}  // namespace gpuadvisor::sizing

namespace gpuadvisor::sizing {
namespace {

// A measured efficiency setting rests on at least two independent sources
// (EfficiencyBase.sources, distinct); one without says not_measured, and
// loading enforces it: a new base with one source is refused.
TEST(Profiles, EveryEfficiencyBaseHasTwoSourcesOrIsNotMeasured) {
  v1::SizingProfiles data;
  ASSERT_TRUE(
      LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/sizing/profiles.textproto", &data).ok());
  ASSERT_GT(data.efficiency_size(), 0);
  int measured = 0;
  for (const v1::EfficiencyBase& e : data.efficiency()) {
    std::set<std::string> distinct(e.sources().begin(), e.sources().end());
    EXPECT_TRUE(e.not_measured() || distinct.size() >= 2)
        << e.vendor() << " " << e.architecture() << ": " << e.source();
    measured += !e.not_measured();
  }
  EXPECT_GE(measured, 3) << "NVIDIA, CDNA 2 and CDNA 3 are measured";
  ASSERT_TRUE(Profiles::Build(data).ok());

  v1::EfficiencyBase* added = data.add_efficiency();
  added->set_vendor("AMD");
  added->set_architecture("CDNA 5");
  added->set_training(0.5);
  added->set_decode_bandwidth(0.7);
  added->set_source("one vendor blog");
  added->add_sources("one vendor blog");
  const std::string path = absl::StrCat("efficiency[", data.efficiency_size() - 1, "].sources");
  EXPECT_THAT(Profiles::Build(data).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(path)));
  added->add_sources("one vendor blog");  // the same publication twice
  EXPECT_THAT(Profiles::Build(data).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(path)));
  added->add_sources("an independent benchmark");
  EXPECT_TRUE(Profiles::Build(data).ok());
  added->clear_sources();
  added->set_not_measured(true);
  EXPECT_TRUE(Profiles::Build(data).ok());
}

// The engine's constants (data/sizing/engine.textproto) load, and a value
// out of range or a missing source is refused naming its path.
TEST(Profiles, EngineConstantsAreValidatedNamingTheField) {
  v1::SizingProfiles shipped;
  ASSERT_TRUE(
      LoadTextProtoFile(GPUADVISOR_SOURCE_DIR "/data/sizing/engine.textproto", &shipped).ok());
  ASSERT_TRUE(shipped.has_engine());
  ASSERT_GT(shipped.engine().precision_bandwidth_size(), 0);
  ASSERT_TRUE(Profiles::Build(shipped).ok());
  absl::StatusOr<Profiles> built = Profiles::Build(shipped);
  ASSERT_TRUE(built.ok());
  EXPECT_TRUE(built->has_engine());
  EXPECT_EQ(built->engine().links().scale_up_bus_efficiency(), 0.8);

  v1::SizingProfiles bad = shipped;
  bad.mutable_engine()->mutable_links()->set_pcie_bus_efficiency(1.5);
  EXPECT_THAT(Profiles::Build(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("engine.links.pcie_bus_efficiency: must be in (0, 1]")));
  bad = shipped;
  bad.mutable_engine()->mutable_kernels()->set_per_layer_step_seconds(0);
  EXPECT_THAT(Profiles::Build(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("engine.kernels.per_layer_step_seconds")));
  bad = shipped;
  bad.mutable_engine()->mutable_memory()->clear_source();
  EXPECT_THAT(Profiles::Build(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("engine.memory.source")));
}

}  // namespace
}  // namespace gpuadvisor::sizing
