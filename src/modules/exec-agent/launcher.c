/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* launcher.c - the agent's end of the shell launcher (see launcher.h).
 *
 * The requests and shells the launcher holds for us are entries in a
 * list: PENDING until their STARTED answer (which comes in request
 * order), RUNNING until EXITED, then EXITED until the owner reaps them.
 * REAPs that do not fit in the socket wait in a queue, sent when it is
 * writable again.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libflux/coop.h"
#include "launcher.h"
#include "libflux/list.h"
#include "shell/launch.h"

extern char **environ;

#define SOCKBUF (1024 * 1024) /* asked; the kernel caps it (wmem_max) */

enum state { PENDING, RUNNING, EXITED };

struct entry {
    struct list_node link; /* l->entries, in request order */
    enum state state;
    uint64_t seq;
    pid_t pid;
    void *ctx;
};

struct launcher {
    uv_poll_t *poll;
    int sock;
    pid_t pid;
    bool hello;
    bool dead;
    bool writable_wait; /* polling for UV_WRITABLE (reaps queued) */
    uint64_t seq;
    struct list_node entries;
    pid_t *reaps; /* REAPs not sent yet */
    size_t nreaps, reaps_cap;
    const struct launcher_ops *ops;
    launcher_died_f died;
    void *arg;
    char *buf;
};

static struct entry *find_pid (struct launcher *l, pid_t pid)
{
    struct list_node *pos;

    for (pos = l->entries.next; pos != &l->entries; pos = pos->next) {
        struct entry *e = list_entry (pos, struct entry, link);
        if (e->pid == pid && e->state != PENDING)
            return e;
    }
    return NULL;
}

/* The first request not answered yet (they are answered in order). */
static struct entry *first_pending (const struct launcher *l)
{
    struct list_node *pos;

    for (pos = l->entries.next; pos != &l->entries; pos = pos->next) {
        struct entry *e = list_entry (pos, struct entry, link);
        if (e->state == PENDING)
            return e;
    }
    return NULL;
}

/* Tell every request and shell still held that the launcher is gone: a
 * pending request started() with pending_errnum, a running shell lost().
 * The number of shells lost. */
static size_t tell_all (struct launcher *l, int pending_errnum)
{
    struct entry *e;
    size_t nlost = 0;

    while ((e = list_first_entry_or_null (&l->entries, struct entry, link))) {
        void *ctx = e->ctx;
        enum state state = e->state;
        list_del (&e->link);
        free (e);
        if (state == PENDING)
            l->ops->started (ctx, 0, -1, pending_errnum);
        else if (state == RUNNING) {
            nlost++;
            l->ops->lost (ctx);
        }
        /* EXITED: the owner's reap is due; it is moot now */
    }
    return nlost;
}

