/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* handle.c - the flux_t handle: connector dispatch by URI, send/recv with
 * the requeue list, the matchtag pool and its response waiters, and the
 * glue that drives message dispatch from a libuv loop.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coop.h"
#include "connector.h"
#include "handle_private.h"
#include "libutil/monotime.h"

struct aux_item {
    struct aux_item *next;
    char *name;
    void *val;
    flux_free_f destroy;
};

struct tag_waiter handle_orphan_waiter;

#define DISPATCH_BATCH 64

flux_t *flux_handle_create (void *impl, const struct flux_handle_ops *ops,
                            int flags)
{
    flux_t *h;

    if (!ops || !ops->send || !ops->recv || !ops->pollfd || !ops->pollevents) {
        if (ops && ops->impl_destroy)
            ops->impl_destroy (impl);
        errno = EINVAL;
        return NULL;
    }
    if (!(h = calloc (1, sizeof (*h)))) {
        int saved_errno = errno;
        if (ops->impl_destroy)
            ops->impl_destroy (impl);
        errno = saved_errno;
        return NULL;
    }
    h->ops = ops;
    h->impl = impl;
    h->flags = flags;
    h->tag_next = 1;
    h->pollfd = -1;
    if (getenv ("FLUX_HANDLE_TRACE"))
        h->flags |= FLUX_O_TRACE;
    return h;
}

static const char *trim_path (const char *s, char *buf, size_t size)
{
    size_t len;

    while (isspace ((unsigned char)*s))
        s++;
    len = strlen (s);
    while (len > 0 && isspace ((unsigned char)s[len - 1]))
        len--;
    if (len >= size)
        return NULL;
    memcpy (buf, s, len);
    buf[len] = '\0';
    return buf;
}

flux_t *flux_open_ex (const char *uri, int flags, flux_error_t *error)
{
    const char *sep;
    char path[4096];
    size_t schemelen;

    if (error)
        error->text[0] = '\0';
    if (!uri && !(uri = getenv ("FLUX_URI"))) {
        errprintf (error, "FLUX_URI is not set: not inside a Flux instance?");
        errno = EINVAL;
        return NULL;
    }
    while (isspace ((unsigned char)*uri))
        uri++;
    if (!(sep = strstr (uri, "://"))) {
        errprintf (error, "%s: URI must be scheme://path", uri);
        errno = EINVAL;
        return NULL;
    }
    schemelen = sep - uri;
    if (!trim_path (sep + 3, path, sizeof (path))) {
        errprintf (error, "URI path is too long");
        errno = EINVAL;
        return NULL;
    }
    if (schemelen == 5 && !strncmp (uri, "local", 5))
        return connector_local_open (path, flags, error);
    if (schemelen == 2 && !strncmp (uri, "fd", 2))
        return connector_fd_open (path, flags, error);
    if (schemelen == 4 && !strncmp (uri, "loop", 4))
        return connector_loop_open (path, flags, error);
    if (schemelen == 3 && !strncmp (uri, "ssh", 3))
        return connector_ssh_open (path, flags, error);
    errprintf (error, "%.*s: unknown connector scheme", (int)schemelen, uri);
    errno = EINVAL;
    return NULL;
}

flux_t *flux_open (const char *uri, int flags)
{
    return flux_open_ex (uri, flags, NULL);
}

static void fail_all_waiters (flux_t *h, int errnum);
static void watchers_destroy (flux_t *h);

void flux_close (flux_t *h)
{
    if (h) {
        int saved_errno = errno;
        struct aux_item *item;

        fail_all_waiters (h, ECONNRESET);
        dispatch_destroy (h);
        watchers_destroy (h);
        msgdeque_clear (&h->requeue);
        while ((item = h->aux)) {
            h->aux = item->next;
            if (item->destroy)
                item->destroy (item->val);
            free (item->name);
            free (item);
        }
        if (h->ops->impl_destroy)
            h->ops->impl_destroy (h->impl);
        if (h->reactor_owned)
            flux_reactor_destroy (h->reactor);
        free (h->tag_free);
        free (h->waiters);
        free (h);
        errno = saved_errno;
    }
}

