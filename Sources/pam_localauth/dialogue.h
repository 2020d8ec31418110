/* One authentication as a dialogue with the daemon: open an on-behalf
 * context, evaluate, relay prompts through the PAM conversation, and read
 * the final reply. */
#ifndef PAM_LOCALAUTH_DIALOGUE_H
#define PAM_LOCALAUTH_DIALOGUE_H

#include <security/pam_modules.h>
#include <sys/types.h>

#include "conversation.h"
#include "outcome.h"

struct la_options {
    const char *policy; /* "owner" or "biometrics" */
    const char *reason; /* NULL: "<service>: authenticate as <user>" */
    const char *socket;
    int timeout_seconds;
    int debug;
    int silent; /* PAM_SILENT: no informational messages, only the password prompt */
    const char *prompt; /* auto, combined or sequential (S-60) */
    enum la_ending ending; /* how a pending password prompt is ended early, or none */
    int tty;               /* the controlling terminal for LA_END_TERMINAL, else -1 */
    /* S-57: accept a daemon whose `hello` reports the simulated sensor or
     * builtin passcodes (tests only). */
    int insecure_test_backends;
};

struct la_subject {
    const char *user;
    uid_t uid;
    const char *service;
    const char *tty;   /* or NULL */
    const char *rhost; /* or NULL */
    /* S-54: who asks (who ran su): a setuid program's real uid, else
     * PAM_RUSER's uid, else the controlling tty's owner if not root. */
    int has_requester;
    uid_t requester;
};

/* Runs the dialogue on a connected socket; fills `outcome`. */
void la_dialogue(pam_handle_t *pamh, int fd, const struct la_options *options, const struct la_subject *subject,
                 struct la_outcome *outcome);

#endif
