/* The line protocol (docs/spec/PROTOCOL.md) as the desktop agent speaks it:
 * replies parsed strictly (tag, status, key=value pairs, bare or quoted
 * values with \\ \" \n \r \t), lines up to 32768 bytes (a session agent's
 * PROMPT relays three of the app's strings, PROTOCOL.md 1.3), requests
 * built with every value quoted. Pure code: the tests drive it without a
 * daemon. */
#ifndef LOCALAUTH_AGENT_WIRE_H
#define LOCALAUTH_AGENT_WIRE_H

#include <stddef.h>
#include <sys/types.h>

#define AGENT_MAX_LINE 32768
#define AGENT_MAX_TOKEN 32
#define AGENT_MAX_FIELDS 40

enum agent_status { AGENT_OK, AGENT_ERR, AGENT_PROMPT, AGENT_DONE, AGENT_BYE, AGENT_STATE, AGENT_RIGHT };

struct agent_field {
    char key[AGENT_MAX_TOKEN + 1];
    const char *value; /* into agent_reply.values, NUL-terminated */
};

struct agent_reply {
    char tag[AGENT_MAX_TOKEN + 1];
    enum agent_status status;
    size_t count;
    struct agent_field fields[AGENT_MAX_FIELDS];
    char values[AGENT_MAX_LINE];
};

/* One reply line, without its LF (a CR before it is dropped): 0, or -1 when
 * it is not a well-formed reply. */
int agent_parse_reply(const char *line, size_t length, struct agent_reply *reply);

/* The value of `key`, or NULL. */
const char *agent_field(const struct agent_reply *reply, const char *key);

/* `TAG VERB key="value"...` and its LF into `out`: the length, or -1 when
 * it does not fit or a value holds a control character the protocol cannot
 * quote (\n \r \t can be). `pairs`: key, value, ..., NULL. */
ssize_t agent_request(char *out, size_t size, const char *tag, const char *verb, const char *const *pairs);

#endif
