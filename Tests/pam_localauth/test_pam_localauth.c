/* Unit tests of pam_localauth's line codec and outcome mapping (S-45,
 * PROTOCOL.md framing). Plain C, no daemon: `make -C Tests/pam_localauth check`
 * (scripts/test runs it). Each check names what it holds. */
#define _GNU_SOURCE
#include <security/pam_modules.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "outcome.h"
#include "wire.h"

static int failures, checks;

#define CHECK(cond, what)                                                                 \
    do {                                                                                  \
        checks++;                                                                         \
        if (!(cond)) {                                                                    \
            failures++;                                                                   \
            fprintf(stderr, "%s:%d: FAILED: %s (%s)\n", __FILE__, __LINE__, what, #cond); \
        }                                                                                 \
    } while (0)

static int parse(const char *line, struct la_reply *reply) { return la_parse_reply(line, strlen(line), reply); }

static void test_replies_parse_bare_and_quoted_values(void) {
    struct la_reply r;
    CHECK(parse("e OK method=biometric domain-state=5f0c", &r) == 0, "a final OK parses");
    CHECK(strcmp(r.tag, "e") == 0 && r.status == LA_STATUS_OK, "tag and status");
    CHECK(strcmp(la_field(&r, "method"), "biometric") == 0, "bare value");
    CHECK(la_field(&r, "missing") == NULL, "absent key");
    CHECK(parse("e PROMPT kind=passcode reason=\"a \\\"b\\\" \\\\ c\\n\\t\" cancel=Cancel attempts-left=6\r", &r) == 0,
          "quoted value with every escape, CR dropped");
    CHECK(r.status == LA_STATUS_PROMPT, "PROMPT");
    CHECK(strcmp(la_field(&r, "reason"), "a \"b\" \\ c\n\t") == 0, "escapes decoded");
    CHECK(strcmp(la_field(&r, "attempts-left"), "6") == 0, "the field after a quoted one");
    CHECK(parse("e ERR domain=la code=-1 name=authenticationFailed message=\"Passcode entry is disabled.\" retry-after=60",
                &r) == 0,
          "an LAError");
    CHECK(r.status == LA_STATUS_ERR && strcmp(la_field(&r, "retry-after"), "60") == 0, "retry-after");
    CHECK(parse("* BYE reason=shutdown", &r) == 0 && r.status == LA_STATUS_BYE && strcmp(r.tag, "*") == 0, "* BYE");
    CHECK(parse("n OK", &r) == 0 && r.count == 0, "no fields");
    CHECK(parse("e OK x=\"\"", &r) == 0 && strcmp(la_field(&r, "x"), "") == 0, "an empty quoted value");
}

static void test_malformed_replies_are_refused(void) {
    struct la_reply r;
    const char *bad[] = {
        "", "e", "e ", "e MAYBE", "e OK ", "e OK key", "e OK key=", "e OK Key=v", "e OK 1key=v", "e OK k=v k=w",
        "e OK k=\"unterminated", "e OK k=\"a\\qb\"", "e OK k=\"tab\tinside\"", "e OK k=a\"b", "e OK k=a=b",
        "e OK k=\"a\"b", "e  OK", "t@g OK", "** OK", "*x OK", "e OK k=v  j=w", "e OK k=\x01",
        "abcdefghijklmnopqrstuvwxyz0123456 OK", "e OK abcdefghijklmnopqrstuvwxyz0123456=v",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char what[128];
        snprintf(what, sizeof(what), "malformed reply #%zu is refused", i);
        CHECK(parse(bad[i], &r) != 0, what);
    }
    /* 32 fields are fine, 33 are refused. */
    char line[1024] = "e OK";
    for (int i = 0; i < 33; i++) {
        char field[16];
        snprintf(field, sizeof(field), " k%c%c=v", 'a' + i / 26, 'a' + i % 26);
        strcat(line, field);
        if (i == 31) CHECK(parse(line, &r) == 0, "32 fields");
    }
    CHECK(parse(line, &r) != 0, "33 fields are refused");
    CHECK(la_parse_reply("e OK k=v\0w=x", 12, &r) != 0, "a NUL inside a line is refused");
}

static void test_requests_quote_every_value(void) {
    struct la_request q;
    const char *expected = "p passcode ctx=\"abc\" secret=\"a\\\"b\\\\c\\nd\\te\\r\"\n";
    la_request_start(&q, "p", "passcode");
    la_request_add(&q, "ctx", "abc");
    la_request_add(&q, "secret", "a\"b\\c\nd\te\r");
    CHECK(la_request_finish(&q) == 0, "a request with escapes is sendable");
    CHECK(q.length == strlen(expected) && memcmp(q.bytes, expected, q.length) == 0, "escaped and quoted");
    la_request_wipe(&q);
    CHECK(q.length == 0 && q.bytes[0] == 0 && q.bytes[30] == 0, "wiped");

    la_request_start(&q, "p", "passcode");
    la_request_add(&q, "secret", "bell\a");
    CHECK(la_request_finish(&q) != 0, "a control character cannot be sent");

    char *huge = malloc(LA_MAX_LINE);
    memset(huge, 'x', LA_MAX_LINE - 1);
    huge[LA_MAX_LINE - 1] = 0;
    la_request_start(&q, "p", "passcode");
    la_request_add(&q, "secret", huge);
    CHECK(la_request_finish(&q) != 0, "a request longer than 8192 bytes is refused");
    /* The longest that fits: `p v k="` + value + `"` + LF == 8192 bytes. */
    huge[LA_MAX_LINE - 9] = 0;
    la_request_start(&q, "p", "v");
    la_request_add(&q, "k", huge);
    CHECK(la_request_finish(&q) == 0 && q.length == LA_MAX_LINE, "exactly 8192 bytes with the LF");
    huge[LA_MAX_LINE - 9] = 'x';
    huge[LA_MAX_LINE - 8] = 0;
    la_request_start(&q, "p", "v");
    la_request_add(&q, "k", huge);
    CHECK(la_request_finish(&q) != 0, "one byte more is refused");
    free(huge);
}

static void test_lines_are_read_with_the_protocol_cap(void) {
    int pair[2];
    struct la_reader reader;
    char line[LA_MAX_LINE];
    size_t length = 0;
    char *big = malloc(LA_MAX_LINE + 1);

    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0, "socketpair");
    la_reader_init(&reader, pair[0], 1000);
    CHECK(write(pair[1], "a OK\r\nb ERR", 11) == 11, "write");
    CHECK(la_read_line(&reader, line, &length) == LA_READ_LINE && strcmp(line, "a OK") == 0 && length == 4,
          "the first line, CR dropped");
    CHECK(write(pair[1], " x=1\n", 5) == 5, "write");
    CHECK(la_read_line(&reader, line, &length) == LA_READ_LINE && strcmp(line, "b ERR x=1") == 0,
          "a line split over two reads");
    reader.timeout_ms = 0;
    CHECK(la_read_line(&reader, line, &length) == LA_READ_TIMEOUT, "nothing to read: timeout");

    /* 8191 bytes and the LF: allowed. */
    memset(big, 'x', LA_MAX_LINE - 1);
    big[LA_MAX_LINE - 1] = '\n';
    reader.timeout_ms = 1000;
    CHECK(write(pair[1], big, LA_MAX_LINE) == LA_MAX_LINE, "write");
    CHECK(la_read_line(&reader, line, &length) == LA_READ_LINE && length == LA_MAX_LINE - 1, "8192 bytes with the LF");
    /* 8192 bytes before any LF: too long. */
    memset(big, 'y', LA_MAX_LINE + 1);
    CHECK(write(pair[1], big, LA_MAX_LINE + 1) == LA_MAX_LINE + 1, "write");
    CHECK(la_read_line(&reader, line, &length) == LA_READ_TOO_LONG, "a longer line is refused");

    close(pair[1]);
    la_reader_init(&reader, pair[0], 1000);
    CHECK(la_read_line(&reader, line, &length) == LA_READ_EOF, "the daemon went away: EOF");
    close(pair[0]);
    free(big);
}

