/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs.h - the kvs module's shared state and the entry points of its
 * service files, for main.c:
 *
 *   commit.c     kvs.commit / kvs.relaycommit: rank 0 applies commits in
 *                batches (group commit) and makes them durable; ranks > 0
 *                relay them to rank 0
 *   lookupsvc.c  kvs.lookup / kvs.lookup-plus, parked while objects load
 *   nssvc.c      namespaces: roots and their updates (setroot events),
 *                kvs.getroot, kvs.wait-version, kvs.namespace-*, and on
 *                ranks > 0 learning a namespace from upstream
 *
 * Everything runs on the module's one reactor thread.
 */
#ifndef KVS_KVS_H
#define KVS_KVS_H

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "libcontent/blobref.h"
#include "libflux/flux.h"
#include "libflux/list.h"
#include "libflux/waitlist.h"

#include "cache.h"
#include "dict.h"
#include "ns.h"

struct kvs_stats {
    unsigned long commits;       /* commits answered successfully */
    unsigned long commit_errors; /* commits answered with an error */
    unsigned long batches;       /* root changes */
    unsigned long max_batch;     /* most commits in one batch */
    unsigned long lookups;
    unsigned long relays;
    unsigned long lazy_batches; /* primary batches not checkpointed */
    unsigned long lazy_first;   /* lazy batches taken ahead of durable
                                   commits (commit.c lazy_first) */
    unsigned long overtakes;    /* lazy batches answered ahead of a
                                   durable one in flight (may_overtake) */
    unsigned long behind;       /* content.writes answered behind */
    unsigned long deferred;     /* checkpoints that waited for them */
    double apply_time;          /* seconds applying batches (to the new root) */
    double store_time;          /* seconds waiting for stores and checkpoints */
    double queue_time;  /* seconds commits waited for their batch to start */
    double commit_time; /* seconds from arrival to answer, over commits */
};

struct kvs_ctx {
    flux_t *h;
    uint32_t rank;
    uint32_t owner; /* instance owner */
    char hashtype[16];
    char empty_ref[BLOBREF_MAX_STRING_SIZE]; /* the empty dir's blobref */
    struct cache *cache;
    struct nstab *nstab;

    size_t inline_max;  /* vals larger than this are stored as blobs */
    int hdir_maxdirent; /* bigger dirs are stored as hdirs (apply.h) */
    size_t cache_max;   /* clean cache entries kept */
    size_t cache_max_bytes;
    int cache_max_age;       /* seconds an unused entry is kept (0: no limit) */
    uv_timer_t *age_timer;   /* ticks the cache's age (cache_age) */
    unsigned int age_ticks;  /* max_age in ticks of the timer */
    int batch_max;           /* most commits applied as one batch */
    int write_chunk;         /* most blobs in one content.write */
    int pipeline;            /* most batches in flight per namespace */
    int linger_ms;           /* longest wait to gather a batch (0: never) */
    struct list_node settle; /* namespaces with new commits */
    struct flux_deferred settle_defer; /* ... settled at the turn's end */
    uv_timer_t *linger_timer;
    bool checkpoint; /* rank 0: primary roots are checkpointed */
    /* the primary root moved by a LAZY batch since the last checkpoint:
     * checkpointed at the unload */
    bool checkpoint_behind;
    bool final_sent; /* the unload's checkpoint (once) */

    bool stopping; /* shutdown began: no new commits */
    /* content.write chunks the content service refused (unloading or
     * absent), sent again on content.online */
    struct waitlist content_wait;
    int inflight; /* commit batches and relays not finished */
    uv_timer_t *stop_timer;

    struct list_node lookups; /* parked lookups */
    struct list_node creates; /* namespace-create waiting for its root */
    struct list_node relays;  /* rank > 0: commits relayed to rank 0 */
    struct list_node batches; /* rank 0: batches in flight */
    /* rank 0: content.writes of batches already answered (commit.c,
     * write-behind); a checkpoint write is sent only once every one sent
     * before it was answered */
    struct list_node behind; /* in the order sent */
    int behind_pending;
    size_t behind_bytes;
    unsigned long behind_seq;  /* writes behind sent so far */
    struct list_node deferred; /* checkpoint writes waiting for them */
    int behind_errnum;         /* one failed: no checkpoint is saved */
    size_t behind_max;         /* larger blobs are not written behind */
    char behind_errstr[160];
    struct list_node forwards; /* rank > 0: requests forwarded to rank 0 */
    struct dict *fetches;      /* rank > 0: namespaces being learned */
    unsigned long name_seq;

    struct kvs_stats stats;
};

