// signalfd: signals become readable events on the event loop instead of
// asynchronous handlers. They must be blocked first, or they are delivered
// the old way; block them before starting threads so every thread inherits it.
#define _GNU_SOURCE
#include "shim.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

int la_signalfd_create(const int *signals, int count) {
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < count; i++) {
        if (sigaddset(&set, signals[i]) != 0) return -1;
    }
    int rc = pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int la_signalfd_read(int fd) {
    struct signalfd_siginfo info;
    ssize_t n = read(fd, &info, sizeof(info));
    if (n < 0) return -1;
    if (n != (ssize_t)sizeof(info)) {
        errno = EIO;
        return -1;
    }
    return (int)info.ssi_signo;
}