/* S-60: while a password prompt is pending, its end (another fd) is
 * reported as soon as it is readable, and a whole line still comes first. */
static void test_a_pending_prompt_ending_is_told_between_lines(void) {
    int pair[2], done[2];
    struct la_reader reader;
    char line[LA_MAX_LINE];
    size_t length = 0;

    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0 && pipe(done) == 0, "socketpair, pipe");
    la_reader_init(&reader, pair[0], 1000);
    CHECK(write(done[1], "x", 1) == 1, "write");
    CHECK(la_read_line_or(&reader, done[0], line, &length) == LA_READ_OTHER, "the prompt returned: told");
    CHECK(write(pair[1], "e PROMPT kind=passcode\n", 23) == 23, "write");
    CHECK(la_read_line_or(&reader, done[0], line, &length) == LA_READ_LINE && strcmp(line, "e PROMPT kind=passcode") == 0,
          "a line that waits is read first");
    CHECK(la_read_line_or(&reader, -1, line, &length) == LA_READ_TIMEOUT, "without the other fd: the timeout");
    close(pair[0]);
    close(pair[1]);
    close(done[0]);
    close(done[1]);
}

/* S-64: the success reply's failure fields as one sentence. */
static void test_the_failure_notice_reads_as_a_sentence(void) {
    struct la_reply r;
    char text[384];
    setenv("TZ", "UTC", 1);
    tzset();
    /* 1780000000 is 2026-05-28T20:26:40Z. */
    CHECK(parse("e OK method=passcode failed-attempts=3 failed-biometric=2 failed-passcode=1 refused-passcode=0 "
                "last-failed-at=1780000000 last-failed-service=sudo last-failed-tty=/dev/pts/2", &r) == 0, "parse");
    la_failure_notice(&r, 1780000100, text, sizeof(text));
    CHECK(strcmp(text, "2 failed fingerprint attempts and 1 wrong password since your last sign-in, the last at 20:26 "
                       "via sudo on pts/2.") == 0, text);
    la_failure_notice(&r, 1780000000 + 86400 * 3, text, sizeof(text));
    CHECK(strstr(text, "the last on 2026-05-28 at 20:26") != NULL, "another day names the day");
    CHECK(parse("e OK method=biometric failed-attempts=3 failed-biometric=1 failed-passcode=1 refused-passcode=1 "
                "last-failed-at=1780000000 last-failed-rhost=laptop.example.org", &r) == 0, "parse");
    la_failure_notice(&r, 1780000100, text, sizeof(text));
    CHECK(strcmp(text, "1 failed fingerprint attempt, 1 wrong password and 1 password attempt during a delay since your "
                       "last sign-in, the last at 20:26 from laptop.example.org.") == 0, text);
    CHECK(parse("e OK method=passcode failed-attempts=0 failed-biometric=0 failed-passcode=0 refused-passcode=0", &r) == 0, "parse");
    la_failure_notice(&r, 1780000100, text, sizeof(text));
    CHECK(text[0] == '\0', "no failures, no notice");
    CHECK(parse("e OK method=passcode", &r) == 0, "parse");
    la_failure_notice(&r, 1780000100, text, sizeof(text));
    CHECK(text[0] == '\0', "a daemon that does not tell, no notice");
}