void handle_trace (flux_t *h, const char *dir, const flux_msg_t *msg)
{
    int type = 0;
    const char *topic = NULL;
    uint32_t tag = 0;
    int errnum = 0;
    struct timespec ts;
    struct tm tm;
    char when[32] = "";

    /* the wall clock, to line a trace up with eventlog timestamps */
    if (clock_gettime (CLOCK_REALTIME, &ts) == 0
        && localtime_r (&ts.tv_sec, &tm))
        snprintf (when, sizeof (when), "%02d:%02d:%02d.%06ld ", tm.tm_hour,
                  tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000);
    (void)flux_msg_get_type (msg, &type);
    (void)flux_msg_get_topic (msg, &topic);
    (void)flux_msg_get_matchtag (msg, &tag);
    if (type == FLUX_MSGTYPE_RESPONSE)
        (void)flux_msg_get_errnum (msg, &errnum);
    fprintf (stderr, "%s%s %s %s matchtag=%u%s%s\n", when, dir,
             flux_msg_typestr (type), topic ? topic : "-", tag,
             errnum ? " error=" : "", errnum ? strerror (errnum) : "");
}

static void count_msg (flux_t *h, const flux_msg_t *msg, bool tx)
{
    int type = 0;

    (void)flux_msg_get_type (msg, &type);
    switch (type) {
        case FLUX_MSGTYPE_REQUEST:
            tx ? h->counters.request_tx++ : h->counters.request_rx++;
            break;
        case FLUX_MSGTYPE_RESPONSE:
            tx ? h->counters.response_tx++ : h->counters.response_rx++;
            break;
        case FLUX_MSGTYPE_EVENT:
            tx ? h->counters.event_tx++ : h->counters.event_rx++;
            break;
        case FLUX_MSGTYPE_CONTROL:
            tx ? h->counters.control_tx++ : h->counters.control_rx++;
            break;
    }
}

int flux_send (flux_t *h, const flux_msg_t *msg, int flags)
{
    if (!h || !msg) {
        errno = EINVAL;
        return -1;
    }
    if (h->flags & FLUX_O_TRACE)
        handle_trace (h, ">", msg);
    if (h->ops->send (h->impl, msg, flags) < 0)
        return -1;
    count_msg (h, msg, true);
    return 0;
}

int flux_send_new (flux_t *h, flux_msg_t **msg, int flags)
{
    if (!msg || flux_send (h, *msg, flags) < 0)
        return -1;
    flux_msg_decref (*msg);
    *msg = NULL;
    return 0;
}

flux_msg_t *handle_recv_connector (flux_t *h, int flags)
{
    flux_msg_t *msg;

    if (!(msg = h->ops->recv (h->impl, flags)))
        return NULL;
    if (h->flags & FLUX_O_TRACE)
        handle_trace (h, "<", msg);
    count_msg (h, msg, false);
    return msg;
}

flux_msg_t *flux_recv (flux_t *h, int flags)
{
    flux_msg_t *msg;

    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    if ((msg = msgdeque_pop (&h->requeue)))
        return msg;
    return handle_recv_connector (h, flags);
}

int flux_requeue (flux_t *h, const flux_msg_t *msg, int flags)
{
    if (!h || !msg || (flags != FLUX_RQ_HEAD && flags != FLUX_RQ_TAIL)) {
        errno = EINVAL;
        return -1;
    }
    if (msgdeque_push (&h->requeue, (flux_msg_t *)flux_msg_incref (msg),
                       flags == FLUX_RQ_HEAD)
        < 0) {
        flux_msg_decref (msg);
        return -1;
    }
    return 0;
}

int flux_pollfd (flux_t *h)
{
    return h->ops->pollfd (h->impl);
}

int flux_pollevents (flux_t *h)
{
    int ev = h->ops->pollevents (h->impl);
    if (ev < 0)
        return -1;
    if (h->requeue.count > 0)
        ev |= FLUX_POLLIN;
    return ev;
}

/* Matchtags and waiters */

uint32_t flux_matchtag_alloc (flux_t *h)
{
    if (h->tag_free_count > 0)
        return h->tag_free[--h->tag_free_count];
    if (h->tag_next == UINT32_MAX) {
        errno = EAGAIN;
        return FLUX_MATCHTAG_NONE;
    }
    return h->tag_next++;
}

