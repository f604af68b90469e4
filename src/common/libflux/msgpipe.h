/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_MSGPIPE_H
#define FLUX_MSGPIPE_H

/* A bidirectional, thread-safe message pipe between two ends in one
 * process (the broker and a module thread, or the broker and its own
 * built-in services).  Messages pass by reference: no copy, no encoding.
 *
 * Each end has a queue of messages waiting for it and an eventfd that is
 * readable while that queue is non-empty.  flux_msgpipe_open() wraps one
 * end as a flux_t, so a module uses the ordinary handle API.
 *
 * A message handed to flux_msgpipe_send() must not be modified afterwards
 * by the sender: the receiver may already be reading it.
 */
#include "handle.h"

struct flux_msgpipe;

/* Create a pipe with a reference count of 1. */
struct flux_msgpipe *flux_msgpipe_create (void);
struct flux_msgpipe *flux_msgpipe_incref (struct flux_msgpipe *p);
void flux_msgpipe_decref (struct flux_msgpipe *p);

/* Queue msg for the other end (end is 0 or 1: the sender's end).  Takes
 * the caller's reference on success.  EPIPE if the other end was closed.
 */
int flux_msgpipe_send (struct flux_msgpipe *p, int end, flux_msg_t *msg);

/* Like flux_msgpipe_send(), but refused with EAGAIN if the messages
 * waiting for the other end weigh over max_bytes with msg (each weighs
 * its encoded size, at least 256 bytes).  A message for an empty queue is
 * always taken.  For a sender that must not let a reader that stopped
 * reading hold memory without bound (the broker's requests to a module).
 * EINVAL if max_bytes is 0. */
int flux_msgpipe_send_bounded (struct flux_msgpipe *p, int end, flux_msg_t *msg,
                               size_t max_bytes);

/* Backpressure: flux_msgpipe_send() (and a handle's send) to 'end' waits
 * while the messages waiting for 'end' weigh over max_bytes with the new
 * one (0: no limit, the default), until the reader of 'end' has taken
 * enough (senders wake once half of the limit is free) or closed its end
 * (EPIPE).  Nothing is dropped or refused.  A message for an empty queue
 * is always taken.  Only for a pipe whose ends are served by different
 * threads, and whose reader never waits for the sender: a sender would
 * otherwise wait for ever.  flux_msgpipe_send_bounded() does not wait.
 * EINVAL on a bad end. */
int flux_msgpipe_set_limit (struct flux_msgpipe *p, int end, size_t max_bytes);

/* For the queue of 'end': the most it has weighed (bytes_max), and how
 * many sends had to wait under flux_msgpipe_set_limit() (waits); either
 * may be NULL. */
void flux_msgpipe_limit_stats (struct flux_msgpipe *p, int end,
                               size_t *bytes_max, uint64_t *waits);

/* The weight (see flux_msgpipe_send_bounded) of the messages waiting for
 * this end (a snapshot). */
size_t flux_msgpipe_bytes (struct flux_msgpipe *p, int end);

/* Next message for this end, or NULL with EWOULDBLOCK (empty) or EPIPE
 * (empty and the other end closed).  Caller owns the message.
 */
flux_msg_t *flux_msgpipe_recv (struct flux_msgpipe *p, int end);

/* How many messages wait for this end (a snapshot). */
size_t flux_msgpipe_count (struct flux_msgpipe *p, int end);

/* Readable while messages wait for this end (or the other end closed). */
int flux_msgpipe_pollfd (struct flux_msgpipe *p, int end);

/* Mark this end closed: the other end's recv then fails with EPIPE once
 * its queue is empty, and its sends fail with EPIPE. */
void flux_msgpipe_close (struct flux_msgpipe *p, int end);

/* Messages queued for this end no longer signal its eventfd: for a pipe
 * whose two ends are served by one thread, whose reader looks at
 * flux_msgpipe_count() before its loop would block (as a handle from
 * flux_msgpipe_open() does), so a message costs no system call.  Only
 * closing the other end still signals.  Set it before the pipe is used. */
void flux_msgpipe_set_quiet (struct flux_msgpipe *p, int end);

/* How a handle over 'end' sends (flux_msgpipe_open): instead of
 * flux_msgpipe_send (p, end, msg), call fn (p, end, msg, arg), which
 * takes the reference to msg when it returns 0 and not when it returns -1
 * (errno set).  It runs in the thread that sends.  Set it before the
 * handle is used. */
typedef int (*flux_msgpipe_send_f) (struct flux_msgpipe *p, int end,
                                    flux_msg_t *msg, void *arg);
void flux_msgpipe_set_send_hook (struct flux_msgpipe *p, int end,
                                 flux_msgpipe_send_f fn, void *arg);

/* How a handle over 'end' receives (flux_msgpipe_open): before it takes
 * a message, fn (p, end, arg) is asked, and while it returns false the
 * handle receives nothing (EWOULDBLOCK) though messages wait (its
 * pollevents still report them, so its loop keeps turning).  For a
 * reader whose owner bounds the work of each loop turn.  It runs in the
 * thread that receives.  Set it before the handle is used. */
typedef bool (*flux_msgpipe_gate_f) (struct flux_msgpipe *p, int end,
                                     void *arg);
void flux_msgpipe_set_recv_gate (struct flux_msgpipe *p, int end,
                                 flux_msgpipe_gate_f fn, void *arg);

/* A handle over one end (takes a pipe reference; closes the end on
 * flux_close).  flags as for flux_open. */
flux_t *flux_msgpipe_open (struct flux_msgpipe *p, int end, int flags);

#endif /* !FLUX_MSGPIPE_H */