static int mapped(const char *line, struct la_outcome *o) {
    struct la_reply r;
    if (parse(line, &r) != 0) return -999;
    la_map_final(&r, o);
    return o->pam;
}

static void test_outcomes_map_as_s45_lists(void) {
    struct la_outcome o;
    CHECK(mapped("e OK method=biometric", &o) == PAM_SUCCESS, "success -> PAM_SUCCESS");
    CHECK(mapped("e OK method=passcode", &o) == PAM_SUCCESS && strcmp(o.result, "success") == 0, "passcode success");
    CHECK(mapped("e ERR domain=la code=-1 name=authenticationFailed message=x", &o) == PAM_AUTH_ERR, "failed -> AUTH_ERR");
    CHECK(mapped("e ERR domain=la code=-2 name=userCancel message=x", &o) == PAM_AUTH_ERR, "cancelled -> AUTH_ERR");
    CHECK(mapped("e ERR domain=la code=-4 name=systemCancel message=x reason=timeout", &o) == PAM_AUTH_ERR,
          "timed out -> AUTH_ERR");
    CHECK(mapped("e ERR domain=la code=-4 name=systemCancel message=x reason=preempted", &o) == PAM_AUTH_ERR, "preempted");
    CHECK(mapped("e ERR domain=la code=-3 name=userFallback message=x", &o) == PAM_AUTH_ERR, "fallback -> AUTH_ERR");
    CHECK(mapped("e ERR domain=la code=-8 name=biometryLockout message=x", &o) == PAM_MAXTRIES && o.message[0],
          "biometryLockout -> MAXTRIES with a message");
    CHECK(mapped("e ERR domain=la code=-1 name=authenticationFailed message=x retry-after=60", &o) == PAM_MAXTRIES &&
              strstr(o.message, "60 seconds"),
          "a delay -> MAXTRIES saying for how long");
    CHECK(mapped("e ERR domain=la code=-1 name=authenticationFailed message=x retry-after=900", &o) == PAM_MAXTRIES &&
              strstr(o.message, "15 minutes"),
          "a long delay in minutes");
    CHECK(mapped("e ERR domain=la code=-1 name=authenticationFailed message=x reason=admin-locked", &o) == PAM_MAXTRIES &&
              strstr(o.message, "administrator"),
          "an admin lock -> MAXTRIES");
    CHECK(mapped("e ERR domain=la code=-6 name=biometryNotAvailable message=x", &o) == PAM_AUTHINFO_UNAVAIL, "no sensor");
    CHECK(mapped("e ERR domain=la code=-7 name=biometryNotEnrolled message=x", &o) == PAM_AUTHINFO_UNAVAIL,
          "nothing enrolled");
    CHECK(mapped("e ERR domain=la code=-5 name=passcodeNotSet message=x", &o) == PAM_AUTHINFO_UNAVAIL, "no passcode");
    CHECK(mapped("e ERR domain=la code=-4 name=systemCancel message=x reason=shutdown", &o) == PAM_AUTHINFO_UNAVAIL,
          "the daemon shutting down -> AUTHINFO_UNAVAIL");
    CHECK(mapped("e ERR domain=protocol name=permission-denied message=x", &o) == PAM_AUTHINFO_UNAVAIL,
          "the daemon refusing -> AUTHINFO_UNAVAIL");
    CHECK(mapped("e ERR domain=protocol name=unavailable message=x", &o) == PAM_AUTHINFO_UNAVAIL, "log unavailable");
    /* S-53 amends S-45: a refusal for the daemon's limits is a failure, never a fall through. */
    CHECK(mapped("e ERR domain=protocol name=limit-exceeded message=x", &o) == PAM_AUTH_ERR &&
              strcmp(o.result, "refused-load") == 0 && o.message[0],
          "limit-exceeded -> AUTH_ERR, not a fall through to pam_unix");
    CHECK(mapped("e ERR domain=protocol name=busy message=x", &o) == PAM_AUTH_ERR, "busy -> AUTH_ERR");
    {
        struct la_reply r;
        CHECK(parse("* BYE reason=limit", &r) == 0, "parse");
        la_map_refusal(&r, &o);
        CHECK(o.pam == PAM_AUTH_ERR, "a connection refused for the limits -> AUTH_ERR");
        CHECK(parse("* BYE reason=shutdown", &r) == 0, "parse");
        la_map_refusal(&r, &o);
        CHECK(o.pam == PAM_AUTHINFO_UNAVAIL, "a daemon shutting down -> AUTHINFO_UNAVAIL");
    }
    CHECK(mapped("e ERR name=x", &o) == PAM_AUTHINFO_UNAVAIL, "no domain");
    CHECK(mapped("e ERR domain=la code=-99 name=fromTheFuture message=x", &o) == PAM_AUTH_ERR, "an unknown code fails");
    CHECK(mapped("e ERR domain=la code=zero name=x", &o) == PAM_AUTH_ERR, "a garbled code fails");
    CHECK(mapped("e ERR domain=la name=x", &o) == PAM_AUTH_ERR, "no code fails");
    CHECK(mapped("e PROMPT kind=biometric", &o) != PAM_SUCCESS, "a PROMPT is never success");
    CHECK(mapped("* BYE reason=shutdown", &o) == PAM_AUTHINFO_UNAVAIL, "BYE");
    la_unavailable(&o, "daemon-gone");
    CHECK(o.pam == PAM_AUTHINFO_UNAVAIL, "the daemon dying mid-evaluation -> AUTHINFO_UNAVAIL");
}

