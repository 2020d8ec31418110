/* pam_localauth.so: the auth half of PAM answered by localauthd (S-45).
 *
 *   auth [success=done authinfo_unavail=ignore default=die] pam_localauth.so
 *        [policy=owner|biometrics] [prompt=auto|combined|sequential] [reason=TEXT]
 *        [socket=PATH] [timeout=SECONDS] [daemon_user=NAME] [insecure_test_backends] [debug]
 *
 * It resolves PAM_USER to a uid, asks the daemon for an on-behalf context
 * (it runs inside sudo, login, sshd... as root, S-42), evaluates, relays the
 * prompts, and maps the outcome (outcome.c). Everything here is plain C
 * against libpam and libc: no Swift runtime is loaded into sudo. Nothing
 * from the environment is read (sudo's environment is the caller's); the
 * socket path comes only from the module's options, and the server behind
 * it must be root or the daemon's user before any byte is sent (S-57). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "dialogue.h"

#define LA_EXPORT __attribute__((visibility("default")))
#define LA_DEFAULT_SOCKET "/run/localauthd/socket"
#define LA_DEFAULT_TIMEOUT 120
#define LA_DEFAULT_DAEMON_USER "localauthd"
/* service, tty and rhost the daemon records at most (S-42's bound). */
#define LA_MAX_ORIGIN_FIELD 256

/* 0, or -1 for an option this module does not know (logged): a misspelt
 * option must not be silently ignored. */
static int parse_options(pam_handle_t *pamh, int argc, const char **argv, struct la_options *options,
                         const char **daemon_user) {
    *daemon_user = LA_DEFAULT_DAEMON_USER;
    options->insecure_test_backends = 0;
    options->policy = "owner";
    options->reason = NULL;
    options->socket = LA_DEFAULT_SOCKET;
    options->timeout_seconds = LA_DEFAULT_TIMEOUT;
    options->debug = 0;
    options->silent = 0;
    options->prompt = "auto";
    options->ending = LA_END_NONE;
    options->tty = -1;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "debug") == 0) {
            options->debug = 1;
        } else if (strcmp(arg, "insecure_test_backends") == 0) {
            options->insecure_test_backends = 1;
        } else if (strncmp(arg, "daemon_user=", 12) == 0 && arg[12] != '\0') {
            *daemon_user = arg + 12;
        } else if (strcmp(arg, "policy=owner") == 0 || strcmp(arg, "policy=biometrics") == 0) {
            options->policy = arg + strlen("policy=");
        } else if (strcmp(arg, "prompt=auto") == 0 || strcmp(arg, "prompt=combined") == 0 ||
                   strcmp(arg, "prompt=sequential") == 0) {
            options->prompt = arg + strlen("prompt=");
        } else if (strncmp(arg, "reason=", 7) == 0 && arg[7] != '\0') {
            options->reason = arg + 7;
        } else if (strncmp(arg, "socket=", 7) == 0 && arg[7] == '/' &&
                   strlen(arg + 7) < sizeof(((struct sockaddr_un *)0)->sun_path)) {
            options->socket = arg + 7;
        } else if (strncmp(arg, "timeout=", 8) == 0) {
            char *end = NULL;
            long seconds = strtol(arg + 8, &end, 10);
            if (!end || *end != '\0' || seconds < 1 || seconds > 3600) {
                pam_syslog(pamh, LOG_ERR, "Bad option %s (timeout=1..3600 seconds)", arg);
                return -1;
            }
            options->timeout_seconds = (int)seconds;
        } else {
            pam_syslog(pamh, LOG_ERR, "Unknown or bad option: %s", arg);
            return -1;
        }
    }
    return 0;
}

/* A value the daemon accepts for service/tty/rhost, else NULL (left out). */
static const char *origin_field(pam_handle_t *pamh, int item, const char *name) {
    const void *value = NULL;
    size_t length;
    if (pam_get_item(pamh, item, &value) != PAM_SUCCESS || !value) return NULL;
    length = strlen(value);
    if (length == 0) return NULL;
    if (length > LA_MAX_ORIGIN_FIELD) {
        pam_syslog(pamh, LOG_NOTICE, "PAM_%s is longer than %d bytes; not recorded", name, LA_MAX_ORIGIN_FIELD);
        return NULL;
    }
    for (const unsigned char *p = value; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            pam_syslog(pamh, LOG_NOTICE, "PAM_%s holds a control character; not recorded", name);
            return NULL;
        }
    }
    return value;
}

/* S-54: who asks for this authentication, the user whose attempts are to
 * count (not the subject's): a setuid program's real uid (su, sudo, pkexec
 * run by someone; the daemon reads it from the process as well and ignores
 * this then); else PAM_RUSER when it names a user; else the owner of the
 * controlling terminal when that is not root (a root process on a user's
 * tty). None (0 returned): the subject itself, or nobody knows (sshd,
 * login at a console). */
static int find_requester(pam_handle_t *pamh, uid_t *requester) {
    const void *ruser = NULL;
    struct passwd entry, *found = NULL;
    char buffer[4096];
    struct stat info;
    int tty;
    if (getuid() != 0) {
        *requester = getuid();
        return 1;
    }
    if (pam_get_item(pamh, PAM_RUSER, &ruser) == PAM_SUCCESS && ruser && *(const char *)ruser &&
        getpwnam_r(ruser, &entry, buffer, sizeof(buffer), &found) == 0 && found) {
        *requester = found->pw_uid;
        return 1;
    }
    tty = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (tty < 0) return 0;
    if (fstat(tty, &info) == 0 && S_ISCHR(info.st_mode) && info.st_uid != 0) {
        close(tty);
        *requester = info.st_uid;
        return 1;
    }
    close(tty);
    return 0;
}

