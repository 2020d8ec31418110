/* The dialogue with localauthd for one pam_sm_authenticate (S-45, S-60):
 *
 *   h hello                                      -> h OK ... sensor-backend=B passcode-backend=B
 *   n new uid=N service=S [tty=T] [rhost=R] [requester=N]  -> n OK ctx=ID
 *   e evaluate ctx=ID policy=P reason=R [prompt=combined]
 *                                                 -> e PROMPT ... / e OK / e ERR
 *   p passcode ctx=ID secret=S  or  c cancel ctx=ID   (answers to a passcode PROMPT)
 *
 * Touch or type (S-60, policy owner, where the conversation can be ended
 * early: conversation.h): the combined prompt becomes one
 * PAM_PROMPT_ECHO_OFF, "Password or touch the sensor: ", run on a thread
 * while this one keeps reading the daemon. Readings that arrive meanwhile
 * (a miss, the biometric half's end) leave the pending call alone, so
 * nothing typed is lost; the evaluation's end (a match, a timeout) ends the
 * call and discards what was typed. Otherwise (S-45): biometric prompts
 * become PAM_TEXT_INFO (the first one even under PAM_SILENT: a waiting
 * sensor asks for something); a passcode prompt becomes
 * PAM_PROMPT_ECHO_OFF. Either way an answer is sent as `passcode` and
 * wiped, an empty answer sends `cancel`, and a conversation that fails
 * cancels the evaluation (PAM_CONV_ERR). Only the evaluation's `OK` is
 * PAM_SUCCESS; a daemon that closes, stalls past the timeout or sends a
 * line the protocol does not allow is PAM_AUTHINFO_UNAVAIL, and so is a
 * daemon whose backends an administrator controls (S-57: the simulated
 * sensor, builtin passcodes), unless the module's own
 * `insecure_test_backends` option allows them.
 *
 * The keyring (S-75): after a success whose reply says `login-secret=`,
 * PAM_AUTHTOK is set when it is not yet, so that pam_gnome_keyring later
 * in the stack finds the login password: `typed`, the password sent here;
 * `offered` (a fingerprint), the one `k login-secret ctx=ID` brings back.
 * Nothing of that changes the PAM result, and every buffer that held it is
 * wiped with the dialogue. */
#define _GNU_SOURCE
#include "dialogue.h"

#include <security/pam_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "conversation.h"
#include "wire.h"

struct dialogue {
    pam_handle_t *pamh;
    int fd;
    int debug;
    int silent;
    struct la_reader reader;
    char line[LA_MAX_LINE];
    struct la_reply reply;
    char ctx[64];
    /* S-60: how a pending call can be ended early (LA_END_NONE: the
     * sequential flow), and the call while it runs. */
    enum la_ending ending;
    int tty;
    struct la_conversation conversation;
    int pending;
    /* The first biometric prompt went out (it reaches the user under PAM_SILENT). */
    int sensor_shown;
    /* `evaluate` went out: the daemon is there and judging (F-55). */
    int evaluating;
    /* The last password sent (S-75's `typed`), or a released one: wiped with d. */
    char password[LA_MAX_LINE];
};

/* Sends a built request; wipes it (it may hold a password) either way. */
static int send_request(struct dialogue *d, struct la_request *request) {
    int rc = la_request_finish(request) == 0 ? la_write_all(d->fd, request->bytes, request->length) : -1;
    la_request_wipe(request);
    return rc;
}

/* The next reply line, parsed: 0; 1 when a pending conversation call
 * returned first; -1 with `outcome` set to unavailable. */