/* SIGKILL pid and reap it. */
static void kill_reap (pid_t pid)
{
    (void)kill (pid, SIGKILL);
    while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

static void update_poll (struct launcher *l);

/* 0 sent, 1 queued is not possible here: -1 with errno */
static int send_reap (struct launcher *l, pid_t pid)
{
    struct launch_hdr hdr;

    launch_encode (&hdr, LAUNCH_REAP, 0, pid, 0);
    return launch_send (l->sock, &hdr, sizeof (hdr), NULL, 0, MSG_DONTWAIT);
}

static void flush_reaps (struct launcher *l)
{
    size_t i = 0;

    while (i < l->nreaps && send_reap (l, l->reaps[i]) == 0)
        i++;
    if (i == 0)
        return; /* nothing sent (l->reaps may be NULL) */
    memmove (l->reaps, l->reaps + i, (l->nreaps - i) * sizeof (pid_t));
    l->nreaps -= i;
}

void launcher_reap (struct launcher *l, pid_t pid)
{
    struct entry *e = find_pid (l, pid);

    if (e) {
        list_del (&e->link);
        free (e);
    }
    if (l->dead)
        return;
    if (l->nreaps == 0 && send_reap (l, pid) == 0)
        return;
    if (l->nreaps == l->reaps_cap) {
        size_t cap = l->reaps_cap ? l->reaps_cap * 2 : 16;
        pid_t *r = realloc (l->reaps, cap * sizeof (*r));
        if (!r)
            return; /* the zombie waits for the launcher's end */
        l->reaps = r;
        l->reaps_cap = cap;
    }
    l->reaps[l->nreaps++] = pid;
    update_poll (l);
}

/* The launcher is gone: every request and shell is told, then the owner.
 * Its process is killed (it may only have closed the socket) and reaped. */
static void die (struct launcher *l)
{
    size_t nlost;

    if (l->dead)
        return;
    l->dead = true;
    if (l->poll)
        uv_poll_stop (l->poll);
    if (l->pid > 0) {
        kill_reap (l->pid);
        l->pid = 0;
    }
    l->nreaps = 0;
    nlost = tell_all (l, l->hello ? ECONNRESET : ECONNREFUSED);
    if (l->died)
        l->died (nlost, l->hello, l->arg);
}

static void on_started (struct launcher *l, struct launch_hdr *hdr, int *fds,
                        int nfds)
{
    struct entry *e = first_pending (l);

    if (!e || e->seq != hdr->seq
        || (hdr->value == 0 && (nfds != 1 || hdr->pid <= 0))) {
        for (int i = 0; i < nfds; i++)
            (void)close (fds[i]);
        errno = EPROTO;
        die (l);
        return;
    }
    if (hdr->value != 0) {
        void *ctx = e->ctx;
        for (int i = 0; i < nfds; i++) /* none is sent with an errno */
            (void)close (fds[i]);
        list_del (&e->link);
        free (e);
        l->ops->started (ctx, 0, -1, hdr->value);
        return;
    }
    e->state = RUNNING;
    e->pid = (pid_t)hdr->pid;
    l->ops->started (e->ctx, e->pid, fds[0], 0);
}

static void on_exited (struct launcher *l, struct launch_hdr *hdr)
{
    struct entry *e = find_pid (l, (pid_t)hdr->pid);

    if (!e || e->state != RUNNING) {
        die (l); /* a protocol error: the launcher cannot be trusted */
        return;
    }
    e->state = EXITED;
    l->ops->exited (e->ctx, hdr->value);
}

/* One packet: 0, or -1 when there was none (EAGAIN) or the launcher died. */
static int read_one (struct launcher *l)
{
    struct launch_hdr hdr;
    int fds[2], nfds = 2;
    ssize_t n;

    n = launch_recv (l->sock, l->buf, LAUNCH_MSG_MAX, fds, &nfds, MSG_DONTWAIT);
    if (n < 0 && errno == EAGAIN)
        return -1;
    if (n <= 0 || launch_decode (l->buf, (size_t)n, &hdr) < 0
        || (!l->hello && hdr.type != LAUNCH_HELLO)) {
        if (n > 0)
            for (int i = 0; i < nfds; i++)
                (void)close (fds[i]);
        die (l);
        return -1;
    }
    switch (hdr.type) {
        case LAUNCH_HELLO:
            l->hello = true;
            break;
        case LAUNCH_STARTED:
            on_started (l, &hdr, fds, nfds);
            nfds = 0;
            break;
        case LAUNCH_EXITED:
            on_exited (l, &hdr);
            break;
        default:
            die (l);
            break;
    }
    for (int i = 0; i < nfds; i++)
        (void)close (fds[i]);
    return l->dead ? -1 : 0;
}

static void poll_cb (uv_poll_t *h, int status, int events)
{
    struct launcher *l = h->data;

    if (status < 0) {
        die (l);
        return;
    }
    if (events & UV_WRITABLE)
        flush_reaps (l);
    /* a bounded batch, then back to the loop */
    for (int i = 0; i < 64 && read_one (l) == 0; i++)
        ;
    if (!l->dead)
        update_poll (l);
}

static void update_poll (struct launcher *l)
{
    bool want = l->nreaps > 0;

    if (l->dead || want == l->writable_wait)
        return;
    if (uv_poll_start (l->poll, UV_READABLE | (want ? UV_WRITABLE : 0), poll_cb)
        == 0)
        l->writable_wait = want;
}

/* The broker's environment plus LD_BIND_NOW=1: the launcher resolves
 * every symbol of its libraries once, so that no forked shell pays for
 * lazy binding (and for the copy of each GOT page it would write).  The
 * shells get the job's environment (launch.h), never this one. */
static char **launcher_env (void)
{
    size_t n = 0, k = 0;
    char **env;

    while (environ[n])
        n++;
    if (!(env = calloc (n + 2, sizeof (*env))))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (strncmp (environ[i], "LD_BIND_NOW=", 12) != 0)
            env[k++] = environ[i];
    }
    env[k++] = "LD_BIND_NOW=1";
    env[k] = NULL;
    return env;
}

