/* The session agents' C pieces, as hostile input meets them: the desktop
 * agent's reply parser and request builder (wire.c), its escaping of the
 * text it shows (display.c, S-69), the Flatpak id reader
 * and grammar (app_identity.c, S-67), and the identity of this very process
 * and of a pid that is not the process the daemon pinned. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "app_identity.h"
#include "display.h"
#include "wire.h"

static int failures;

#define CHECK(condition, what) do { \
    if (condition) printf("ok - %s\n", what); \
    else { printf("not ok - %s (%s:%d)\n", what, __FILE__, __LINE__); failures++; } \
} while (0)

static struct agent_reply reply;

static int parse(const char *line) { return agent_parse_reply(line, strlen(line), &reply); }

static void test_wire(void) {
    CHECK(parse("a1 PROMPT request=3 kind=biometric-or-passcode reason=\"a \\\"quoted\\\"\\nreason\" app-pid=42") == 0,
          "an agent's PROMPT parses");
    CHECK(reply.status == AGENT_PROMPT && strcmp(agent_field(&reply, "request"), "3") == 0, "its status and request");
    CHECK(strcmp(agent_field(&reply, "reason"), "a \"quoted\"\nreason") == 0, "a quoted value is decoded");
    CHECK(parse("a1 DONE request=3 result=success") == 0 && reply.status == AGENT_DONE, "DONE parses");
    CHECK(parse("a1 PROMPT request=1 request=2") != 0, "a key twice is refused");
    CHECK(parse("a1 PROMPT reason=\"unterminated") != 0, "an unterminated quote is refused");
    CHECK(parse("a1 PROMPT reason=\"raw\x01control\"") != 0, "a raw control character is refused");
    CHECK(parse("a1 WHATEVER x=1") != 0, "an unknown status is refused");
    CHECK(parse("a1 PROMPT Kind=1") != 0, "a key outside the grammar is refused");
    CHECK(parse("a1 PROMPT x=\"\\q\"") != 0, "an unknown escape is refused");
    char *long_line = malloc(AGENT_MAX_LINE + 10);
    memset(long_line, 'a', AGENT_MAX_LINE + 9);
    memcpy(long_line, "a OK x=", 7);
    long_line[AGENT_MAX_LINE + 9] = '\0';
    CHECK(parse(long_line) != 0, "a line over the cap is refused");
    free(long_line);
    char out[256];
    const char *pairs[] = {"request", "7", "secret", "pa\"ss\\word\twith tab", NULL};
    ssize_t n = agent_request(out, sizeof out, "g1", "passcode", pairs);
    CHECK(n > 0 && strncmp(out, "g1 passcode request=\"7\" secret=\"pa\\\"ss\\\\word\\twith tab\"\n", (size_t)n) == 0,
          "a request quotes and escapes every value");
    const char *bad[] = {"secret", "bell\x07", NULL};
    CHECK(agent_request(out, sizeof out, "g2", "passcode", bad) < 0, "a control character that cannot be quoted is refused");
    CHECK(agent_request(out, 12, "g3", "passcode", pairs) < 0, "a request that does not fit is refused");
}

static int shows(const char *text, const char *expected) {
    char *escaped = agent_display_text(text);
    int same = escaped && strcmp(escaped, expected) == 0;
    if (!same) printf("# shown: %s\n", escaped ? escaped : "(null)");
    free(escaped);
    return same;
}

static void test_display(void) {
    CHECK(shows("Unlock your notes", "Unlock your notes"), "plain text is shown as it is");
    CHECK(shows("Caf\xc3\xa9 \xe2\x9c\x93", "Caf\xc3\xa9 \xe2\x9c\x93"), "UTF-8 letters and symbols are kept");
    CHECK(shows("Update\n\nSystem: verified", "Update\\u000a\\u000aSystem: verified"), "a line feed cannot add a line");
    CHECK(shows("\x1b[2Jx\x7f", "\\u001b[2Jx\\u007f"), "C0 controls and DEL are escaped");
    CHECK(shows("\xc2\x9b" "31m", "\\u009b31m"), "a C1 control (CSI) is escaped");
    CHECK(shows("gpj.\xe2\x80\xae" "exe", "gpj.\\u202eexe"), "a right-to-left override is escaped");
    CHECK(shows("\xe2\x81\xa6" "a\xe2\x81\xa9\xd8\x9c\xe2\x80\x8f\xe2\x80\xa8",
                "\\u2066a\\u2069\\u061c\\u200f\\u2028"), "isolates, ALM, RLM and the line separator are escaped");
    CHECK(shows("bad\xff\xc0\xaf" "end\xed\xa0\x80", "bad\\xff\\xc0\\xafend\\xed\\xa0\\x80"),
          "bytes that are not UTF-8 (overlong, surrogate) are shown as bytes");
    CHECK(shows("cut\xe2\x80", "cut\\xe2\\x80"), "a truncated sequence at the end is shown as bytes");
    char worst[64 + 1];
    memset(worst, 0x01, 64);
    worst[64] = '\0';
    char *escaped = agent_display_text(worst);
    CHECK(escaped && strlen(escaped) == 64 * 6, "the worst case fits its buffer (six bytes out per byte in)");
    free(escaped);
}

static int app_id(const char *info, char *id) { return la_flatpak_info_app_id(info, strlen(info), id, LA_FLATPAK_ID_MAX); }

static void test_flatpak(void) {
    char id[LA_FLATPAK_ID_MAX];
    CHECK(app_id("[Application]\nname=org.gnome.Notes\nruntime=runtime/org.gnome.Platform/x86_64/45\n", id) == 0
          && strcmp(id, "org.gnome.Notes") == 0, "the [Application] name is read");
    CHECK(app_id("[Instance]\nname=org.evil.Fake\n[Application]\nname = com.example.App-Beta\n", id) == 0
          && strcmp(id, "com.example.App-Beta") == 0, "only the [Application] group's, spaces around = allowed");
    CHECK(app_id("[Application]\nname=org.one.App\nname=org.two.App\n", id) != 0, "a second name= is refused");
    CHECK(app_id("[Application]\nruntime=x\n", id) != 0, "no name= is no id");
    CHECK(app_id("name=org.outside.Group\n", id) != 0, "a name outside [Application] is no id");
    CHECK(la_flatpak_info_app_id("[Application]\nname=org.a.B\0\n", 28, id, sizeof id) != 0, "a NUL is refused");
    CHECK(app_id("[Application]\nname=org.gnome.Notes\x1b[2J\n", id) != 0, "an escape sequence is refused");
    CHECK(app_id("[Application]\nname=System\n", id) != 0, "a word that is no id is refused");
    const char *invalid[] = {"org.gnome", "org..gnome.Notes", "org.gnome.1Notes", "org.gno-me.Notes", ".org.a.B", "org.a.B.",
                             "org.a.B/../C", "org.a.Bé"};
    for (size_t k = 0; k < sizeof invalid / sizeof invalid[0]; k++) {
        char what[128];
        snprintf(what, sizeof what, "%s is not an id", invalid[k]);
        CHECK(!la_flatpak_id_valid(invalid[k], strlen(invalid[k])), what);
    }
    char big[300];
    memset(big, 'a', sizeof big);
    memcpy(big, "org.a.", 6);
    CHECK(!la_flatpak_id_valid(big, 256), "an id over 255 bytes is refused");
    /* Any bytes, any length: no crash, no read past the end. */
    srand(31);
    for (int round = 0; round < 20000; round++) {
        size_t length = (size_t)(rand() % 200);
        char *bytes = malloc(length + 1);
        for (size_t i = 0; i < length; i++) bytes[i] = "[]Aplication=n.\n\r \x01\xff"[rand() % 19];
        (void)la_flatpak_info_app_id(bytes, length, id, sizeof id);
        free(bytes);
    }
    CHECK(1, "random .flatpak-info bytes are read without harm");
}

static void test_identity(void) {
    struct la_app_identity identity;
    int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    struct stat st;
    CHECK(pidfd >= 0 && fstat(pidfd, &st) == 0, "a pidfd of this process");
    la_app_identity_read(getpid(), (uint64_t)st.st_ino, getuid(), &identity);
    char self[LA_APP_EXE_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    CHECK(identity.known && strcmp(identity.exe, self) == 0 && identity.exe_verified && !identity.other_mount_namespace,
          "this process: its program, verified, in this mount namespace");
    la_app_identity_read(getpid(), (uint64_t)st.st_ino + 1, getuid(), &identity);
    CHECK(!identity.known && identity.exe[0] == '\0', "a pid whose pidfd is not the pinned process says nothing");
    la_app_identity_read(getpid(), (uint64_t)st.st_ino, getuid() + 1, &identity);
    CHECK(!identity.known, "a process of another uid says nothing");
    la_app_identity_read(0x7ffffff0, 0, getuid(), &identity);
    CHECK(!identity.known, "a pid that does not exist says nothing");
    close(pidfd);
}

int main(void) {
    test_wire();
    test_display();
    test_flatpak();
    test_identity();
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
