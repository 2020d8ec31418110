// S-50: the daemon holds passcodes in memory for the moment they are checked;
// a non-dumpable process leaves no core file with them and cannot be
// ptrace-attached or read through /proc/PID/mem by its own (non-root) uid.
#define _GNU_SOURCE
#include "shim.h"
#include <sys/prctl.h>

int la_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0, 0, 0);
}

int la_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}
