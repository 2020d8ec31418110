/* The protocol codec of the PAM module (see wire.h). Replies come from the
 * daemon, which is trusted to be the daemon only because the socket path is
 * the administrator's; they are parsed as hostile anyway: fixed buffers,
 * every length checked, nothing longer than the protocol allows accepted. */
#define _GNU_SOURCE
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int is_tag_char(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

static int is_key_char(unsigned char c, int first) {
    if (c >= 'a' && c <= 'z') return 1;
    return !first && ((c >= '0' && c <= '9') || c == '-');
}

static int is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

int la_parse_reply(const char *line, size_t length, struct la_reply *reply) {
    size_t i = 0, used = 0, n;
    memset(reply, 0, sizeof(*reply));
    if (length > 0 && line[length - 1] == '\r') length--;
    if (length >= LA_MAX_LINE) return -1;

    /* TAG: 1..32 tag characters, or `*` for lines tied to no request. */
    for (n = 0; i < length && line[i] != ' '; i++, n++) {
        if (n >= LA_MAX_TOKEN || !(is_tag_char((unsigned char)line[i]) || (n == 0 && line[i] == '*'))) return -1;
        reply->tag[n] = line[i];
    }
    if (n == 0 || (reply->tag[0] == '*' && n != 1)) return -1;
    if (i >= length) return -1;
    i++;

    /* STATUS */
    {
        size_t start = i;
        while (i < length && line[i] != ' ') i++;
        n = i - start;
        if (n == 2 && memcmp(line + start, "OK", 2) == 0) reply->status = LA_STATUS_OK;
        else if (n == 3 && memcmp(line + start, "ERR", 3) == 0) reply->status = LA_STATUS_ERR;
        else if (n == 6 && memcmp(line + start, "PROMPT", 6) == 0) reply->status = LA_STATUS_PROMPT;
        else if (n == 3 && memcmp(line + start, "BYE", 3) == 0) reply->status = LA_STATUS_BYE;
        else return -1;
    }

    while (i < length) {
        struct la_field *field;
        if (line[i] != ' ') return -1;
        i++;
        if (reply->count >= LA_MAX_FIELDS) return -1;
        field = &reply->fields[reply->count];
        for (n = 0; i < length && line[i] != '='; i++, n++) {
            if (n >= LA_MAX_TOKEN || !is_key_char((unsigned char)line[i], n == 0)) return -1;
            field->key[n] = line[i];
        }
        if (n == 0 || i >= length) return -1;
        i++; /* '=' */
        for (size_t k = 0; k < reply->count; k++)
            if (strcmp(reply->fields[k].key, field->key) == 0) return -1; /* a key appears once */
        field->value = reply->values + used;
        if (i < length && line[i] == '"') {
            i++;
            for (;;) {
                unsigned char c;
                if (i >= length) return -1; /* unterminated */
                c = (unsigned char)line[i++];
                if (c == '"') break;
                if (is_control(c)) return -1;
                if (c == '\\') {
                    if (i >= length) return -1;
                    switch (line[i++]) {
                    case '\\': c = '\\'; break;
                    case '"': c = '"'; break;
                    case 'n': c = '\n'; break;
                    case 'r': c = '\r'; break;
                    case 't': c = '\t'; break;
                    default: return -1;
                    }
                }
                if (used + 1 >= sizeof(reply->values)) return -1;
                reply->values[used++] = (char)c;
            }
            if (i < length && line[i] != ' ') return -1;
        } else {
            size_t start = i;
            while (i < length && line[i] != ' ') {
                unsigned char c = (unsigned char)line[i];
                if (c == '"' || c == '=' || is_control(c)) return -1;
                if (used + 1 >= sizeof(reply->values)) return -1;
                reply->values[used++] = (char)c;
                i++;
            }
            if (i == start) return -1; /* a bare value has at least one byte */
        }
        if (used + 1 > sizeof(reply->values)) return -1;
        reply->values[used++] = '\0';
        reply->count++;
    }
    return 0;
}

const char *la_field(const struct la_reply *reply, const char *key) {
    for (size_t k = 0; k < reply->count; k++)
        if (strcmp(reply->fields[k].key, key) == 0) return reply->fields[k].value;
    return NULL;
}

static void put(struct la_request *request, const char *bytes, size_t length) {
    /* One byte stays free for the LF. */
    if (request->overflow || request->length + length + 1 > sizeof(request->bytes)) {
        request->overflow = 1;
        return;
    }
    memcpy(request->bytes + request->length, bytes, length);
    request->length += length;
}

void la_request_start(struct la_request *request, const char *tag, const char *verb) {
    request->length = 0;
    request->overflow = 0;
    put(request, tag, strlen(tag));
    put(request, " ", 1);
    put(request, verb, strlen(verb));
}

void la_request_add(struct la_request *request, const char *key, const char *value) {
    put(request, " ", 1);
    put(request, key, strlen(key));
    put(request, "=\"", 2);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        switch (*p) {
        case '\\': put(request, "\\\\", 2); break;
        case '"': put(request, "\\\"", 2); break;
        case '\n': put(request, "\\n", 2); break;
        case '\r': put(request, "\\r", 2); break;
        case '\t': put(request, "\\t", 2); break;
        default:
            if (is_control(*p)) request->overflow = 1;
            else put(request, (const char *)p, 1);
        }
    }
    put(request, "\"", 1);
}

