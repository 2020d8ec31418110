/* The desktop agent's connection to localauthd: a Unix socket watched by
 * the GLib main loop, lines split with the 32768-byte cap and parsed
 * (wire.h), requests written whole (they are short; the socket is blocking
 * for writes). A password goes out in a line built in a buffer of its own,
 * wiped once written. */
#ifndef LOCALAUTH_AGENT_LINK_H
#define LOCALAUTH_AGENT_LINK_H

#include <glib.h>

#include "wire.h"

struct agent_link;

/* A reply line of the daemon, parsed; and the end of the connection. The
 * callbacks run in the main loop and must not free the link. */
typedef void (*agent_reply_cb)(const struct agent_reply *reply, void *user);
typedef void (*agent_closed_cb)(const char *why, void *user);

/* Connects to `socket_path` and watches it; NULL with `error` set. */
struct agent_link *agent_link_open(const char *socket_path, agent_reply_cb on_reply, agent_closed_cb on_closed,
                                   void *user, GError **error);
void agent_link_free(struct agent_link *link);

/* Sends `verb` with `pairs` (key, value, ..., NULL) under a fresh tag, which
 * is written to `tag` (>= 16 bytes) when given: 0, or -1 when it failed. */
int agent_link_send(struct agent_link *link, const char *verb, const char *const *pairs, char *tag);

/* `passcode request=N secret=...` from `secret` (not kept): 0, or -1 when it
 * could not be sent (a control character the protocol cannot quote, or the
 * connection failed). */
int agent_link_send_passcode(struct agent_link *link, const char *request, const char *secret);

#endif
