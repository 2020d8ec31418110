/* The dialogue with localauthd for one pam_sm_authenticate (S-45):
 *
 *   n new uid=N service=S [tty=T] [rhost=R]      -> n OK ctx=ID
 *   e evaluate ctx=ID policy=P reason=R           -> e PROMPT ... / e OK / e ERR
 *   p passcode ctx=ID secret=S  or  c cancel ctx=ID   (answers to a passcode PROMPT)
 *
 * Biometric prompts become PAM_TEXT_INFO; a passcode prompt becomes
 * PAM_PROMPT_ECHO_OFF, whose answer is sent as `passcode` and wiped, an
 * empty answer sends `cancel`. A conversation that fails cancels the
 * evaluation (PAM_CONV_ERR). Only the evaluation's `OK` is PAM_SUCCESS; a
 * daemon that closes, stalls past the timeout or sends a line the protocol
 * does not allow is PAM_AUTHINFO_UNAVAIL. */
#define _GNU_SOURCE
#include "dialogue.h"

#include <security/pam_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "wire.h"

struct dialogue {
    pam_handle_t *pamh;
    int fd;
    int debug;
    struct la_reader reader;
    char line[LA_MAX_LINE];
    struct la_reply reply;
    char ctx[64];
};

/* Sends a built request; wipes it (it may hold a password) either way. */
static int send_request(struct dialogue *d, struct la_request *request) {
    int rc = la_request_finish(request) == 0 ? la_write_all(d->fd, request->bytes, request->length) : -1;
    la_request_wipe(request);
    return rc;
}

