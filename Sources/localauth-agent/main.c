/* localauth-agent: the desktop's session agent (SEMANTICS.md S-65..S-69),
 * as GNOME Shell's or polkit-kde-agent is polkit's. It registers with
 * localauthd as the agent of the logind session it runs in, and shows the
 * system's dialog for the prompts of that session's apps that asked for it
 * (LAContext does unless it draws its own): who asks, as the kernel says it,
 * what the app says, the finger and the password together. The daemon
 * checks the password and counts every attempt; the agent holds it only
 * while its line is written, then wipes it.
 *
 *   localauth-agent [--socket PATH] [--session ID] [--version]
 *
 * Started by its systemd user unit with the graphical session
 * (localauth-agent.service); exits when the daemon goes away, and the unit
 * starts it again. */
#define _GNU_SOURCE
#include <errno.h>
#include <glib/gi18n.h>
#include <gtk/gtk.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "apps.h"
#include "dialog.h"
#include "link.h"

#ifndef LOCALEDIR
#define LOCALEDIR "/usr/share/locale"
#endif
#ifndef AGENT_VERSION
#define AGENT_VERSION "0"
#endif

struct agent {
    GtkApplication *application;
    struct agent_link *link;
    char register_tag[16];
    gboolean registered;
    /* The request shown, its dialog, and whether a password of it is being checked. */
    char request[32];
    struct agent_dialog *dialog;
    int status;
};

static struct agent agent;
static char *socket_path;
static char *session;

static void quit(int status, const char *why) {
    if (why) g_printerr("localauth-agent: %s\n", why);
    agent.status = status;
    if (agent.dialog) agent_dialog_close(agent.dialog);
    agent.dialog = NULL;
    g_application_quit(G_APPLICATION(agent.application));
}

static void send_simple(const char *verb) {
    if (!agent.request[0]) return;
    const char *pairs[] = {"request", agent.request, NULL};
    if (agent_link_send(agent.link, verb, pairs, NULL) != 0) quit(1, "cannot write to localauthd");
}

static void on_password(const char *password, void *user) {
    (void)user;
    if (agent_link_send_passcode(agent.link, agent.request, password) != 0) {
        /* A control character the protocol cannot carry: say so, keep the dialog. */
        return;
    }
    agent_dialog_checking(agent.dialog);
}

static void on_cancel(void *user) {
    (void)user;
    send_simple("cancel");
}

static void on_fallback(void *user) {
    (void)user;
    send_simple("fallback");
}

static void on_app(struct agent_app *app, void *user) {
    char *request = user;
    if (agent.dialog && strcmp(request, agent.request) == 0) agent_dialog_app(agent.dialog, app);
    agent_app_free(app);
    g_free(request);
}

static int number(const struct agent_reply *reply, const char *key, int fallback) {
    const char *text = agent_field(reply, key);
    if (!text) return fallback;
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    return (errno || *end || value < 0 || value > 1000000000) ? fallback : (int)value;
}

static void on_prompt(const struct agent_reply *reply) {
    const char *request = agent_field(reply, "request"), *kind = agent_field(reply, "kind");
    const char *pid = agent_field(reply, "app-pid"), *uid = agent_field(reply, "app-uid");
    if (!request || !kind || !pid || !uid || strlen(request) >= sizeof agent.request) return;
    if (strcmp(request, agent.request) != 0) {
        /* A new request replaces the one shown (it ends with its own DONE). */
        if (agent.dialog) agent_dialog_close(agent.dialog);
        g_strlcpy(agent.request, request, sizeof agent.request);
        struct agent_dialog_actions actions = {on_password, on_cancel, on_fallback, NULL};
        agent.dialog = agent_dialog_new(agent.application, &actions);
        const char *process = agent_field(reply, "app-process");
        agent_app_read((int32_t)strtol(pid, NULL, 10), process ? g_ascii_strtoull(process, NULL, 10) : 0,
                       (uint32_t)strtoul(uid, NULL, 10), on_app, g_strdup(request));
    }
    struct agent_prompt prompt = {
        .kind = kind,
        .biometry = agent_field(reply, "biometry"),
        .attempt = number(reply, "attempt", 1),
        .attempts_left = number(reply, "attempts-left", -1),
        .retry_after = number(reply, "retry-after", 0),
        .message = agent_field(reply, "message"),
        .reason = agent_field(reply, "reason") ? agent_field(reply, "reason") : "",
        .cancel = agent_field(reply, "cancel"),
        .fallback = agent_field(reply, "fallback"),
    };
    agent_dialog_prompt(agent.dialog, &prompt);
}