static int spawn_launcher (struct launcher *l, const char *shell, int fd,
                           flux_error_t *error)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    int target = fd == 3 ? 4 : 3;
    char fdstr[32];
    char *argv[] = {(char *)shell, "--launcher", fdstr, NULL};
    char **env;
    int e;

    /* zero-padded: room for the forked shells' command lines, which
     * they write over the launcher's (launch.h, launcher_serve) */
    snprintf (fdstr, sizeof (fdstr), "%024d", target);
    if (!(env = launcher_env ())) {
        e = errno;
        goto error;
    }
    sigemptyset (&none);
    sigfillset (&all);
    if ((e = posix_spawn_file_actions_init (&fa)) != 0) {
        free (env);
        goto error;
    }
    if ((e = posix_spawnattr_init (&attr)) != 0) {
        posix_spawn_file_actions_destroy (&fa);
        free (env);
        goto error;
    }
    if ((e
         = posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0))
            == 0
        && (e = posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", O_WRONLY,
                                                  0))
               == 0
        && (e = posix_spawn_file_actions_adddup2 (&fa, fd, target)) == 0
        && (e = posix_spawn_file_actions_addchdir_np (&fa, "/")) == 0
        && (e = posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSID
                                                     | POSIX_SPAWN_SETSIGMASK
                                                     | POSIX_SPAWN_SETSIGDEF))
               == 0
        && (e = posix_spawnattr_setsigmask (&attr, &none)) == 0
        && (e = posix_spawnattr_setsigdefault (&attr, &all)) == 0)
        e = posix_spawn (&l->pid, shell, &fa, &attr, argv, env);
    posix_spawnattr_destroy (&attr);
    posix_spawn_file_actions_destroy (&fa);
    free (env);
    if (e == 0)
        return 0;
error:
    errno = e;
    return errprintf (error, "%s --launcher: %s", shell, strerror (e));
}

struct launcher *launcher_create (uv_loop_t *loop, const char *shell,
                                  const struct launcher_ops *ops,
                                  launcher_died_f died, void *arg,
                                  flux_error_t *error)
{
    struct launcher *l;
    int sv[2] = {-1, -1}, size = SOCKBUF, e;

    if (!loop || !shell || !ops || !ops->started || !ops->exited
        || !ops->lost) {
        errno = EINVAL;
        errprintf (error, "launcher_create: missing argument");
        return NULL;
    }
    if (!(l = calloc (1, sizeof (*l)))) {
        errprintf (error, "out of memory");
        goto error;
    }
    list_init (&l->entries);
    l->sock = -1;
    if (!(l->buf = malloc (LAUNCH_MSG_MAX))) {
        errprintf (error, "out of memory");
        goto error;
    }
    l->ops = ops;
    l->died = died;
    l->arg = arg;
    if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        errprintf (error, "socketpair: %s", strerror (errno));
        goto error;
    }
    (void)setsockopt (sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof (size));
    (void)setsockopt (sv[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof (size));
    if (fcntl (sv[0], F_SETFL, O_NONBLOCK) < 0) {
        errprintf (error, "fcntl: %s", strerror (errno));
        goto error;
    }
    if (spawn_launcher (l, shell, sv[1], error) < 0)
        goto error;
    (void)close (sv[1]);
    sv[1] = -1;
    l->sock = sv[0];
    /* allocated only here: launcher_destroy() closes l->poll, and a handle
     * never initialized must not reach uv_close() (the broker aborts) */
    if (!(l->poll = calloc (1, sizeof (*l->poll))))
        e = UV_ENOMEM;
    else if ((e = uv_poll_init (loop, l->poll, l->sock)) < 0) {
        free (l->poll); /* never initialized */
        l->poll = NULL;
    }
    else {
        l->poll->data = l;
        e = uv_poll_start (l->poll, UV_READABLE, poll_cb);
    }
    if (e < 0) {
        errno = -e;
        errprintf (error, "watching the launcher: %s", uv_strerror (e));
        goto error;
    }
    return l;
error : {
    int saved_errno = errno;
    if (sv[1] >= 0)
        (void)close (sv[1]);
    if (l && l->sock < 0 && sv[0] >= 0)
        (void)close (sv[0]);
    if (l)
        l->died = NULL;
    launcher_destroy (l);
    errno = saved_errno;
}
    return NULL;
}

