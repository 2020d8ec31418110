// Extended attributes, which Swift's Glibc module does not expose: the
// daemon writes POSIX ACLs (system.posix_acl_access / _default) on its own
// log directory through them, and localauthctl reads one back to say which
// groups may read the log (AccessControlList.swift).
#define _GNU_SOURCE
#include "shim.h"
#include <sys/xattr.h>

int la_fsetxattr(int fd, const char *name, const void *value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
}

int la_fremovexattr(int fd, const char *name) {
    return fremovexattr(fd, name);
}

ssize_t la_getxattr(const char *path, const char *name, void *value, size_t size) {
    return getxattr(path, name, value, size);
}

ssize_t la_fgetxattr(int fd, const char *name, void *value, size_t size) {
    return fgetxattr(fd, name, value, size);
}