/* S-57: the socket's server is root (socket activation: systemd called
 * listen) or the daemon's own user, or the module says nothing to it: a
 * socket that someone else bound must never hear a password. 0, or -1 with
 * the reason logged. */
static int check_server(pam_handle_t *pamh, int fd, const char *path, const char *daemon_user) {
    struct ucred peer;
    socklen_t length = sizeof(peer);
    struct passwd entry, *found = NULL;
    char buffer[4096];
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || length != sizeof(peer)) {
        pam_syslog(pamh, LOG_ERR, "Failed to read the credentials of the server at %s (%m); not using it", path);
        return -1;
    }
    if (peer.uid == 0) return 0;
    if (getpwnam_r(daemon_user, &entry, buffer, sizeof(buffer), &found) == 0 && found && found->pw_uid == peer.uid)
        return 0;
    pam_syslog(pamh, LOG_ERR, "The server at %s runs as uid %u, neither root nor %s (daemon_user=); not using it",
               path, (unsigned)peer.uid, daemon_user);
    return -1;
}

static int connect_daemon(const char *path, int timeout_seconds) {
    struct sockaddr_un address;
    struct timeval timeout = { .tv_sec = timeout_seconds, .tv_usec = 0 };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
    /* Bounds the blocking send of a request if the daemon stops reading. */
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

static void tell_user(pam_handle_t *pamh, int style, const char *message) {
    const struct pam_message m = { .msg_style = style, .msg = message };
    const struct pam_message *messages[1] = { &m };
    struct pam_response *responses = NULL;
    const struct pam_conv *conv = NULL;
    if (pam_get_item(pamh, PAM_CONV, (const void **)&conv) != PAM_SUCCESS || !conv || !conv->conv) return;
    if (conv->conv(1, messages, &responses, conv->appdata_ptr) == PAM_SUCCESS && responses) {
        free(responses[0].resp);
        free(responses);
    }
}

LA_EXPORT int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    struct la_options options;
    struct la_subject subject;
    struct la_outcome outcome;
    struct passwd entry, *found = NULL;
    char buffer[4096];
    const char *user = NULL, *daemon_user = NULL;
    const void *service = NULL;
    int fd, rc;
    if (parse_options(pamh, argc, argv, &options, &daemon_user) != 0) return PAM_AUTHINFO_UNAVAIL;
    options.silent = (flags & PAM_SILENT) != 0;
    rc = pam_get_user(pamh, &user, NULL);
    if (rc != PAM_SUCCESS || !user || !*user) {
        pam_syslog(pamh, LOG_ERR, "Failed to get the user name: %s", pam_strerror(pamh, rc));
        return rc == PAM_CONV_AGAIN ? PAM_INCOMPLETE : PAM_USER_UNKNOWN;
    }
    rc = getpwnam_r(user, &entry, buffer, sizeof(buffer), &found);
    if (rc != 0 || !found) {
        if (rc != 0) {
            pam_syslog(pamh, LOG_ERR, "Failed to look up user %s: %s", user, strerror(rc));
            return PAM_AUTHINFO_UNAVAIL;
        }
        pam_syslog(pamh, LOG_NOTICE, "Unknown user %s", user);
        return PAM_USER_UNKNOWN;
    }
    subject.user = user;
    subject.uid = found->pw_uid;
    if (pam_get_item(pamh, PAM_SERVICE, &service) != PAM_SUCCESS || !service) service = "unknown";
    subject.service = origin_field(pamh, PAM_SERVICE, "SERVICE") ?: "unknown";
    subject.tty = origin_field(pamh, PAM_TTY, "TTY");
    subject.rhost = origin_field(pamh, PAM_RHOST, "RHOST");
    subject.has_requester = find_requester(pamh, &subject.requester);

    fd = connect_daemon(options.socket, options.timeout_seconds);
    if (fd < 0) {
        pam_syslog(pamh, LOG_NOTICE, "localauthd is not reachable at %s (%m); falling through", options.socket);
        return PAM_AUTHINFO_UNAVAIL;
    }
    if (check_server(pamh, fd, options.socket, daemon_user) != 0) {
        close(fd);
        return PAM_AUTHINFO_UNAVAIL;
    }
    /* S-60: touch or type where a pending password prompt can be ended early. */
    options.ending = la_conversation_ending(pamh, options.prompt, &options.tty);
    if (options.debug)
        pam_syslog(pamh, LOG_DEBUG, "prompt=%s: %s", options.prompt,
                   options.ending == LA_END_TERMINAL ? "combined, ended through the terminal"
                   : options.ending == LA_END_SIGNAL ? "combined, ended by a signal" : "sequential");
    la_dialogue(pamh, fd, &options, &subject, &outcome);
    if (options.tty >= 0) close(options.tty);
    close(fd);

    if (outcome.message[0] && !options.silent) tell_user(pamh, PAM_ERROR_MSG, outcome.message);
    /* S-64: information, so PAM_SILENT (sudo's default) keeps it back;
     * `localauthctl status` shows it too. */
    if (outcome.pam == PAM_SUCCESS && outcome.notice[0] && !options.silent) tell_user(pamh, PAM_TEXT_INFO, outcome.notice);
    pam_syslog(pamh, outcome.pam == PAM_SUCCESS ? LOG_INFO : LOG_NOTICE,
               "localauthd: user=%s uid=%u service=%s policy=%s result=%s", user, (unsigned)subject.uid,
               (const char *)service, options.policy, outcome.result);
    /* Belt and braces: success only with the evaluation's own OK. */
    if (outcome.pam == PAM_SUCCESS && strcmp(outcome.result, "success") != 0) return PAM_AUTH_ERR;
    return outcome.pam;
}

LA_EXPORT int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    /* No credentials of its own, like pam_fprintd. */
    return PAM_SUCCESS;
}
