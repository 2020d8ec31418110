/* A PAM conversation call that can be ended before the user answers (S-60,
 * docs/decisions "ending the conversation early"): the application's
 * conversation function runs on a thread of its own while the module keeps
 * reading the daemon; when the evaluation ends first (a finger matched),
 * the call is made to return by
 *
 *   - LA_END_TERMINAL: a newline pushed into the controlling terminal's
 *     input queue (TIOCSTI), which the conversation reads as Enter: sudo's
 *     tgetpass, libpam_misc's misc_conv (login, su, pamtester) return
 *     normally, as if the user had pressed Enter. Needs TIOCSTI: root with
 *     CAP_SYS_ADMIN (sudo, login and su run so), or dev.tty.legacy_tiocsti=1
 *     (or a kernel before 6.2, which has no such switch).
 *   - LA_END_SIGNAL: a signal to the conversation's thread whose handler
 *     (installed without SA_RESTART) makes its blocked read fail with EINTR:
 *     polkit-agent-helper-1's fgets on the agent's pipe returns and its
 *     conversation reports an error, which the module then ignores. Never
 *     used for sudo: sudo treats an interrupted read as ^C and fails the
 *     authentication whatever the module returns.
 *
 * Whatever was typed is wiped and discarded. Where neither applies,
 * la_conversation_ending() answers LA_END_NONE and the module uses the
 * sequential flow (S-45). */
#ifndef PAM_LOCALAUTH_CONVERSATION_H
#define PAM_LOCALAUTH_CONVERSATION_H

#include <pthread.h>
#include <security/pam_modules.h>
#include <signal.h>

enum la_ending { LA_END_NONE = 0, LA_END_TERMINAL, LA_END_SIGNAL };

/* How a pending conversation call of this process can be ended early, for
 * the module's `prompt=` option ("auto", "combined" or "sequential"). For
 * LA_END_TERMINAL, *tty is an fd of the controlling terminal (the caller
 * closes it); else -1. */
enum la_ending la_conversation_ending(pam_handle_t *pamh, const char *mode, int *tty);

struct la_conversation {
    pam_handle_t *pamh;
    enum la_ending ending;
    int tty;
    int style;
    char prompt[512];
    pthread_t thread;
    int running;      /* the thread was started and is not joined */
    int done[2];      /* the thread writes one byte to done[1] when the call returned */
    int rc;           /* the call's result (PAM_SUCCESS or an error) */
    char *answer;     /* its answer, or NULL */
    int pushed;       /* newlines pushed into the terminal */
    sigset_t saved_mask;
    struct sigaction saved_action;
    int handler_installed;
};

/* Starts the call (`style` PAM_PROMPT_ECHO_OFF or _ON, `prompt` its text)
 * on a thread. 0, or -1 (nothing started: the caller converses itself). */
int la_conversation_start(struct la_conversation *c, pam_handle_t *pamh, enum la_ending ending, int tty, int style,
                          const char *prompt);

/* Readable once the call has returned. */
int la_conversation_ready_fd(const struct la_conversation *c);

/* After the ready fd was readable: joins the thread; its result, and its
 * answer in *answer (to be wiped and freed by the caller). */
int la_conversation_finish(struct la_conversation *c, char **answer);

/* Ends the pending call without the user's Enter, waits for it, wipes and
 * discards its answer. 0 when it was ended so; -1 when it could not be
 * (the push or the signal was refused): it then waits for the user. */
int la_conversation_end(struct la_conversation *c);

#endif