/* S-75: the released login password comes as standard base64; anything
 * else decodes to nothing, and nothing is written past the buffer. */
static void test_login_secrets_decode_strictly(void) {
    unsigned char out[16];
    CHECK(la_base64_decode("Y29ycmVjdCBob3JzZQ==", out, sizeof(out)) == 13 && memcmp(out, "correct horse", 13) == 0,
          "padded base64 decodes");
    CHECK(la_base64_decode("YWJj", out, sizeof(out)) == 3 && memcmp(out, "abc", 3) == 0, "unpadded groups decode");
    CHECK(la_base64_decode("", out, sizeof(out)) == 0, "empty is zero bytes");
    CHECK(la_base64_decode("YWJ", out, sizeof(out)) == -1, "a length not a multiple of 4 is refused");
    CHECK(la_base64_decode("YW=j", out, sizeof(out)) == -1, "padding inside is refused");
    CHECK(la_base64_decode("YWJj====", out, sizeof(out)) == -1, "padding in a group of its own is refused");
    CHECK(la_base64_decode("YW Jj", out, sizeof(out)) == -1, "a space is refused");
    CHECK(la_base64_decode("YWJjYWJjYWJjYWJjYWJjYWJj", out, sizeof(out)) == -1, "18 bytes do not fit 16: refused");
    CHECK(la_base64_decode("YWJjYWJjYWJjYWJjYWI=", out, sizeof(out)) == 14, "14 bytes fit 16");
}

