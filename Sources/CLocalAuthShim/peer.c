// Peer credentials and accept4: `struct ucred` and accept4 are hidden from
// Swift because they need _GNU_SOURCE.
#define _GNU_SOURCE
#include "shim.h"
#include <sys/socket.h>

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
