/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_JOBMGR_H
#define JOBMGR_JOBMGR_H
/* jobmgr - the job manager's shared context and the helpers every part
 * uses.  Each part (event, alloc, start, journal, ...) is an object of
 * its own, created by jobmgr_create() in dependency order and reached
 * through this context; main.c only wires request handlers to them.
 *
 * The engine can run without a broker: everything talks through the
 * flux_t handle it is given, so tests may drive it over loop://.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "libflux/flux.h"
#include "job.h"

#include "libutil/strpool.h"

struct event;
struct alloc;
struct start;
struct journal;
struct waitq;
struct depend;
struct queue;
struct history;
struct purge;

struct jobmgr {
    flux_t *h;
    uint32_t owner;     /* instance owner userid */
    strpool_t *strings; /* jobspec and environment texts, shared */
    struct jobtab *jobs;
    struct event *event;
    struct alloc *alloc;
    struct start *start;
    struct journal *journal;
    struct waitq *wait;
    struct depend *depend;
    struct queue *queue;
    struct history *history; /* per user, for flux job last */
    struct purge *purge;     /* automatic purge of inactive jobs */

    struct list_node resources; /* active jobs holding resources */
    struct list_node doomed;    /* jobs to free at the next loop turn */
    struct list_node futures;   /* futures in flight (jm_track) */

    flux_jobid_t max_jobid;
    int nstate[8];         /* jobs per state, by bit index of the state */
    unsigned long nevents; /* events posted since load */
    bool restarted;        /* at least one job came from the KVS */
    bool shutdown;         /* unloading: answer nothing new */
    uv_prepare_t *prep;    /* once per loop turn: flush and schedule */
};

/* Create every part.  NULL with errno on failure. */
struct jobmgr *jobmgr_create (flux_t *h);
void jobmgr_destroy (struct jobmgr *jm);

/* Start the per-loop-iteration work (after restart, before serving). */
int jobmgr_start (struct jobmgr *jm);

/* Count a job entering or leaving a state (for stats and drain/idle). */
void jobmgr_state_count (struct jobmgr *jm, int state, int delta);
int jobmgr_count (const struct jobmgr *jm, int statemask);

/* Wall-clock time in seconds (the clock of eventlog timestamps). */
double jm_now (void);

/* Log a line to the broker log (RFC 5424 severity, e.g. LOG_ERR). */
void jm_log (struct jobmgr *jm, int severity, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Respond with an error whose text is printf-formatted (fmt may be
 * NULL).  Logs nothing. */
void jm_respond_error (struct jobmgr *jm, const flux_msg_t *msg, int errnum,
                       const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

/* Look up an active or inactive job for a request and check that the
 * requester is its owner or the instance owner.  On failure responds
 * (ENOENT "unknown job ID", EPERM) and returns NULL. */
struct job *jm_job_for_request (struct jobmgr *jm, const flux_msg_t *msg,
                                flux_jobid_t id);

/* Keep f (whose continuation is set) on the list of futures destroyed
 * with the job manager, so no continuation can run after it is gone.
 * f leaves the list when it is destroyed.  -1 with ENOMEM. */
int jm_track (struct jobmgr *jm, flux_future_t *f);

/* True if the message comes from the instance owner (role OWNER). */
bool jm_is_owner (const flux_msg_t *msg);

/* The bit index (0..7) of a state, for nstate[]. */
int jm_state_index (int state);

#endif /* !JOBMGR_JOBMGR_H */
