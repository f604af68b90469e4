/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef REXEC_BULK_H
#define REXEC_BULK_H

/* bulk - rexec.bulk-exec: one command on a set of ranks, taken down the
 * tree once, its outcome reduced up it (flux-exec(1) says when flux exec
 * uses it).  RFC 42's exec costs each rank's five responses (started,
 * two EOFs, finished, ENODATA) a hop per tree level on their way to the
 * client: ~1,000 message hops for `flux exec -r all true` on 64 brokers
 * (fanout 2).  Here the request goes down once per tree edge, the output
 * goes up as it comes, and each broker combines the outcomes of its
 * subtree: a subtree that is done sends one report per distinct outcome
 * but exit 0, then its end (which says: the rest exited 0).
 *
 * Methods (owner only, as the rest of rexec):
 *   bulk-exec {cmd:o, flags:i, ranks:s, window?:I}  streaming.  flags:
 *     stdout (1) and stderr (2) only.  ranks: an idset of ranks in the
 *     receiving broker's subtree (the client asks rank 0).  window: the
 *     bytes of output responses (their payloads' length) the requester
 *     takes before it credits them back (BULK_WINDOW if absent; from
 *     BULK_WINDOW_MIN to BULK_WINDOW_MAX).  The processes' stdin is
 *     empty (closed at once).  Responses:
 *       {type:"output", io:{stream, rank, data, encoding?}}  as it comes,
 *         while less than window bytes of them are not credited (a
 *         line-buffered stream's complete lines of one read are one
 *         piece; no EOFs: a rank's output is over when its outcome comes);
 *       {type:"exit", ranks:s, status:i}  the wait status of ranks;
 *       {type:"error", ranks:s, errnum:i, error:s}  ranks that did not
 *         run (spawn failure), or were lost on the way (a broker between
 *         them and here went away, or refused the request);
 *     then ENODATA once every rank's outcome is known: the ranks with
 *     none sent exited 0 (a 0 is sent only for ranks done BULK_HOLD_MS
 *     before the rest).  Any other error ends the stream with the ranks
 *     not reported lost (ENOMEM: an outcome could not be sent).  A
 *     request that cannot start at all is one error response.
 *   bulk-kill {matchtag:i, signum:i}  NORESPONSE: signum to the processes
 *     of the sender's bulk-exec with that matchtag, down the tree.
 *   bulk-credit {matchtag:i, bytes:I}  NORESPONSE: the sender of that
 *     bulk-exec is done with bytes more of its output (the sum of the
 *     payload lengths of output responses it consumed: printed, or sent
 *     on up); -1: it needs no more credit (it stopped following).  A
 *     requester that credits nothing gets at most a window of output,
 *     and then the processes block on their full pipes: memory stays
 *     bounded however slowly (or not at all) the client reads.  The
 *     client credits in pieces of about a quarter window.
 *
 * A client that disconnects while its processes run (the broker sends
 * rexec.disconnect) has them killed on every rank; the session then ends
 * quietly.  An outcome is held at most BULK_HOLD_MS (100 ms) before it
 * goes up, less once every rank of the share has one.  So a subtree
 * whose processes all exit 0 together costs each tree edge two messages:
 * the request down, the end up.
 */
#include "libflux/flux.h"
#include "libsubprocess/subprocess.h"

#define BULK_WINDOW (256 * 1024)
#define BULK_WINDOW_MIN 4096
#define BULK_WINDOW_MAX (64 * 1024 * 1024)

struct bulk;

/* Register the methods on h (rank, the broker's tree from
 * topology_create_broker).  check: the rank-0 auth check of rexec, or
 * NULL.  NULL with errno and error set. */
struct bulk *bulk_create (flux_t *h, subprocess_server_t *srv,
                          subprocess_server_auth_f check, flux_error_t *error);

/* Every session ends: requesters still there get ENOSYS, processes still
 * running get SIGKILL.  NULL-safe. */
void bulk_destroy (struct bulk *b);

/* A client went (the rexec server's disconnect callback). */
void bulk_disconnect (const flux_msg_t *msg, void *arg);

/* {sessions, running, child-responses, reports, credits (sent to
 * children), pauses (of local processes)}: a new object. */
json_t *bulk_stats (struct bulk *b);

#endif /* !REXEC_BULK_H */
