/* A conversation call ended early (see conversation.h). The thread owns
 * nothing but the call; every decision stays with the module's own thread,
 * which never calls libpam on the handle while the call runs (only
 * pam_syslog, which reads items). Signals: while the call runs, the
 * module's thread blocks every signal, so that a process-directed ^C, a
 * SIGALRM of sudo's password timeout or a SIGTSTP reaches the conversation's
 * thread, whose read they interrupt as they would without this module. */
#define _GNU_SOURCE
#include "conversation.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <security/pam_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <termios.h>
#include <unistd.h>

/* The signal that interrupts a conversation blocked in a read (LA_END_SIGNAL):
 * ignored by default, so one that arrives after its handler is gone does
 * nothing; nothing in sudo, login, su or polkit's helper uses it. */
#define LA_INTERRUPT SIGURG
/* How often, and how long, the module tries to end a call before it waits
 * for the user instead (a conversation that resets its terminal between
 * the push and its read, TCSAFLUSH, loses the pushed byte). */
#define LA_END_INTERVAL_MS 100
#define LA_END_TRIES 50

static void interrupted(int signal_number) { (void)signal_number; }

/* TIOCSTI into our own controlling terminal: allowed with CAP_SYS_ADMIN
 * (sudo, login and su run as root), else only where the kernel keeps the
 * legacy behaviour (dev.tty.legacy_tiocsti=1, or a kernel before 6.2,
 * which has no such switch). */
static int tiocsti_allowed(void) {
    struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    FILE *file;
    int c;
    memset(data, 0, sizeof(data));
    if (syscall(SYS_capget, &header, data) == 0 &&
        (data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)) != 0)
        return 1;
    file = fopen("/proc/sys/dev/tty/legacy_tiocsti", "re");
    if (!file) return errno == ENOENT && access("/proc/sys/dev/tty", F_OK) == 0;
    c = fgetc(file);
    fclose(file);
    return c == '1';
}

enum la_ending la_conversation_ending(pam_handle_t *pamh, const char *mode, int *tty) {
    const void *service = NULL;
    *tty = -1;
    if (strcmp(mode, "sequential") == 0) return LA_END_NONE;
    if (isatty(STDIN_FILENO)) {
        /* sudo reads /dev/tty, misc_conv standard input: the same terminal
         * when standard input is the controlling one (tcgetsid answers only
         * for one's controlling terminal). */
        int fd = tcgetsid(STDIN_FILENO) != -1 ? open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC) : -1;
        if (fd >= 0 && tiocsti_allowed()) {
            *tty = fd;
            return LA_END_TERMINAL;
        }
        if (fd >= 0) close(fd);
        /* A terminal we may not push into: a signal would make sudo fail
         * the authentication (an interrupted read is its ^C). */
        return LA_END_NONE;
    }
    if (strcmp(mode, "combined") == 0) return LA_END_SIGNAL;
    /* polkit-agent-helper-1 reads the agent's answers from a pipe with
     * fgets, and an interrupted read only fails its conversation call. */
    if (pam_get_item(pamh, PAM_SERVICE, &service) == PAM_SUCCESS && service && strcmp(service, "polkit-1") == 0)
        return LA_END_SIGNAL;
    return LA_END_NONE;
}

static void *run(void *argument) {
    struct la_conversation *c = argument;
    const struct pam_message message = { .msg_style = c->style, .msg = c->prompt };
    const struct pam_message *messages[1] = { &message };
    struct pam_response *responses = NULL;
    const struct pam_conv *conv = NULL;
    char byte = 1;

    /* The application's own mask: its signals interrupt its read here. */
    pthread_sigmask(SIG_SETMASK, &c->saved_mask, NULL);
    c->rc = PAM_CONV_ERR;
    if (pam_get_item(c->pamh, PAM_CONV, (const void **)&conv) == PAM_SUCCESS && conv && conv->conv) {
        c->rc = conv->conv(1, messages, &responses, conv->appdata_ptr);
        if (responses) {
            c->answer = responses[0].resp;
            free(responses);
        }
        if (c->rc == PAM_SUCCESS && !c->answer) c->rc = PAM_CONV_ERR;
    }
    while (write(c->done[1], &byte, 1) < 0 && errno == EINTR) {}
    return NULL;
}

