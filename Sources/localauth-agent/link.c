/* The connection (link.h). */
#define _GNU_SOURCE
#include "link.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct agent_link {
    int fd;
    guint watch;
    unsigned counter;
    agent_reply_cb on_reply;
    agent_closed_cb on_closed;
    void *user;
    size_t have;
    char inbox[AGENT_MAX_LINE];
    struct agent_reply reply;
};

static gboolean readable(gint fd, GIOCondition condition, gpointer data) {
    struct agent_link *link = data;
    (void)condition;
    ssize_t n = recv(fd, link->inbox + link->have, sizeof link->inbox - link->have, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return G_SOURCE_CONTINUE;
    if (n <= 0) {
        link->watch = 0;
        link->on_closed(n == 0 ? "localauthd closed the connection" : strerror(errno), link->user);
        return G_SOURCE_REMOVE;
    }
    link->have += (size_t)n;
    for (;;) {
        char *newline = memchr(link->inbox, '\n', link->have);
        if (!newline) break;
        size_t length = (size_t)(newline - link->inbox);
        if (agent_parse_reply(link->inbox, length, &link->reply) == 0) link->on_reply(&link->reply, link->user);
        memmove(link->inbox, newline + 1, link->have - length - 1);
        link->have -= length + 1;
    }
    if (link->have == sizeof link->inbox) {
        link->watch = 0;
        link->on_closed("a line from localauthd is longer than 32768 bytes", link->user);
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

struct agent_link *agent_link_open(const char *socket_path, agent_reply_cb on_reply, agent_closed_cb on_closed,
                                   void *user, GError **error) {
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    if (strlen(socket_path) >= sizeof address.sun_path) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "the socket path is too long: %s", socket_path);
        return NULL;
    }
    strcpy(address.sun_path, socket_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int saved = errno;
        if (fd >= 0) close(fd);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved), "cannot connect to localauthd at %s: %s", socket_path,
                    strerror(saved));
        return NULL;
    }
    struct agent_link *link = g_new0(struct agent_link, 1);
    link->fd = fd;
    link->on_reply = on_reply;
    link->on_closed = on_closed;
    link->user = user;
    link->watch = g_unix_fd_add(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, readable, link);
    return link;
}

void agent_link_free(struct agent_link *link) {
    if (!link) return;
    if (link->watch) g_source_remove(link->watch);
    close(link->fd);
    link->fd = -1;
    explicit_bzero(link->inbox, sizeof link->inbox);
    g_free(link);
}

static int write_all(struct agent_link *link, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t n = send(link->fd, bytes, length, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        bytes += n;
        length -= (size_t)n;
    }
    return 0;
}

int agent_link_send(struct agent_link *link, const char *verb, const char *const *pairs, char *tag) {
    char own[16], line[4096];
    snprintf(own, sizeof own, "g%u", ++link->counter);
    if (tag) memcpy(tag, own, sizeof own);
    ssize_t length = agent_request(line, sizeof line, own, verb, pairs);
    if (length < 0) return -1;
    return write_all(link, line, (size_t)length);
}

int agent_link_send_passcode(struct agent_link *link, const char *request, const char *secret) {
    /* Built where it will not be swapped out, and wiped once written. */
    size_t size = 2 * strlen(secret) + 256;
    char *line = g_malloc(size);
    (void)mlock(line, size);
    char tag[16];
    snprintf(tag, sizeof tag, "g%u", ++link->counter);
    const char *pairs[] = {"request", request, "secret", secret, NULL};
    ssize_t length = agent_request(line, size, tag, "passcode", pairs);
    int rc = length < 0 ? -1 : write_all(link, line, (size_t)length);
    explicit_bzero(line, size);
    (void)munlock(line, size);
    g_free(line);
    return rc;
}