static void on_reply(const struct agent_reply *reply, void *user) {
    (void)user;
    if (strcmp(reply->tag, agent.register_tag) == 0) {
        switch (reply->status) {
        case AGENT_OK:
            agent.registered = TRUE;
            g_print("localauth-agent: the authentication agent of session %s\n", agent_field(reply, "session"));
            return;
        case AGENT_ERR: {
            const char *message = agent_field(reply, "message");
            char *why = g_strdup_printf("localauthd refused the registration: %s (%s)", message ? message : "?",
                                        agent_field(reply, "name") ? agent_field(reply, "name") : "?");
            quit(3, why);
            g_free(why);
            return;
        }
        case AGENT_PROMPT:
            return on_prompt(reply);
        case AGENT_DONE:
            if (g_strcmp0(agent_field(reply, "request"), agent.request) == 0) {
                agent_dialog_close(agent.dialog);
                agent.dialog = NULL;
                agent.request[0] = '\0';
            }
            return;
        default:
            return;
        }
    }
    if (reply->status == AGENT_BYE) quit(4, "localauthd is closing the connection");
    /* Answers to its passcode/cancel/fallback: an error means the request ended meanwhile. */
}

static void on_closed(const char *why, void *user) {
    (void)user;
    quit(4, why);
}

static void activate(GtkApplication *application, gpointer data) {
    (void)data;
    if (agent.link) return;
    GError *error = NULL;
    agent.link = agent_link_open(socket_path, on_reply, on_closed, NULL, &error);
    if (!agent.link) {
        quit(4, error->message);
        g_error_free(error);
        return;
    }
    const char *pairs[] = {"session", session, NULL};
    if (agent_link_send(agent.link, "register-agent", session ? pairs : NULL, agent.register_tag) != 0) {
        quit(4, "cannot write to localauthd");
        return;
    }
    /* No window until a prompt comes: the application stays up for the session. */
    g_application_hold(G_APPLICATION(application));
}

int main(int argc, char **argv) {
    setlocale(LC_ALL, "");
    /* Its lines (the registration, LOCALAUTH_AGENT_TRACE) reach a pipe at once. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    bindtextdomain(GETTEXT_PACKAGE, LOCALEDIR);
    bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
    textdomain(GETTEXT_PACKAGE);
    /* It holds passwords: no core dump, no same-uid ptrace. */
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

    gboolean version = FALSE;
    GOptionEntry entries[] = {
        {"socket", 0, 0, G_OPTION_ARG_FILENAME, &socket_path, N_("localauthd's socket (default: $LOCALAUTHD_SOCKET, else /run/localauthd/socket)"), N_("PATH")},
        {"session", 0, 0, G_OPTION_ARG_STRING, &session, N_("the logind session to register for (default: this process's)"), N_("ID")},
        {"version", 0, 0, G_OPTION_ARG_NONE, &version, N_("print the version"), NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GError *error = NULL;
    GOptionContext *options = g_option_context_new(NULL);
    g_option_context_set_summary(options, _("The desktop's authentication agent for localauthd."));
    g_option_context_add_main_entries(options, entries, GETTEXT_PACKAGE);
    if (!g_option_context_parse(options, &argc, &argv, &error)) {
        g_printerr("localauth-agent: %s\nTry 'localauth-agent --help'.\n", error->message);
        return 2;
    }
    g_option_context_free(options);
    if (version) {
        printf("localauth-agent %s\n", AGENT_VERSION);
        return 0;
    }
    if (!socket_path) {
        const char *environment = getenv("LOCALAUTHD_SOCKET");
        socket_path = g_strdup(environment && environment[0] ? environment : "/run/localauthd/socket");
    }
    /* Not unique: one agent per session is the daemon's rule, not D-Bus's. */
    agent.application = gtk_application_new("io.github.localauthd.Agent", G_APPLICATION_NON_UNIQUE);
    g_signal_connect(agent.application, "activate", G_CALLBACK(activate), NULL);
    char *arguments[] = {argv[0], NULL};
    g_application_run(G_APPLICATION(agent.application), 1, arguments);
    agent_link_free(agent.link);
    g_object_unref(agent.application);
    return agent.status;
}