void flux_matchtag_free (flux_t *h, uint32_t tag)
{
    if (tag == FLUX_MATCHTAG_NONE || tag >= h->tag_next)
        return;
    if (tag < h->waiters_cap && h->waiters[tag]) {
        /* still has a waiter: the waiter's clear will free it */
        return;
    }
    if (h->tag_free_count == h->tag_free_cap) {
        size_t ncap = h->tag_free_cap ? h->tag_free_cap * 2 : 64;
        uint32_t *nf = realloc (h->tag_free, ncap * sizeof (*nf));
        if (!nf)
            return; /* the tag is leaked, which is safe */
        h->tag_free = nf;
        h->tag_free_cap = ncap;
    }
    h->tag_free[h->tag_free_count++] = tag;
}

uint32_t flux_matchtag_avail (flux_t *h)
{
    return (UINT32_MAX - h->tag_next) + h->tag_free_count;
}

int handle_waiter_set (flux_t *h, uint32_t tag, struct tag_waiter *w)
{
    if (tag == FLUX_MATCHTAG_NONE || tag >= h->tag_next) {
        errno = EINVAL;
        return -1;
    }
    if (tag >= h->waiters_cap) {
        size_t ncap = h->waiters_cap ? h->waiters_cap : 64;
        struct tag_waiter **nw;
        while (ncap <= tag)
            ncap *= 2;
        if (!(nw = realloc (h->waiters, ncap * sizeof (*nw))))
            return -1;
        memset (nw + h->waiters_cap, 0, (ncap - h->waiters_cap) * sizeof (*nw));
        h->waiters = nw;
        h->waiters_cap = ncap;
    }
    h->waiters[tag] = w;
    return 0;
}

void handle_waiter_clear (flux_t *h, uint32_t tag, bool final)
{
    if (tag >= h->waiters_cap || !h->waiters[tag])
        return;
    if (final) {
        h->waiters[tag] = NULL;
        flux_matchtag_free (h, tag);
    }
    else
        h->waiters[tag] = &handle_orphan_waiter;
}

static bool response_is_final (const flux_msg_t *msg)
{
    int errnum = 0;
    (void)flux_msg_get_errnum (msg, &errnum);
    return errnum != 0 || !flux_msg_is_streaming (msg);
}

bool handle_deliver_response (flux_t *h, const flux_msg_t *msg)
{
    uint32_t tag;
    int type;
    struct tag_waiter *w;

    if (flux_msg_get_type (msg, &type) < 0 || type != FLUX_MSGTYPE_RESPONSE
        || flux_msg_get_matchtag (msg, &tag) < 0 || tag == FLUX_MATCHTAG_NONE
        || tag >= h->waiters_cap || !(w = h->waiters[tag]))
        return false;
    if (w == &handle_orphan_waiter) {
        if (response_is_final (msg))
            handle_waiter_clear (h, tag, true);
        return true;
    }
    if (w->deliver (w, msg))
        handle_waiter_clear (h, tag, true);
    return true;
}

/* Give every RPC in flight a final error response (connection lost). */
static void fail_all_waiters (flux_t *h, int errnum)
{
    size_t tag;

    for (tag = 1; tag < h->waiters_cap; tag++) {
        flux_msg_t *msg;
        if (!h->waiters[tag])
            continue;
        if (!(msg = flux_msg_create (FLUX_MSGTYPE_RESPONSE))
            || flux_msg_set_matchtag (msg, tag) < 0
            || flux_msg_set_errnum (msg, errnum) < 0) {
            flux_msg_decref (msg);
            continue;
        }
        handle_deliver_response (h, msg);
        flux_msg_decref (msg);
    }
}

/* Deliver responses for live waiters that sit in the requeue list. */
static void deliver_requeued_responses (flux_t *h)
{
    size_t i = 0;

    while (i < h->requeue.count) {
        flux_msg_t *msg = msgdeque_peek (&h->requeue, i);
        int type = 0;
        uint32_t tag = 0;
        if (flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_RESPONSE
            && flux_msg_get_matchtag (msg, &tag) == 0 && tag != 0
            && tag < h->waiters_cap && h->waiters[tag]) {
            msg = msgdeque_take (&h->requeue, i);
            handle_deliver_response (h, msg);
            flux_msg_decref (msg);
        }
        else
            i++;
    }
}

