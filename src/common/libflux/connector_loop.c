/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* connector_loop.c - loop://: an in-process loopback for tests.  Every
 * message sent is copied, stamped with the caller's credentials if it has
 * none (owner role), and queued to be received by the same handle.  An
 * eventfd signals the reactor while the queue is non-empty.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "connector.h"
#include "msgdeque.h"

struct loop {
    int efd;
    struct msgdeque q;
};

static void loop_destroy (void *impl)
{
    struct loop *l = impl;
    if (l) {
        int saved_errno = errno;
        msgdeque_clear (&l->q);
        if (l->efd >= 0)
            close (l->efd);
        free (l);
        errno = saved_errno;
    }
}

static int loop_pollfd (void *impl)
{
    struct loop *l = impl;
    return l->efd;
}

static int loop_pollevents (void *impl)
{
    struct loop *l = impl;
    return FLUX_POLLOUT | (l->q.count > 0 ? FLUX_POLLIN : 0);
}

static int loop_send (void *impl, const flux_msg_t *msg, int flags)
{
    struct loop *l = impl;
    flux_msg_t *cpy;
    struct flux_msg_cred cred;
    uint64_t one = 1;

    if (!(cpy = flux_msg_copy (msg, true)))
        return -1;
    if (flux_msg_get_cred (cpy, &cred) == 0) {
        if (cred.userid == FLUX_USERID_UNKNOWN)
            cred.userid = getuid ();
        if (cred.rolemask == FLUX_ROLE_NONE)
            cred.rolemask = FLUX_ROLE_OWNER;
        (void)flux_msg_set_cred (cpy, cred);
    }
    if (msgdeque_push (&l->q, cpy, false) < 0) {
        flux_msg_decref (cpy);
        return -1;
    }
    if (l->q.count == 1) {
        if (write (l->efd, &one, sizeof (one)) < 0) {
            /* the counter cannot overflow here; nothing else to do */
        }
    }
    return 0;
}

static flux_msg_t *loop_recv (void *impl, int flags)
{
    struct loop *l = impl;
    flux_msg_t *msg;
    uint64_t val;

    if (!(msg = msgdeque_pop (&l->q))) {
        /* a blocking wait could never end: nothing else can send */
        errno = (flags & FLUX_O_NONBLOCK) ? EWOULDBLOCK : EDEADLK;
        return NULL;
    }
    if (l->q.count == 0) {
        if (read (l->efd, &val, sizeof (val)) < 0) {
            /* EAGAIN: already clear */
        }
    }
    return msg;
}

/* The loopback delivers every event it is sent: nothing to filter. */
static int loop_subscribe (void *impl, const char *topic)
{
    return 0;
}

static const struct flux_handle_ops loop_ops = {
    .event_subscribe = loop_subscribe,
    .event_unsubscribe = loop_subscribe,
    .pollfd = loop_pollfd,
    .pollevents = loop_pollevents,
    .send = loop_send,
    .recv = loop_recv,
    .impl_destroy = loop_destroy,
};

flux_t *connector_loop_open (const char *arg, int flags, flux_error_t *error)
{
    struct loop *l;

    if (!(l = calloc (1, sizeof (*l))))
        return NULL;
    if ((l->efd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
        errprintf (error, "eventfd: %s", "failed");
        free (l);
        return NULL;
    }
    return flux_handle_create (l, &loop_ops, flags);
}
