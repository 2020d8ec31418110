// Kernel randomness (getrandom is missing from Swift's Glibc module) and a
// memory scrub the optimizer may not drop, for secrets and crypt buffers.
#define _GNU_SOURCE
#include "shim.h"
#include <string.h>
#include <sys/random.h>

ssize_t la_getrandom(void *buf, size_t len, unsigned int flags) {
    return getrandom(buf, len, flags);
}

void la_scrub(void *buf, size_t len) {
    explicit_bzero(buf, len);
}
