/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* engine_private.h - the inside of the engine, shared by engine.c
 * (start-up, resources, status) and alloc.c (the RFC 27 requests, the
 * queue and the batched R commits).
 */
#ifndef SCHED_SIMPLE_PRIVATE_H
#define SCHED_SIMPLE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "job.h"
#include "libflux/waitlist.h"
#include "libkvs/kvs.h"
#include "librlist/rlist.h"
#include "engine.h"

enum sched_state {
    SCHED_ACQUIRING = 1, /* waiting for the first resource.acquire answer */
    SCHED_HELLO = 2,     /* replaying allocated jobs */
    SCHED_READYING = 3,  /* sched-ready sent */
    SCHED_READY = 4,
};

/* The R of the jobs allocated in one loop turn, committed together. */
struct batch {
    flux_kvs_txn_t *txn;
    struct job **jobs;
    json_t **R; /* each job's R, also sent in its success response */
    int count;
    int max;
    flux_future_t *f;            /* the commit, once sent */
    struct waitlist_item kvs_wi; /* refused: waits for kvs.online */
    double t_sent;               /* when (monotonic seconds) */
    struct batch *next;
    struct batch *prev;
};

struct sched {
    flux_t *h;
    int queue_depth; /* 0: unlimited */
    enum sched_state state;
    struct rlist *rl;  /* NULL until acquired */
    json_t *all_R;     /* cache of rl as R, none allocated */
    double expiration; /* of the instance's resources, 0 = none */
    struct jobtab *jobs;
    struct jobq *queue;
    flux_future_t *acquire_f;
    flux_future_t *hello_f;
    flux_future_t *ready_f;
    /* hello replay: ids whose R is still to be looked up */
    uint64_t *replay;
    int nreplay;
    int maxreplay;
    int replay_next;
    int lookups; /* in flight */
    bool hello_done;
    /* the loop-turn work: schedule, then commit the batch */
    struct flux_deferred deferred;
    bool need_schedule;
    struct batch *batch;    /* being filled */
    struct batch *inflight; /* committing */
    /* batches whose commit the kvs refused (unloading or absent), sent
     * again on kvs.online */
    struct waitlist kvs_wait;
    struct {
        unsigned long allocs, annotates, denies, cancels, frees, commits;
        unsigned long partial_frees; /* sched.free final:false applied */
        unsigned long free_errors;   /* sched.free refused (bad R, ranks
                                      * not held, unknown job) */
        unsigned long tries;
        double alloc_time;
        double commit_time; /* R commits: seconds from send to answer */
    } stats;
};

void sched_log (sched_t *s, int severity, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Ask for schedule() and a batch commit at the start of the next loop
 * turn (once, however often it is called). */
void sched_kick (sched_t *s);
/* The deferred work itself (alloc.c). */
void sched_loop_turn (sched_t *s);
/* Free the batches (alloc.c). */
void sched_batches_destroy (sched_t *s);
void sched_kvs_resend (struct waitlist *wl, struct waitlist_item *it,
                       void *arg);

/* "job.0000.0004.b200.0000.R" */
void sched_job_key (char *buf, size_t size, uint64_t id, const char *name);

#endif /* !SCHED_SIMPLE_PRIVATE_H */
