// CLocalAuthShim: the Linux calls that Swift's Glibc module does not expose
// (epoll, signalfd, timerfd, eventfd, struct ucred, accept4, getrandom) and
// CRC32C with its SSE4.2 path. Each function is a thin wrapper: it returns
// what the syscall returns and leaves errno set; the Swift layer
// (LocalAuthSystem) retries EINTR and turns errno into SystemError.
//
// This header must not define _GNU_SOURCE (the .c files do): defining it here
// changes Glibc's own headers as Swift sees them and breaks the build.
// Constants are plain numbers so the header needs no Linux headers; each .c
// file checks them against the system's with _Static_assert.
#ifndef LOCALAUTH_SHIM_H
#define LOCALAUTH_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

// MARK: Sockets (peer.c)

#define LA_SOCK_NONBLOCK 00004000
#define LA_SOCK_CLOEXEC 02000000

/// SO_PEERCRED of a connected AF_UNIX socket. Returns 0, or -1 with errno.
int la_peer_credentials(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid);

// MARK: Pinned processes (pidfd.c)

/// A pidfd of the process that connected to socket `fd` (SO_PEERPIDFD,
/// Linux 6.5); -1 with errno (ENOPROTOOPT on older kernels).
int la_peer_pidfd(int fd);
/// pidfd_open(pid, 0); -1 with errno.
int la_pidfd_open(int32_t pid);
/// The pidfd's inode number: on pidfs (Linux 6.9) one per process, never reused while the system runs.
int la_pidfd_inode(int pidfd, uint64_t *inode);
/// 1 when the pidfd's process has exited, 0 while it runs, -1 on error.
int la_pidfd_exited(int pidfd);
/// accept4(fd, NULL, NULL, flags); flags from LA_SOCK_NONBLOCK | LA_SOCK_CLOEXEC.
int la_accept4(int fd, int flags);
/* The real uid of `fd`'s peer process as it is now, race-free: its pidfd
 * from the socket (SO_PEERPIDFD, Linux 6.5) and PIDFD_GET_INFO (6.13). 0,
 * or -1 with errno (ENOPROTOOPT/ENOTTY: an older kernel; ESRCH: the peer
 * has exited). */
int la_peer_real_uid(int fd, uint32_t *ruid);
/* The real uid of a pidfd's process (PIDFD_GET_INFO, Linux 6.13); as
 * la_peer_real_uid. */
int la_pidfd_real_uid(int pidfd, uint32_t *ruid);

// MARK: Paths and credentials (credentials.c)

#define LA_O_PATH 010000000

/// setgroups(groups), then setresgid and setresuid all to gid and uid, and
/// a check that no saved id is left: 0, or -1 with errno.
int la_become(uint32_t uid, uint32_t gid, const uint32_t *groups, int count);

// MARK: epoll (epoll.c)

#define LA_EPOLLIN 0x001u
#define LA_EPOLLOUT 0x004u
#define LA_EPOLLERR 0x008u
#define LA_EPOLLHUP 0x010u
#define LA_EPOLLRDHUP 0x2000u
#define LA_EPOLLET (1u << 31)

#define LA_EPOLL_CTL_ADD 1
#define LA_EPOLL_CTL_DEL 2
#define LA_EPOLL_CTL_MOD 3

/// epoll_create1(EPOLL_CLOEXEC).
int la_epoll_create(void);
/// epoll_ctl with the event's user data set to `data`.
int la_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
/// epoll_wait into caller arrays of `maxevents` (at most LA_EPOLL_MAX_EVENTS):
/// events[i] and data[i] describe ready entry i. Allocates nothing.
#define LA_EPOLL_MAX_EVENTS 1024
int la_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int maxevents, int timeout_ms);

// MARK: Signals (signals.c)

/// Blocks `signals` in the calling thread (threads started afterwards inherit
/// the mask) and returns a non-blocking, close-on-exec signalfd for them.
int la_signalfd_create(const int *signals, int count);
/// Reads one signalfd_siginfo; returns the signal number, or -1 with errno.
int la_signalfd_read(int fd);

// MARK: Timers and wake-ups (timerfd.c, eventfd.c)

/// timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC).
int la_timerfd_create(void);
/// timerfd_create(CLOCK_BOOTTIME, ...): its time runs on during a suspend.
int la_timerfd_create_boottime(void);
/// Arms the timer: first expiry after `initial_ns` (0 disarms), then every
/// `interval_ns` (0 for one-shot).
int la_timerfd_set(int fd, uint64_t initial_ns, uint64_t interval_ns);
/// Reads the expiration count into *count. Returns 0, or -1 with errno.
int la_timerfd_read(int fd, uint64_t *count);

/// eventfd(initval, EFD_NONBLOCK | EFD_CLOEXEC).
int la_eventfd_create(unsigned int initval);
/// Adds `value` to the counter. Returns 0, or -1 with errno.
int la_eventfd_write(int fd, uint64_t value);
/// Reads and resets the counter into *value. Returns 0, or -1 with errno.
int la_eventfd_read(int fd, uint64_t *value);

// MARK: Randomness and scrubbing (random.c)

/// getrandom(2): returns bytes written (may be short), or -1 with errno.
ssize_t la_getrandom(void *buf, size_t len, unsigned int flags);
/// Zeroes memory in a way the compiler may not remove (explicit_bzero).
void la_scrub(void *buf, size_t len);

// MARK: Core dumps (dumpable.c)

/// prctl(PR_SET_DUMPABLE, dumpable). Returns 0, or -1 with errno.
int la_set_dumpable(int dumpable);
/// prctl(PR_GET_DUMPABLE): 0 or 1, or -1 with errno.
int la_get_dumpable(void);

// MARK: CRC32C (crc32c.c)

/// CRC32C (Castagnoli), standard semantics: la_crc32c(0, "123456789", 9) ==
/// 0xE3069283, and la_crc32c(la_crc32c(0, a), b) == crc of a then b.
/// Uses SSE4.2 when the CPU has it, else the table.
uint32_t la_crc32c(uint32_t crc, const void *buf, size_t len);
/// The table path alone, to test the hardware path against.
uint32_t la_crc32c_table(uint32_t crc, const void *buf, size_t len);
/// 1 when la_crc32c uses the CPU's crc32 instruction.
int la_crc32c_hardware(void);

// MARK: Memory (memory.c)

/// malloc_trim(0): hands free heap pages back to the kernel; 1 if any were.
int la_malloc_trim(void);

// MARK: Extended attributes (xattr.c), for POSIX ACLs

/// fsetxattr(fd, name, value, size, 0): creates or replaces.
int la_fsetxattr(int fd, const char *name, const void *value, size_t size);
/// fremovexattr(fd, name).
int la_fremovexattr(int fd, const char *name);
/// getxattr(path, name, value, size): the length read (size 0: the length
/// needed), or -1 with errno (ENODATA: no such attribute). Follows symlinks.
ssize_t la_getxattr(const char *path, const char *name, void *value, size_t size);
/// fgetxattr(fd, name, value, size), as la_getxattr.
ssize_t la_fgetxattr(int fd, const char *name, void *value, size_t size);

// MARK: Processors (cpus.c)

/// How many CPUs this thread may run on (sched_getaffinity), at least 1.
int la_usable_cpus(void);
/// The calling thread to SCHED_IDLE and the idle I/O class; -1 when either failed.
int la_lower_thread_priority(void);

#endif