/* Send a line to the broker log (RFC 5424 severity, e.g. LOG_ERR). */
void kvs_log (struct kvs_ctx *ctx, int severity, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* uv_close callback freeing a handle allocated with malloc. */
void kvs_free_handle (uv_handle_t *h);

/* Shutdown: stop the reactor once nothing is in flight. */
void kvs_check_stop (struct kvs_ctx *ctx);

/* True if msg's sender may read/write namespace ns (owner, or a guest
 * whose userid owns it).
 */
bool kvs_authorized (const flux_msg_t *msg, const struct kvs_ns *ns);

/* Respond to msg with errnum and an optional formatted message. */
void kvs_respond_error (struct kvs_ctx *ctx, const flux_msg_t *msg, int errnum,
                        const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

/* commit.c */
void commit_request_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg);
void relaycommit_request_cb (flux_t *h, flux_msg_handler_t *mh,
                             const flux_msg_t *msg, void *arg);
/* A namespace was removed: its queued commits fail with ENOTSUP. */
void commit_ns_removed (struct kvs_ctx *ctx, struct kvs_ns *ns);
void commit_teardown (struct kvs_ctx *ctx);
/* A content service announced itself (content.online): content.write
 * chunks it refused with ENOSYS, kept with their batches, go again. */
void commit_content_online (struct kvs_ctx *ctx);
/* Set up the commit engine's part of ctx. */
void commit_init (struct kvs_ctx *ctx);
/* Start the batches of the commits that arrived this turn now, not at
 * the turn's end (shutdown). */
void commit_settle_now (struct kvs_ctx *ctx);

/* lookupsvc.c */
void lookup_request_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg);
void lookup_plus_request_cb (flux_t *h, flux_msg_handler_t *mh,
                             const flux_msg_t *msg, void *arg);
void lookupsvc_disconnect (struct kvs_ctx *ctx, const flux_msg_t *msg);
/* Parked lookups (not canceled). */
int lookupsvc_parked (struct kvs_ctx *ctx);
void lookupsvc_teardown (struct kvs_ctx *ctx);

/* nssvc.c */
int nssvc_init (struct kvs_ctx *ctx);

/* A root update for ns (from a batch, a setroot event or a relayed
 * commit's answer): applied unless older or held by setroot-pause; wakes
 * the waiters it satisfies.
 */
void nssvc_set_root (struct kvs_ctx *ctx, struct kvs_ns *ns,
                     const char *rootref, int rootseq);

/* Answer msg with {rootref, rootseq} once ns reaches rootseq (at once if
 * it has).  Used for wait-version and for relayed commits.  ref NULL:
 * answer with the namespace's root at that time.
 */
int nssvc_wait_root (struct kvs_ctx *ctx, struct kvs_ns *ns,
                     const flux_msg_t *msg, int rootseq, const char *ref);

/* The namespace called name, authorized for msg.  NULL with:
 *  - the request answered (ENOTSUP, EPERM) and *parked false, or
 *  - on ranks > 0 when name is not known yet, the request parked while
 *    the namespace is learned from upstream (*parked true): handler is
 *    called again with msg then.
 */
struct kvs_ns *nssvc_get (struct kvs_ctx *ctx, const char *name,
                          const flux_msg_t *msg, flux_msg_handler_f handler,
                          bool *parked);

/* Rank 0: if a namespace-create of name waits for its root to load,
 * park msg with it (true): handler is called again with msg once the
 * create is answered, in arrival order.  False otherwise (answer msg as
 * for a namespace that does not exist).
 */
bool nssvc_park_on_create (struct kvs_ctx *ctx, const char *name,
                           const flux_msg_t *msg, flux_msg_handler_f handler);

/* Learn namespace name from upstream (ranks > 0), then call
 * cb (ctx, errnum, arg).  0, or -1 with errno if the fetch cannot start.
 */
/* Ranks > 0: the root ref of namespace name could not be loaded
 * (ENOENT): if it is still the namespace's root, it is not a real one
 * (a forged setroot event); ask rank 0 for the root. */
void nssvc_root_missing (struct kvs_ctx *ctx, const char *name,
                         const char *ref);

typedef void (*nssvc_fetch_f) (struct kvs_ctx *ctx, int errnum, void *arg);
int nssvc_fetch (struct kvs_ctx *ctx, const char *name, const flux_msg_t *msg,
                 nssvc_fetch_f cb, void *arg);

/* Requests waiting for a root version or for a namespace. */
int nssvc_parked (struct kvs_ctx *ctx);

/* Drop a disconnecting client's parked requests. */
void nssvc_disconnect (struct kvs_ctx *ctx, const flux_msg_t *msg);
void nssvc_teardown (struct kvs_ctx *ctx);

void getroot_request_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg);
void wait_version_request_cb (flux_t *h, flux_msg_handler_t *mh,
                              const flux_msg_t *msg, void *arg);
void ns_create_request_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg);
void ns_remove_request_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg);
void ns_list_request_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg);
void setroot_pause_request_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg);
void setroot_unpause_request_cb (flux_t *h, flux_msg_handler_t *mh,
                                 const flux_msg_t *msg, void *arg);
void ns_event_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                  void *arg);

#endif /* !KVS_KVS_H */
