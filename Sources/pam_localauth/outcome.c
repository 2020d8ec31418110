/* S-45's table. Only an `OK` final reply to the evaluation is PAM_SUCCESS;
 * every other path, including codes this build does not know, maps to a
 * failure. "Unavailable" (no sensor, nothing enrolled, no passcode, the
 * daemon unreachable, unable to act or shutting down) is
 * PAM_AUTHINFO_UNAVAIL so that a stack with `authinfo_unavail=ignore` falls
 * through to pam_unix; a refusal for the daemon's limits is not (S-53). */
#include "outcome.h"

#include <security/pam_modules.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void set(struct la_outcome *outcome, int pam, const char *result, const char *message) {
    outcome->notice[0] = '\0';
    outcome->pam = pam;
    outcome->result = result;
    snprintf(outcome->message, sizeof(outcome->message), "%s", message ? message : "");
}

static long number(const char *text, long fallback);

void la_timed_out(struct la_outcome *outcome) {
    set(outcome, PAM_AUTH_ERR, "timeout", "");
}

void la_unavailable(struct la_outcome *outcome, const char *result) {
    set(outcome, PAM_AUTHINFO_UNAVAIL, result, "");
}

/* S-53's amendment of S-45: a daemon that is there and refuses this request
 * for its limits (limit-exceeded, busy, or a connection closed with
 * `BYE reason=limit`) has judged it; falling through would turn every such
 * refusal into a password check no delay counts (a user who spends their
 * own budget, then runs `su root`). That is a failure. Only a daemon that
 * cannot act at all (unreachable, its log failed, backends not for PAM:
 * unavailable, permission-denied) lets the stack fall through. */
void la_map_refusal(const struct la_reply *reply, struct la_outcome *outcome) {
    const char *name = la_field(reply, "name");
    const char *reason = la_field(reply, "reason");
    int load = (name && (strcmp(name, "limit-exceeded") == 0 || strcmp(name, "busy") == 0)) ||
               (reply->status == LA_STATUS_BYE && reason && strcmp(reason, "limit") == 0);
    if (load)
        set(outcome, PAM_AUTH_ERR, "refused-load", "The authentication service is busy; try again in a moment.");
    else
        la_unavailable(outcome, "refused");
}

int la_test_backends(const struct la_reply *hello) {
    const char *sensor = la_field(hello, "sensor-backend");
    const char *passcode = la_field(hello, "passcode-backend");
    if (!sensor || !passcode) return 1;
    if (strcmp(sensor, "none") != 0 && strcmp(sensor, "fprintd") != 0) return 1;
    return strcmp(passcode, "shadow") != 0;
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
        la_failure_notice(reply, (long)time(NULL), outcome->notice, sizeof(outcome->notice));
        return;
    }
    if (reply->status != LA_STATUS_ERR) {
        la_unavailable(outcome, "unexpected-reply");
        return;
    }
    if (!domain || strcmp(domain, "la") != 0) {
        /* Protocol errors: the daemon refuses (permission-denied when not
         * root, unavailable while its log cannot record, limits...). */
        la_map_refusal(reply, outcome);
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

/* "N thing" or "N things". */
static size_t counted(char *text, size_t size, long n, const char *one, const char *many) {
    int written = snprintf(text, size, "%ld %s", n, n == 1 ? one : many);
    return written < 0 ? 0 : (size_t)written < size ? (size_t)written : size - 1;
}

void la_failure_notice(const struct la_reply *reply, long now, char *text, size_t size) {
    long counts[3] = { number(la_field(reply, "failed-biometric"), 0), number(la_field(reply, "failed-passcode"), 0),
                       number(la_field(reply, "refused-passcode"), 0) };
    static const char *const one[3] = { "failed fingerprint attempt", "wrong password", "password attempt during a delay" };
    static const char *const many[3] = { "failed fingerprint attempts", "wrong passwords", "password attempts during a delay" };
    const char *service = la_field(reply, "last-failed-service");
    const char *tty = la_field(reply, "last-failed-tty");
    const char *rhost = la_field(reply, "last-failed-rhost");
    long at = number(la_field(reply, "last-failed-at"), 0);
    int parts = 0, said = 0;
    size_t used = 0;

    text[0] = '\0';
    if (size < 2) return;
    for (int i = 0; i < 3; i++)
        if (counts[i] > 0) parts++;
    if (parts == 0) return;
    for (int i = 0; i < 3 && used + 1 < size; i++) {
        if (counts[i] <= 0) continue;
        if (said > 0) used += (size_t)snprintf(text + used, size - used, "%s", said == parts - 1 ? " and " : ", ");
        if (used + 1 >= size) break;
        used += counted(text + used, size - used, counts[i], one[i], many[i]);
        said++;
    }
    if (used + 1 < size) used += (size_t)snprintf(text + used, size - used, " since your last sign-in");
    if (at > 0 && used + 1 < size) {
        time_t when = (time_t)at, today = (time_t)now;
        struct tm local, current;
        char clock[32] = "";
        if (localtime_r(&when, &local) && localtime_r(&today, &current)) {
            if (local.tm_year == current.tm_year && local.tm_yday == current.tm_yday)
                strftime(clock, sizeof(clock), "at %H:%M", &local);
            else
                strftime(clock, sizeof(clock), "on %Y-%m-%d at %H:%M", &local);
            used += (size_t)snprintf(text + used, size - used, ", the last %s", clock);
        }
    }
    if (service && used + 1 < size) used += (size_t)snprintf(text + used, size - used, " via %s", service);
    if (tty && used + 1 < size) {
        if (strncmp(tty, "/dev/", 5) == 0) tty += 5;
        used += (size_t)snprintf(text + used, size - used, " on %s", tty);
    }
    if (rhost && used + 1 < size) used += (size_t)snprintf(text + used, size - used, " from %s", rhost);
    if (used + 1 < size) snprintf(text + used, size - used, ".");
}