static int next_reply(struct dialogue *d, struct la_outcome *outcome) {
    size_t length = 0;
    int other = d->pending ? la_conversation_ready_fd(&d->conversation) : -1;
    switch (la_read_line_or(&d->reader, other, d->line, &length)) {
    case LA_READ_LINE:
        break;
    case LA_READ_OTHER:
        return 1;
    case LA_READ_EOF:
        pam_syslog(d->pamh, LOG_ERR, "localauthd closed the connection before answering");
        la_unavailable(outcome, "daemon-gone");
        return -1;
    case LA_READ_TOO_LONG:
        pam_syslog(d->pamh, LOG_ERR, "localauthd sent a line longer than %d bytes", LA_MAX_LINE);
        la_unavailable(outcome, "line-too-long");
        return -1;
    case LA_READ_TIMEOUT:
        pam_syslog(d->pamh, LOG_ERR, "localauthd did not answer within the timeout");
        /* F-55: silence once the evaluation runs (a prompt that outlives
         * timeout=) is this evaluation timing out, not an absent daemon; a
         * fall through let pam_unix take the password of a user inside a
         * delay after timeout= seconds at the prompt. */
        if (d->evaluating) la_timed_out(outcome);
        else la_unavailable(outcome, "timeout");
        return -1;
    default:
        pam_syslog(d->pamh, LOG_ERR, "Failed to read from localauthd: %m");
        la_unavailable(outcome, "read-error");
        return -1;
    }
    if (la_parse_reply(d->line, length, &d->reply) != 0) {
        pam_syslog(d->pamh, LOG_ERR, "localauthd sent a malformed line");
        la_unavailable(outcome, "malformed-reply");
        return -1;
    }
    if (d->debug) pam_syslog(d->pamh, LOG_DEBUG, "localauthd: %s", d->line);
    if (d->reply.status == LA_STATUS_BYE) {
        pam_syslog(d->pamh, LOG_ERR, "localauthd ended the connection (%s)", la_field(&d->reply, "reason") ?: "?");
        la_map_refusal(&d->reply, outcome);
        if (outcome->pam == PAM_AUTHINFO_UNAVAIL) outcome->result = "daemon-gone";
        return -1;
    }
    return 0;
}

/* Sends a request and waits for the reply with its tag, skipping lines of
 * other tags: 0, or -1 with `outcome` set (before any prompt is pending). */
static int exchange(struct dialogue *d, struct la_request *request, const char *tag, struct la_outcome *outcome) {
    if (send_request(d, request) != 0) {
        /* A daemon that refused the connection for its limits may have
         * closed before the write: its `* BYE reason=limit` is still
         * readable, and is a refusal, not an absence (S-53). */
        pam_syslog(d->pamh, LOG_ERR, "Failed to send to localauthd");
        while (next_reply(d, outcome) == 0) {}
        if (outcome->pam != PAM_AUTH_ERR) la_unavailable(outcome, "write-error");
        return -1;
    }
    for (;;) {
        if (next_reply(d, outcome) != 0) return -1;
        if (strcmp(d->reply.tag, tag) == 0) return 0;
    }
}

/* One conversation message; the answer (if any) in *answer, to be wiped and freed. */
static int converse(struct dialogue *d, int style, const char *text, char **answer) {
    const struct pam_message message = { .msg_style = style, .msg = text };
    const struct pam_message *messages[1] = { &message };
    struct pam_response *responses = NULL;
    const struct pam_conv *conv = NULL;
    int rc;

    if (answer) *answer = NULL;
    rc = pam_get_item(d->pamh, PAM_CONV, (const void **)&conv);
    if (rc != PAM_SUCCESS || !conv || !conv->conv) return PAM_CONV_ERR;
    rc = conv->conv(1, messages, &responses, conv->appdata_ptr);
    if (rc != PAM_SUCCESS) {
        if (responses) {
            if (responses[0].resp) {
                explicit_bzero(responses[0].resp, strlen(responses[0].resp));
                free(responses[0].resp);
            }
            free(responses);
        }
        return PAM_CONV_ERR;
    }
    if (responses) {
        if (answer) *answer = responses[0].resp;
        else if (responses[0].resp) {
            explicit_bzero(responses[0].resp, strlen(responses[0].resp));
            free(responses[0].resp);
        }
        free(responses);
    }
    if (answer && !*answer && style == PAM_PROMPT_ECHO_OFF) return PAM_CONV_ERR;
    return PAM_SUCCESS;
}

static int is_face(const struct la_reply *reply) {
    const char *biometry = la_field(reply, "biometry");
    return biometry && (strcmp(biometry, "faceID") == 0 || strcmp(biometry, "opticID") == 0);
}

/* A prompt's `retry-after` (the passcode half ended, S-60) as a sentence. */
static void disabled_for(const struct la_reply *reply, char *text, size_t size) {
    const char *retry = la_field(reply, "retry-after");
    long seconds = retry ? strtol(retry, NULL, 10) : 0;
    text[0] = '\0';
    if (seconds >= 120) snprintf(text, size, "Password entry is disabled for %ld minutes.", (seconds + 59) / 60);
    else if (seconds > 0) snprintf(text, size, "Password entry is disabled for %ld seconds.", seconds);
}

/* The daemon's words for the user; a passcode is the login password here. */
static const char *user_words(const char *message) {
    if (!message) return NULL;
    if (strcmp(message, "Wrong passcode.") == 0) return "Wrong password.";
    if (strcmp(message, "Passcode entry is disabled.") == 0) return NULL; /* said by disabled_for */
    return message;
}

