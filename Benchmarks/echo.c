/*
 * echo.c: the limit for figure 1 (docs/BENCHMARKS.md). A line server that
 * does no work: one thread, epoll (level-triggered), a Unix socket; every
 * LF-terminated line read is answered with the same fixed reply. It pays
 * what any server of this design must pay (epoll_wait, read, send, the
 * wakeups) and nothing else, so `ours / limit` says how much of a request's
 * cost is localauthd's own work.
 *
 *   echo SOCKET [REPLY]    (REPLY without its LF; default: a can-evaluate
 *                           success of localauthd's length)
 *
 * Built by scripts/bench with `cc -O2`. Like the daemon it reads once per
 * readiness (64 KiB) and answers a read's lines with one send.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_FDS 65536
#define READ_SIZE 65536

/* Replies not yet sent when a send(2) would block (never, with the clients
 * of scripts/bench, but a limit that drops replies would not be one). */
struct pending {
    char *bytes;
    size_t length;
    size_t capacity;
};

static struct pending pending[MAX_FDS];
static char reply[512];
static size_t reply_length;
static char *out;
static size_t out_capacity;

static void die(const char *what) {
    fprintf(stderr, "echo: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void keep(int fd, const char *bytes, size_t length) {
    struct pending *p = &pending[fd];
    if (p->length + length > p->capacity) {
        p->capacity = (p->length + length) * 2;
        p->bytes = realloc(p->bytes, p->capacity);
        if (!p->bytes) die("realloc");
    }
    memcpy(p->bytes + p->length, bytes, length);
    p->length += length;
}

/* Sends what it can; keeps the rest. Returns -1 when the peer is gone. */
static int flush(int epoll, int fd, const char *bytes, size_t length) {
    size_t sent = 0;
    while (sent < length) {
        ssize_t n = send(fd, bytes + sent, length - sent, MSG_NOSIGNAL);
        if (n > 0) { sent += (size_t)n; continue; }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {
            keep(fd, bytes + sent, length - sent);
            struct epoll_event event = { .events = EPOLLIN | EPOLLOUT, .data.fd = fd };
            epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event);
            return 0;
        }
        return -1;
    }
    return 0;
}

static void drop(int epoll, int fd) {
    epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    pending[fd].length = 0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: echo SOCKET [REPLY]\n"); return 2; }
    const char *text = argc > 2 ? argv[2]
        : "r OK biometry=touchID domain-state=0123456789abcdef0123456789abcdef";
    reply_length = strlen(text) + 1;
    if (reply_length > sizeof reply) { fprintf(stderr, "echo: reply too long\n"); return 2; }
    memcpy(reply, text, reply_length - 1);
    reply[reply_length - 1] = '\n';
    signal(SIGPIPE, SIG_IGN);

    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listener < 0) die("socket");
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    if (strlen(argv[1]) >= sizeof address.sun_path) { fprintf(stderr, "echo: path too long\n"); return 2; }
    strcpy(address.sun_path, argv[1]);
    unlink(argv[1]);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) < 0) die("bind");
    if (listen(listener, 4096) < 0) die("listen");
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) die("epoll_create1");
    struct epoll_event event = { .events = EPOLLIN, .data.fd = listener };
    if (epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event) < 0) die("epoll_ctl");

    static char input[READ_SIZE];
    struct epoll_event events[256];
    for (;;) {
        int ready = epoll_wait(epoll, events, 256, -1);
        if (ready < 0) { if (errno == EINTR) continue; die("epoll_wait"); }
        for (int i = 0; i < ready; i++) {
            int fd = events[i].data.fd;
            if (fd == listener) {
                int client;
                while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    if (client >= MAX_FDS) { close(client); continue; }
                    struct epoll_event added = { .events = EPOLLIN, .data.fd = client };
                    epoll_ctl(epoll, EPOLL_CTL_ADD, client, &added);
                }
                continue;
            }
            if (events[i].events & EPOLLOUT) {
                struct pending *p = &pending[fd];
                size_t length = p->length;
                p->length = 0;
                struct epoll_event in = { .events = EPOLLIN, .data.fd = fd };
                epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &in);
                /* keep() may append to the same buffer: send from a copy. */
                char *copy = malloc(length ? length : 1);
                memcpy(copy, p->bytes, length);
                int gone = flush(epoll, fd, copy, length);
                free(copy);
                if (gone < 0) { drop(epoll, fd); continue; }
            }
            if (!(events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
            ssize_t n = read(fd, input, sizeof input);
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (n <= 0) { drop(epoll, fd); continue; }
            size_t lines = 0;
            for (char *at = input, *end = input + n; (at = memchr(at, '\n', (size_t)(end - at))); at++) lines++;
            if (lines == 0) continue;
            if (lines * reply_length > out_capacity) {
                out_capacity = lines * reply_length * 2;
                out = realloc(out, out_capacity);
                if (!out) die("realloc");
            }
            for (size_t l = 0; l < lines; l++) memcpy(out + l * reply_length, reply, reply_length);
            if (pending[fd].length > 0) { keep(fd, out, lines * reply_length); continue; }
            if (flush(epoll, fd, out, lines * reply_length) < 0) drop(epoll, fd);
        }
    }
}
