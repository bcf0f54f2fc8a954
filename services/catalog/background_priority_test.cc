#include "services/catalog/background_priority.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include "gtest/gtest.h"

namespace gpuadvisor::catalog {
namespace {

TEST(BackgroundPriority, TheWorkRunsLowerAndTheCallerKeepsItsPriority) {
  const int before = ThisThreadNice();
  int inside = -100;
  int policy = -1;
  const int target = std::min(before + 5, 19);  // 19: the lowest there is
  RunAtLowerPriority(target, [&] {
    inside = ThisThreadNice();
    sched_param param{};
    (void)pthread_getschedparam(pthread_self(), &policy, &param);
  });
  EXPECT_EQ(inside, target);
  EXPECT_EQ(policy, SCHED_BATCH);
  EXPECT_EQ(ThisThreadNice(), before);
}

TEST(BackgroundPriority, ZeroRunsHereAndNeverRaises) {
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran_on;
  RunAtLowerPriority(0, [&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, caller);
  const int expected = std::max(ThisThreadNice(), 15);
  std::thread lowered([expected] {
    LowerThisThreadPriority(15);
    LowerThisThreadPriority(3);  // asks for less than it has: stays where it is
    EXPECT_EQ(ThisThreadNice(), expected);
  });
  lowered.join();
}

}  // namespace
}  // namespace gpuadvisor::catalog
