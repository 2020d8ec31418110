/* The system's authentication dialog (S-66, S-67): who asks (the app's
 * name and icon from its .desktop file, the program's path below), what
 * the app says (its reason, marked as its words), a fingerprint state line,
 * the password field, Cancel and the app's fallback. Keyboard first: the
 * password field has the focus, Enter sends, Escape cancels. */
#ifndef LOCALAUTH_AGENT_DIALOG_H
#define LOCALAUTH_AGENT_DIALOG_H

#include <gtk/gtk.h>

#include "apps.h"

struct agent_dialog;

/* What the user did. `password` is the entry's text, valid during the call
 * only (the dialog wipes it right after). */
struct agent_dialog_actions {
    void (*password)(const char *password, void *user);
    void (*cancel)(void *user);
    void (*fallback)(void *user);
    void *user;
};

/* One prompt of the request, as its PROMPT line says it. */
struct agent_prompt {
    const char *kind;         /* biometric, passcode, biometric-or-passcode */
    const char *biometry;     /* touchID, faceID, opticID */
    int attempt;
    int attempts_left;        /* -1: not given */
    int retry_after;          /* 0: none */
    const char *message;      /* the daemon's, or NULL */
    const char *reason;       /* the app's words */
    const char *cancel;       /* the app's title for Cancel */
    const char *fallback;     /* the app's fallback title when offered, or NULL */
};

struct agent_dialog *agent_dialog_new(GtkApplication *application, const struct agent_dialog_actions *actions);
/* Shows (or updates the dialog to) `prompt`. */
void agent_dialog_prompt(struct agent_dialog *dialog, const struct agent_prompt *prompt);
/* Who asks, once it is known. */
void agent_dialog_app(struct agent_dialog *dialog, const struct agent_app *app);
/* A password was sent: the dialog waits for the daemon's verdict. */
void agent_dialog_checking(struct agent_dialog *dialog);
/* Closes and frees the dialog (its password buffer is wiped). */
void agent_dialog_close(struct agent_dialog *dialog);

#endif
