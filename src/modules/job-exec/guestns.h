/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOB_EXEC_GUESTNS_H
#define JOB_EXEC_GUESTNS_H

/* guestns - each job's guest KVS namespace and its exec.eventlog (RFC 16;
 * PROTOCOLS-exec.md 2.4), kept by the job-exec core for every job,
 * whatever implementation runs it.
 *
 *   open    create namespace "job-<decimal id>" owned by the job's user
 *           (one that exists already, left by an earlier job-exec, is
 *           adopted), link job.<dothex>.guest to it in the primary
 *           namespace (symlink {namespace, target:"."}), and append
 *           "init" and "starting" ("reattach" alone on reattach) to
 *           exec.eventlog: both are committed before the shells' first
 *           event (a "starting" left to the GUEST_BATCH timer came
 *           after a fast shell's shell.init).  The
 *           callback says GUEST_OPENED when the shells may start: for a
 *           new job as soon as the create and the init commit are sent
 *           (together: the kvs applies them in that order, ahead of
 *           anything a shell sends later), possibly before guest_open()
 *           returns, and a failure of either is then a GUEST_ERROR; on
 *           reattach once the namespace exists and "reattach" is
 *           committed.  The symlink, a
 *           primary commit, is usually still in flight then;
 *           guest_is_linked() tells, and GUEST_LINKED says when it is
 *           committed (GUEST_ERROR if that fails), so that what must
 *           follow it (the start response: clients then read the
 *           guest.* paths) waits only for it, not the shells.  On
 *           reattach, a job.<dothex>.guest that is a directory (the
 *           namespace's content grafted there) seeds a namespace that
 *           no longer exists.
 *   post    append an event to exec.eventlog: events are buffered
 *           GUEST_BATCH seconds (flux-core: 10 ms) and committed
 *           together, one commit in flight per job at a time.
 *   close   append "done", commit what is buffered, put the namespace's
 *           final root at job.<dothex>.guest (a dirref replaces the
 *           symlink), then GUEST_CLOSED as the namespace's removal is
 *           sent: readers have the copy, so the job's release need not
 *           wait for the removal's answer.  A guest destroyed meanwhile
 *           stays, silent, until the removal is answered.
 *
 * Primary-namespace writes (the symlinks and the final dirrefs of many
 * jobs) share one commit: what accumulates while a commit is in flight
 * (or during one loop turn) goes in the next.  Those commits are LAZY
 * (libkvs/kvs.h): no fsync of their own; the job manager's events that
 * follow them (start after the symlink, release and free after the
 * copy) are durable commits, whose checkpoints cover them.
 *
 * The kvs may go away (unloading: ENOSYS): every step waits for
 * kvs.online (guestns_kvs_online) and is sent again.  The kvs keeps the
 * namespaces across a reload; one that disappeared under a job all the
 * same (ENOTSUP) is created again holding the events job-exec posted
 * (what the shells wrote is lost, and a line in the log says so).
 * Other errors while opening end the open with GUEST_OPENED and errnum;
 * while running, GUEST_ERROR; while closing they are logged and closing
 * goes on (GUEST_CLOSED with the first errnum).  Callbacks may destroy
 * the guest.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "libflux/flux.h"
#include "libjob/job.h"
#include "timerq.h"

#define GUEST_BATCH 0.01

typedef struct guestns guestns_t;
struct guest;

enum guest_event { GUEST_OPENED, GUEST_LINKED, GUEST_ERROR, GUEST_CLOSED };

/* errnum 0: success; else errstr says what failed.  The callback may
 * destroy the guest, except on GUEST_LINKED and on a GUEST_ERROR said
 * while closing (a new job's create or init failed after it ended). */
typedef void (*guest_f) (struct guest *g, enum guest_event ev, int errnum,
                         const char *errstr, void *arg);

guestns_t *guestns_create (flux_t *h, timerq_t *tq);
/* Every guest must have been destroyed.  NULL-safe. */
void guestns_destroy (guestns_t *gs);

/* Unloading (synchronous, each wait bounded by timeout seconds): put the
 * current root of each open namespace with nothing in flight at
 * job.<id>.guest (with the events not yet committed appended), in one
 * primary commit, leaving the namespaces in place, so that a reattach
 * can seed a namespace lost meanwhile (PROTOCOLS-exec.md 2.9).  Returns
 * the number of namespaces grafted, or -1 if the commit failed. */
int guestns_graft (guestns_t *gs, double timeout);
/* The kvs announced itself: the steps it refused are sent again. */
void guestns_kvs_online (guestns_t *gs);

struct guestns_stats {
    unsigned long opened, closed, adopted, restored, commits, events,
        primary_commits, primary_ops, errors;
};
const struct guestns_stats *guestns_stats (guestns_t *gs);

/* A guest for job id, owned by userid; cb reports as above. */
struct guest *guest_create (guestns_t *gs, flux_jobid_t id, uint32_t userid,
                            guest_f cb, void *arg);
/* Stop whatever is in flight (no more callbacks); the namespace and the
 * primary link stay as they are, except that a removal already sent
 * after GUEST_CLOSED is seen through.  NULL-safe. */
void guest_destroy (struct guest *g);

int guest_open (struct guest *g, bool reattach);
/* Append event name with context (a JSON object, or NULL); the context
 * is borrowed.  Ignored (0) once close was called. */
int guest_post (struct guest *g, const char *name, json_t *context);
/* Close (see above).  May be called while the open is under way: the
 * open's callback is then not made. */
int guest_close (struct guest *g);

/* The namespace name, "job-<id>". */
const char *guest_namespace (const struct guest *g);
bool guest_is_open (const struct guest *g);
/* The open was a reattach that found job.<id>.guest a directory (the
 * namespace's copy, from its close or a graft) and seeded the namespace
 * from it. */
bool guest_was_copied (const struct guest *g);
/* job.<id>.guest is committed (or its commit failed: GUEST_ERROR was
 * said) and, for a new job, the namespace it names was created with init
 * in it (or that failed: GUEST_ERROR), or the guest was never opened.
 * GUEST_LINKED is said even while closing. */
bool guest_is_linked (const struct guest *g);

#endif /* !JOB_EXEC_GUESTNS_H */
