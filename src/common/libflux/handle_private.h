/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_HANDLE_PRIVATE_H
#define FLUX_HANDLE_PRIVATE_H

/* Internal: what handle.c shares with dispatch.c, rpc.c and future.c. */
#include <uv.h>

#include "handle.h"
#include "list.h"
#include "msgdeque.h"

/* A waiter for responses carrying one matchtag (an RPC in flight).
 * deliver() gets each response; it returns true when the waiter is done
 * (final response), and the handle then frees the tag.
 */
struct tag_waiter {
    bool (*deliver) (struct tag_waiter *w, const flux_msg_t *msg);
};

struct flux_handle {
    const struct flux_handle_ops *ops;
    void *impl;
    int flags;

    flux_reactor_t *reactor;
    int reactor_owned;
    int reactor_used;

    struct msgdeque requeue;

    /* matchtag pool: tags 1..next-1 were handed out; freed ones are kept
     * on a stack and reused lowest-recent first */
    uint32_t tag_next;
    uint32_t *tag_free;
    size_t tag_free_count, tag_free_cap;
    /* tag -> waiter (NULL if tag free or orphaned), grows with tag_next */
    struct tag_waiter **waiters;
    size_t waiters_cap;
    /* tags whose waiter went away before the final response: the slot
     * holds ORPHAN so the tag is not reused until that response arrives */

    struct dispatch *dispatch;
    struct aux_item *aux;
    struct flux_msgcounters counters;

    /* reactor integration */
    uv_poll_t *poll_w;
    uv_prepare_t *prep_w;
    uv_check_t *check_w;
    uv_idle_t *idle_w;
    int active_count; /* started handlers + pending continuations */
    int pollfd;
};

extern struct tag_waiter handle_orphan_waiter;

/* Register/unregister a waiter for a tag (tag from flux_matchtag_alloc). */
int handle_waiter_set (flux_t *h, uint32_t tag, struct tag_waiter *w);
/* Detach the waiter from its tag.  If final is false (responses may still
 * come) the tag is orphaned and freed only when the final response
 * arrives; otherwise the tag is freed now.
 */
void handle_waiter_clear (flux_t *h, uint32_t tag, bool final);

/* Deliver msg to its tag waiter if it has one.  Returns true if consumed. */
bool handle_deliver_response (flux_t *h, const flux_msg_t *msg);

/* Receive from the connector only (not the requeue list). */
flux_msg_t *handle_recv_connector (flux_t *h, int flags);

/* Wait synchronously until done(arg) is true: receive messages from the
 * connector, deliver responses to their tag waiters, requeue the rest.
 * timeout < 0 means forever.  Returns 0, or -1 with ETIMEDOUT or a
 * connector error.
 */
int handle_sync_wait (flux_t *h, bool (*done) (void *arg), void *arg,
                      double timeout);

/* Reactor liveness: a started message handler or a future waiting for
 * its continuation keeps flux_reactor_run() from returning.
 */
void handle_active_incref (flux_t *h);
void handle_active_decref (flux_t *h);

/* Called by the reactor watcher to dispatch one message (dispatch.c). */
void dispatch_message (flux_t *h, const flux_msg_t *msg);
void dispatch_destroy (flux_t *h);

/* Trace output of one message to stderr (FLUX_O_TRACE). */
void handle_trace (flux_t *h, const char *dir, const flux_msg_t *msg);

#endif /* !FLUX_HANDLE_PRIVATE_H */