/* S-57: the module refuses a daemon whose backends administrators control. */
static void test_hello_backends_are_judged_as_s57_says(void) {
    struct la_reply r;
    CHECK(parse("h OK protocol=1 sensor-backend=fprintd passcode-backend=shadow", &r) == 0 && !la_test_backends(&r),
          "fprintd and shadow: real backends");
    CHECK(parse("h OK sensor-backend=none passcode-backend=shadow", &r) == 0 && !la_test_backends(&r),
          "no sensor and shadow: real backends");
    CHECK(parse("h OK sensor-backend=simulated passcode-backend=shadow", &r) == 0 && la_test_backends(&r),
          "the simulated sensor is refused");
    CHECK(parse("h OK sensor-backend=fprintd passcode-backend=builtin", &r) == 0 && la_test_backends(&r),
          "builtin passcodes are refused");
    CHECK(parse("h OK protocol=1 server=localauthd/1 uid=0 biometry=touchID", &r) == 0 && la_test_backends(&r),
          "a daemon that does not say is refused");
    CHECK(parse("h OK sensor-backend=fprintd", &r) == 0 && la_test_backends(&r), "one backend missing is refused");
    CHECK(parse("h OK sensor-backend=camera passcode-backend=shadow", &r) == 0 && la_test_backends(&r),
          "a backend this build does not know is refused");
}

int main(void) {
    test_login_secrets_decode_strictly();
    test_replies_parse_bare_and_quoted_values();
    test_malformed_replies_are_refused();
    test_requests_quote_every_value();
    test_lines_are_read_with_the_protocol_cap();
    test_a_pending_prompt_ending_is_told_between_lines();
    test_the_failure_notice_reads_as_a_sentence();
    test_outcomes_map_as_s45_lists();
    test_hello_backends_are_judged_as_s57_says();
    printf("pam_localauth unit tests: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
