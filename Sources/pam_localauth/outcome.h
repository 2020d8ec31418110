/* How an evaluation's final reply becomes a PAM result (S-45). Pure: the
 * unit tests call it with parsed replies. */
#ifndef PAM_LOCALAUTH_OUTCOME_H
#define PAM_LOCALAUTH_OUTCOME_H

#include "wire.h"

struct la_outcome {
    int pam;            /* a PAM_* return code */
    const char *result; /* a word for the log: success, failed, maxtries, unavailable... */
    char message[256];  /* for the user (PAM_ERROR_MSG), or "" */
};

/* The final reply of `evaluate`: OK, ERR domain=la ..., or ERR domain=protocol ...
 * Anything else (a PROMPT, a BYE, a malformed code) is never PAM_SUCCESS. */
void la_map_final(const struct la_reply *reply, struct la_outcome *outcome);

/* The daemon went away or spoke out of turn: PAM_AUTHINFO_UNAVAIL. */
void la_unavailable(struct la_outcome *outcome, const char *result);

#endif
