#include "services/gateway/estimate_cache.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpuadvisor::gateway {
namespace {

EstimateCache::Estimate Made(double hours) {
  auto e = std::make_shared<sizing::v1::ConfigurationEstimate>();
  e->set_estimated_hours(hours);
  return e;
}

EstimateCache::Totals Totals(double flops) {
  auto t = std::make_shared<sizing::v1::EstimateResponse>();
  t->mutable_totals()->set_total_flops(flops);
  return t;
}

std::string Key(double tokens, double margin = 0.1) {
  sizing::v1::EstimateRequest r;
  r.mutable_workload()->set_task(sizing::v1::TASK_LORA);
  r.mutable_workload()->set_train_tokens(tokens);
  r.set_vram_margin(margin);
  return EstimateCache::WorkloadKey(r);
}

// Was: the key was the workload and the margin only, so two endpoint
// requests with different SLOs shared a plan chosen for one of them.
TEST(EstimateCache, KeyCoversTheServingSlosNotTheConfigurations) {
  sizing::v1::EstimateRequest r;
  r.mutable_workload()->set_task(sizing::v1::TASK_INFERENCE);
  r.mutable_workload()->set_concurrent_sequences(32);
  r.set_vram_margin(0.1);
  const std::string none = EstimateCache::WorkloadKey(r);
  EXPECT_FALSE(none.empty());
  sizing::v1::EstimateRequest capped = r;
  capped.mutable_serving_slo()->set_max_time_to_first_token_seconds(0.6);
  sizing::v1::EstimateRequest tighter = r;
  tighter.mutable_serving_slo()->set_max_time_to_first_token_seconds(0.5);
  sizing::v1::EstimateRequest floor = r;
  floor.mutable_serving_slo()->set_min_tokens_per_second_per_user(10);
  sizing::v1::EstimateRequest total = r;
  total.mutable_serving_slo()->set_min_tokens_per_second(500);
  const std::vector<std::string> keys = {
      none, EstimateCache::WorkloadKey(capped), EstimateCache::WorkloadKey(tighter),
      EstimateCache::WorkloadKey(floor), EstimateCache::WorkloadKey(total)};
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = i + 1; j < keys.size(); ++j) EXPECT_NE(keys[i], keys[j]) << i << " vs " << j;
  }
  // The same SLOs give the same key; configurations are not part of it.
  sizing::v1::EstimateRequest again = capped;
  again.add_configurations()->set_gpu_model("L40S");
  EXPECT_EQ(EstimateCache::WorkloadKey(again), keys[1]);
}

TEST(EstimateCache, FindsWhatWasStoredPerWorkloadAndConfiguration) {
  EstimateCache cache({});
  const absl::Time now = absl::UnixEpoch() + absl::Hours(1);
  std::vector<EstimateCache::ConfigKey> configs = {{"h100x8", 1}, {"h100x8", 2}, {"l4x1", 1}};
  std::vector<EstimateCache::Estimate> found;
  EXPECT_EQ(cache.Lookup(Key(1e9), configs, now, found), nullptr);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0], nullptr);

  cache.Insert(Key(1e9), Totals(5), {configs[0], configs[2]}, {Made(10), Made(30)}, now);
  EXPECT_EQ(cache.estimates(), 2u);
  EstimateCache::Totals totals = cache.Lookup(Key(1e9), configs, now, found);
  ASSERT_NE(totals, nullptr);
  EXPECT_EQ(totals->totals().total_flops(), 5);
  ASSERT_EQ(found.size(), 3u);
  ASSERT_NE(found[0], nullptr);
  EXPECT_EQ(found[0]->estimated_hours(), 10);
  EXPECT_EQ(found[1], nullptr);  // same hardware, other node count
  ASSERT_NE(found[2], nullptr);
  EXPECT_EQ(found[2]->estimated_hours(), 30);

  // Another workload, or the same one at another margin, is not found.
  EXPECT_EQ(cache.Lookup(Key(2e9), configs, now, found), nullptr);
  EXPECT_EQ(found[0], nullptr);
  EXPECT_EQ(cache.Lookup(Key(1e9, 0.2), configs, now, found), nullptr);

  // Adding to a known workload needs no totals.
  cache.Insert(Key(1e9), nullptr, {configs[1]}, {Made(20)}, now);
  ASSERT_NE(cache.Lookup(Key(1e9), configs, now, found), nullptr);
  ASSERT_NE(found[1], nullptr);
  EXPECT_EQ(found[1]->estimated_hours(), 20);
}

TEST(EstimateCache, EntriesExpireAfterMaxAge) {
  EstimateCache cache({.max_estimates = 100, .max_age = absl::Minutes(10)});
  const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);
  std::vector<EstimateCache::ConfigKey> configs = {{"a100x8", 4}};
  std::vector<EstimateCache::Estimate> found;
  cache.Insert(Key(1e9), Totals(1), configs, {Made(1)}, t0);
  EXPECT_NE(cache.Lookup(Key(1e9), configs, t0 + absl::Minutes(9), found), nullptr);
  EXPECT_EQ(cache.Lookup(Key(1e9), configs, t0 + absl::Minutes(11), found), nullptr);
  EXPECT_EQ(found[0], nullptr);
  // A run that started before expiry and had the totals cached cannot
  // revive the entry; a fresh sizing answer replaces it.
  cache.Insert(Key(1e9), nullptr, configs, {Made(2)}, t0 + absl::Minutes(11));
  EXPECT_EQ(cache.estimates(), 0u);
  cache.Insert(Key(1e9), Totals(1), configs, {Made(3)}, t0 + absl::Minutes(11));
  ASSERT_NE(cache.Lookup(Key(1e9), configs, t0 + absl::Minutes(12), found), nullptr);
  EXPECT_EQ(found[0]->estimated_hours(), 3);
  EXPECT_EQ(cache.estimates(), 1u);
}

TEST(EstimateCache, BoundedByEstimatesOldestWorkloadsGoFirst) {
  EstimateCache cache({.max_estimates = 4});
  const absl::Time now = absl::UnixEpoch() + absl::Hours(1);
  std::vector<EstimateCache::ConfigKey> configs = {{"x", 1}, {"x", 2}};
  std::vector<EstimateCache::Estimate> found;
  cache.Insert(Key(1), Totals(1), configs, {Made(1), Made(2)}, now);
  cache.Insert(Key(2), Totals(2), configs, {Made(1), Made(2)}, now);
  EXPECT_EQ(cache.estimates(), 4u);
  cache.Insert(Key(3), Totals(3), configs, {Made(1), Made(2)}, now);
  EXPECT_EQ(cache.estimates(), 4u);
  EXPECT_EQ(cache.Lookup(Key(1), configs, now, found), nullptr);
  EXPECT_NE(cache.Lookup(Key(2), configs, now, found), nullptr);
  EXPECT_NE(cache.Lookup(Key(3), configs, now, found), nullptr);
}

TEST(EstimateCache, ZeroEntriesTurnsItOff) {
  EstimateCache cache({.max_estimates = 0});
  EXPECT_FALSE(cache.enabled());
  std::vector<EstimateCache::ConfigKey> configs = {{"x", 1}};
  std::vector<EstimateCache::Estimate> found;
  cache.Insert(Key(1), Totals(1), configs, {Made(1)}, absl::UnixEpoch());
  EXPECT_EQ(cache.Lookup(Key(1), configs, absl::UnixEpoch(), found), nullptr);
  EXPECT_EQ(cache.estimates(), 0u);
}

}  // namespace
}  // namespace gpuadvisor::gateway
