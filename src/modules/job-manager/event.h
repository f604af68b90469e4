/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_EVENT_H
#define JOBMGR_EVENT_H
/* event - posting job events: apply, log to the KVS, journal, act.
 *
 * event_post() applies the event to the job's jobstate (refusing it,
 * with nothing changed, if RFC 21 does not allow it), appends it to the
 * job's eventlog in the current KVS transaction, hands it to the
 * journal, and then runs the job manager's reaction to it (action.c),
 * which may post further events.
 *
 * A commit the kvs refuses with ENOSYS (unloading, or not loaded) was not
 * applied: it is kept, and sent again when the kvs announces itself
 * (event_kvs_online).  Any other failure is fatal (event.c).
 *
 * Batching: all events posted while a commit is in flight, and at least
 * all those posted in one loop iteration, go into ONE transaction, one
 * kvs.commit.  Only one commit is in flight at a time, so eventlog
 * appends reach the KVS in the order they were posted.  Things that must
 * wait until the events before them are in the KVS (responses to wait,
 * drain, purge ...) are queued with event_after_commit().  The appends of
 * a job past NEW are held back (20 ms at most from the first held, or
 * until clean) so that a short job's life after submit is one append, a
 * longer one's start one and its end another; event_after_commit() ends
 * the holds of its batch.
 *
 * After event_post() returns, job->x may be NULL: the job became
 * inactive and was compacted.
 */
#include <jansson.h>

#include "jobmgr.h"

enum {
    EVENT_NO_COMMIT = 1, /* journal only (submit is already in the KVS) */
};

struct event *event_create (struct jobmgr *jm);
void event_destroy (struct event *ev);

/* The longest a held job's appends wait for a commit (ms; default 20,
 * 0: no hold).  The job manager's hold-ms=N argument. */
void event_set_hold (struct event *ev, int ms);

/* Post event 'name' with context (a reference is taken; NULL for none)
 * for an active job.  Returns 0, or -1 with errno (EINVAL: refused by
 * the state machine, logged with the reason in error if non-NULL).
 */
int event_post (struct jobmgr *jm, struct job *job, const char *name, int flags,
                json_t *context, flux_error_t *error);
int event_post_pack (struct jobmgr *jm, struct job *job, const char *name,
                     int flags, const char *fmt, ...);
/* Post a prepared RFC 18 entry (its timestamp is kept). */
int event_post_entry (struct jobmgr *jm, struct job *job, json_t *entry,
                      int flags, flux_error_t *error);

/* Add a put or an unlink to the current transaction (ahead of events
 * posted later).  value NULL unlinks key.  -1 with errno. */
int event_kvs_put (struct jobmgr *jm, const char *key, json_t *value);

/* Put job.<id>.<name> (the job's R) in the commit that carries the job's
 * next appends, ahead of them (it is held with them).  At most one such
 * put waits per job: another name first commits the one before.  -1
 * with errno. */
int event_job_put (struct jobmgr *jm, struct job *job, const char *name,
                   json_t *value);

/* Call fn (jm, arg, errnum) once the events posted so far are committed
 * (errnum 0), or the commit failed (errnum set).  -1 with ENOMEM. */
typedef void (*event_commit_f) (struct jobmgr *jm, void *arg, int errnum);
int event_after_commit (struct jobmgr *jm, event_commit_f fn, void *arg);

/* Respond to msg once the events posted so far are committed: with
 * payload (a reference is taken; NULL: no payload) on success, with the
 * commit's error otherwise. */
int event_respond_after_commit (struct jobmgr *jm, const flux_msg_t *msg,
                                json_t *payload);

/* Start a commit of what was batched, unless one is in flight (called
 * once per loop iteration). */
void event_flush (struct event *ev);

/* Commit everything synchronously (module unload): waits for the commit
 * in flight, then commits the rest.  -1 with errno on failure. */
int event_flush_sync (struct event *ev);

/* The kvs came back (its kvs.online event): a commit it refused with
 * ENOSYS while it was unloading or absent (never applied, so safe to
 * send again) is sent again; meanwhile events kept batching. */
void event_kvs_online (struct event *ev);

/* Transactions committed and the largest number of events in one. */
void event_stats (struct event *ev, unsigned long *commits,
                  unsigned long *max_batch);

#endif /* !JOBMGR_EVENT_H */
