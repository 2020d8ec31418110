/* The dialog (dialog.h). The password lives in GTK's GtkPasswordEntry,
 * whose buffer (GtkPasswordEntryBuffer) is secure memory: locked against
 * swapping and zeroed when freed. Clearing it moves only the NUL, so the
 * dialog first overwrites the text with as many filler characters, then
 * clears it, then the window is destroyed, which frees the buffer. */
#define _GNU_SOURCE
#include "dialog.h"

#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

#include "display.h"

/* LOCALAUTH_AGENT_TRACE=1: one line on standard output each time the
 * dialog changes, saying what it shows (the tests read it; an X screen has
 * no text to read back). Never the password. */
static void trace(struct agent_dialog *dialog);

struct agent_dialog {
    GtkWidget *window;
    GtkWidget *icon, *name, *program, *reason, *state, *error, *entry, *cancel, *fallback, *confirm;
    struct agent_dialog_actions actions;
    gboolean takes_password;
};

/* Overwrites the entry's text in its buffer, then empties it. */
static void wipe_entry(struct agent_dialog *dialog) {
    const char *text = gtk_editable_get_text(GTK_EDITABLE(dialog->entry));
    size_t length = text ? strlen(text) : 0;
    if (length > 0) {
        char *filler = g_malloc(length + 1);
        memset(filler, 'x', length);
        filler[length] = '\0';
        gtk_editable_set_text(GTK_EDITABLE(dialog->entry), filler);
        g_free(filler);
    }
    gtk_editable_set_text(GTK_EDITABLE(dialog->entry), "");
}

static void submit(struct agent_dialog *dialog) {
    if (!dialog->takes_password || !gtk_widget_get_sensitive(dialog->entry)) return;
    const char *text = gtk_editable_get_text(GTK_EDITABLE(dialog->entry));
    if (!text || !text[0]) return;
    dialog->actions.password(text, dialog->actions.user);
    wipe_entry(dialog);
}

static void on_activate(GtkWidget *widget, gpointer data) {
    (void)widget;
    submit(data);
}

static void on_cancel(GtkWidget *widget, gpointer data) {
    (void)widget;
    struct agent_dialog *dialog = data;
    dialog->actions.cancel(dialog->actions.user);
}

static void on_fallback(GtkWidget *widget, gpointer data) {
    (void)widget;
    struct agent_dialog *dialog = data;
    dialog->actions.fallback(dialog->actions.user);
}

static gboolean on_close_request(GtkWindow *window, gpointer data) {
    (void)window;
    struct agent_dialog *dialog = data;
    dialog->actions.cancel(dialog->actions.user);
    return TRUE;  /* the daemon's DONE closes it */
}

static gboolean on_escape(GtkWidget *widget, GVariant *arguments, gpointer data) {
    (void)widget;
    (void)arguments;
    on_cancel(NULL, data);
    return TRUE;
}

/* Text the dialog did not write (the app's words, the names of the app) in
 * GLib's memory, escaped (display.h, S-69): g_free() it. */
static char *shown_text(const char *text) {
    char *escaped = agent_display_text(text ? text : "");
    char *copy = g_strdup(escaped ? escaped : "");
    free(escaped);
    return copy;
}

static void set_shown_label(GtkWidget *widget, const char *text) {
    char *escaped = shown_text(text);
    gtk_label_set_text(GTK_LABEL(widget), escaped);
    g_free(escaped);
}

static GtkWidget *label(const char *css_class, gboolean wrap) {
    GtkWidget *widget = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(widget), 0);
    gtk_label_set_wrap(GTK_LABEL(widget), wrap);
    gtk_label_set_max_width_chars(GTK_LABEL(widget), 48);
    if (css_class) gtk_widget_add_css_class(widget, css_class);
    return widget;
}

struct agent_dialog *agent_dialog_new(GtkApplication *application, const struct agent_dialog_actions *actions) {
    struct agent_dialog *dialog = g_new0(struct agent_dialog, 1);
    dialog->actions = *actions;
    dialog->window = gtk_application_window_new(application);
    gtk_window_set_title(GTK_WINDOW(dialog->window), _("Authentication Required"));
    gtk_window_set_resizable(GTK_WINDOW(dialog->window), FALSE);
    gtk_window_set_default_size(GTK_WINDOW(dialog->window), 440, -1);
    g_signal_connect(dialog->window, "close-request", G_CALLBACK(on_close_request), dialog);

    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
    gtk_widget_set_margin_start(box, 24);
    gtk_widget_set_margin_end(box, 24);
    gtk_widget_set_margin_top(box, 24);
    gtk_widget_set_margin_bottom(box, 24);
    gtk_window_set_child(GTK_WINDOW(dialog->window), box);

    GtkWidget *head = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    dialog->icon = gtk_image_new_from_icon_name("dialog-password");
    gtk_image_set_pixel_size(GTK_IMAGE(dialog->icon), 48);
    gtk_box_append(GTK_BOX(head), dialog->icon);
    GtkWidget *who = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    dialog->name = label("title-3", TRUE);
    gtk_label_set_text(GTK_LABEL(dialog->name), _("An application wants you to authenticate"));
    dialog->program = label("dim-label", TRUE);
    gtk_label_set_selectable(GTK_LABEL(dialog->program), TRUE);
    gtk_box_append(GTK_BOX(who), dialog->name);
    gtk_box_append(GTK_BOX(who), dialog->program);
    gtk_box_append(GTK_BOX(head), who);
    gtk_box_append(GTK_BOX(box), head);