/* Wait for the connector fd; deadline < 0 means forever. */
static int wait_readable (flux_t *h, double deadline)
{
    struct pollfd pfd = {.fd = flux_pollfd (h), .events = POLLIN};
    double remain = deadline - monotime ();
    int n;

    if (deadline >= 0 && remain <= 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    if (pfd.fd < 0)
        return -1;
    /* poll(), or in a coop task a yield until readable (coop.h) */
    n = flux_coop_poll (&pfd, 1, deadline < 0 ? -1 : (int)(remain * 1000) + 1);
    if (n < 0 && errno != EINTR)
        return -1;
    return 0;
}

int handle_sync_wait (flux_t *h, bool (*done) (void *arg), void *arg,
                      double timeout)
{
    double deadline = timeout >= 0 ? monotime () + timeout : 0;

    deliver_requeued_responses (h);
    while (!done (arg)) {
        flux_msg_t *msg;
        int flags = timeout >= 0 ? FLUX_O_NONBLOCK : 0;

        if (!(msg = handle_recv_connector (h, flags))) {
            if (errno != EWOULDBLOCK && errno != EAGAIN) {
                fail_all_waiters (h, errno);
                return done (arg) ? 0 : -1;
            }
            /* connectors whose recv never blocks (msgpipe) say
             * EWOULDBLOCK even when asked to block: wait on the fd */
            if (wait_readable (h, timeout < 0 ? -1 : deadline) < 0)
                return -1;
            continue;
        }
        if (!handle_deliver_response (h, msg)) {
            if (msgdeque_push (&h->requeue, msg, false) < 0) {
                flux_msg_decref (msg);
                return -1;
            }
            continue;
        }
        flux_msg_decref (msg);
    }
    return 0;
}

/* Reactor integration */

flux_reactor_t *flux_get_reactor (flux_t *h)
{
    if (!h->reactor) {
        if (!(h->reactor = flux_reactor_create (0)))
            return NULL;
        h->reactor_owned = 1;
    }
    h->reactor_used = 1;
    return h->reactor;
}

int flux_set_reactor (flux_t *h, flux_reactor_t *r)
{
    if (h->reactor_used || h->poll_w) {
        errno = EEXIST;
        return -1;
    }
    if (h->reactor_owned)
        flux_reactor_destroy (h->reactor);
    h->reactor = r;
    h->reactor_owned = 0;
    return 0;
}

static bool have_pending (flux_t *h)
{
    int ev;

    if (h->requeue.count > 0)
        return true;
    ev = h->ops->pollevents (h->impl);
    return ev > 0 && (ev & (FLUX_POLLIN | FLUX_POLLERR));
}

/* The connection failed (the broker went away, or sent bytes that are not
 * a message): stop watching it, fail every pending RPC, and stop the
 * reactor with the error, so that flux_reactor_run() returns -1 with
 * errno set instead of 0 once nothing is left to watch.  A command then
 * reports the lost connection and exits non-zero, as with flux-core.
 */
static void handle_error (flux_t *h, int errnum)
{
    if (h->poll_w)
        uv_poll_stop (h->poll_w);
    if (h->check_w)
        uv_check_stop (h->check_w);
    if (h->idle_w)
        uv_idle_stop (h->idle_w);
    fail_all_waiters (h, errnum);
    if (h->reactor) {
        errno = errnum;
        flux_reactor_stop_error (h->reactor);
    }
}

static void dispatch_batch (flux_t *h)
{
    int n;

    for (n = 0; n < DISPATCH_BATCH; n++) {
        flux_msg_t *msg = flux_recv (h, FLUX_O_NONBLOCK);
        if (!msg) {
            if (errno != EWOULDBLOCK && errno != EAGAIN)
                handle_error (h, errno);
            return;
        }
        if (!handle_deliver_response (h, msg))
            dispatch_message (h, msg);
        flux_msg_decref (msg);
    }
}

static void poll_cb (uv_poll_t *w, int status, int events)
{
    flux_t *h = w->data;
    dispatch_batch (h);
}

static void idle_cb (uv_idle_t *w)
{
}

static void prep_cb (uv_prepare_t *w)
{
    flux_t *h = w->data;

    if (have_pending (h))
        uv_idle_start (h->idle_w, idle_cb);
    else
        uv_idle_stop (h->idle_w);
}

static void check_cb (uv_check_t *w)
{
    flux_t *h = w->data;

    uv_idle_stop (h->idle_w);
    if (have_pending (h))
        dispatch_batch (h);
}

static void watchers_destroy (flux_t *h)
{
    if (h->poll_w)
        flux_uv_close_free ((uv_handle_t *)h->poll_w);
    if (h->prep_w)
        flux_uv_close_free ((uv_handle_t *)h->prep_w);
    if (h->check_w)
        flux_uv_close_free ((uv_handle_t *)h->check_w);
    if (h->idle_w)
        flux_uv_close_free ((uv_handle_t *)h->idle_w);
    h->poll_w = NULL;
    h->prep_w = NULL;
    h->check_w = NULL;
    h->idle_w = NULL;
    /* let the close callbacks run so nothing is leaked */
    if (h->reactor)
        uv_run (flux_reactor_uv (h->reactor), UV_RUN_NOWAIT);
}

static int watchers_create (flux_t *h)
{
    flux_reactor_t *r;
    uv_loop_t *loop;
    int fd;

    if (!(r = flux_get_reactor (h)))
        return -1;
    loop = flux_reactor_uv (r);
    if ((fd = h->ops->pollfd (h->impl)) < 0)
        return -1;
    if (!(h->poll_w = calloc (1, sizeof (*h->poll_w)))
        || !(h->prep_w = calloc (1, sizeof (*h->prep_w)))
        || !(h->check_w = calloc (1, sizeof (*h->check_w)))
        || !(h->idle_w = calloc (1, sizeof (*h->idle_w))))
        goto nomem;
    if (uv_poll_init (loop, h->poll_w, fd) < 0) {
        free (h->poll_w);
        h->poll_w = NULL;
        goto nomem;
    }
    uv_prepare_init (loop, h->prep_w);
    uv_check_init (loop, h->check_w);
    uv_idle_init (loop, h->idle_w);
    h->poll_w->data = h->prep_w->data = h->check_w->data = h;
    h->idle_w->data = h;
    uv_unref ((uv_handle_t *)h->prep_w);
    uv_unref ((uv_handle_t *)h->check_w);
    uv_unref ((uv_handle_t *)h->idle_w);
    uv_poll_start (h->poll_w, UV_READABLE, poll_cb);
    uv_prepare_start (h->prep_w, prep_cb);
    uv_check_start (h->check_w, check_cb);
    h->pollfd = fd;
    return 0;
nomem:
    free (h->prep_w);
    free (h->check_w);
    free (h->idle_w);
    h->prep_w = NULL;
    h->check_w = NULL;
    h->idle_w = NULL;
    watchers_destroy (h);
    errno = ENOMEM;
    return -1;
}

void handle_active_incref (flux_t *h)
{
    if (!h->poll_w && watchers_create (h) < 0)
        return;
    if (h->active_count++ == 0)
        uv_ref ((uv_handle_t *)h->poll_w);
}

void handle_active_decref (flux_t *h)
{
    if (h->active_count > 0 && --h->active_count == 0 && h->poll_w)
        uv_unref ((uv_handle_t *)h->poll_w);
}

/* aux, flags, counters, subscriptions */

int flux_aux_set (flux_t *h, const char *name, void *val, flux_free_f destroy)
{
    struct aux_item **pp, *item;

    if (!h || !name) {
        errno = EINVAL;
        return -1;
    }
    for (pp = &h->aux; *pp; pp = &(*pp)->next) {
        if (!strcmp ((*pp)->name, name)) {
            item = *pp;
            if (item->destroy && item->val != val)
                item->destroy (item->val);
            if (!val) {
                *pp = item->next;
                free (item->name);
                free (item);
                return 0;
            }
            item->val = val;
            item->destroy = destroy;
            return 0;
        }
    }
    if (!val)
        return 0;
    if (!(item = calloc (1, sizeof (*item))) || !(item->name = strdup (name))) {
        free (item);
        return -1;
    }
    item->val = val;
    item->destroy = destroy;
    item->next = h->aux;
    h->aux = item;
    return 0;
}

void *flux_aux_get (flux_t *h, const char *name)
{
    struct aux_item *item;

    for (item = h ? h->aux : NULL; item; item = item->next)
        if (!strcmp (item->name, name))
            return item->val;
    errno = ENOENT;
    return NULL;
}

void flux_flags_set (flux_t *h, int flags)
{
    h->flags |= flags;
}

void flux_flags_unset (flux_t *h, int flags)
{
    h->flags &= ~flags;
}

int flux_flags_get (flux_t *h)
{
    return h->flags;
}

void flux_get_msgcounters (flux_t *h, struct flux_msgcounters *mcs)
{
    *mcs = h->counters;
}

void flux_clr_msgcounters (flux_t *h)
{
    memset (&h->counters, 0, sizeof (h->counters));
}
