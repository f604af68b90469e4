/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* pmiserv.c - glue between the PMI-1 simple server engine and `flux
 * start`: per-rank line assembly, an in-memory KVS (a jansson object
 * used as a hash table) and a barrier that all local ranks complete.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libpmi/keyval.h"
#include "libpmi/simple_server.h"

#include "pmiserv.h"

struct pmiclient {
    struct pmiserv *ps;
    int rank;
    bool closed; /* finalized, aborted or disconnected */
    size_t len;  /* bytes of a partial line in buf */
    char buf[PMI_SIMPLE_LINE_MAX + 1];
};

struct pmiserv {
    int size;
    struct pmi_simple_server *server;
    json_t *kvs;
    pmiserv_send_f send_cb;
    pmiserv_abort_f abort_cb;
    void *arg;
    struct pmiclient *clients;
};

static int kvs_put (void *arg, const char *kvsname, const char *key,
                    const char *val)
{
    struct pmiserv *ps = arg;
    json_t *o;

    if (json_object_get (ps->kvs, key)) {
        errno = EEXIST;
        return -1;
    }
    if (!(o = json_string (val)) || json_object_set_new (ps->kvs, key, o)) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

static int kvs_get (void *arg, void *client, const char *kvsname,
                    const char *key)
{
    struct pmiserv *ps = arg;

    return pmi_simple_server_kvs_get_complete (ps->server, client,
                                               pmiserv_kvs_lookup (ps, key));
}

/* All local ranks entered: nothing else to wait for. */
static int barrier_enter (void *arg)
{
    struct pmiserv *ps = arg;

    return pmi_simple_server_barrier_complete (ps->server, 0);
}

static int response_send (void *client, const char *buf)
{
    struct pmiclient *c = client;

    return c->ps->send_cb (c->rank, buf, c->ps->arg);
}

static void debug_trace (void *client, const char *line)
{
    fprintf (stderr, "flux-start: pmi %s\n", line);
}

static void client_abort (void *arg, void *client, int exit_code,
                          const char *msg)
{
    struct pmiserv *ps = arg;
    struct pmiclient *c = client;

    if (ps->abort_cb)
        ps->abort_cb (c->rank, exit_code, msg, ps->arg);
}

static const struct pmi_simple_ops ops = {
    .kvs_put = kvs_put,
    .kvs_get = kvs_get,
    .barrier_enter = barrier_enter,
    .response_send = response_send,
    .debug_trace = debug_trace,
    .abort = client_abort,
};

struct pmiserv *pmiserv_create (int size, const char *kvsname,
                                pmiserv_send_f send_cb,
                                pmiserv_abort_f abort_cb, void *arg, int flags)
{
    struct pmiserv *ps;
    int sflags = (flags & PMISERV_TRACE) ? PMI_SIMPLE_SERVER_TRACE : 0;

    if (size < 1 || !kvsname || !send_cb || (flags & ~PMISERV_TRACE)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ps = calloc (1, sizeof (*ps))))
        return NULL;
    ps->size = size;
    ps->send_cb = send_cb;
    ps->abort_cb = abort_cb;
    ps->arg = arg;
    if (!(ps->clients = calloc (size, sizeof (ps->clients[0])))
        || !(ps->kvs = json_object ()))
        goto nomem;
    for (int i = 0; i < size; i++) {
        ps->clients[i].ps = ps;
        ps->clients[i].rank = i;
    }
    if (!(ps->server = pmi_simple_server_create (&ops, 0, size, size, kvsname,
                                                 sflags, ps)))
        goto error;
    return ps;
nomem:
    errno = ENOMEM;
error:
    pmiserv_destroy (ps);
    return NULL;
}

void pmiserv_destroy (struct pmiserv *ps)
{
    if (ps) {
        int saved_errno = errno;
        pmi_simple_server_destroy (ps->server);
        json_decref (ps->kvs);
        free (ps->clients);
        free (ps);
        errno = saved_errno;
    }
}

/* Hand one complete line (NUL-terminated, newline removed) to the
 * engine.  Returns as pmi_simple_server_request().
 */
static int handle_line (struct pmiserv *ps, struct pmiclient *c,
                        const char *line)
{
    int rc = pmi_simple_server_request (ps->server, line, c, c->rank);

    if (rc == 1)
        c->closed = true;
    return rc;
}

int pmiserv_recv (struct pmiserv *ps, int rank, const void *buf, size_t len)
{
    struct pmiclient *c;
    const char *p = buf;

    if (!ps || rank < 0 || rank >= ps->size || (!buf && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    c = &ps->clients[rank];
    if (c->closed) {
        errno = EPIPE;
        return -1;
    }
    if (len == 0)
        return 0;
    if (memchr (p, '\0', len)) {
        errno = EPROTO;
        return -1;
    }
    while (len > 0) {
        const char *nl = memchr (p, '\n', len);
        size_t n = nl ? (size_t)(nl - p) + 1 : len;
        int rc;

        if (c->len + n > PMI_SIMPLE_LINE_MAX) {
            errno = EPROTO;
            return -1;
        }
        memcpy (c->buf + c->len, p, n);
        c->len += n;
        p += n;
        len -= n;
        if (!nl)
            break;
        c->buf[c->len - 1] = '\0';
        c->len = 0;
        if ((rc = handle_line (ps, c, c->buf)) != 0)
            return rc;
    }
    return 0;
}

void pmiserv_disconnect (struct pmiserv *ps, int rank)
{
    if (ps && rank >= 0 && rank < ps->size) {
        pmi_simple_server_disconnect (ps->server, &ps->clients[rank]);
        ps->clients[rank].closed = true;
        ps->clients[rank].len = 0;
    }
}

const char *pmiserv_kvs_lookup (struct pmiserv *ps, const char *key)
{
    if (!ps || !key)
        return NULL;
    return json_string_value (json_object_get (ps->kvs, key));
}

int pmiserv_kvs_count (struct pmiserv *ps)
{
    return ps ? (int)json_object_size (ps->kvs) : 0;
}
