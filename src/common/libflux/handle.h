/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_HANDLE_H
#define FLUX_HANDLE_H

/* The handle: a connection to a Flux broker (or anything speaking RFC 3).
 *
 * flux_open(uri) picks a connector by URI scheme:
 *   local://PATH   unix socket of a broker (connect, read the accept byte)
 *   fd://N         an already connected stream socket, framed as local://
 *                  but without the accept byte (servers use it per client)
 *   loop://        in-process loopback: every message sent is received back
 * A NULL uri means $FLUX_URI.
 *
 * A handle is used either synchronously (flux_send / flux_recv /
 * flux_future_get) or from its reactor (message handlers, continuations),
 * or both.  Messages received while waiting synchronously for one response
 * are kept (requeued) for the reactor, in order.  A handle belongs to one
 * thread.
 *
 * Connectors: a connector supplies struct flux_handle_ops.  pollfd() is a
 * file descriptor that becomes readable when recv() may succeed;
 * pollevents() tells whether recv() would succeed right now without
 * reading the fd (e.g. messages already buffered).  recv() with
 * FLUX_O_NONBLOCK fails with EWOULDBLOCK when nothing is ready.
 */
#include <stdbool.h>
#include <stdint.h>

#include "message.h"
#include "reactor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flux_handle flux_t;
typedef void (*flux_free_f) (void *arg);

/* flux_open / flux_send / flux_recv flags */
enum {
    FLUX_O_TRACE = 1,    /* print every message sent and received */
    FLUX_O_NONBLOCK = 4, /* send/recv: do not block (EWOULDBLOCK) */
    /* flux_open of local://: return once connected, without waiting for
     * the broker's accept byte; what is sent waits in the socket until the
     * broker accepts, and a refusal fails the first receive (and every
     * later one) with the broker's errno instead of the open.  Saves a
     * round trip with the broker's thread for a client that sends at once
     * (the job shell).  Not flux-core's (a high bit, clear of its flags). */
    FLUX_O_EARLY = 1 << 16,
};

/* pollevents bits */
enum {
    FLUX_POLLIN = 1,
    FLUX_POLLOUT = 2,
    FLUX_POLLERR = 4,
};

struct flux_handle_ops {
    int (*pollfd) (void *impl);
    int (*pollevents) (void *impl);
    int (*send) (void *impl, const flux_msg_t *msg, int flags);
    flux_msg_t *(*recv) (void *impl, int flags);
    /* optional: subscriptions handled by the connector (else the handle
     * sends event.subscribe/unsubscribe requests) */
    int (*event_subscribe) (void *impl, const char *topic);
    int (*event_unsubscribe) (void *impl, const char *topic);
    void (*impl_destroy) (void *impl);
};

/* Open a handle.  flags: FLUX_O_TRACE, FLUX_O_EARLY.  Errors: EINVAL (bad uri),
 * ENOENT/ECONNREFUSED (no broker), EPERM (refused by the broker), ENOMEM.
 */
flux_t *flux_open (const char *uri, int flags);

/* Like flux_open() with a human readable reason on failure. */
typedef struct {
    char text[160];
} flux_error_t;
flux_t *flux_open_ex (const char *uri, int flags, flux_error_t *error);

/* Create a handle over a connector implementation (takes ownership of
 * impl: ops->impl_destroy is called on close or on failure).
 */
flux_t *flux_handle_create (void *impl, const struct flux_handle_ops *ops,
                            int flags);

/* Close the handle.  Pending futures are fulfilled with ECONNRESET if
 * they have no response yet.  NULL-safe, preserves errno.
 */
void flux_close (flux_t *h);

/* Send a message.  flags: FLUX_O_NONBLOCK (may fail with EWOULDBLOCK).
 * Socket connectors copy the message.  In-process connectors (msgpipe: a
 * broker module's handle) pass it by reference, and routing it pushes or
 * pops its route stack and stamps unset credentials on that same object,
 * possibly in another thread: after sending a message, do not modify,
 * read or send it again; copy it (flux_msg_copy) to send it twice.
 */
int flux_send (flux_t *h, const flux_msg_t *msg, int flags);

/* Send a message, handing over the caller's reference (*msg is set NULL
 * on success; on failure the caller keeps it).
 */
int flux_send_new (flux_t *h, flux_msg_t **msg, int flags);

/* Receive the next message: requeued ones first, then the connector.
 * flags: FLUX_O_NONBLOCK.  Caller owns the result.
 * Note: messages received this way bypass message handlers and futures;
 * most code should use the reactor or futures instead.
 */
flux_msg_t *flux_recv (flux_t *h, int flags);

/* Put a message back: at the head (FLUX_RQ_HEAD) or tail (FLUX_RQ_TAIL)
 * of the requeue list, which is read before the connector.  Takes a new
 * reference.
 */
enum { FLUX_RQ_HEAD = 1, FLUX_RQ_TAIL = 2 };
int flux_requeue (flux_t *h, const flux_msg_t *msg, int flags);

/* The reactor the handle's handlers and futures run on.  Created on first
 * use unless one was set.  flux_set_reactor() fails with EEXIST once a
 * reactor is in use.
 */
flux_reactor_t *flux_get_reactor (flux_t *h);
int flux_set_reactor (flux_t *h, flux_reactor_t *r);

/* Connector file descriptor and readiness (for foreign event loops). */
int flux_pollfd (flux_t *h);
int flux_pollevents (flux_t *h);

/* Matchtags (RFC 6).  flux_matchtag_alloc() returns a tag >= 1 never in use
 * (the lowest free), or FLUX_MATCHTAG_NONE with EAGAIN when exhausted.
 * flux_matchtag_free() returns it; a tag must not be freed until the last
 * response with it was received.
 */
uint32_t flux_matchtag_alloc (flux_t *h);
void flux_matchtag_free (flux_t *h, uint32_t matchtag);
uint32_t flux_matchtag_avail (flux_t *h);

/* Auxiliary data attached to the handle, destroyed with it.
 * Setting a NULL val deletes the key.
 */
int flux_aux_set (flux_t *h, const char *name, void *val, flux_free_f destroy);
void *flux_aux_get (flux_t *h, const char *name);

/* Handle flags (FLUX_O_TRACE) */
void flux_flags_set (flux_t *h, int flags);
void flux_flags_unset (flux_t *h, int flags);
int flux_flags_get (flux_t *h);

/* Message counters */
struct flux_msgcounters {
    int request_tx, request_rx;
    int response_tx, response_rx;
    int event_tx, event_rx;
    int control_tx, control_rx;
};
void flux_get_msgcounters (flux_t *h, struct flux_msgcounters *mcs);
void flux_clr_msgcounters (flux_t *h);

/* Event subscriptions by topic prefix ("" matches all). */
int flux_event_subscribe (flux_t *h, const char *topic);
int flux_event_unsubscribe (flux_t *h, const char *topic);

/* Write into an error buffer, returning -1 (for "return errprintf (...)").
 * error may be NULL.  errno is preserved.
 * Not part of libflux-core.so: a stateless helper of libflux-internal.la
 * for the code of this tree (src/common/libflux/Makefile.am).
 */
int errprintf (flux_error_t *error, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_HANDLE_H */
