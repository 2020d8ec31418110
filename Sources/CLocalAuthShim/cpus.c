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