int la_request_finish(struct la_request *request) {
    if (request->overflow) return -1;
    request->bytes[request->length++] = '\n';
    return 0;
}

void la_request_wipe(struct la_request *request) {
    explicit_bzero(request->bytes, sizeof(request->bytes));
    request->length = 0;
}

static int base64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

long la_base64_decode(const char *in, unsigned char *out, size_t size) {
    size_t length = strlen(in), written = 0;
    if (length % 4 != 0) return -1;
    for (size_t i = 0; i < length; i += 4) {
        int v[4], pad = 0;
        for (int j = 0; j < 4; j++) {
            if (in[i + j] == '=' && i + 4 == length && j >= 2) {
                v[j] = 0;
                pad++;
            } else if (pad > 0 || (v[j] = base64_value(in[i + j])) < 0) {
                return -1;
            }
        }
        unsigned long group = ((unsigned long)v[0] << 18) | ((unsigned long)v[1] << 12) | ((unsigned long)v[2] << 6) | (unsigned long)v[3];
        for (int j = 0; j < 3 - pad; j++) {
            if (written >= size) return -1;
            out[written++] = (unsigned char)(group >> (16 - 8 * j));
        }
    }
    return (long)written;
}

void la_reader_init(struct la_reader *reader, int fd, int timeout_ms) {
    reader->fd = fd;
    reader->timeout_ms = timeout_ms;
    reader->have = 0;
}

enum la_read_result la_read_line(struct la_reader *reader, char *line, size_t *length) {
    return la_read_line_or(reader, -1, line, length);
}

enum la_read_result la_read_line_or(struct la_reader *reader, int other, char *line, size_t *length) {
    for (;;) {
        char *lf = memchr(reader->buffer, '\n', reader->have);
        if (lf) {
            size_t n = (size_t)(lf - reader->buffer);
            memcpy(line, reader->buffer, n);
            if (n > 0 && line[n - 1] == '\r') n--;
            line[n] = '\0';
            *length = n;
            reader->have -= (size_t)(lf - reader->buffer) + 1;
            memmove(reader->buffer, lf + 1, reader->have);
            return LA_READ_LINE;
        }
        /* A full buffer without a LF: longer than the protocol allows. */
        if (reader->have >= sizeof(reader->buffer)) return LA_READ_TOO_LONG;
        {
            struct pollfd pfd[2] = { { .fd = reader->fd, .events = POLLIN }, { .fd = other, .events = POLLIN } };
            int ready = poll(pfd, other >= 0 ? 2 : 1, other >= 0 ? -1 : reader->timeout_ms);
            if (ready < 0 && errno == EINTR) continue;
            if (ready < 0) return LA_READ_ERROR;
            if (ready == 0) return LA_READ_TIMEOUT;
            if (other >= 0 && pfd[1].revents != 0 && pfd[0].revents == 0) return LA_READ_OTHER;
        }
        {
            ssize_t got = read(reader->fd, reader->buffer + reader->have, sizeof(reader->buffer) - reader->have);
            if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (got < 0) return LA_READ_ERROR;
            if (got == 0) return LA_READ_EOF;
            reader->have += (size_t)got;
        }
    }
}

int la_write_all(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t sent = send(fd, bytes, length, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) return -1;
        bytes += sent;
        length -= (size_t)sent;
    }
    return 0;
}
