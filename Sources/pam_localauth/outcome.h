/* How an evaluation's final reply becomes a PAM result (S-45). Pure: the
 * unit tests call it with parsed replies. */
#ifndef PAM_LOCALAUTH_OUTCOME_H
#define PAM_LOCALAUTH_OUTCOME_H

#include "wire.h"

struct la_outcome {
    int pam;            /* a PAM_* return code */
    const char *result; /* a word for the log: success, failed, maxtries, unavailable... */
    char message[256];  /* for the user (PAM_ERROR_MSG), or "" */
    char notice[384];   /* S-64, on a success: the failures since the last sign-in (PAM_TEXT_INFO), or "" */
};

/* S-64: the sentence for a success reply's failure fields ("2 failed
 * fingerprint attempts and 1 wrong password since your last sign-in, the
 * last at 14:02 via sudo on pts/2"), or "" when there were none. `now`
 * decides whether the day is said. */
void la_failure_notice(const struct la_reply *reply, long now, char *text, size_t size);

/* The final reply of `evaluate`: OK, ERR domain=la ..., or ERR domain=protocol ...
 * Anything else (a PROMPT, a BYE, a malformed code) is never PAM_SUCCESS. */
void la_map_final(const struct la_reply *reply, struct la_outcome *outcome);

/* S-57: 1 when `hello`'s reply names a backend that administrators control
 * (the simulated sensor, builtin passcodes) or does not name both (a daemon
 * too old to say), else 0. */
int la_test_backends(const struct la_reply *hello);

/* A protocol refusal (ERR domain=protocol, or BYE): PAM_AUTH_ERR for the
 * daemon's limits (limit-exceeded, busy, BYE reason=limit), never a fall
 * through; PAM_AUTHINFO_UNAVAIL for the rest (S-53 amends S-45). */
void la_map_refusal(const struct la_reply *reply, struct la_outcome *outcome);

/* The evaluation outlived the module's timeout=: PAM_AUTH_ERR (F-55). */
void la_timed_out(struct la_outcome *outcome);

/* The daemon went away or spoke out of turn: PAM_AUTHINFO_UNAVAIL. */
void la_unavailable(struct la_outcome *outcome, const char *result);

#endif
