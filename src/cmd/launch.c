/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* launch.c - start a test instance: N brokers spawned at once with
 * libuv, each given one end of a socketpair as its PMI_FD, the other end
 * polled and fed to the PMI server (pmiserv.c).  Signals are forwarded;
 * failures take the whole instance down (see launch.h).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "launch.h"
#include "libpmi/simple_server.h"
#include "pmiserv.h"

extern char **environ;

struct broker {
    struct launch *l;
    int rank;
    uv_process_t proc;
    uv_poll_t poll;
    int fd;       /* our end of the PMI socketpair, -1 once closed */
    bool running; /* process not yet reaped */
    bool booted;  /* finished its PMI exchange (finalize or abort) */
};

struct launch {
    uv_loop_t loop;
    const struct launch_params *p;
    struct broker *brokers;
    struct pmiserv *pmi;
    uv_signal_t sigint;
    uv_signal_t sigterm;
    uv_timer_t grace;
    int running;      /* brokers not yet reaped */
    bool terminating; /* we sent SIGTERM: exits are expected */
    bool killing;     /* the grace period is over: SIGKILL is ours */
    int forwarded;    /* last signal forwarded from the user */
    bool failed;      /* a broker failed on its own */
    int abort_code;   /* exit code of a PMI abort, if any */
    bool rank0_exited;
    int rank0_status;
};

static void kill_all (struct launch *l, int signum)
{
    for (int i = 0; i < l->p->size; i++) {
        if (l->brokers[i].running)
            uv_process_kill (&l->brokers[i].proc, signum);
    }
}

static void grace_cb (uv_timer_t *t)
{
    struct launch *l = t->data;

    fprintf (stderr,
             "flux-start: %d broker(s) still running after %gs: "
             "sending SIGKILL\n",
             l->running, l->p->grace);
    l->killing = true;
    kill_all (l, SIGKILL);
}

static void start_grace (struct launch *l)
{
    if (!uv_is_active ((uv_handle_t *)&l->grace))
        uv_timer_start (&l->grace, grace_cb, (uint64_t)(l->p->grace * 1000), 0);
}

/* Bring the instance down: SIGTERM now, SIGKILL after the grace period. */
static void terminate (struct launch *l)
{
    if (!l->terminating) {
        l->terminating = true;
        kill_all (l, SIGTERM);
        start_grace (l);
    }
}

static void poll_close_cb (uv_handle_t *h)
{
    struct broker *b = h->data;

    close (b->fd);
    b->fd = -1;
}

static void conn_close (struct broker *b)
{
    if (!uv_is_closing ((uv_handle_t *)&b->poll)) {
        pmiserv_disconnect (b->l->pmi, b->rank);
        uv_close ((uv_handle_t *)&b->poll, poll_close_cb);
    }
}

