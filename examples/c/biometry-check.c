/* biometry-check in C: the seed articles' BiometryHelper through localauthd's
 * D-Bus API (io.github.localauthd.LocalAuthentication1) with sd-bus, the
 * D-Bus library of libsystemd (libsystemd-dev) that a C or C++ app on
 * Debian already links. The same commands and output as
 * examples/python/biometry-check:
 *
 *   biometry-check                       can this device use biometrics, and which kind
 *   biometry-check --authenticate REASON authenticate: the session's dialog (its agent), else here (the sensor, then the passcode)
 *   biometry-check --save-state FILE     keep the enrolled set's token in FILE
 *   biometry-check --changed FILE        has the enrolled set changed since then?
 *
 * Exit status: 0 yes / success, 1 no / failure, 2 usage or no daemon.
 * The rules behind every answer are localauthd's: docs/spec/SEMANTICS.md. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <termios.h>
#include <unistd.h>

#define SERVICE "io.github.localauthd.LocalAuthentication1"
#define ROOT "/io/github/localauthd/LocalAuthentication1"
#define CONTEXT SERVICE ".Context"
#define REQUEST SERVICE ".Request"
/* LAPolicy's raw values, as Apple's. */
#define BIOMETRICS 1
#define OWNER 2

static const char *biometry_name(uint32_t type) {
    switch (type) {
    case 0: return "none";
    case 1: return "touchID";
    case 2: return "faceID";
    case 4: return "opticID";
    default: return "unknown";
    }
}

static int fail(const char *what, const sd_bus_error *error, int r) {
    fprintf(stderr, "biometry-check: %s: %s (is localauthd running? see docs/OPERATIONS.md)\n", what,
            error && error->message ? error->message : strerror(-r));
    return 2;
}

/* canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics): its answer
 * and the enrolled set's token (evaluatedPolicyDomainState). */
struct check {
    int ok;
    uint32_t biometry;
    const char *error_name;
    const void *state;
    size_t state_size;
    sd_bus_message *reply; /* owns the strings and bytes above */
};

static int check(sd_bus *bus, struct check *out, sd_bus_error *error) {
    int r = sd_bus_call_method(bus, SERVICE, ROOT, SERVICE, "CanEvaluatePolicy", error, &out->reply, "u", BIOMETRICS);
    if (r < 0) return r;
    int32_t code;
    r = sd_bus_message_read(out->reply, "buis", &out->ok, &out->biometry, &code, &out->error_name);
    if (r < 0) return r;
    return sd_bus_message_read_array(out->reply, 'y', &out->state, &out->state_size);
}

/* The state token as the file keeps it: hex, one line. */
static char *hex(const void *bytes, size_t size) {
    char *text = malloc(size * 2 + 1);
    if (!text) return NULL;
    for (size_t i = 0; i < size; i++) sprintf(text + 2 * i, "%02x", ((const unsigned char *)bytes)[i]);
    text[size * 2] = '\0';
    return text;
}

/* One evaluation's progress, as its request's signals tell it. */
struct evaluation {
    const char *path;  /* the request object, once EvaluatePolicy returned it */
    int done, success;
    char method[32], error_name[64], message[256];
    int32_t error_code;
};

/* The fields this client shows, from an a{sv} of details (left as they are when absent). */
struct details {
    const char *message, *reason;
    uint32_t attempt;
};

static int read_details(sd_bus_message *m, struct details *out) {
    int r = sd_bus_message_enter_container(m, 'a', "{sv}");
    if (r < 0) return r;
    while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
        const char *name, *contents;
        char type;
        if ((r = sd_bus_message_read(m, "s", &name)) < 0) return r;
        if ((r = sd_bus_message_peek_type(m, &type, &contents)) < 0) return r;
        if (!strcmp(name, "message") && !strcmp(contents, "s")) r = sd_bus_message_read(m, "v", "s", &out->message);
        else if (!strcmp(name, "reason") && !strcmp(contents, "s")) r = sd_bus_message_read(m, "v", "s", &out->reason);
        else if (!strcmp(name, "attempt") && !strcmp(contents, "u")) r = sd_bus_message_read(m, "v", "u", &out->attempt);
        else r = sd_bus_message_skip(m, "v");
        if (r < 0) return r;
        if ((r = sd_bus_message_exit_container(m)) < 0) return r;
    }
    if (r < 0) return r;
    return sd_bus_message_exit_container(m);
}

