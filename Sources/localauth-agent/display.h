/* The one escaping of the text the desktop agent shows that it did not
 * write itself (S-69): the app's reason and titles, and what names the app
 * (its program's path, its .desktop name, a Flatpak id). As the terminal
 * agent's DisplayText: every C0 control, DEL, every C1 control, the
 * Unicode bidi controls (ALM, LRM, RLM, LRE..RLO, LRI..PDI) and the line
 * and paragraph separators are shown as `\uXXXX`, and a byte that is not
 * UTF-8 as `\xNN`, so that no string can add a line to the dialog, reorder
 * what it reads, or pose as the dialog's own words. Pure C: the tests
 * drive it without GTK. */
#ifndef LOCALAUTH_AGENT_DISPLAY_H
#define LOCALAUTH_AGENT_DISPLAY_H

/* `text` escaped, in a new buffer for free(), or NULL when out of memory. */
char *agent_display_text(const char *text);

#endif
