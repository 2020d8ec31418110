/* The line protocol of PROTOCOL.md as the PAM module speaks it: requests
 * are built with every value quoted, replies are parsed strictly (tag,
 * status, key=value pairs, bare or quoted values with \\ \" \n \r \t), and
 * lines are read with the protocol's 8192-byte cap. Pure code apart from
 * la_read_line/la_write_all, so the unit tests drive it without a daemon. */
#ifndef PAM_LOCALAUTH_WIRE_H
#define PAM_LOCALAUTH_WIRE_H

#include <stddef.h>

/* A line may be at most 8192 bytes including the LF (PROTOCOL.md). */
#define LA_MAX_LINE 8192
#define LA_MAX_TOKEN 32
#define LA_MAX_FIELDS 32

enum la_status { LA_STATUS_OK, LA_STATUS_ERR, LA_STATUS_PROMPT, LA_STATUS_BYE };

struct la_field {
    char key[LA_MAX_TOKEN + 1];
    const char *value; /* into la_reply.values, NUL-terminated */
};

struct la_reply {
    char tag[LA_MAX_TOKEN + 1];
    enum la_status status;
    size_t count;
    struct la_field fields[LA_MAX_FIELDS];
    char values[LA_MAX_LINE]; /* decoded values, each NUL-terminated */
};

/* Parses one reply line (without its LF; a trailing CR is dropped).
 * 0 on success, -1 when the line is not a well-formed reply. */
int la_parse_reply(const char *line, size_t length, struct la_reply *reply);

/* The value of `key`, or NULL. */
const char *la_field(const struct la_reply *reply, const char *key);

/* A request being built in a fixed buffer of LA_MAX_LINE bytes. */
struct la_request {
    char bytes[LA_MAX_LINE];
    size_t length;
    int overflow; /* set once anything did not fit or could not be encoded */
};

void la_request_start(struct la_request *request, const char *tag, const char *verb);
/* Appends ` key="value"` with the protocol's escapes. A value holding a
 * control character other than \n \r \t cannot be sent: sets overflow. */
void la_request_add(struct la_request *request, const char *key, const char *value);
/* Appends the LF; returns 0, or -1 when the request is unusable. */
int la_request_finish(struct la_request *request);
/* Wipes the request (it may have held a password). */
void la_request_wipe(struct la_request *request);

/* Standard base64 (RFC 4648, with padding) of `in` into out[size]: the
 * number of bytes, or -1 for anything else (a bad character, bad padding,
 * too long for `out`). A login secret (S-75) comes this way; the caller
 * wipes `out`. */
long la_base64_decode(const char *in, unsigned char *out, size_t size);

/* Buffered reading of lines from a socket. */
struct la_reader {
    int fd;
    int timeout_ms; /* per wait for the daemon; < 0: none */
    size_t have;
    char buffer[LA_MAX_LINE];
};

enum la_read_result { LA_READ_LINE = 0, LA_READ_EOF, LA_READ_TOO_LONG, LA_READ_TIMEOUT, LA_READ_ERROR, LA_READ_OTHER };

void la_reader_init(struct la_reader *reader, int fd, int timeout_ms);
/* The next line (LF and a CR before it dropped) into line[LA_MAX_LINE],
 * NUL-terminated, its length in *length. */
enum la_read_result la_read_line(struct la_reader *reader, char *line, size_t *length);
/* The same, but LA_READ_OTHER as soon as `other` (an fd, or -1 for none)
 * is readable while no whole line is buffered; the timeout then does not
 * apply (the user is typing; the daemon's own prompt timeout bounds it). */
enum la_read_result la_read_line_or(struct la_reader *reader, int other, char *line, size_t *length);

/* Writes all bytes (MSG_NOSIGNAL); 0 or -1. */
int la_write_all(int fd, const char *bytes, size_t length);

#endif
