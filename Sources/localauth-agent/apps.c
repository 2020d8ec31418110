/* Who asks (apps.h). The .desktop match: a Flatpak's id names its file
 * (`ID.desktop`); else the installed applications whose Exec program,
 * found in PATH and resolved, is the file the process runs. Never the
 * app's own words. */
#define _GNU_SOURCE
#include "apps.h"

#include <gio/gdesktopappinfo.h>
#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

struct reading {
    int32_t pid;
    uint64_t process;
    uint32_t uid;
    void (*done)(struct agent_app *, void *);
    void *user;
    gboolean answered;
    gint references;
};

static void reading_unref(struct reading *reading) {
    if (g_atomic_int_dec_and_test(&reading->references)) g_free(reading);
}

static GDesktopAppInfo *desktop_entry(const struct la_app_identity *identity) {
    if (identity->flatpak_id[0]) {
        char *file = g_strconcat(identity->flatpak_id, ".desktop", NULL);
        GDesktopAppInfo *info = g_desktop_app_info_new(file);
        g_free(file);
        if (info) return info;
    }
    if (!identity->known || !identity->exe_verified) return NULL;
    GDesktopAppInfo *found = NULL;
    GList *all = g_app_info_get_all();
    for (GList *item = all; item && !found; item = item->next) {
        if (!G_IS_DESKTOP_APP_INFO(item->data)) continue;
        const char *program = g_app_info_get_executable(G_APP_INFO(item->data));
        if (!program || !program[0]) continue;
        char *path = g_find_program_in_path(program);
        char *resolved = path ? realpath(path, NULL) : NULL;
        if (resolved && strcmp(resolved, identity->exe) == 0) found = g_object_ref(item->data);
        free(resolved);
        g_free(path);
    }
    g_list_free_full(all, g_object_unref);
    return found;
}

static struct agent_app *describe(const struct la_app_identity *identity) {
    struct agent_app *app = g_new0(struct agent_app, 1);
    app->identity = *identity;
    GDesktopAppInfo *info = desktop_entry(identity);
    if (info) {
        app->name = g_strdup(g_app_info_get_display_name(G_APP_INFO(info)));
        GIcon *icon = g_app_info_get_icon(G_APP_INFO(info));
        if (icon) app->icon = g_object_ref(icon);
        g_object_unref(info);
    } else if (identity->known) {
        app->name = g_path_get_basename(identity->exe);
    }
    if (!app->icon) app->icon = g_themed_icon_new(identity->known ? "application-x-executable" : "dialog-question");
    return app;
}

static gboolean deliver(gpointer data) {
    struct agent_app **slot = data;
    struct reading *reading = (struct reading *)slot[1];
    if (!reading->answered) {
        reading->answered = TRUE;
        reading->done(slot[0], reading->user);
    } else {
        agent_app_free(slot[0]);
    }
    reading_unref(reading);
    g_free(slot);
    return G_SOURCE_REMOVE;
}

static gpointer read_thread(gpointer data) {
    struct reading *reading = data;
    struct la_app_identity identity;
    la_app_identity_read(reading->pid, reading->process, reading->uid, &identity);
    struct agent_app **slot = g_new0(struct agent_app *, 2);
    slot[0] = describe(&identity);
    slot[1] = (struct agent_app *)reading;
    g_idle_add(deliver, slot);
    return NULL;
}

static gboolean deadline(gpointer data) {
    struct reading *reading = data;
    if (!reading->answered) {
        reading->answered = TRUE;
        struct la_app_identity identity;
        memset(&identity, 0, sizeof identity);
        g_strlcpy(identity.problem, "its files did not answer in time", sizeof identity.problem);
        reading->done(describe(&identity), reading->user);
    }
    reading_unref(reading);
    return G_SOURCE_REMOVE;
}

void agent_app_read(int32_t pid, uint64_t process, uint32_t uid, void (*done)(struct agent_app *, void *), void *user) {
    struct reading *reading = g_new0(struct reading, 1);
    reading->pid = pid;
    reading->process = process;
    reading->uid = uid;
    reading->done = done;
    reading->user = user;
    reading->references = 2;
    g_timeout_add_seconds(1, deadline, reading);
    g_thread_unref(g_thread_new("app-identity", read_thread, reading));
}

void agent_app_free(struct agent_app *app) {
    if (!app) return;
    g_free(app->name);
    if (app->icon) g_object_unref(app->icon);
    g_free(app);
}