/* The next reply line, parsed. 0, or -1 with `outcome` set to unavailable. */
static int next_reply(struct dialogue *d, struct la_outcome *outcome) {
    size_t length = 0;
    switch (la_read_line(&d->reader, d->line, &length)) {
    case LA_READ_LINE:
        break;
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
        la_unavailable(outcome, "timeout");
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
        la_unavailable(outcome, "daemon-gone");
        return -1;
    }
    return 0;
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

static void show_biometric_prompt(struct dialogue *d, const char *reason, char *text, size_t size) {
    const char *biometry = la_field(&d->reply, "biometry");
    const char *message = la_field(&d->reply, "message");
    const char *action = "Place your finger on the fingerprint reader";
    if (biometry && (strcmp(biometry, "faceID") == 0 || strcmp(biometry, "opticID") == 0))
        action = "Look at the camera";
    snprintf(text, size, "%s%s%s (%s)", message ? message : "", message ? " " : "", action,
             la_field(&d->reply, "reason") ?: reason);
}

static int send_simple(struct dialogue *d, const char *tag, const char *verb) {
    struct la_request request;
    la_request_start(&request, tag, verb);
    la_request_add(&request, "ctx", d->ctx);
    return send_request(d, &request);
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

void la_dialogue(pam_handle_t *pamh, int fd, const struct la_options *options, const struct la_subject *subject,
                 struct la_outcome *outcome) {
    /* ~25 KiB of buffers: on the heap, as a PAM client's thread may have a small stack. */
    struct dialogue *d = calloc(1, sizeof(*d));
    struct la_request request;
    char uid_text[32], reason[512], text[1024];

    if (!d) {
        la_unavailable(outcome, "out-of-memory");
        return;
    }
    d->pamh = pamh;
    d->fd = fd;
    d->debug = options->debug;
    la_reader_init(&d->reader, fd, options->timeout_seconds * 1000);

    /* The on-behalf context (S-42). */
    snprintf(uid_text, sizeof(uid_text), "%u", (unsigned)subject->uid);
    la_request_start(&request, "n", "new");
    la_request_add(&request, "uid", uid_text);
    la_request_add(&request, "service", subject->service);
    if (subject->tty) la_request_add(&request, "tty", subject->tty);
    if (subject->rhost) la_request_add(&request, "rhost", subject->rhost);
    if (send_request(d, &request) != 0) {
        pam_syslog(pamh, LOG_ERR, "Failed to send to localauthd");
        la_unavailable(outcome, "write-error");
        goto done;
    }
    for (;;) {
        if (next_reply(d, outcome) != 0) goto done;
        if (strcmp(d->reply.tag, "n") == 0) break;
    }
    if (d->reply.status != LA_STATUS_OK || !la_field(&d->reply, "ctx") || strlen(la_field(&d->reply, "ctx")) >= sizeof(d->ctx)) {
        pam_syslog(pamh, LOG_ERR, "localauthd refused the context: %s", la_field(&d->reply, "message") ?: "no message");
        la_unavailable(outcome, "refused");
        goto done;
    }
    snprintf(d->ctx, sizeof(d->ctx), "%s", la_field(&d->reply, "ctx"));

    if (options->reason) snprintf(reason, sizeof(reason), "%s", options->reason);
    else snprintf(reason, sizeof(reason), "%s: authenticate as %s", subject->service, subject->user);
    la_request_start(&request, "e", "evaluate");
    la_request_add(&request, "ctx", d->ctx);
    la_request_add(&request, "policy", options->policy);
    la_request_add(&request, "reason", reason);
    if (send_request(d, &request) != 0) {
        la_unavailable(outcome, "write-error");
        goto done;
    }

    for (;;) {
        if (next_reply(d, outcome) != 0) goto done;
        if (strcmp(d->reply.tag, "p") == 0 && d->reply.status == LA_STATUS_ERR) {
            /* The daemon refused the answer (too long for it, say): the
             * prompt still waits, so end the evaluation rather than hang. */
            pam_syslog(pamh, LOG_NOTICE, "localauthd refused the password answer (%s); cancelling",
                       la_field(&d->reply, "name") ?: "?");
            if (send_simple(d, "c", "cancel") != 0) {
                la_unavailable(outcome, "write-error");
                goto done;
            }
            continue;
        }
        if (strcmp(d->reply.tag, "e") != 0) continue; /* OK to `p`/`c`, or `*` lines */
        if (d->reply.status != LA_STATUS_PROMPT) {
            la_map_final(&d->reply, outcome);
            goto done;
        }
        const char *kind = la_field(&d->reply, "kind");
        if (kind && strcmp(kind, "biometric") == 0) {
            show_biometric_prompt(d, reason, text, sizeof(text));
            if (!options->silent && converse(d, PAM_TEXT_INFO, text, NULL) != PAM_SUCCESS) {
                cancel_after_conversation_error(d, outcome);
                goto done;
            }
        } else if (kind && strcmp(kind, "passcode") == 0) {
            const char *message = la_field(&d->reply, "message");
            char *answer = NULL;
            if (message && !options->silent && converse(d, PAM_ERROR_MSG, message, NULL) != PAM_SUCCESS) {
                cancel_after_conversation_error(d, outcome);
                goto done;
            }
            if (converse(d, PAM_PROMPT_ECHO_OFF, "Password: ", &answer) != PAM_SUCCESS) {
                cancel_after_conversation_error(d, outcome);
                goto done;
            }
            if (answer[0] == '\0') {
                /* An empty answer is "Cancel" (S-45). */
                free(answer);
                if (send_simple(d, "c", "cancel") != 0) {
                    la_unavailable(outcome, "write-error");
                    goto done;
                }
                continue;
            }
            la_request_start(&request, "p", "passcode");
            la_request_add(&request, "ctx", d->ctx);
            la_request_add(&request, "secret", answer);
            explicit_bzero(answer, strlen(answer));
            free(answer);
            if (request.overflow) {
                /* Too long for a line, or a control character: not sendable. */
                la_request_wipe(&request);
                pam_syslog(pamh, LOG_NOTICE, "The password cannot be sent (too long or a control character); cancelling");
                if (send_simple(d, "c", "cancel") != 0) {
                    la_unavailable(outcome, "write-error");
                    goto done;
                }
                continue;
            }
            if (send_request(d, &request) != 0) {
                la_unavailable(outcome, "write-error");
                goto done;
            }
        } else {
            pam_syslog(pamh, LOG_ERR, "localauthd sent an unknown prompt kind");
            la_unavailable(outcome, "unexpected-reply");
            goto done;
        }
    }
done:
    explicit_bzero(&request, sizeof(request));
    explicit_bzero(d, sizeof(*d));
    free(d);
}
