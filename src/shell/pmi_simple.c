/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* pmi_simple.c - the PMI-1 simple-wire server (RFC 13) of the shell.
 *
 * One socketpair per task (the task's end is its fd 3: PMI_FD=3), read
 * with uv_poll and fed line by line to libpmi's protocol engine.  Puts
 * collect in a pending object; when every local task is in the barrier
 * the pending puts go into the agent's barrier (exec-agent.barrier, seq
 * 3, 4, ...), whose answer - every shell's puts - fills the local KVS
 * before the tasks are released.  A get is answered from the local KVS,
 * or from the keys served here only: PMI_process_mapping, flux.taskmap,
 * flux.instance-level.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libpmi/simple_server.h"

#include "pmi.h"
#include "shell.h"
#include "task.h"

struct client {
    struct pmi_simple *ps;
    int rank;
    int fd; /* our end, -1 once closed */
    uv_poll_t *poll;
    char buf[PMI_SIMPLE_LINE_MAX + 1];
    size_t len;
};

struct pmi_simple {
    struct shell *shell;
    struct pmi_simple_server *srv;
    struct client *clients; /* by local id */
    json_t *kvs;            /* every key known here */
    json_t *pending;        /* this shell's puts since the last fence */
    flux_future_t *fence;
    int nfence;     /* fences so far */
    char *mapping;  /* PMI_process_mapping, NULL if too long */
    char *taskmap;  /* flux.taskmap */
    char level[16]; /* flux.instance-level */
};

static void client_close (struct client *c)
{
    if (c->fd >= 0) {
        pmi_simple_server_disconnect (c->ps->srv, c);
        if (c->poll) {
            uv_poll_stop (c->poll);
            flux_uv_close_free ((uv_handle_t *)c->poll);
            c->poll = NULL;
        }
        close (c->fd);
        c->fd = -1;
    }
}

static int response_send (void *client, const char *line)
{
    struct client *c = client;

    return pmi_simple_server_send_line (c->fd, line);
}

static int kvs_put (void *arg, const char *kvsname, const char *key,
                    const char *val)
{
    struct pmi_simple *ps = arg;
    json_t *v = json_string (val);

    (void)kvsname;
    if (!v || json_object_set_new (ps->pending, key, v) < 0)
        return -1;
    return 0;
}

static int kvs_get (void *arg, void *client, const char *kvsname,
                    const char *key)
{
    struct pmi_simple *ps = arg;
    const char *val = NULL;
    json_t *v;

    (void)kvsname;
    if (!strcmp (key, "PMI_process_mapping"))
        val = ps->mapping;
    else if (!strcmp (key, "flux.taskmap"))
        val = ps->taskmap;
    else if (!strcmp (key, "flux.instance-level")) {
        /* asked of the broker only when a task wants it (an instance
         * inside the job): one request fewer for every other job */
        if (!ps->level[0]) {
            const char *lvl = flux_attr_get (ps->shell->h, "instance-level");
            snprintf (ps->level, sizeof (ps->level), "%d",
                      lvl ? atoi (lvl) + 1 : 1);
        }
        val = ps->level;
    }
    else if ((v = json_object_get (ps->kvs, key))
             || (v = json_object_get (ps->pending, key)))
        val = json_string_value (v);
    return pmi_simple_server_kvs_get_complete (ps->srv, client, val);
}

static void fence_cb (flux_future_t *f, void *arg)
{
    struct pmi_simple *ps = arg;
    json_t *data;
    int rc = 0;

    if (flux_rpc_get_unpack (f, "{s:o}", "data", &data) < 0
        || !json_is_object (data)) {
        if (errno != EIO)
            shell_log (ps->shell, 3, "pmi", "fence: %s",
                       future_strerror (f, errno));
        rc = -1;
    }
    else if (json_object_update (ps->kvs, data) < 0)
        rc = -1;
    flux_future_destroy (f);
    ps->fence = NULL;
    if (pmi_simple_server_barrier_complete (ps->srv, rc) < 0)
        shell_log (ps->shell, 3, "pmi", "barrier complete: %s",
                   strerror (errno));
}

static int barrier_enter (void *arg)
{
    struct pmi_simple *ps = arg;
    struct shell *shell = ps->shell;

    if (ps->fence) {
        errno = EINPROGRESS;
        return -1;
    }
    /* every shell's fences come in the same order: 3, 4, ... (1 and 2
     * are the shell's own start barriers) */
    if (!(ps->fence
          = shell_barrier_async (shell, 3 + ps->nfence++, ps->pending))
        || flux_future_then (ps->fence, -1., fence_cb, ps) < 0) {
        flux_future_destroy (ps->fence);
        ps->fence = NULL;
        return -1;
    }
    json_decref (ps->pending);
    ps->pending = json_object ();
    return ps->pending ? 0 : -1;
}

static void abort_cb (void *arg, void *client, int exit_code, const char *msg)
{
    struct pmi_simple *ps = arg;
    struct client *c = client;

    shell_fatal (ps->shell, exit_code > 0 ? exit_code : 1,
                 "task %d: PMI abort (exit code %d)%s%s", c->rank, exit_code,
                 *msg ? ": " : "", msg);
}

