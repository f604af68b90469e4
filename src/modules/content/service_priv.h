/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_SERVICE_PRIV_H
#define CONTENT_SERVICE_PRIV_H

/* The content service's state, shared by service.c (requests, loads,
 * the backing store's registration, checkpoints) and writer.c (writes
 * and the barriers that wait for them).  Not for use outside this
 * module.  Everything runs on the module's one reactor thread.
 */
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "cache.h"
#include "service.h"

struct msgvec {
    const flux_msg_t **v;
    int n, cap;
};

struct wop;

/* What is in progress for one cache entry (its aux). */
struct pending {
    struct content_service *svc;
    struct cache_entry *e;
    struct msgvec loads;     /* content.load requests */
    struct msgvec validates; /* content.validate requests */
    struct msgvec stores;    /* rank > 0: content.store requests */
    flux_future_t *load_f;
    struct wop *wop; /* the write carrying this entry, in flight */
    bool queued;
    struct pending *qprev, *qnext; /* send queue */
    struct pending *prev, *next;   /* svc->pendings */
};

enum { W_FLUSH, W_CHECKPOINT };

/* A barrier: released once nothing made dirty before it is still
 * dirty (flush, checkpoint), or with a batching backing store, once all
 * that is in flight (checkpoint: it rides on the last write). */
struct waiter {
    struct waiter *next;
    int type;
    uint64_t barrier;
    const flux_msg_t *msg; /* NULL: internal checkpoint push */
    json_t *value;         /* W_CHECKPOINT */
};

struct waitq {
    struct waiter *head, *tail;
};

/* A request forwarded as is (checkpoints). */
struct op {
    struct content_service *svc;
    flux_future_t *f;
    const flux_msg_t *msg; /* NULL: internal */
    json_t *value;         /* checkpoint-put: what was sent */
    bool backing;
    struct op *prev, *next;
};

struct content_service {
    flux_t *h;
    struct content_config cfg;
    char hashtype[16];
    int hash_size;
    struct cache *cache;
    flux_msg_handler_t **handlers;

    char *backing; /* registered backing store, or NULL */
    /* a backing store module is loaded but not (yet) registered with us
     * (this module was reloaded): checkpoints wait for it, rather than
     * being kept in memory and answered before they are durable */
    bool backing_expected;
    bool detaching;
    const flux_msg_t *unregister_req;
    int backing_inflight; /* RPCs to content-backing.* */
    /* the backing store takes content-backing.write: blobs and the
     * checkpoint in one request, in one transaction */
    bool backing_write;
    uint32_t write_failures; /* content-backing.write errors seen */
    /* the last content-backing.write sent was lazy (not synced): a
     * flush must wait for a durable write after it (writer.c) */
    bool unsynced;

    struct pending *sendq_head, *sendq_tail;
    size_t sendq_bytes; /* bytes of the blobs in the send queue */
    int writes;         /* blobs being written */
    struct wop *wops;
    uv_idle_t *flush_w;      /* sends the queued writes at the next turn */
    uv_timer_t *linger_w;    /* sends lazy writes held too long (lazy_delay) */
    unsigned long lazy_held; /* times lazy writes were held */
    bool prompt; /* a content.store is queued: send without holding */
    struct pending *pendings;
    struct waitq waiters; /* flushes, and checkpoints waiting for clean */
    struct waitq cpq; /* checkpoints and flushes to send with the next write */
    struct op *ops;

    json_t *checkpoint;      /* rank 0: latest value kept in memory */
    bool checkpoint_unsaved; /* not yet given to a backing store */
};

/* service.c */
void msgvec_respond (flux_t *h, struct msgvec *mv, const void *data, size_t len,
                     int errnum, const char *errstr);
struct pending *pending_get (struct content_service *svc,
                             struct cache_entry *e);
void pending_gc (struct pending *p);
bool have_destination (struct content_service *svc);
void backing_lost (struct content_service *svc);
/* After any I/O: schedule writes, release barriers, finish a detach,
 * purge the cache. */
void after_io (struct content_service *svc);
/* Every blob stored before it is durable: save the checkpoint (to the
 * backing store with content-backing.checkpoint-put, or in memory). */
void checkpoint_commit (struct content_service *svc, const flux_msg_t *msg,
                        json_t *value);
/* A checkpoint (value) is durable in the backing store: keep it in
 * memory too, and answer msg (if not NULL). */
void checkpoint_saved (struct content_service *svc, const flux_msg_t *msg,
                       json_t *value);

/* writer.c */
int writer_init (struct content_service *svc);
/* Fail everything in flight or waiting (ENOSYS, why), close.  */
void writer_teardown (struct content_service *svc, const char *why);
void sendq_remove (struct content_service *svc, struct pending *p);
/* Queue a dirty entry to be written unless it already is, or is being
 * written, or there is nowhere to write it.  -1 only if out of memory. */
int enqueue_write (struct content_service *svc, struct cache_entry *e);
/* Queue every idle dirty entry with seq <= barrier (retries included). */
void requeue_dirty (struct content_service *svc, uint64_t barrier);
/* Drop the send queue (the backing store is leaving). */
void sendq_drop (struct content_service *svc);
/* Start the queued writes (now, or at the next loop turn when batching:
 * the writes of one turn then go in one request). */
void writer_kick (struct content_service *svc);
/* Add a barrier for msg (a flush or a checkpoint-put of value). */
int waiter_add (struct content_service *svc, int type, const flux_msg_t *msg,
                json_t *value);
/* True if nothing is dirty and no barrier waits. */
bool barrier_clear (struct content_service *svc);
/* Release the barriers whose blobs are all clean, in order. */
void waiters_check (struct content_service *svc);
/* Fail (and drop) every barrier covering seq (0: all). */
void waiters_fail (struct content_service *svc, uint64_t seq, int errnum,
                   const char *errstr);

#endif /* !CONTENT_SERVICE_PRIV_H */