/* The passcode from the terminal with echo off, or a line of standard input. */
static ssize_t read_passcode(char **line, size_t *capacity) {
    struct termios saved, quiet;
    int tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
    if (tty) {
        quiet = saved;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
    ssize_t length = getline(line, capacity, stdin);
    if (tty) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
        putchar('\n');
    }
    if (length > 0 && (*line)[length - 1] == '\n') (*line)[--length] = '\0';
    return length;
}

/* Passcode(ay): the bytes as one array (sd_bus_call_method's "ay" would take them one by one). */
static void send_passcode(sd_bus *bus, const char *request, const char *passcode, size_t length) {
    sd_bus_message *call = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_message_new_method_call(bus, &call, SERVICE, request, REQUEST, "Passcode");
    if (r >= 0) r = sd_bus_message_append_array(call, 'y', passcode, length);
    if (r >= 0) r = sd_bus_call(bus, call, 0, &error, NULL);
    if (r < 0) fprintf(stderr, "biometry-check: Passcode: %s\n", error.message ? error.message : strerror(-r));
    sd_bus_error_free(&error);
    sd_bus_message_unref(call);
}

static int on_signal(sd_bus_message *m, void *data, sd_bus_error *unused) {
    (void)unused;
    struct evaluation *evaluation = data;
    if (!evaluation->path || strcmp(sd_bus_message_get_path(m), evaluation->path) != 0) return 0;
    sd_bus *bus = sd_bus_message_get_bus(m);
    if (sd_bus_message_is_signal(m, REQUEST, "Prompt")) {
        const char *kind;
        struct details shown = {NULL, "", 1};
        if (sd_bus_message_read(m, "s", &kind) < 0 || read_details(m, &shown) < 0) return 0;
        const char *reason = shown.reason;
        if (shown.message) printf("%s\n", shown.message);
        if (strcmp(kind, "passcode") == 0) {
            printf("Password for %s: %s", reason, isatty(STDIN_FILENO) ? "" : "\n");
            fflush(stdout);
            char *line = NULL;
            size_t capacity = 0;
            ssize_t length = read_passcode(&line, &capacity);
            if (length > 0) send_passcode(bus, evaluation->path, line, (size_t)length);
            else sd_bus_call_method(bus, SERVICE, evaluation->path, REQUEST, "Cancel", NULL, NULL, "");
            /* The passcode leaves this process's buffer once sent (sd-bus frees its own copy). */
            if (line) explicit_bzero(line, capacity);
            free(line);
        } else if (strcmp(kind, "biometric") == 0 || strcmp(kind, "biometric-or-passcode") == 0) {
            printf("Touch the sensor (attempt %u): %s\n", shown.attempt, reason);
        } else if (strcmp(kind, "agent") == 0) {
            printf("Your session's dialog asks.\n");
        }
        fflush(stdout);
    } else if (sd_bus_message_is_signal(m, REQUEST, "Completed")) {
        const char *method, *name;
        struct details end = {"", NULL, 0};
        if (sd_bus_message_read(m, "bsis", &evaluation->success, &method, &evaluation->error_code, &name) < 0) return 0;
        read_details(m, &end);
        const char *message = end.message;
        snprintf(evaluation->method, sizeof evaluation->method, "%s", method);
        snprintf(evaluation->error_name, sizeof evaluation->error_name, "%s", name);
        snprintf(evaluation->message, sizeof evaluation->message, "%s", message);
        evaluation->done = 1;
    }
    return 0;
}

