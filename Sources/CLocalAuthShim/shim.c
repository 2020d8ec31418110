#define _GNU_SOURCE
#include "shim.h"
int localauth_shim_placeholder(void) { return 0; }
