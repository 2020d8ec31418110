// timerfd: monotonic timers (deadlines, the watchdog ping) as readable fds.
#define _GNU_SOURCE
#include "shim.h"
#include <errno.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int la_timerfd_create(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

int la_timerfd_create_boottime(void) {
    return timerfd_create(CLOCK_BOOTTIME, TFD_NONBLOCK | TFD_CLOEXEC);
}

static struct timespec la_timespec(uint64_t ns) {
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    return ts;
}

int la_timerfd_set(int fd, uint64_t initial_ns, uint64_t interval_ns) {
    struct itimerspec spec = {.it_interval = la_timespec(interval_ns), .it_value = la_timespec(initial_ns)};
    return timerfd_settime(fd, 0, &spec, NULL);
}

int la_timerfd_read(int fd, uint64_t *count) {
    ssize_t n = read(fd, count, sizeof(*count));
    if (n < 0) return -1;
    if (n != (ssize_t)sizeof(*count)) {
        errno = EIO;
        return -1;
    }
    return 0;
}
