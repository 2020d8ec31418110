/* Who asks, for the dialog (S-67): the shared reader of what the kernel
 * holds about the app's process (../CLocalAuthAgent/app_identity.c), run on
 * a thread with a deadline, and the app's name and icon from the .desktop
 * file whose Flatpak id or program is the process's. */
#ifndef LOCALAUTH_AGENT_APPS_H
#define LOCALAUTH_AGENT_APPS_H

#include <gio/gio.h>

#include "../CLocalAuthAgent/include/app_identity.h"

struct agent_app {
    struct la_app_identity identity;
    /* From a matching .desktop file, else the program's file name, else
     * NULL (unknown). Owned. */
    char *name;
    GIcon *icon;
};

/* Reads the identity of the app that asks, then calls `done` in the main
 * loop with it (owned by the callee: agent_app_free); after 1 s without an
 * answer, `done` gets an unknown app and a late answer is dropped. */
void agent_app_read(int32_t pid, uint64_t process, uint32_t uid, void (*done)(struct agent_app *app, void *user),
                    void *user);
void agent_app_free(struct agent_app *app);

#endif
