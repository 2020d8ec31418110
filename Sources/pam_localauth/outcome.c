/* S-45's table. Only an `OK` final reply to the evaluation is PAM_SUCCESS;
 * every other path, including codes this build does not know, maps to a
 * failure. "Unavailable" (no sensor, nothing enrolled, no passcode, the
 * daemon unreachable, refusing or shutting down) is PAM_AUTHINFO_UNAVAIL so
 * that a stack with `authinfo_unavail=ignore` falls through to pam_unix. */
#include "outcome.h"

#include <security/pam_modules.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set(struct la_outcome *outcome, int pam, const char *result, const char *message) {
    outcome->pam = pam;
    outcome->result = result;
    snprintf(outcome->message, sizeof(outcome->message), "%s", message ? message : "");
}

void la_unavailable(struct la_outcome *outcome, const char *result) {
    set(outcome, PAM_AUTHINFO_UNAVAIL, result, "");
}

/* A decimal integer that is the whole string, or `fallback`. */
static long number(const char *text, long fallback) {
    char *end = NULL;
    long value;
    if (!text || !*text) return fallback;
    value = strtol(text, &end, 10);
    return (end && *end == '\0') ? value : fallback;
}

static void delay_message(struct la_outcome *outcome, long seconds) {
    if (seconds >= 120)
        snprintf(outcome->message, sizeof(outcome->message),
                 "Too many failed attempts: try again in %ld minutes.", (seconds + 59) / 60);
    else
        snprintf(outcome->message, sizeof(outcome->message),
                 "Too many failed attempts: try again in %ld seconds.", seconds);
}

void la_map_final(const struct la_reply *reply, struct la_outcome *outcome) {
    const char *domain = la_field(reply, "domain");
    const char *reason;
    long code, retry;

    if (reply->status == LA_STATUS_OK) {
        set(outcome, PAM_SUCCESS, "success", "");
        return;
    }
    if (reply->status != LA_STATUS_ERR) {
        la_unavailable(outcome, "unexpected-reply");
        return;
    }
    if (!domain || strcmp(domain, "la") != 0) {
        /* Protocol errors: the daemon refuses (permission-denied when not
         * root, unavailable while its log cannot record, limits...). */
        la_unavailable(outcome, "refused");
        return;
    }
    code = number(la_field(reply, "code"), 0);
    retry = number(la_field(reply, "retry-after"), 0);
    reason = la_field(reply, "reason");

    switch (code) {
    case -1: /* authenticationFailed */
        if (reason && strcmp(reason, "admin-locked") == 0) {
            set(outcome, PAM_MAXTRIES, "locked",
                "Too many failed attempts: locked until an administrator resets it (localauthctl reset).");
        } else if (retry > 0) {
            set(outcome, PAM_MAXTRIES, "delay", "");
            delay_message(outcome, retry);
        } else {
            set(outcome, PAM_AUTH_ERR, "failed", "");
        }
        return;
    case -8: /* biometryLockout */
        set(outcome, PAM_MAXTRIES, "biometry-locked",
            reason && strcmp(reason, "passcode-required") == 0
                ? "The password is required before the fingerprint can be used again."
                : "Fingerprint locked after too many failed attempts; the password unlocks it.");
        return;
    case -4: /* systemCancel: timeout, preempted... but a daemon shutting down is unavailable */
        if (reason && (strcmp(reason, "shutdown") == 0 || strcmp(reason, "restart") == 0))
            la_unavailable(outcome, "shutdown");
        else
            set(outcome, PAM_AUTH_ERR, reason && strcmp(reason, "timeout") == 0 ? "timeout" : "cancelled", "");
        return;
    case -2:  /* userCancel */
    case -3:  /* userFallback */
    case -9:  /* appCancel */
    case -10: /* invalidContext */
        set(outcome, PAM_AUTH_ERR, "cancelled", "");
        return;
    case -5:    /* passcodeNotSet */
    case -6:    /* biometryNotAvailable */
    case -7:    /* biometryNotEnrolled */
    case -11:   /* companionNotAvailable */
    case -12:   /* biometryNotPaired */
    case -13:   /* biometryDisconnected */
    case -1004: /* notInteractive */
        la_unavailable(outcome, "unavailable");
        return;
    default:
        /* An LAError this build does not know: a failure, never a success. */
        set(outcome, PAM_AUTH_ERR, "failed", "");
        return;
    }
}
