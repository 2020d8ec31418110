// A peer's process, pinned (S-65): SO_PEERPIDFD gives a pidfd of the process
// that connected, as the kernel recorded it at connect(2), so a pid that was
// reused since cannot be mistaken for it. Glibc 2.36 names neither the
// option nor pidfd_open; the numbers are the kernel's ABI.
#define _GNU_SOURCE
#include "shim.h"
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int la_peer_pidfd(int fd) {
    int pidfd = -1;
    socklen_t len = sizeof(pidfd);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0) return -1;
    return pidfd;
}

int la_pidfd_open(int32_t pid) {
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
}

int la_pidfd_inode(int pidfd, uint64_t *inode) {
    struct stat st;
    if (fstat(pidfd, &st) != 0) return -1;
    *inode = (uint64_t)st.st_ino;
    return 0;
}

int la_pidfd_exited(int pidfd) {
    struct pollfd p = { .fd = pidfd, .events = POLLIN, .revents = 0 };
    int rc;
    do { rc = poll(&p, 1, 0); } while (rc < 0 && errno == EINTR);
    if (rc < 0) return -1;
    return (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0 ? 1 : 0;
}
