/* Escaping for display (display.h). */
#include "display.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int must_escape(uint32_t value) {
    if (value <= 0x1f || (value >= 0x7f && value <= 0x9f)) return 1;
    return value == 0x061c || value == 0x200e || value == 0x200f || (value >= 0x202a && value <= 0x202e) ||
           (value >= 0x2066 && value <= 0x2069) || value == 0x2028 || value == 0x2029;
}

/* The code point at `s` (of `left` bytes) and its length, or 0 when the
 * bytes there are not well-formed UTF-8 (overlong, surrogate, > U+10FFFF). */
static size_t decode(const unsigned char *s, size_t left, uint32_t *value) {
    if (s[0] < 0x80) {
        *value = s[0];
        return 1;
    }
    size_t length;
    uint32_t minimum;
    if ((s[0] & 0xe0) == 0xc0) { length = 2; minimum = 0x80; *value = s[0] & 0x1f; }
    else if ((s[0] & 0xf0) == 0xe0) { length = 3; minimum = 0x800; *value = s[0] & 0x0f; }
    else if ((s[0] & 0xf8) == 0xf0) { length = 4; minimum = 0x10000; *value = s[0] & 0x07; }
    else return 0;
    if (left < length) return 0;
    for (size_t k = 1; k < length; k++) {
        if ((s[k] & 0xc0) != 0x80) return 0;
        *value = (*value << 6) | (s[k] & 0x3f);
    }
    if (*value < minimum || *value > 0x10ffff || (*value >= 0xd800 && *value <= 0xdfff)) return 0;
    return length;
}

char *agent_display_text(const char *text) {
    size_t length = strlen(text);
    /* At most six bytes out for each byte in (a C0 control: \u001b). */
    if (length > (SIZE_MAX - 1) / 6) return NULL;
    char *out = malloc(length * 6 + 1);
    if (!out) return NULL;
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0, o = 0;
    while (i < length) {
        uint32_t value;
        size_t n = decode(s + i, length - i, &value);
        if (n == 0) {
            o += (size_t)snprintf(out + o, 5, "\\x%02x", s[i]);
            i++;
        } else if (must_escape(value)) {
            o += (size_t)snprintf(out + o, 7, "\\u%04x", (unsigned)value);
            i += n;
        } else {
            memcpy(out + o, s + i, n);
            o += n;
            i += n;
        }
    }
    out[o] = '\0';
    return out;
}
