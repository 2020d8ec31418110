// Placeholder header; see shim.c.
int localauth_shim_placeholder(void);
