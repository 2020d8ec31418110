// O_PATH (PathWalk) and setresuid/setresgid (dropping to a state
// directory's owner): both need _GNU_SOURCE, hidden from Swift.
#define _GNU_SOURCE
#include "shim.h"
#include <fcntl.h>
#include <grp.h>
#include <unistd.h>

_Static_assert(LA_O_PATH == O_PATH, "O_PATH");

int la_become(uint32_t uid, uint32_t gid, const uint32_t *groups, int count) {
    if (setgroups((size_t)count, (const gid_t *)groups) != 0) return -1;
    if (setresgid(gid, gid, gid) != 0) return -1;
    if (setresuid(uid, uid, uid) != 0) return -1;
    uid_t r, e, s;
    if (getresuid(&r, &e, &s) != 0 || r != uid || e != uid || s != uid) return -1;
    gid_t gr, ge, gs;
    if (getresgid(&gr, &ge, &gs) != 0 || gr != gid || ge != gid || gs != gid) return -1;
    return 0;
}
