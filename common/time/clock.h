#ifndef GPUADVISOR_COMMON_TIME_CLOCK_H_
#define GPUADVISOR_COMMON_TIME_CLOCK_H_

// The time a component reads, injectable: production code takes
// Clock::Real() (absl::Now); a unit test passes a ManualClock and moves time
// forward instead of sleeping. Only what a component measures (ages,
// silences) reads the clock; how long a thread waits between checks stays
// real time. Header-only, thread-safe.

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace gpuadvisor {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;

  // absl::Now(); lives for the whole process.
  static const Clock* Real();
};

namespace clock_internal {
class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};
}  // namespace clock_internal

inline const Clock* Clock::Real() {
  static const clock_internal::RealClock* const real = new clock_internal::RealClock();
  return real;
}

// A clock that moves only when told (tests).
class ManualClock final : public Clock {
 public:
  explicit ManualClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration by) {
    absl::MutexLock lock(&mu_);
    now_ += by;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuadvisor

#endif  // GPUADVISOR_COMMON_TIME_CLOCK_H_