/* evaluatePolicy(.deviceOwnerAuthentication, localizedReason:). */
static int authenticate(sd_bus *bus, const char *reason) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    const char *context, *owner;
    struct evaluation evaluation = {0};
    int r = sd_bus_call_method(bus, SERVICE, ROOT, SERVICE, "CreateContext", &error, &reply, "");
    if (r < 0 || (r = sd_bus_message_read(reply, "o", &context)) < 0) return fail("CreateContext", &error, r);
    char *context_path = strdup(context);
    sd_bus_message_unref(reply);
    sd_bus_set_property(bus, SERVICE, context_path, CONTEXT, "LocalizedFallbackTitle", NULL, "s", "Use Password");
    /* The system's prompt, as LAContext asks for it: the session's agent, where there is one (S-66). */
    sd_bus_set_property(bus, SERVICE, context_path, CONTEXT, "Prompts", NULL, "s", "agent");
    /* Signals are believed from the daemon's unique name only: anyone may send one to us. */
    r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                           &error, &reply, "s", SERVICE);
    if (r < 0 || (r = sd_bus_message_read(reply, "s", &owner)) < 0) return fail("GetNameOwner", &error, r);
    /* Subscribed before the call; sd-bus queues what arrives meanwhile. */
    r = sd_bus_match_signal(bus, NULL, owner, NULL, REQUEST, NULL, on_signal, &evaluation);
    sd_bus_message_unref(reply);
    if (r < 0) return fail("AddMatch", NULL, r);
    r = sd_bus_call_method(bus, SERVICE, context_path, CONTEXT, "EvaluatePolicy", &error, &reply, "usa{sv}", OWNER, reason, 0);
    if (r < 0 || (r = sd_bus_message_read(reply, "o", &evaluation.path)) < 0) return fail("EvaluatePolicy", &error, r);
    while (!evaluation.done) {
        r = sd_bus_process(bus, NULL);
        if (r < 0) return fail("the bus", NULL, r);
        if (r == 0 && (r = sd_bus_wait(bus, UINT64_MAX)) < 0) return fail("the bus", NULL, r);
    }
    sd_bus_message_unref(reply);
    sd_bus_call_method(bus, SERVICE, context_path, CONTEXT, "Invalidate", NULL, NULL, "");
    free(context_path);
    if (evaluation.success) {
        printf("authenticated by %s\n", evaluation.method);
        return 0;
    }
    printf("failed: %s (%d): %s\n", evaluation.error_name, evaluation.error_code, evaluation.message);
    return 1;
}

int main(int argc, char **argv) {
    if (!(argc == 1 || (argc == 3 && (!strcmp(argv[1], "--authenticate") || !strcmp(argv[1], "--save-state") ||
                                      !strcmp(argv[1], "--changed"))))) {
        fprintf(stderr, "usage: biometry-check [--authenticate REASON | --save-state FILE | --changed FILE]\n");
        return 2;
    }
    sd_bus *bus = NULL;
    int r = sd_bus_open_system(&bus); /* $DBUS_SYSTEM_BUS_ADDRESS, else the system bus */
    if (r < 0) return fail("the system bus", NULL, r);
    if (argc == 3 && !strcmp(argv[1], "--authenticate")) return authenticate(bus, argv[2]);

    sd_bus_error error = SD_BUS_ERROR_NULL;
    struct check result = {0};
    if ((r = check(bus, &result, &error)) < 0) return fail("CanEvaluatePolicy", &error, r);
    char *state = hex(result.state, result.state_size);
    if (!state) return 2;
    if (argc == 1) {
        const char *kind = result.ok ? "available"
                           : !strcmp(result.error_name, "biometryNotEnrolled") ? "notEnrolled"
                           : !strcmp(result.error_name, "biometryLockout") ? "locked"
                           : !strcmp(result.error_name, "biometryNotAvailable") ? "notSupported"
                           : result.error_name;
        printf("biometry: %s, %s\n", strcmp(kind, "notSupported") ? biometry_name(result.biometry) : "none", kind);
        return result.ok ? 0 : 1;
    }
    if (!strcmp(argv[1], "--save-state")) {
        FILE *file = fopen(argv[2], "w");
        if (!file || fprintf(file, "%s\n", state) < 0 || fclose(file) != 0) {
            perror(argv[2]);
            return 2;
        }
        return 0;
    }
    /* --changed */
    char saved[1024] = "";
    FILE *file = fopen(argv[2], "r");
    if (!file || !fgets(saved, sizeof saved, file)) {
        perror(argv[2]);
        return 2;
    }
    fclose(file);
    saved[strcspn(saved, "\n")] = '\0';
    int changed = strcmp(saved, state) != 0;
    printf("the enrolled set %s\n", changed ? "changed" : "is unchanged");
    return changed ? 0 : 1;
}
