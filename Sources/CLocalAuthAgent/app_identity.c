// The app's identity as a session agent reads it (app_identity.h). The
// order matters: the pidfd is opened and checked against the daemon's inode
// first, then /proc/PID is opened as a directory and the pidfd asked whether
// the process still runs (alive then, the directory is that process's; its
// files answer ESRCH once it exits, never another process's), then every
// fact is read relative to that directory, never through a path a process
// could swap. /.flatpak-info is opened without following a symlink, must be
// a regular file of at most 64 KiB, and is parsed by a strict reader.
#define _GNU_SOURCE
#include "app_identity.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static void problem(struct la_app_identity *out, const char *text) {
    out->known = 0;
    out->exe[0] = '\0';
    out->flatpak_id[0] = '\0';
    out->exe_verified = 0;
    snprintf(out->problem, sizeof out->problem, "%s", text);
}

static int exited(int pidfd) {
    struct pollfd p = { .fd = pidfd, .events = POLLIN, .revents = 0 };
    int rc;
    do { rc = poll(&p, 1, 0); } while (rc < 0 && errno == EINTR);
    return rc != 0;
}

int la_flatpak_id_valid(const char *id, size_t length) {
    if (length < 3 || length > 255) return 0;
    size_t elements = 0, start = 0;
    int last_dash = 0;
    for (size_t i = 0; i <= length; i++) {
        if (i == length || id[i] == '.') {
            if (i == start) return 0;
            if (id[start] >= '0' && id[start] <= '9') return 0;
            elements++;
            if (i < length && last_dash) return 0;  // '-' only in the last element
            last_dash = 0;
            start = i + 1;
            continue;
        }
        char c = id[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) return 0;
        if (c == '-') last_dash = 1;
    }
    return elements >= 3;
}

int la_flatpak_info_app_id(const char *bytes, size_t length, char *id, size_t id_size) {
    if (id_size < LA_FLATPAK_ID_MAX) return -1;
    id[0] = '\0';
    if (memchr(bytes, '\0', length) != NULL) return -1;
    int in_application = 0, found = 0;
    size_t at = 0;
    while (at < length) {
        const char *line = bytes + at;
        const char *end = memchr(line, '\n', length - at);
        size_t n = end ? (size_t)(end - line) : length - at;
        at += n + (end ? 1 : 0);
        if (n > 4096) return -1;
        if (n > 0 && line[n - 1] == '\r') n--;
        if (n == 0 || line[0] == '#') continue;
        if (line[0] == '[') {
            in_application = n == 13 && memcmp(line, "[Application]", 13) == 0;
            continue;
        }
        if (!in_application || n < 5 || memcmp(line, "name", 4) != 0) continue;
        // GKeyFile allows spaces around '='.
        size_t i = 4;
        while (i < n && line[i] == ' ') i++;
        if (i == n || line[i] != '=') continue;
        i++;
        while (i < n && line[i] == ' ') i++;
        size_t value_length = n - i;
        while (value_length > 0 && line[i + value_length - 1] == ' ') value_length--;
        if (found) return -1;  // a second name= : ambiguous, believe neither
        if (!la_flatpak_id_valid(line + i, value_length)) return -1;
        memcpy(id, line + i, value_length);
        id[value_length] = '\0';
        found = 1;
    }
    return found ? 0 : -1;
}

/// The Flatpak id under the process's root (in its own mount namespace).
static void read_flatpak(int procdir, struct la_app_identity *out) {
    int root = openat(procdir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return;
    int fd = openat(root, ".flatpak-info", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    close(root);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > LA_FLATPAK_INFO_MAX) {
        close(fd);
        return;
    }
    char *buffer = malloc(LA_FLATPAK_INFO_MAX + 1);
    if (buffer == NULL) {
        close(fd);
        return;
    }
    size_t have = 0;
    while (have <= LA_FLATPAK_INFO_MAX) {
        ssize_t n = read(fd, buffer + have, LA_FLATPAK_INFO_MAX + 1 - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        have += (size_t)n;
    }
    close(fd);
    // Grown since fstat: not believed.
    if (have > LA_FLATPAK_INFO_MAX
        || la_flatpak_info_app_id(buffer, have, out->flatpak_id, sizeof out->flatpak_id) != 0) out->flatpak_id[0] = '\0';
    free(buffer);
}

int la_app_identity_read(int32_t pid, uint64_t process, uint32_t uid, struct la_app_identity *out) {
    memset(out, 0, sizeof *out);
    if (pid <= 0) { problem(out, "no process was named"); return 0; }
    int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (pidfd < 0) { problem(out, "the process has exited"); return 0; }
    struct stat st;
    if (process != 0) {
        if (fstat(pidfd, &st) != 0 || (uint64_t)st.st_ino != process) {
            close(pidfd);
            problem(out, "its process has exited (its number now names another)");
            return 0;
        }
    } else {
        out->unpinned = 1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    int procdir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (procdir < 0 || exited(pidfd)) {
        if (procdir >= 0) close(procdir);
        close(pidfd);
        problem(out, "the process has exited");
        return 0;
    }
    if (fstat(procdir, &st) != 0 || st.st_uid != uid) {
        close(procdir);
        close(pidfd);
        problem(out, "the process runs as another user now");
        return 0;
    }
    ssize_t n = readlinkat(procdir, "exe", out->exe, sizeof out->exe - 1);
    if (n < 0) {
        out->exe[0] = '\0';
    } else {
        out->exe[n] = '\0';
        struct stat running, named;
        out->exe_verified = fstatat(procdir, "exe", &running, 0) == 0 && stat(out->exe, &named) == 0
            && running.st_dev == named.st_dev && running.st_ino == named.st_ino;
    }
    struct stat theirs, ours;
    out->other_mount_namespace = fstatat(procdir, "ns/mnt", &theirs, 0) == 0 && stat("/proc/self/ns/mnt", &ours) == 0
        && (theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino);
    if (out->other_mount_namespace) read_flatpak(procdir, out);
    // Still the same process: what was read is its.
    int gone = exited(pidfd);
    close(procdir);
    close(pidfd);
    if (gone || out->exe[0] == '\0') {
        problem(out, gone ? "the process has exited" : "its executable cannot be read (it may forbid it)");
        return 0;
    }
    out->known = 1;
    return 0;
}
