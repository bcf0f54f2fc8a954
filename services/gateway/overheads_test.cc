#include "services/gateway/overheads.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace gpuadvisor::gateway {
namespace {

using ::gpuadvisor::testing::StatusIs;
using ::testing::HasSubstr;

TEST(Overheads, DataFileLoadsAndComputesEachPart) {
  absl::StatusOr<OverheadModel> model =
      OverheadModel::FromFile(GPUADVISOR_SOURCE_DIR "/data/gateway/overheads.textproto");
  ASSERT_OK(model);
  ASSERT_FALSE(model->empty());
  // Default rule: 5 min start-up, 10 GB image at 10 Gbps (8 s); checkpoint
  // writes are pricing's (Quote.checkpoint_hours), never counted here.
  RunData run{.run_hours = 10.5, .weights_gb = 16, .dataset_gb = 9};
  const v1::Overheads o = model->For("aws", run);
  EXPECT_DOUBLE_EQ(o.startup_hours(), 5.0 / 60);
  EXPECT_DOUBLE_EQ(o.image_pull_hours(), 10.0 / (10.0 / 8 * 3600));
  EXPECT_DOUBLE_EQ(o.download_hours(), 25.0 / (10.0 / 8 * 3600));
  EXPECT_EQ(o.checkpoint_hours(), 0);
  EXPECT_DOUBLE_EQ(o.total_hours(), o.startup_hours() + o.image_pull_hours() + o.download_hours() +
                                        o.checkpoint_hours());
  EXPECT_FALSE(o.source().empty());
  // A provider with its own rule, matched ignoring case.
  const v1::Overheads vast = model->For("Vast", run);
  EXPECT_GT(vast.download_hours(), o.download_hours());
  EXPECT_EQ(vast.checkpoint_hours(), 0);
  EXPECT_EQ(OverheadModel().For("aws", run).total_hours(), 0);
}

// The two-step form a Recommend uses per candidate (the provider's rule
// found once) gives the same message, and TotalHours its total, bit for bit.
TEST(Overheads, RuleForThenForEqualsForByProvider) {
  absl::StatusOr<OverheadModel> model =
      OverheadModel::FromFile(GPUADVISOR_SOURCE_DIR "/data/gateway/overheads.textproto");
  ASSERT_OK(model);
  EXPECT_EQ(model->RuleFor("Vast"), model->RuleFor("vast"));
  EXPECT_NE(model->RuleFor("vast"), model->RuleFor("aws"));
  EXPECT_EQ(OverheadModel().RuleFor("aws"), nullptr);
  EXPECT_EQ(OverheadModel().TotalHours(nullptr, {}), 0);
  for (const char* provider : {"aws", "vast", "VAST", "no-such-provider"}) {
    for (double network_gbps : {0.0, 5.0, 3200.0}) {
      const RunData run{
          .run_hours = 10.5, .weights_gb = 16, .dataset_gb = 9, .network_gbps = network_gbps};
      const v1::Overheads by_name = model->For(provider, run);
      EXPECT_GT(by_name.total_hours(), 0);
      EXPECT_EQ(model->For(model->RuleFor(provider), run).SerializeAsString(),
                by_name.SerializeAsString());
      EXPECT_EQ(model->TotalHours(model->RuleFor(provider), run), by_name.total_hours());
    }
  }
}

// The offer's published instance network caps the provider's practical
// download rate; a faster network does not raise it; unpublished (0) leaves it.
TEST(Overheads, DownloadRateIsCappedByTheInstanceNetwork) {
  absl::StatusOr<OverheadModel> model =
      OverheadModel::FromFile(GPUADVISOR_SOURCE_DIR "/data/gateway/overheads.textproto");
  ASSERT_OK(model);
  RunData run{.run_hours = 1, .weights_gb = 140, .dataset_gb = 10};
  const v1::Overheads unpublished = model->For("aws", run);
  EXPECT_EQ(unpublished.download_gbps(), 10);  // the default rule's practical rate
  run.network_gbps = 3200;                     // p5: the practical rate still decides
  EXPECT_EQ(model->For("aws", run).download_gbps(), 10);
  EXPECT_DOUBLE_EQ(model->For("aws", run).download_hours(), unpublished.download_hours());
  run.network_gbps = 5;  // a published 5 Gbps instance: half the default rate
  const v1::Overheads slow = model->For("aws", run);
  EXPECT_EQ(slow.download_gbps(), 5);
  EXPECT_DOUBLE_EQ(slow.download_hours(), 150.0 / (5.0 / 8 * 3600));
  EXPECT_DOUBLE_EQ(slow.image_pull_hours(), 2 * unpublished.image_pull_hours());
}

// The per-user speed floor an endpoint gets by default is data with its
// source and date, not a C++ constant.
TEST(Overheads, ServingDefaultsComeFromTheDataFileWithSource) {
  absl::StatusOr<OverheadModel> model =
      OverheadModel::FromFile(GPUADVISOR_SOURCE_DIR "/data/gateway/overheads.textproto");
  ASSERT_OK(model);
  EXPECT_EQ(model->serving_defaults().min_user_tokens_per_second(), 10);
  EXPECT_THAT(model->serving_defaults().source(), HasSubstr("MLPerf"));
  EXPECT_FALSE(model->as_of().empty());
  EXPECT_EQ(OverheadModel().serving_defaults().min_user_tokens_per_second(),
            0);  // no data, no floor
}

TEST(Overheads, RejectsBadRulesNamingTheField) {
  auto parse = [](const std::string& text) {
    v1::OverheadRules rules;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &rules));
    return OverheadModel::FromProto(rules);
  };
  EXPECT_THAT(parse(R"(rules { provider: "aws" download_gbps: 1 })"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("default rule")));
  EXPECT_THAT(parse(R"(rules { download_gbps: 0 })"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rules[0].download_gbps")));
  EXPECT_THAT(parse(R"(rules { startup_minutes: -1 download_gbps: 1 })"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rules[0].startup_minutes")));
  constexpr char kRule[] = R"(rules { download_gbps: 1 } )";
  EXPECT_THAT(parse(std::string(kRule) +
                    R"(serving_defaults { min_user_tokens_per_second: -1 source: "x" })"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("serving_defaults.min_user_tokens_per_second")));
  EXPECT_THAT(parse(std::string(kRule) + R"(serving_defaults { min_user_tokens_per_second: 10 })"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("serving_defaults.source")));
}

}  // namespace
}  // namespace gpuadvisor::gateway