int launcher_start (struct launcher *l, void *buf, size_t len, int out, int err,
                    void *ctx)
{
    struct launch_hdr hdr;
    struct entry *e;
    int fds[2] = {out, err};

    if (l->dead) {
        errno = ENOTCONN;
        return -1;
    }
    if (len < sizeof (hdr)) {
        errno = EINVAL;
        return -1;
    }
    if (!(e = calloc (1, sizeof (*e))))
        return -1;
    memcpy (&hdr, buf, sizeof (hdr));
    hdr.seq = ++l->seq;
    /* the seq is ours: patched into the caller's packet */
    memcpy (buf, &hdr, sizeof (hdr));
    if (launch_send (l->sock, buf, len, fds, 2, MSG_DONTWAIT) < 0) {
        free (e);
        return -1; /* EPIPE: die() comes from the loop, with EOF */
    }
    e->state = PENDING;
    e->seq = hdr.seq;
    e->ctx = ctx;
    list_add_tail (&l->entries, &e->link);
    return 0;
}

bool launcher_dead (const struct launcher *l)
{
    return l->dead;
}

pid_t launcher_pid (const struct launcher *l)
{
    return l->pid;
}

static double now_mono (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Answers to pending requests, within a second. */
static void settle (struct launcher *l)
{
    double deadline = now_mono () + 1.;

    while (!l->dead && first_pending (l)) {
        struct pollfd pfd = {.fd = l->sock, .events = POLLIN};
        double left = deadline - now_mono ();
        if (left <= 0.
            || flux_coop_poll (&pfd, 1, (int)(left * 1000.) + 1) == 0)
            break;
        while (read_one (l) == 0)
            ;
    }
}

/* The launcher's exit after EOF, within 2 s; then SIGKILL. */
static void wait_exit (pid_t pid)
{
    for (int i = 0; i < 200; i++) {
        pid_t rc = waitpid (pid, NULL, WNOHANG);
        if (rc == pid || (rc < 0 && errno != EINTR))
            return;
        (void)flux_coop_poll (NULL, 0, 10); /* others run (coop.h) */
    }
    kill_reap (pid);
}

void launcher_destroy (struct launcher *l)
{
    if (l) {
        int saved_errno = errno;
        if (!l->dead && l->sock >= 0) {
            settle (l);
            if (!l->dead)
                flush_reaps (l);
        }
        l->dead = true;
        (void)tell_all (l, ECONNRESET);
        if (l->poll) {
            l->poll->data = NULL;
            flux_uv_close_free ((uv_handle_t *)l->poll);
        }
        if (l->sock >= 0)
            (void)close (l->sock); /* EOF: the launcher reaps and exits */
        if (l->pid > 0)
            wait_exit (l->pid);
        free (l->reaps);
        free (l->buf);
        free (l);
        errno = saved_errno;
    }
}
