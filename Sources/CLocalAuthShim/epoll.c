// epoll: create, control with a 64-bit user datum, and wait into two plain
// arrays so Swift never sees the packed `struct epoll_event`.
#define _GNU_SOURCE
#include "shim.h"
#include <errno.h>
#include <sys/epoll.h>

_Static_assert(LA_EPOLLIN == EPOLLIN, "EPOLLIN");
_Static_assert(LA_EPOLLOUT == EPOLLOUT, "EPOLLOUT");
_Static_assert(LA_EPOLLERR == EPOLLERR, "EPOLLERR");
_Static_assert(LA_EPOLLHUP == EPOLLHUP, "EPOLLHUP");
_Static_assert(LA_EPOLLRDHUP == EPOLLRDHUP, "EPOLLRDHUP");
_Static_assert(LA_EPOLLET == (uint32_t)EPOLLET, "EPOLLET");
_Static_assert(LA_EPOLL_CTL_ADD == EPOLL_CTL_ADD, "EPOLL_CTL_ADD");
_Static_assert(LA_EPOLL_CTL_DEL == EPOLL_CTL_DEL, "EPOLL_CTL_DEL");
_Static_assert(LA_EPOLL_CTL_MOD == EPOLL_CTL_MOD, "EPOLL_CTL_MOD");

int la_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int la_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev = {.events = events, .data = {.u64 = data}};
    return epoll_ctl(epfd, op, fd, op == EPOLL_CTL_DEL ? NULL : &ev);
}

int la_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int maxevents, int timeout_ms) {
    if (maxevents <= 0 || maxevents > LA_EPOLL_MAX_EVENTS) {
        errno = EINVAL;
        return -1;
    }
    // On the stack: the wait allocates nothing (12 KiB at most).
    struct epoll_event ready[maxevents];
    int n = epoll_wait(epfd, ready, maxevents, timeout_ms);
    for (int i = 0; i < n; i++) {
        events[i] = ready[i].events;
        data[i] = ready[i].data.u64;
    }
    return n;
}
