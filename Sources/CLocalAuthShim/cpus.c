// Processors: how many CPUs the calling thread may run on. CPU_COUNT is a
// macro, which Swift cannot call; a taskset or a unit's CPUAffinity= narrows
// the answer, which is the point (more threads than that only time-share).
#define _GNU_SOURCE
#include "shim.h"
#include <sched.h>

int la_usable_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int count = CPU_COUNT(&set);
    return count > 0 ? count : 1;
}

// The calling thread only, never the process: SCHED_IDLE runs it when no
// other thread wants the CPU, and the I/O class "idle" reads for it when no
// other reader waits (ioprio_set has no glibc wrapper). Each is best effort:
// without it the work is the same, only less polite.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

int la_lower_thread_priority(void) {
    struct sched_param none = {0};
    int failed = pthread_setschedparam(pthread_self(), SCHED_IDLE, &none) != 0;
    // IOPRIO_WHO_PROCESS (1) with tid 0: this thread; class IDLE (3) << 13.
    if (syscall(SYS_ioprio_set, 1, 0, 3 << 13) != 0) failed = 1;
    return failed ? -1 : 0;
}
