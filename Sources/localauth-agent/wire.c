/* The desktop agent's codec (wire.h). Replies come from the daemon at the
 * administrator's socket path; they are parsed as hostile anyway: fixed
 * buffers, every length checked, nothing the protocol does not allow. */
#include "wire.h"

#include <string.h>

static int tag_char(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

static int key_char(unsigned char c, int first) {
    if (c >= 'a' && c <= 'z') return 1;
    return !first && ((c >= '0' && c <= '9') || c == '-');
}

static int control(unsigned char c) { return c < 0x20 || c == 0x7f; }

static const struct { const char *word; enum agent_status status; } statuses[] = {
    {"OK", AGENT_OK}, {"ERR", AGENT_ERR}, {"PROMPT", AGENT_PROMPT}, {"DONE", AGENT_DONE},
    {"BYE", AGENT_BYE}, {"STATE", AGENT_STATE}, {"RIGHT", AGENT_RIGHT},
};

int agent_parse_reply(const char *line, size_t length, struct agent_reply *reply) {
    size_t i = 0, used = 0, n;
    memset(reply->tag, 0, sizeof reply->tag);
    reply->count = 0;
    if (length > 0 && line[length - 1] == '\r') length--;
    if (length >= AGENT_MAX_LINE) return -1;

    for (n = 0; i < length && line[i] != ' '; i++, n++) {
        if (n >= AGENT_MAX_TOKEN || !(tag_char((unsigned char)line[i]) || (n == 0 && line[i] == '*'))) return -1;
        reply->tag[n] = line[i];
    }
    if (n == 0 || (reply->tag[0] == '*' && n != 1) || i >= length) return -1;
    i++;

    size_t start = i;
    while (i < length && line[i] != ' ') i++;
    int known = 0;
    for (size_t k = 0; k < sizeof statuses / sizeof statuses[0]; k++) {
        if (strlen(statuses[k].word) == i - start && memcmp(line + start, statuses[k].word, i - start) == 0) {
            reply->status = statuses[k].status;
            known = 1;
        }
    }
    if (!known) return -1;

    while (i < length) {
        if (line[i] != ' ' || reply->count >= AGENT_MAX_FIELDS) return -1;
        i++;
        struct agent_field *field = &reply->fields[reply->count];
        memset(field->key, 0, sizeof field->key);
        for (n = 0; i < length && line[i] != '='; i++, n++) {
            if (n >= AGENT_MAX_TOKEN || !key_char((unsigned char)line[i], n == 0)) return -1;
            field->key[n] = line[i];
        }
        if (n == 0 || i >= length) return -1;
        i++;
        for (size_t k = 0; k < reply->count; k++)
            if (strcmp(reply->fields[k].key, field->key) == 0) return -1;
        field->value = reply->values + used;
        if (i < length && line[i] == '"') {
            i++;
            for (;;) {
                if (i >= length) return -1;
                unsigned char c = (unsigned char)line[i++];
                if (c == '"') break;
                if (control(c)) return -1;
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
                if (used + 1 >= sizeof reply->values) return -1;
                reply->values[used++] = (char)c;
            }
            if (i < length && line[i] != ' ') return -1;
        } else {
            size_t begin = i;
            while (i < length && line[i] != ' ') {
                unsigned char c = (unsigned char)line[i];
                if (c == '"' || c == '=' || control(c) || used + 1 >= sizeof reply->values) return -1;
                reply->values[used++] = (char)c;
                i++;
            }
            if (i == begin) return -1;
        }
        if (used + 1 > sizeof reply->values) return -1;
        reply->values[used++] = '\0';
        reply->count++;
    }
    return 0;
}

const char *agent_field(const struct agent_reply *reply, const char *key) {
    for (size_t k = 0; k < reply->count; k++)
        if (strcmp(reply->fields[k].key, key) == 0) return reply->fields[k].value;
    return NULL;
}

ssize_t agent_request(char *out, size_t size, const char *tag, const char *verb, const char *const *pairs) {
    size_t at = 0;
#define PUT(byte) do { if (at + 1 >= size) return -1; out[at++] = (char)(byte); } while (0)
    for (const char *p = tag; *p; p++) PUT(*p);
    PUT(' ');
    for (const char *p = verb; *p; p++) PUT(*p);
    for (size_t k = 0; pairs && pairs[k] && pairs[k + 1]; k += 2) {
        PUT(' ');
        for (const char *p = pairs[k]; *p; p++) PUT(*p);
        PUT('=');
        PUT('"');
        for (const unsigned char *p = (const unsigned char *)pairs[k + 1]; *p; p++) {
            switch (*p) {
            case '"': PUT('\\'); PUT('"'); break;
            case '\\': PUT('\\'); PUT('\\'); break;
            case '\n': PUT('\\'); PUT('n'); break;
            case '\r': PUT('\\'); PUT('r'); break;
            case '\t': PUT('\\'); PUT('t'); break;
            default:
                if (control(*p)) return -1;
                PUT(*p);
            }
        }
        PUT('"');
    }
    PUT('\n');
#undef PUT
    return (ssize_t)at;
}