int la_conversation_start(struct la_conversation *c, pam_handle_t *pamh, enum la_ending ending, int tty, int style,
                          const char *prompt) {
    sigset_t all;
    memset(c, 0, sizeof(*c));
    c->pamh = pamh;
    c->ending = ending;
    c->tty = tty;
    c->style = style;
    snprintf(c->prompt, sizeof(c->prompt), "%s", prompt);
    if (ending == LA_END_NONE || pipe2(c->done, O_CLOEXEC) != 0) return -1;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &c->saved_mask);
    if (ending == LA_END_SIGNAL) {
        struct sigaction action;
        memset(&action, 0, sizeof(action));
        action.sa_handler = interrupted;
        sigemptyset(&action.sa_mask);
        action.sa_flags = 0; /* no SA_RESTART: the blocked read returns EINTR */
        if (sigaction(LA_INTERRUPT, &action, &c->saved_action) == 0) c->handler_installed = 1;
    }
    if (pthread_create(&c->thread, NULL, run, c) != 0) {
        if (c->handler_installed) sigaction(LA_INTERRUPT, &c->saved_action, NULL);
        pthread_sigmask(SIG_SETMASK, &c->saved_mask, NULL);
        close(c->done[0]);
        close(c->done[1]);
        return -1;
    }
    c->running = 1;
    return 0;
}

int la_conversation_ready_fd(const struct la_conversation *c) { return c->running ? c->done[0] : -1; }

int la_conversation_finish(struct la_conversation *c, char **answer) {
    *answer = NULL;
    if (!c->running) return PAM_CONV_ERR;
    pthread_join(c->thread, NULL);
    c->running = 0;
    if (c->handler_installed) sigaction(LA_INTERRUPT, &c->saved_action, NULL);
    c->handler_installed = 0;
    /* A newline pushed after the conversation had read its line would be
     * read by whatever reads the terminal next (the command, the shell). */
    if (c->pushed > 0) tcflush(c->tty, TCIFLUSH);
    close(c->done[0]);
    close(c->done[1]);
    pthread_sigmask(SIG_SETMASK, &c->saved_mask, NULL);
    *answer = c->answer;
    c->answer = NULL;
    return c->rc;
}

/* Whether the call returned, waiting at most `milliseconds` (-1: for ever). */
static int returned(const struct la_conversation *c, int milliseconds) {
    struct pollfd ready = { .fd = c->done[0], .events = POLLIN };
    int rc;
    do rc = poll(&ready, 1, milliseconds);
    while (rc < 0 && errno == EINTR);
    return rc > 0;
}

/* One attempt to make the call return: 0, or -1 when the kernel refused. */
static int nudge(struct la_conversation *c, int first) {
    if (c->ending == LA_END_SIGNAL) return pthread_kill(c->thread, LA_INTERRUPT) == 0 ? 0 : -1;
    /* Pushed again only when the terminal holds no line that the call has
     * yet to read: the first push was lost (flushed before the read). */
    if (!first) {
        int queued = 0;
        if (ioctl(c->tty, FIONREAD, &queued) == 0 && queued > 0) return 0;
    }
    {
        char newline = '\n';
        if (ioctl(c->tty, TIOCSTI, &newline) != 0) return -1;
    }
    c->pushed++;
    return 0;
}

int la_conversation_end(struct la_conversation *c) {
    int ended = 0;
    char *answer = NULL;
    if (!c->running) return 0;
    for (int tries = 0; tries < LA_END_TRIES; tries++) {
        if (returned(c, tries == 0 ? 0 : LA_END_INTERVAL_MS)) {
            ended = 1;
            break;
        }
        if (nudge(c, tries == 0) != 0) {
            pam_syslog(c->pamh, LOG_WARNING, "Failed to end the password prompt early (%s): %m; waiting for Enter",
                       c->ending == LA_END_TERMINAL ? "TIOCSTI" : "signal");
            break;
        }
    }
    if (!ended) {
        if (returned(c, LA_END_INTERVAL_MS)) {
            ended = 1;
        } else {
            pam_syslog(c->pamh, LOG_NOTICE, "The password prompt did not end early; waiting for Enter");
            returned(c, -1);
        }
    }
    la_conversation_finish(c, &answer);
    if (answer) {
        explicit_bzero(answer, strlen(answer));
        free(answer);
    }
    return ended ? 0 : -1;
}
