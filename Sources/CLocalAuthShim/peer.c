// Peer credentials and accept4: `struct ucred` and accept4 are hidden from
// Swift because they need _GNU_SOURCE.
#define _GNU_SOURCE
#include "shim.h"
#include <errno.h>
#include <linux/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
/* linux/pidfd.h of Linux 6.13; Debian 12's headers predate it. */
struct la_pidfd_info {
    __u64 mask;
    __u64 cgroupid;
    __u32 pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid, spare0[1];
};
#define LA_PIDFD_GET_INFO _IOWR(0xFF, 11, struct la_pidfd_info)
#define LA_PIDFD_INFO_CREDS (1UL << 1)

_Static_assert(LA_SOCK_NONBLOCK == SOCK_NONBLOCK, "SOCK_NONBLOCK");
_Static_assert(LA_SOCK_CLOEXEC == SOCK_CLOEXEC, "SOCK_CLOEXEC");

int la_peer_credentials(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid) {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *pid = (int32_t)cred.pid;
    *uid = (uint32_t)cred.uid;
    *gid = (uint32_t)cred.gid;
    return 0;
}

int la_accept4(int fd, int flags) {
    return accept4(fd, NULL, NULL, flags);
}

int la_pidfd_real_uid(int pidfd, uint32_t *ruid) {
    struct la_pidfd_info info = { .mask = LA_PIDFD_INFO_CREDS };
    if (ioctl(pidfd, LA_PIDFD_GET_INFO, &info) != 0) return -1;
    if (!(info.mask & LA_PIDFD_INFO_CREDS)) {
        errno = ENOTTY;
        return -1;
    }
    *ruid = info.ruid;
    return 0;
}

int la_peer_real_uid(int fd, uint32_t *ruid) {
    int pidfd = -1, rc, saved;
    socklen_t len = sizeof(pidfd);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0) return -1;
    rc = la_pidfd_real_uid(pidfd, ruid);
    saved = errno;
    close(pidfd);
    errno = saved;
    return rc;
}
