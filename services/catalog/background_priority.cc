#include "services/catalog/background_priority.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace gpuadvisor::catalog {
namespace {

id_t ThisThread() { return static_cast<id_t>(syscall(SYS_gettid)); }

}  // namespace

void LowerThisThreadPriority(int nice) {
  if (nice <= 0) return;
  sched_param param{};
  param.sched_priority = 0;
  (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
  if (ThisThreadNice() < nice) (void)setpriority(PRIO_PROCESS, ThisThread(), nice);
}

int ThisThreadNice() {
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, ThisThread());
  return errno == 0 ? nice : 0;
}

}  // namespace gpuadvisor::catalog