    GtkWidget *says = label("caption-heading", FALSE);
    gtk_label_set_text(GTK_LABEL(says), _("The application says:"));
    gtk_box_append(GTK_BOX(box), says);
    dialog->reason = label(NULL, TRUE);
    gtk_widget_set_margin_start(dialog->reason, 12);
    gtk_box_append(GTK_BOX(box), dialog->reason);

    dialog->state = label("heading", TRUE);
    gtk_box_append(GTK_BOX(box), dialog->state);
    dialog->entry = gtk_password_entry_new();
    gtk_password_entry_set_show_peek_icon(GTK_PASSWORD_ENTRY(dialog->entry), TRUE);
    g_object_set(dialog->entry, "placeholder-text", _("Password"), "activates-default", TRUE, NULL);
    gtk_accessible_update_property(GTK_ACCESSIBLE(dialog->entry), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Password"), -1);
    g_signal_connect(dialog->entry, "activate", G_CALLBACK(on_activate), dialog);
    gtk_box_append(GTK_BOX(box), dialog->entry);
    dialog->error = label("error", TRUE);
    gtk_box_append(GTK_BOX(box), dialog->error);

    GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_widget_set_halign(buttons, GTK_ALIGN_END);
    dialog->fallback = gtk_button_new();
    g_signal_connect(dialog->fallback, "clicked", G_CALLBACK(on_fallback), dialog);
    dialog->cancel = gtk_button_new_with_mnemonic(_("_Cancel"));
    g_signal_connect(dialog->cancel, "clicked", G_CALLBACK(on_cancel), dialog);
    dialog->confirm = gtk_button_new_with_mnemonic(_("_Authenticate"));
    gtk_widget_add_css_class(dialog->confirm, "suggested-action");
    g_signal_connect_swapped(dialog->confirm, "clicked", G_CALLBACK(submit), dialog);
    gtk_box_append(GTK_BOX(buttons), dialog->fallback);
    gtk_box_append(GTK_BOX(buttons), dialog->cancel);
    gtk_box_append(GTK_BOX(buttons), dialog->confirm);
    gtk_box_append(GTK_BOX(box), buttons);
    gtk_window_set_default_widget(GTK_WINDOW(dialog->window), dialog->confirm);

    GtkEventController *keys = gtk_shortcut_controller_new();
    gtk_shortcut_controller_add_shortcut(GTK_SHORTCUT_CONTROLLER(keys),
        gtk_shortcut_new(gtk_keyval_trigger_new(GDK_KEY_Escape, 0), gtk_callback_action_new(on_escape, dialog, NULL)));
    gtk_widget_add_controller(dialog->window, keys);
    return dialog;
}

/* The fingerprint state line for a prompt that reads the finger. */
static const char *finger_state(const struct agent_prompt *prompt) {
    const char *message = prompt->message;
    if (message && strstr(message, "locked out")) return _("Locked out: use your password");
    if (message && strcmp(message, "Try again.") == 0) return _("Try again");
    if (message && strcmp(message, "Wrong passcode.") != 0) return message;
    if (g_strcmp0(prompt->biometry, "faceID") == 0) return _("Look at the camera");
    if (g_strcmp0(prompt->biometry, "opticID") == 0) return _("Look at the sensor");
    return _("Touch the sensor");
}

void agent_dialog_prompt(struct agent_dialog *dialog, const struct agent_prompt *prompt) {
    gboolean reads_finger = strcmp(prompt->kind, "passcode") != 0;
    dialog->takes_password = strcmp(prompt->kind, "biometric") != 0;

    set_shown_label(dialog->reason, prompt->reason);
    if (reads_finger) {
        set_shown_label(dialog->state, finger_state(prompt));
    } else if (prompt->message && strstr(prompt->message, "locked out")) {
        gtk_label_set_text(GTK_LABEL(dialog->state), _("Locked out: use your password"));
    } else {
        gtk_label_set_text(GTK_LABEL(dialog->state), _("Enter your password"));
    }

    char *error = NULL;
    if (prompt->retry_after > 0) {
        error = g_strdup_printf(_("Password entry is disabled for %d s."), prompt->retry_after);
    } else if (prompt->message && strcmp(prompt->message, "Wrong passcode.") == 0) {
        error = prompt->attempts_left >= 0
            ? g_strdup_printf(ngettext("Wrong password. %d attempt left.", "Wrong password. %d attempts left.",
                                       (unsigned long)prompt->attempts_left), prompt->attempts_left)
            : g_strdup(_("Wrong password."));
    }
    gtk_label_set_text(GTK_LABEL(dialog->error), error ? error : "");
    gtk_widget_set_visible(dialog->error, error != NULL);
    g_free(error);

    gtk_widget_set_visible(dialog->entry, dialog->takes_password);
    gtk_widget_set_visible(dialog->confirm, dialog->takes_password);
    gtk_widget_set_sensitive(dialog->entry, TRUE);
    gtk_widget_set_sensitive(dialog->confirm, TRUE);
    /* The app's titles: its words, as plain labels (no mnemonics). */
    gboolean default_cancel = !prompt->cancel || strcmp(prompt->cancel, "Cancel") == 0;
    if (default_cancel) gtk_button_set_use_underline(GTK_BUTTON(dialog->cancel), TRUE);
    else gtk_button_set_use_underline(GTK_BUTTON(dialog->cancel), FALSE);
    char *cancel = default_cancel ? g_strdup(_("_Cancel")) : shown_text(prompt->cancel);
    gtk_button_set_label(GTK_BUTTON(dialog->cancel), cancel);
    g_free(cancel);
    gtk_widget_set_visible(dialog->fallback, prompt->fallback != NULL);
    if (prompt->fallback) {
        char *fallback = shown_text(prompt->fallback);
        gtk_button_set_label(GTK_BUTTON(dialog->fallback), fallback);
        g_free(fallback);
    }

    gtk_window_present(GTK_WINDOW(dialog->window));
    if (dialog->takes_password) gtk_widget_grab_focus(dialog->entry);
    else gtk_widget_grab_focus(prompt->fallback ? dialog->fallback : dialog->cancel);
    trace(dialog);
}

static void trace(struct agent_dialog *dialog) {
    if (!g_getenv("LOCALAUTH_AGENT_TRACE")) return;
    const struct { const char *name; GtkWidget *widget; } shown[] = {
        {"name", dialog->name}, {"program", dialog->program}, {"reason", dialog->reason}, {"state", dialog->state},
        {"error", dialog->error},
    };
    GString *line = g_string_new("dialog");
    for (size_t k = 0; k < G_N_ELEMENTS(shown); k++) {
        char *escaped = g_strescape(gtk_label_get_text(GTK_LABEL(shown[k].widget)), NULL);
        g_string_append_printf(line, " %s=\"%s\"", shown[k].name, escaped);
        g_free(escaped);
    }
    /* The icon by its name (a themed icon) or its file, as GIO writes it. */
    GIcon *icon = gtk_image_get_gicon(GTK_IMAGE(dialog->icon));
    char *icon_name = icon ? g_icon_to_string(icon) : NULL;
    char *escaped_icon = g_strescape(icon_name ? icon_name : "-", NULL);
    g_string_append_printf(line, " icon=\"%s\"", escaped_icon);
    g_free(escaped_icon);
    g_free(icon_name);
    g_string_append_printf(line, " password=%s cancel=\"%s\" fallback=%s", dialog->takes_password ? "shown" : "hidden",
                           gtk_button_get_label(GTK_BUTTON(dialog->cancel)),
                           gtk_widget_get_visible(dialog->fallback) ? gtk_button_get_label(GTK_BUTTON(dialog->fallback)) : "-");
    g_print("%s\n", line->str);
    g_string_free(line, TRUE);
}

void agent_dialog_app(struct agent_dialog *dialog, const struct agent_app *app) {
    if (app->icon) gtk_image_set_from_gicon(GTK_IMAGE(dialog->icon), app->icon);
    /* A .desktop name and a program's path are chosen by whoever installed
     * the app, and shown escaped as the app's words are. */
    char *name = app->name ? shown_text(app->name) : NULL;
    char *heading = name ? g_strdup_printf(_("%s wants you to authenticate"), name)
                         : g_strdup(_("An unknown application wants you to authenticate"));
    gtk_label_set_text(GTK_LABEL(dialog->name), heading);
    g_free(heading);
    g_free(name);
    const struct la_app_identity *identity = &app->identity;
    char *exe = shown_text(identity->exe), *flatpak = shown_text(identity->flatpak_id);
    char *detail;
    if (!identity->known) {
        detail = g_strdup_printf(_("Unknown program: %s"), identity->problem);
    } else if (identity->flatpak_id[0]) {
        detail = g_strdup_printf(_("%s (Flatpak %s)"), exe, flatpak);
    } else if (!identity->exe_verified) {
        detail = g_strdup_printf(_("%s (inside its own file system)"), exe);
    } else {
        detail = g_strdup(exe);
    }
    gtk_label_set_text(GTK_LABEL(dialog->program), detail);
    g_free(detail);
    g_free(exe);
    g_free(flatpak);
    trace(dialog);
}

void agent_dialog_checking(struct agent_dialog *dialog) {
    gtk_widget_set_sensitive(dialog->entry, FALSE);
    gtk_widget_set_sensitive(dialog->confirm, FALSE);
    gtk_label_set_text(GTK_LABEL(dialog->error), _("Checking…"));
    gtk_widget_set_visible(dialog->error, TRUE);
    trace(dialog);
}

void agent_dialog_close(struct agent_dialog *dialog) {
    if (!dialog) return;
    wipe_entry(dialog);
    gtk_window_destroy(GTK_WINDOW(dialog->window));
    g_free(dialog);
}