static void show_biometric_prompt(struct dialogue *d, const char *reason, char *text, size_t size) {
    const char *message = user_words(la_field(&d->reply, "message"));
    const char *action = is_face(&d->reply) ? "Look at the camera" : "Place your finger on the fingerprint reader";
    char disabled[96];
    disabled_for(&d->reply, disabled, sizeof(disabled));
    snprintf(text, size, "%s%s%s%s%s (%s)", disabled, disabled[0] ? " " : "", message ? message : "", message ? " " : "",
             action, la_field(&d->reply, "reason") ?: reason);
}

/* S-60: the one prompt of both halves, or of the passcode half alone,
 * with the daemon's message first (a prompt is never silenced). */
static void password_prompt(struct dialogue *d, int combined, char *text, size_t size) {
    const char *message = user_words(la_field(&d->reply, "message"));
    snprintf(text, size, "%s%s%s", message ? message : "", message ? " " : "",
             !combined ? "Password: " : is_face(&d->reply) ? "Password or look at the camera: " : "Password or touch the sensor: ");
}

static int send_simple(struct dialogue *d, const char *tag, const char *verb) {
    struct la_request request;
    la_request_start(&request, tag, verb);
    la_request_add(&request, "ctx", d->ctx);
    return send_request(d, &request);
}

/* Sends a conversation's answer as `passcode` (wiped and freed here); an
 * empty answer is "Cancel" (S-45). 0, or -1 with `outcome` set. */
static int answer(struct dialogue *d, char *typed, struct la_outcome *outcome) {
    struct la_request request;
    if (typed[0] == '\0') {
        free(typed);
        if (send_simple(d, "c", "cancel") != 0) {
            la_unavailable(outcome, "write-error");
            return -1;
        }
        return 0;
    }
    la_request_start(&request, "p", "passcode");
    la_request_add(&request, "ctx", d->ctx);
    la_request_add(&request, "secret", typed);
    explicit_bzero(d->password, sizeof(d->password));
    if (strlen(typed) < sizeof(d->password)) memcpy(d->password, typed, strlen(typed));
    explicit_bzero(typed, strlen(typed));
    free(typed);
    if (request.overflow) {
        /* Too long for a line, or a control character: not sendable. */
        la_request_wipe(&request);
        pam_syslog(d->pamh, LOG_NOTICE, "The password cannot be sent (too long or a control character); cancelling");
        if (send_simple(d, "c", "cancel") != 0) {
            la_unavailable(outcome, "write-error");
            return -1;
        }
        return 0;
    }
    if (send_request(d, &request) != 0) {
        la_unavailable(outcome, "write-error");
        return -1;
    }
    return 0;
}

/* After a failed conversation: cancel and wait for the evaluation's end. */
static void cancel_after_conversation_error(struct dialogue *d, struct la_outcome *outcome) {
    pam_syslog(d->pamh, LOG_ERR, "The PAM conversation failed; cancelling the evaluation");
    if (send_simple(d, "c", "cancel") == 0) {
        while (next_reply(d, outcome) == 0) {
            if (strcmp(d->reply.tag, "e") == 0 && d->reply.status != LA_STATUS_PROMPT) break;
        }
    }
    outcome->pam = PAM_CONV_ERR;
    outcome->result = "conversation-error";
    outcome->message[0] = '\0';
}

/* S-75: after a success, PAM_AUTHTOK for the modules after this one, when
 * the daemon says the login password is known and nothing set it yet. A
 * refusal or a broken reply leaves the result as it is. */
static void hand_over_login_password(struct dialogue *d) {
    const char *offer = la_field(&d->reply, "login-secret");
    const void *existing = NULL;
    struct la_outcome scratch;
    if (!offer) return;
    if (pam_get_item(d->pamh, PAM_AUTHTOK, &existing) == PAM_SUCCESS && existing) return;
    if (strcmp(offer, "typed") == 0) {
        if (d->password[0] && pam_set_item(d->pamh, PAM_AUTHTOK, d->password) != PAM_SUCCESS)
            pam_syslog(d->pamh, LOG_ERR, "Failed to set PAM_AUTHTOK to the password typed");
        return;
    }
    if (strcmp(offer, "offered") != 0) return;
    explicit_bzero(d->password, sizeof(d->password));
    if (send_simple(d, "k", "login-secret") != 0) return;
    do {
        if (next_reply(d, &scratch) != 0) return;
    } while (strcmp(d->reply.tag, "k") != 0);
    const char *secret = la_field(&d->reply, "secret");
    if (d->reply.status != LA_STATUS_OK || !secret) {
        pam_syslog(d->pamh, LOG_NOTICE, "localauthd released no login password (%s); the keyring stays locked",
                   la_field(&d->reply, "name") ?: "?");
        return;
    }
    long length = la_base64_decode(secret, (unsigned char *)d->password, sizeof(d->password) - 1);
    if (length <= 0 || memchr(d->password, '\0', (size_t)length)) {
        pam_syslog(d->pamh, LOG_ERR, "localauthd sent a login password that does not decode");
        explicit_bzero(d->password, sizeof(d->password));
        return;
    }
    if (pam_set_item(d->pamh, PAM_AUTHTOK, d->password) != PAM_SUCCESS)
        pam_syslog(d->pamh, LOG_ERR, "Failed to set PAM_AUTHTOK to the login password");
}

