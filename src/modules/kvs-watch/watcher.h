/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* watcher.h - one kvs-watch.lookup request and its progress.
 *
 * watcher_create() decodes and checks the request (PROTOCOLS.md 4); the
 * rest of the object is the state the engine (kvswatch.c) keeps for it.
 * The struct is shared by the module's files only.
 */
#ifndef KVS_WATCH_WATCHER_H
#define KVS_WATCH_WATCHER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "appendtrack.h"
#include "libflux/flux.h"
#include "libflux/list.h"
#include "libflux/waitlist.h"
#include "nsmon.h"

/* Lookup flags (PROTOCOLS.md 4). */
enum {
    KW_READDIR = 1,
    KW_READLINK = 2,
    KW_WATCH = 4,
    KW_WAITCREATE = 8,
    KW_TREEOBJ = 16,
    KW_APPEND = 32,
    KW_WATCH_FULL = 64,
    KW_WATCH_UNIQ = 128,
    KW_WATCH_APPEND = 256,
    KW_STREAM = 512,
    KW_WATCH_INITIAL_SENTINEL = 1024,
};
#define KW_KNOWN_FLAGS 2047

/* Content loads a watcher keeps in flight at most (APPEND, STREAM). */
#define KW_LOAD_WINDOW 8

enum watcher_mode {
    MODE_ONCE,   /* WAITCREATE alone: one value */
    MODE_WATCH,  /* WATCH: a value per change (UNIQ, FULL) */
    MODE_APPEND, /* WATCH|WATCH_APPEND: the appended bytes, per blob */
    MODE_STREAM, /* STREAM: the blobs of the value, then ENODATA */
};

struct watcher {
    /* the request */
    const flux_msg_t *req;
    char *ns_name;
    char *key; /* normalized */
    int flags;
    int lookup_flags; /* flags sent to the kvs */
    enum watcher_mode mode;
    struct flux_msg_cred cred;
    char *sender;
    uint32_t matchtag;
    char *id; /* sender + matchtag: the cancel index key */
    bool streaming;

    /* engine state */
    void *engine;
    nsmon_t *ns;
    struct nsmon_link link;
    struct list_node sendernode;
    struct list_node runnode; /* on the run queue */
    int last_seq;             /* root sequence of the last lookup done */
    int want_seq;             /* newest root sequence that changed the key */
    int sent_seq;             /* root of the lookup in flight (-1: current) */
    unsigned int sent_gen;    /* namespace generation when sent */
    bool initial;             /* next lookup is the first one */
    bool use_root;            /* next lookup at the monitor's root */
    bool responded;           /* a value was sent */
    bool sentinel_sent;
    bool busy;                   /* holds a lookup slot */
    bool queued;                 /* on the run queue */
    int failed_errno;            /* the lookup could not be sent */
    struct waitlist_item kvs_wi; /* refused (kvs reloading): waits */
    flux_future_t *lookup_f;
    json_t *prev;      /* UNIQ/FULL: the value sent last */
    appendtrack_t *at; /* APPEND */

    /* blobs being loaded and sent in order (APPEND, STREAM) */
    json_t *loadq;
    size_t load_next, load_done;
    flux_future_t *loads[KW_LOAD_WINDOW];
};

/* Decode a kvs-watch.lookup request {namespace:s, key:s, flags:i} and
 * create its watcher (state: initial lookup needed).  Errors, with a
 * human-readable reason in error: EPROTO (malformed payload, no sender,
 * WATCH or STREAM without FLUX_MSGFLAG_STREAMING, or a request that wants
 * no response), EINVAL (flag rules: unknown bits, WATCH with STREAM,
 * WATCH_FULL/UNIQ/APPEND without WATCH, INITIAL_SENTINEL without
 * WATCH_APPEND; empty namespace), ENOMEM.
 */
struct watcher *watcher_create (const flux_msg_t *msg, flux_error_t *error);

/* Free the watcher and whatever it still holds (futures in flight are
 * destroyed).  The caller detaches it from indexes first.  NULL-safe,
 * preserves errno.
 */
void watcher_destroy (struct watcher *w);

/* Check lookup flags as kvs-watch.lookup does; 0, or -1 with errno and
 * error text.  streaming tells whether the request was a streaming one.
 */
int watcher_check_flags (int flags, bool streaming, flux_error_t *error);

/* True if the watcher's credentials allow it to read a namespace owned by
 * owner (FLUX_USERID_UNKNOWN: not known yet, allowed here).
 */
bool watcher_allowed (const struct watcher *w, uint32_t owner);

#endif /* !KVS_WATCH_WATCHER_H */
