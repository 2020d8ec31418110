// Memory: glibc's malloc_trim, which <malloc.h> declares (not in Swift's Glibc module).
#define _GNU_SOURCE
#include "shim.h"
#include <malloc.h>

int la_malloc_trim(void) {
    return malloc_trim(0);
}