void la_dialogue(pam_handle_t *pamh, int fd, const struct la_options *options, const struct la_subject *subject,
                 struct la_outcome *outcome) {
    /* ~25 KiB of buffers: on the heap, as a PAM client's thread may have a small stack. */
    struct dialogue *d = calloc(1, sizeof(*d));
    struct la_request request;
    char uid_text[32], requester_text[32], reason[512], text[1024];

    if (!d) {
        la_unavailable(outcome, "out-of-memory");
        return;
    }
    d->pamh = pamh;
    d->fd = fd;
    d->debug = options->debug;
    d->silent = options->silent;
    /* Touch or type needs a passcode half (policy owner) and a call that can be ended early. */
    d->ending = strcmp(options->policy, "owner") == 0 ? options->ending : LA_END_NONE;
    d->tty = options->tty;
    la_reader_init(&d->reader, fd, options->timeout_seconds * 1000);

    /* S-57: the daemon's backends, judged here as well as by the daemon. */
    la_request_start(&request, "h", "hello");
    if (exchange(d, &request, "h", outcome) != 0) goto done;
    if (d->reply.status != LA_STATUS_OK) {
        pam_syslog(pamh, LOG_ERR, "localauthd refused hello: %s", la_field(&d->reply, "message") ?: "no message");
        la_map_refusal(&d->reply, outcome);
        goto done;
    }
    if (!options->insecure_test_backends && la_test_backends(&d->reply)) {
        pam_syslog(pamh, LOG_ERR, "localauthd runs with sensor-backend=%s passcode-backend=%s, which administrators "
                   "control; not authenticating through it (S-57; insecure_test_backends is for tests only)",
                   la_field(&d->reply, "sensor-backend") ?: "unknown", la_field(&d->reply, "passcode-backend") ?: "unknown");
        la_unavailable(outcome, "test-backends");
        goto done;
    }

    /* The on-behalf context (S-42). */
    snprintf(uid_text, sizeof(uid_text), "%u", (unsigned)subject->uid);
    la_request_start(&request, "n", "new");
    la_request_add(&request, "uid", uid_text);
    la_request_add(&request, "service", subject->service);
    if (subject->tty) la_request_add(&request, "tty", subject->tty);
    if (subject->rhost) la_request_add(&request, "rhost", subject->rhost);
    if (subject->has_requester) {
        snprintf(requester_text, sizeof(requester_text), "%u", (unsigned)subject->requester);
        la_request_add(&request, "requester", requester_text);
    }
    if (exchange(d, &request, "n", outcome) != 0) goto done;
    if (d->reply.status != LA_STATUS_OK || !la_field(&d->reply, "ctx") || strlen(la_field(&d->reply, "ctx")) >= sizeof(d->ctx)) {
        pam_syslog(pamh, LOG_ERR, "localauthd refused the context: %s", la_field(&d->reply, "message") ?: "no message");
        if (d->reply.status == LA_STATUS_OK) la_unavailable(outcome, "refused");
        else la_map_refusal(&d->reply, outcome);
        goto done;
    }
    snprintf(d->ctx, sizeof(d->ctx), "%s", la_field(&d->reply, "ctx"));

    if (options->reason) snprintf(reason, sizeof(reason), "%s", options->reason);
    else snprintf(reason, sizeof(reason), "%s: authenticate as %s", subject->service, subject->user);
    la_request_start(&request, "e", "evaluate");
    la_request_add(&request, "ctx", d->ctx);
    la_request_add(&request, "policy", options->policy);
    la_request_add(&request, "reason", reason);
    if (d->ending != LA_END_NONE) la_request_add(&request, "prompt", "combined");
    /* S-64: the failures since the last sign-in come with the success. */
    la_request_add(&request, "notice", "failures");
    if (send_request(d, &request) != 0) {
        la_unavailable(outcome, "write-error");
        goto done;
    }
    d->evaluating = 1;

    for (;;) {
        int got = next_reply(d, outcome);
        if (got < 0) goto done;
        if (got == 1) {
            /* The pending call returned: the user pressed Enter. */
            char *typed = NULL;
            int rc = la_conversation_finish(&d->conversation, &typed);
            d->pending = 0;
            if (rc != PAM_SUCCESS) {
                if (typed) {
                    explicit_bzero(typed, strlen(typed));
                    free(typed);
                }
                cancel_after_conversation_error(d, outcome);
                goto done;
            }
            if (answer(d, typed, outcome) != 0) goto done;
            continue;
        }
        if (strcmp(d->reply.tag, "p") == 0 && d->reply.status == LA_STATUS_ERR) {
            const char *name = la_field(&d->reply, "name");
            /* S-60: the passcode half ended (or the evaluation is ending)
             * while the password was typed: the next `e` line says how it goes on. */
            if (d->ending != LA_END_NONE && name && strcmp(name, "bad-state") == 0) continue;
            /* The daemon refused the answer (too long for it, say): the
             * prompt still waits, so end the evaluation rather than hang. */
            pam_syslog(pamh, LOG_NOTICE, "localauthd refused the password answer (%s); cancelling", name ?: "?");
            if (send_simple(d, "c", "cancel") != 0) {
                la_unavailable(outcome, "write-error");
                goto done;
            }
            continue;
        }
        if (strcmp(d->reply.tag, "e") != 0) continue; /* OK to `p`/`c`, or `*` lines */
        if (d->reply.status != LA_STATUS_PROMPT) {
            /* A match (or a timeout, a cancel) while the password prompt
             * waits: end it without the user's Enter (conversation.h). */
            if (d->pending) {
                la_conversation_end(&d->conversation);
                d->pending = 0;
            }
            la_map_final(&d->reply, outcome);
            if (outcome->pam == PAM_SUCCESS) hand_over_login_password(d);
            goto done;
        }
        const char *kind = la_field(&d->reply, "kind");
        int combined = kind && strcmp(kind, "biometric-or-passcode") == 0;
        if (kind && strcmp(kind, "biometric") == 0) {
            /* The sensor alone: a password prompt still pending (the
             * passcode half ended) can no longer be answered. */
            if (d->pending) {
                la_conversation_end(&d->conversation);
                d->pending = 0;
            }
            show_biometric_prompt(d, reason, text, sizeof(text));
            /* The first one reaches the user under PAM_SILENT (sudo's
             * default): a waiting sensor is a request, not information. */
            if ((!d->silent || !d->sensor_shown) && converse(d, PAM_TEXT_INFO, text, NULL) != PAM_SUCCESS) {
                cancel_after_conversation_error(d, outcome);
                goto done;
            }
            d->sensor_shown = 1;
        } else if (combined || (kind && strcmp(kind, "passcode") == 0)) {
            char *typed = NULL;
            /* Readings while the password is typed (a miss, the biometric
             * half's end) leave the pending call alone: nothing typed is lost. */
            if (d->pending) continue;
            if (d->ending != LA_END_NONE) {
                password_prompt(d, combined, text, sizeof(text));
                if (la_conversation_start(&d->conversation, pamh, d->ending, d->tty, PAM_PROMPT_ECHO_OFF, text) == 0) {
                    d->pending = 1;
                    continue;
                }
                pam_syslog(pamh, LOG_NOTICE, "Failed to start the password prompt on a thread; it cannot end early");
            }
            if (!combined) {
                const char *message = la_field(&d->reply, "message");
                if (message && !d->silent && converse(d, PAM_ERROR_MSG, message, NULL) != PAM_SUCCESS) {
                    cancel_after_conversation_error(d, outcome);
                    goto done;
                }
            }
            if (converse(d, PAM_PROMPT_ECHO_OFF, combined ? text : "Password: ", &typed) != PAM_SUCCESS) {
                cancel_after_conversation_error(d, outcome);
                goto done;
            }
            if (answer(d, typed, outcome) != 0) goto done;
        } else {
            pam_syslog(pamh, LOG_ERR, "localauthd sent an unknown prompt kind");
            la_unavailable(outcome, "unexpected-reply");
            goto done;
        }
    }
done:
    /* Never leave the application's conversation running on a thread. */
    if (d->pending) la_conversation_end(&d->conversation);
    explicit_bzero(&request, sizeof(request));
    explicit_bzero(d, sizeof(*d));
    free(d);
}