static void poll_cb (uv_poll_t *h, int status, int events)
{
    struct client *c = h->data;
    ssize_t n;

    (void)events;
    if (status < 0) {
        client_close (c);
        return;
    }
    n = read (c->fd, c->buf + c->len, sizeof (c->buf) - 1 - c->len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        client_close (c);
        return;
    }
    c->len += n;
    for (;;) {
        char *nl = memchr (c->buf, '\n', c->len);
        size_t k;
        int rc;
        if (!nl) {
            if (c->len == sizeof (c->buf) - 1) {
                shell_log (c->ps->shell, 3, "pmi", "task %d: line too long",
                           c->rank);
                client_close (c);
            }
            return;
        }
        *nl = '\0';
        k = nl - c->buf + 1;
        rc = pmi_simple_server_request (c->ps->srv, c->buf, c, c->rank);
        if (rc < 0)
            shell_log (c->ps->shell, 3, "pmi", "task %d: %s", c->rank,
                       strerror (errno));
        if (rc != 0) {
            client_close (c);
            return;
        }
        memmove (c->buf, c->buf + k, c->len - k);
        c->len -= k;
    }
}

static void *ps_create (struct shell *shell, flux_error_t *error)
{
    struct shell_info *info = shell->info;
    struct pmi_simple *ps = calloc (1, sizeof (*ps));
    struct pmi_simple_ops ops = {
        .kvs_put = kvs_put,
        .kvs_get = kvs_get,
        .barrier_enter = barrier_enter,
        .response_send = response_send,
        .abort = abort_cb,
    };

    if (!ps)
        return NULL;
    ps->shell = shell;
    if (!(ps->kvs = json_object ()) || !(ps->pending = json_object ())
        || !(ps->clients = calloc (info->local_ntasks, sizeof (struct client)))
        || !(ps->taskmap = taskmap_encode (info->map, 0))
        || !(ps->mapping = taskmap_encode (info->map, TASKMAP_ENCODE_PMI)))
        goto nomem;
    if (strlen (ps->mapping) >= PMI_SIMPLE_VALLEN_MAX) {
        free (ps->mapping); /* the get then says key_not_found */
        ps->mapping = NULL;
    }
    if (strlen (ps->taskmap) >= PMI_SIMPLE_VALLEN_MAX) {
        free (ps->taskmap);
        ps->taskmap = NULL;
    }
    for (int i = 0; i < info->local_ntasks; i++) {
        ps->clients[i].ps = ps;
        ps->clients[i].fd = -1;
    }
    if (!(ps->srv = pmi_simple_server_create (&ops, 0, info->total_ntasks,
                                              info->local_ntasks,
                                              shell->jobid_plain, 0, ps))) {
        errprintf (error, "PMI server: %s", strerror (errno));
        goto error;
    }
    return ps;
nomem:
    errprintf (error, "PMI server: out of memory");
error:
    free (ps->clients);
    free (ps->mapping);
    free (ps->taskmap);
    json_decref (ps->kvs);
    json_decref (ps->pending);
    free (ps);
    return NULL;
}

static void ps_destroy (void *impl)
{
    struct pmi_simple *ps = impl;

    if (ps) {
        for (int i = 0; i < ps->shell->info->local_ntasks; i++)
            client_close (&ps->clients[i]);
        flux_future_destroy (ps->fence);
        pmi_simple_server_destroy (ps->srv);
        free (ps->clients);
        free (ps->mapping);
        free (ps->taskmap);
        json_decref (ps->kvs);
        json_decref (ps->pending);
        free (ps);
    }
}

static int ps_task_setup (void *impl, struct task *t, struct env *env,
                          flux_error_t *error)
{
    struct pmi_simple *ps = impl;
    struct client *c = &ps->clients[t->localid];
    int sv[2];

    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return errprintf (error, "PMI socketpair: %s", strerror (errno));
    c->fd = sv[0];
    c->rank = t->rank;
    t->pmi_fd = sv[1];
    if (env_set (env, "PMI_FD", "3") < 0
        || env_setf (env, "PMI_RANK", "%d", t->rank) < 0
        || env_setf (env, "PMI_SIZE", "%d", ps->shell->info->total_ntasks) < 0
        || env_set (env, "PMI_SPAWNED", "0") < 0)
        return errprintf (error, "out of memory");
    return 0;
}

static void ps_task_started (void *impl, struct task *t)
{
    struct pmi_simple *ps = impl;
    struct client *c = &ps->clients[t->localid];

    if (!(c->poll = calloc (1, sizeof (*c->poll)))
        || uv_poll_init (ps->shell->loop, c->poll, c->fd) < 0) {
        free (c->poll);
        c->poll = NULL;
        close (c->fd);
        c->fd = -1;
        return;
    }
    c->poll->data = c;
    uv_poll_start (c->poll, UV_READABLE | UV_DISCONNECT, poll_cb);
}

const struct shell_pmi_server shell_pmi_simple = {
    .name = "simple",
    .create = ps_create,
    .destroy = ps_destroy,
    .task_setup = ps_task_setup,
    .task_started = ps_task_started,
};
