#ifndef GPUADVISOR_SERVICES_CATALOG_BACKGROUND_PRIORITY_H_
#define GPUADVISOR_SERVICES_CATALOG_BACKGROUND_PRIORITY_H_

// Background work (a catalog reload of 100,000 offers, a replica taking a new
// snapshot in, the refresher) can run below the threads that answer calls, so
// that a refresh costs the serving path less of a shared CPU: the thread is put in SCHED_BATCH (no
// wake-up preemption of interactive threads) with a nice value of at least `nice` (Linux nice
// values are per thread; threads started afterwards inherit them). Lowering needs no privilege;
// nothing here ever raises a priority, so a dedicated thread does the work and ends with it.
//
//   LowerThisThreadPriority(10);                    // a follower's own thread
//   RunAtLowerPriority(10, [&] { result = Load(); });  // on a new thread, joined

#include <thread>
#include <utility>

namespace gpuadvisor::catalog {

// The nice value suggested for background work where it is turned on
// (catalog_server --reload_nice, refresher --nice, CatalogReplica's
// follow_nice; all off by default, see docs/performance.md).
inline constexpr int kBackgroundNice = 10;

// SCHED_BATCH and nice >= `nice` for the calling thread; 0 or less changes
// nothing. Failures are ignored (the work runs at the priority it has).
void LowerThisThreadPriority(int nice);

// The calling thread's nice value (tests).
int ThisThreadNice();

// Runs `work` on a new thread at the lower priority and waits for it; with
// `nice` <= 0, runs it here.
template <typename Work>
void RunAtLowerPriority(int nice, Work&& work) {
  if (nice <= 0) {
    std::forward<Work>(work)();
    return;
  }
  std::thread thread([nice, &work] {
    LowerThisThreadPriority(nice);
    std::forward<Work>(work)();
  });
  thread.join();
}

}  // namespace gpuadvisor::catalog

#endif  // GPUADVISOR_SERVICES_CATALOG_BACKGROUND_PRIORITY_H_