static void poll_cb (uv_poll_t *h, int status, int events)
{
    struct broker *b = h->data;
    char buf[4096];
    ssize_t n;
    int rc;

    if (status < 0) {
        conn_close (b);
        return;
    }
    n = read (b->fd, buf, sizeof (buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        conn_close (b);
        return;
    }
    if ((rc = pmiserv_recv (b->l->pmi, b->rank, buf, n)) < 0)
        fprintf (stderr, "flux-start: rank %d: PMI error: %s\n", b->rank,
                 strerror (errno));
    if (rc == 1)
        b->booted = true;
    if (rc != 0)
        conn_close (b);
}

static int send_cb (int rank, const char *line, void *arg)
{
    struct launch *l = arg;

    /* the broker may be gone: EPIPE, not SIGPIPE */
    return pmi_simple_server_send_line (l->brokers[rank].fd, line);
}

static void abort_cb (int rank, int exit_code, const char *msg, void *arg)
{
    struct launch *l = arg;

    fprintf (stderr, "flux-start: rank %d: PMI abort (exit code %d)%s%s\n",
             rank, exit_code, *msg ? ": " : "", msg);
    l->failed = true;
    if (l->abort_code == 0)
        l->abort_code = exit_code != 0 ? exit_code : 1;
    terminate (l);
}

static void exit_cb (uv_process_t *proc, int64_t status, int signum)
{
    struct broker *b = proc->data;
    struct launch *l = b->l;
    bool expected
        = l->terminating || l->killing || (signum && signum == l->forwarded);

    b->running = false;
    l->running--;
    uv_close ((uv_handle_t *)proc, NULL);
    if (b->rank == 0) {
        l->rank0_exited = true;
        l->rank0_status = signum ? 128 + signum : (int)status;
    }
    if (!expected && (signum || (status != 0 && b->rank > 0))) {
        if (signum)
            fprintf (stderr, "flux-start: rank %d: %s\n", b->rank,
                     strsignal (signum));
        else
            fprintf (stderr, "flux-start: rank %d: exited with status %d\n",
                     b->rank, (int)status);
        /* One lost during bootstrap leaves the others in the PMI barrier
         * for ever: the instance cannot form.  One lost after it ends the
         * instance too (its parent would wait in quorum for ever if it
         * was lost during start-up), unless the exit mode is "leader":
         * then its subtree goes and the rest carry on, as on a cluster. */
        if (b->rank == 0 || !b->booted || l->p->exit_mode == LAUNCH_EXIT_ANY) {
            if (b->rank > 0)
                fprintf (stderr,
                         "flux-start: rank %d failed: stopping the "
                         "instance\n",
                         b->rank);
            l->failed = true;
            terminate (l);
        }
    }
    else if (l->p->verbose)
        fprintf (stderr, "flux-start: rank %d: exited (%s %d)\n", b->rank,
                 signum ? "signal" : "status", signum ? signum : (int)status);
    if (b->rank == 0 && l->running > 0)
        start_grace (l);
    if (l->running == 0)
        uv_timer_stop (&l->grace);
}

static void signal_cb (uv_signal_t *h, int signum)
{
    struct launch *l = h->data;

    l->forwarded = signum;
    kill_all (l, signum);
}

/* The environment of a broker: ours without PMI_* / PMIX_*, plus the
 * PMI variables (kept in own[]).  Free v with free().
 */
struct env {
    char **v;
    char own[4][32];
};

static int env_create (struct env *e, int rank, int size)
{
    size_t n = 0, i = 0;

    while (environ[n])
        n++;
    if (!(e->v = calloc (n + 5, sizeof (e->v[0]))))
        return -1;
    for (size_t k = 0; k < n; k++) {
        if (strncmp (environ[k], "PMI_", 4) && strncmp (environ[k], "PMIX_", 5))
            e->v[i++] = environ[k];
    }
    snprintf (e->own[0], sizeof (e->own[0]), "PMI_FD=3");
    snprintf (e->own[1], sizeof (e->own[1]), "PMI_RANK=%d", rank);
    snprintf (e->own[2], sizeof (e->own[2]), "PMI_SIZE=%d", size);
    snprintf (e->own[3], sizeof (e->own[3]), "PMI_SPAWNED=0");
    for (int k = 0; k < 4; k++)
        e->v[i++] = e->own[k];
    return 0;
}

static void print_command (int rank, char **argv)
{
    fprintf (stderr, "flux-start: rank %d:", rank);
    for (int i = 0; argv[i]; i++)
        fprintf (stderr, " %s", argv[i]);
    fprintf (stderr, "\n");
}

static int spawn_broker (struct launch *l, struct broker *b)
{
    char **argv = b->rank == 0 ? l->p->argv_rank0 : l->p->argv;
    uv_stdio_container_t stdio[4];
    uv_process_options_t opts = {0};
    struct env env;
    int sv[2];
    int e;

    if (l->p->verbose)
        print_command (b->rank, argv);
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    for (int i = 0; i < 3; i++) {
        stdio[i].flags = UV_INHERIT_FD;
        stdio[i].data.fd = i;
    }
    stdio[3].flags = UV_INHERIT_FD;
    stdio[3].data.fd = sv[1];
    opts.file = argv[0];
    opts.args = argv;
    opts.exit_cb = exit_cb;
    opts.stdio_count = 4;
    opts.stdio = stdio;
    if (env_create (&env, b->rank, l->p->size) < 0) {
        close (sv[0]);
        close (sv[1]);
        return -ENOMEM;
    }
    opts.env = env.v;
    b->proc.data = b;
    if ((e = uv_spawn (&l->loop, &b->proc, &opts)) < 0)
        goto out;
    b->running = true;
    l->running++;
    b->poll.data = b;
    if ((e = uv_poll_init (&l->loop, &b->poll, sv[0])) < 0)
        goto out;
    b->fd = sv[0]; /* closed by conn_close() from now on */
    sv[0] = -1;
    e = uv_poll_start (&b->poll, UV_READABLE | UV_DISCONNECT, poll_cb);
out:
    free (env.v);
    if (sv[0] >= 0)
        close (sv[0]);
    close (sv[1]);
    return e;
}

static int launch_start (struct launch *l)
{
    char kvsname[64];
    int flags = l->p->verbose >= 2 ? PMISERV_TRACE : 0;
    int e = 0;

    snprintf (kvsname, sizeof (kvsname), "flux-start-%d", (int)getpid ());
    if (!(l->pmi
          = pmiserv_create (l->p->size, kvsname, send_cb, abort_cb, l, flags))
        || !(l->brokers = calloc (l->p->size, sizeof (l->brokers[0]))))
        return -errno;
    uv_timer_init (&l->loop, &l->grace);
    l->grace.data = l;
    uv_signal_init (&l->loop, &l->sigint);
    uv_signal_init (&l->loop, &l->sigterm);
    l->sigint.data = l->sigterm.data = l;
    uv_signal_start (&l->sigint, signal_cb, SIGINT);
    uv_signal_start (&l->sigterm, signal_cb, SIGTERM);
    uv_unref ((uv_handle_t *)&l->sigint);
    uv_unref ((uv_handle_t *)&l->sigterm);
    for (int i = 0; i < l->p->size; i++) {
        l->brokers[i].l = l;
        l->brokers[i].rank = i;
        l->brokers[i].fd = -1;
    }
    for (int i = 0; i < l->p->size && e == 0; i++)
        e = spawn_broker (l, &l->brokers[i]);
    if (e < 0) {
        l->terminating = true;
        kill_all (l, SIGKILL);
        for (int i = 0; i < l->p->size; i++) {
            if (l->brokers[i].fd >= 0)
                conn_close (&l->brokers[i]);
        }
    }
    return e;
}

static void close_all (uv_handle_t *h, void *arg)
{
    if (!uv_is_closing (h))
        uv_close (h, NULL);
}

int launch_run (const struct launch_params *params)
{
    struct launch l = {.p = params};
    int e, status;

    if (!params || params->size < 1 || !params->argv || !params->argv_rank0) {
        errno = EINVAL;
        return -1;
    }
    if ((e = uv_loop_init (&l.loop)) < 0) {
        errno = -e;
        return -1;
    }
    e = launch_start (&l);
    uv_run (&l.loop, UV_RUN_DEFAULT);
    uv_walk (&l.loop, close_all, NULL);
    uv_run (&l.loop, UV_RUN_DEFAULT);
    uv_loop_close (&l.loop);
    pmiserv_destroy (l.pmi);
    free (l.brokers);
    if (e < 0) {
        errno = -e;
        return -1;
    }
    if (l.abort_code)
        return l.abort_code;
    status = l.rank0_exited ? l.rank0_status : 1;
    if (status == 0 && l.failed)
        status = 1;
    return status;
}
