// eventfd: how worker threads wake the event loop (a counter the loop polls).
#define _GNU_SOURCE
#include "shim.h"
#include <sys/eventfd.h>

int la_eventfd_create(unsigned int initval) {
    return eventfd(initval, EFD_NONBLOCK | EFD_CLOEXEC);
}

int la_eventfd_write(int fd, uint64_t value) {
    return eventfd_write(fd, value);
}

int la_eventfd_read(int fd, uint64_t *value) {
    eventfd_t v = 0;
    if (eventfd_read(fd, &v) != 0) return -1;
    *value = v;
    return 0;
}
