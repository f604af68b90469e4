/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* cache.c - kvs object cache (see cache.h): a dict of entries plus an LRU
 * list, one load in flight per blobref, waiters per entry.
 *
 * Only entries that may expire are on the LRU (and cold) lists: one in
 * use (dirty, loading, waited for or held) is on the busy list until it is
 * not, so expiring walks nothing but what it expires.  (A burst of
 * commits leaves thousands of entries dirty; walking over them on every
 * insert once the cache was full took a tenth of the broker's time.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcontent/blobref.h"
#include "libflux/list.h"
#include "libkvs/treeobj.h"

#include "blob.h"
#include "cache.h"
#include "dict.h"

/* Replaced directory versions (cache_forget) are kept this long in case
 * they are still in use elsewhere: identical directories share a blob. */
#define CACHE_COLD_BYTES ((size_t)8 << 20)

/* What an entry costs, as the byte bound counts it: the entry itself
 * and its dict slot, the blob, and for a decoded tree object an estimate
 * of the jansson objects (measured: a small directory or jobspec takes
 * 6 to 17 times its JSON text decoded). */
#define ENTRY_OVERHEAD 200
#define DECODED_FACTOR 6

struct waiter {
    struct waiter *next;
    cache_wait_f cb;
    void *arg;
};

struct entry {
    struct list_node lru; /* on c->lru (head = most recently used), c->cold
                             or c->busy */
    bool cold;
    bool forget;        /* replaced while in use: cold once it is not */
    bool busy;          /* on c->busy: !expirable() */
    unsigned int epoch; /* c->epoch when last used (0: demoted) */
    json_t *obj;        /* decoded tree object, or NULL */
    struct blob *raw;   /* the blob, or NULL */
    size_t size;        /* bytes accounted (account()) */
    size_t objlen;      /* encoded size of obj */
    bool stored;        /* known to be in the content store */
    int dirty;          /* stores pending */
    int holds;          /* cache_hold() not yet released */
    void *load;         /* load in flight, or NULL */
    struct waiter *waiters, **tail;
    char ref[BLOBREF_MAX_STRING_SIZE];
};

struct cache {
    struct dict *entries;
    struct list_node lru;
    struct list_node cold; /* replaced dir versions, newest first */
    struct list_node busy; /* entries in use, in no order */
    size_t cold_bytes;
    unsigned int epoch; /* cache_age() calls so far, plus one */
    size_t max_entries;
    size_t max_bytes;
    cache_load_f load;
    cache_free_f free_handle;
    void *arg;
    struct cache_stats st;
};

static void entry_free (struct cache *c, struct entry *e)
{
    struct waiter *w = e->waiters;

    while (w) {
        struct waiter *next = w->next;
        free (w);
        w = next;
    }
    if (e->load) {
        c->free_handle (e->load);
        c->st.loading--;
    }
    if (e->dirty)
        c->st.dirty--;
    c->st.bytes -= e->size;
    json_decref (e->obj);
    blob_decref (e->raw);
    list_del (&e->lru);
    if (e->cold)
        c->cold_bytes -= e->size;
    free (e);
}

static void entry_remove (struct cache *c, struct entry *e)
{
    (void)dict_take (c->entries, e->ref);
    c->st.count--;
    entry_free (c, e);
}

struct cache *cache_create (size_t max_entries, size_t max_bytes,
                            cache_load_f load, cache_free_f free_handle,
                            void *arg)
{
    struct cache *c;

    if (!load || !free_handle) {
        errno = EINVAL;
        return NULL;
    }
    if (!(c = calloc (1, sizeof (*c))))
        return NULL;
    if (!(c->entries = dict_create (NULL))) {
        free (c);
        return NULL;
    }
    list_init (&c->lru);
    list_init (&c->cold);
    list_init (&c->busy);
    c->epoch = 1;
    c->max_entries = max_entries;
    c->max_bytes = max_bytes;
    c->load = load;
    c->free_handle = free_handle;
    c->arg = arg;
    return c;
}

void cache_destroy (struct cache *c)
{
    if (c) {
        int saved_errno = errno;
        struct list_node *pos, *tmp;
        list_for_each_safe (pos, tmp, &c->lru)
        {
            entry_free (c, list_entry (pos, struct entry, lru));
        }
        list_for_each_safe (pos, tmp, &c->cold)
        {
            entry_free (c, list_entry (pos, struct entry, lru));
        }
        list_for_each_safe (pos, tmp, &c->busy)
        {
            entry_free (c, list_entry (pos, struct entry, lru));
        }
        dict_destroy (c->entries);
        free (c);
        errno = saved_errno;
    }
}

/* Recount what e costs (after its blob or object changed). */
static void account (struct cache *c, struct entry *e)
{
    size_t size = ENTRY_OVERHEAD + (e->raw ? e->raw->len : 0)
                  + (e->obj ? DECODED_FACTOR * e->objlen : 0);

    c->st.bytes += size - e->size;
    if (e->cold)
        c->cold_bytes += size - e->size;
    e->size = size;
}

static bool expirable (const struct entry *e)
{
    return !e->dirty && !e->load && !e->waiters && !e->holds;
}

static bool over (struct cache *c, size_t target)
{
    return (c->max_entries && c->st.count > target)
           || (c->max_bytes && c->st.bytes > c->max_bytes);
}

/* e leaves the cold list's accounting (it is being moved off that list). */
static void uncold (struct cache *c, struct entry *e)
{
    if (e->cold) {
        e->cold = false;
        c->cold_bytes -= e->size;
    }
}

/* e (not on a list) goes to the newest end of the cold list, which is
 * kept under CACHE_COLD_BYTES. */
static void make_cold (struct cache *c, struct entry *e)
{
    list_add_head (&c->cold, &e->lru);
    e->epoch = c->epoch;
    e->cold = true;
    e->forget = false;
    c->cold_bytes += e->size;
    while (c->cold_bytes > CACHE_COLD_BYTES) {
        entry_remove (c, list_entry (c->cold.prev, struct entry, lru));
        c->st.expired++;
    }
}

/* Move e to the busy list when it comes into use, back to the recent end
 * of the LRU when it is no longer in use (to the cold list if it was
 * replaced meanwhile: cache_forget).  Call after any change of its
 * dirty count, load, waiters or holds. */
static void relist (struct cache *c, struct entry *e)
{
    bool busy = !expirable (e);

    if (busy == e->busy)
        return;
    list_del (&e->lru);
    e->busy = busy;
    if (busy) {
        uncold (c, e);
        list_add_head (&c->busy, &e->lru);
    }
    else if (e->forget)
        make_cold (c, e);
    else {
        list_add_head (&c->lru, &e->lru);
        e->epoch = c->epoch;
    }
}

/* Expire LRU entries until at most target remain and the bytes are
 * within bounds (entries in use are not on the lists: the bounds may be
 * passed while they are).
 */
static void expire_to (struct cache *c, size_t target)
{
    /* replaced versions first, oldest first */
    while (over (c, target) && c->cold.prev != &c->cold) {
        entry_remove (c, list_entry (c->cold.prev, struct entry, lru));
        c->st.expired++;
    }
    while (over (c, target) && c->lru.prev != &c->lru) {
        entry_remove (c, list_entry (c->lru.prev, struct entry, lru));
        c->st.expired++;
    }
}

void cache_expire (struct cache *c)
{
    if (c)
        expire_to (c, c->max_entries);
}

/* Both lists are in order of last use from their tail (a demoted entry,
 * epoch 0, is put at the LRU's tail), so the walk stops at the first
 * entry young enough. */
static void age_list (struct cache *c, struct list_node *list,
                      unsigned int max_age)
{
    while (list->prev != list) {
        struct entry *e = list_entry (list->prev, struct entry, lru);
        if (e->epoch != 0 && c->epoch - e->epoch <= max_age)
            break;
        entry_remove (c, e);
        c->st.expired++;
        c->st.aged++;
    }
}

void cache_age (struct cache *c, unsigned int max_age)
{
    if (c) {
        c->epoch++;
        age_list (c, &c->cold, max_age);
        age_list (c, &c->lru, max_age);
    }
}

/* Find ref, or create an empty entry for it (expiring first if full). */
static struct entry *entry_get (struct cache *c, const char *ref, bool create)
{
    struct entry *e = dict_lookup (c->entries, ref);

    if (e || !create)
        return e;
    if (strlen (ref) >= sizeof (e->ref)) {
        errno = EINVAL;
        return NULL;
    }
    if ((c->max_entries && c->st.count >= c->max_entries)
        || (c->max_bytes && c->st.bytes > c->max_bytes))
        expire_to (c, c->max_entries ? c->max_entries - 1 : 0);
    if (!(e = calloc (1, sizeof (*e))))
        return NULL;
    strcpy (e->ref, ref);
    e->tail = &e->waiters;
    if (dict_insert (c->entries, e->ref, e) < 0) {
        free (e);
        return NULL;
    }
    list_add_head (&c->lru, &e->lru);
    e->epoch = c->epoch;
    c->st.count++;
    account (c, e);
    return e;
}

void cache_forget (struct cache *c, const char *ref)
{
    struct entry *e;

    if (!c || !ref || !(e = entry_get (c, ref, false)) || e->cold)
        return;
    if (!expirable (e)) {
        e->forget = true; /* a store of it (written behind) is pending */
        return;
    }
    list_del (&e->lru);
    make_cold (c, e);
}

static void touch (struct cache *c, struct entry *e)
{
    e->forget = false; /* used again */
    if (e->busy)
        return; /* the busy list has no order */
    list_del (&e->lru);
    list_add_head (&c->lru, &e->lru);
    e->epoch = c->epoch;
    uncold (c, e);
}

json_t *cache_get_treeobj (struct cache *c, const char *ref)
{
    struct entry *e;

    if (!c || !ref) {
        errno = EINVAL;
        return NULL;
    }
    if (!(e = entry_get (c, ref, false)) || (!e->obj && !e->raw)) {
        c->st.misses++;
        errno = ENOENT;
        return NULL;
    }
    c->st.hits++;
    touch (c, e);
    if (!e->obj) {
        /* a blob that is not a tree object is a corrupt store here; keep
         * the raw bytes, they may still serve as a value */
        if (!(e->obj = treeobj_decodeb (e->raw->data, e->raw->len))) {
            errno = ENOTRECOVERABLE;
            return NULL;
        }
        e->objlen = e->raw->len;
        account (c, e);
    }
    return e->obj;
}

int cache_get_raw (struct cache *c, const char *ref, const void **data,
                   size_t *len)
{
    struct entry *e;

    if (!c || !ref) {
        errno = EINVAL;
        return -1;
    }
    if (!(e = entry_get (c, ref, false)) || !e->raw) {
        c->st.misses++;
        errno = ENOENT;
        return -1;
    }
    c->st.hits++;
    touch (c, e);
    if (data)
        *data = e->raw->data;
    if (len)
        *len = e->raw->len;
    return 0;
}

struct blob *cache_get_blob (struct cache *c, const char *ref)
{
    struct entry *e;

    if (!c || !ref) {
        errno = EINVAL;
        return NULL;
    }
    if (!(e = entry_get (c, ref, false)) || !e->raw) {
        c->st.misses++;
        errno = ENOENT;
        return NULL;
    }
    c->st.hits++;
    touch (c, e);
    return e->raw;
}

int cache_wait (struct cache *c, const char *ref, cache_wait_f cb, void *arg)
{
    struct entry *e;
    struct waiter *w;

    if (!c || !ref || !cb || blobref_validate (ref) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (!(e = entry_get (c, ref, true)))
        return -1;
    if (!(w = calloc (1, sizeof (*w))))
        goto error;
    if (!e->load) {
        if (!(e->load = c->load (ref, c->arg))) {
            free (w);
            goto error;
        }
        c->st.loading++;
        c->st.loads++;
    }
    w->cb = cb;
    w->arg = arg;
    *e->tail = w;
    e->tail = &w->next;
    relist (c, e);
    return 0;
error:
    if (!e->obj && !e->raw && !e->waiters && !e->load) {
        int saved_errno = errno;
        entry_remove (c, e);
        errno = saved_errno;
    }
    return -1;
}

/* Give e its blob (a new reference on b) unless it has one. */
static void set_blob (struct cache *c, struct entry *e, struct blob *b)
{
    if (e->raw)
        return;
    e->raw = blob_incref (b);
    account (c, e);
}

static int check_hash (const char *ref, const void *data, size_t len)
{
    char hashtype[16];
    char computed[BLOBREF_MAX_STRING_SIZE];

    if (blobref_hashtype (ref, hashtype, sizeof (hashtype)) < 0
        || blobref_hash (hashtype, data, len, computed, sizeof (computed)) < 0
        || strcmp (computed, ref) != 0)
        return -1;
    return 0;
}

void cache_load_response (struct cache *c, const char *ref, int errnum,
                          const void *data, size_t len)
{
    struct entry *e;
    struct waiter *w;
    char refcopy[BLOBREF_MAX_STRING_SIZE];

    if (!c || !ref || !(e = entry_get (c, ref, false)) || !e->load)
        return;
    if (errnum == 0) {
        if (len > 0 && !data)
            errnum = EPROTO;
        else if (check_hash (ref, data, len) < 0)
            errnum = ENOTRECOVERABLE;
        else {
            struct blob *b = e->raw ? NULL : blob_create (data, len);
            if (!e->raw && !b)
                errnum = errno ? errno : ENOMEM;
            else {
                if (b)
                    set_blob (c, e, b);
                e->stored = true;
            }
            blob_decref (b);
        }
    }
    /* data and ref may belong to the load handle: not used past here */
    snprintf (refcopy, sizeof (refcopy), "%s", ref);
    c->free_handle (e->load);
    e->load = NULL;
    c->st.loading--;
    w = e->waiters;
    e->waiters = NULL;
    e->tail = &e->waiters;
    if (!e->obj && !e->raw)
        entry_remove (c, e);
    else
        relist (c, e);
    /* e may be gone (or expired by a waiter) from here on */
    while (w) {
        struct waiter *next = w->next;
        w->cb (errnum, refcopy, w->arg);
        free (w);
        w = next;
    }
}

static struct entry *insert_common (struct cache *c, const char *ref,
                                    bool dirty)
{
    struct entry *e;

    if (!c || !ref || blobref_validate (ref) < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(e = entry_get (c, ref, true)))
        return NULL;
    if (dirty) {
        if (e->dirty++ == 0)
            c->st.dirty++;
        relist (c, e);
    }
    touch (c, e);
    return e;
}

int cache_insert_treeobj (struct cache *c, const char *ref, json_t *obj,
                          size_t size, bool dirty)
{
    struct entry *e;

    if (!obj) {
        errno = EINVAL;
        return -1;
    }
    if (!(e = insert_common (c, ref, dirty)))
        return -1;
    if (!e->obj)
        e->obj = json_incref (obj);
    if (e->objlen == 0) {
        e->objlen = size;
        account (c, e);
    }
    return 0;
}

int cache_insert_raw (struct cache *c, const char *ref, const void *data,
                      size_t len, bool dirty)
{
    struct blob *b;
    int rc;

    if (len > 0 && !data) {
        errno = EINVAL;
        return -1;
    }
    if (!(b = blob_create (data, len)))
        return -1;
    rc = cache_insert_blob (c, ref, b, dirty);
    blob_decref (b);
    return rc;
}

int cache_insert_blob (struct cache *c, const char *ref, struct blob *b,
                       bool dirty)
{
    struct entry *e;

    if (!b) {
        errno = EINVAL;
        return -1;
    }
    if (!(e = insert_common (c, ref, dirty)))
        return -1;
    set_blob (c, e, b);
    return 0;
}

void cache_clear_dirty (struct cache *c, const char *ref, bool stored)
{
    struct entry *e;

    if (!c || !ref || !(e = entry_get (c, ref, false)))
        return;
    if (stored)
        e->stored = true;
    if (e->dirty > 0 && --e->dirty == 0) {
        c->st.dirty--;
        relist (c, e);
    }
}

void cache_demote (struct cache *c, const char *ref)
{
    struct entry *e;

    if (!c || !ref || !(e = entry_get (c, ref, false)) || e->cold || e->busy)
        return;
    list_del (&e->lru);
    list_add_tail (&c->lru, &e->lru); /* the tail expires first */
    e->epoch = 0;                     /* and at the next cache_age() */
}

bool cache_is_clean (struct cache *c, const char *ref)
{
    struct entry *e;

    if (!c || !ref || !(e = entry_get (c, ref, false)))
        return false;
    return e->stored && e->dirty == 0 && (e->obj || e->raw);
}

int cache_hold (struct cache *c, const char *ref)
{
    struct entry *e;

    if (!c || !ref || !(e = entry_get (c, ref, false))
        || (!e->obj && !e->raw)) {
        errno = ENOENT;
        return -1;
    }
    e->holds++;
    relist (c, e);
    return 0;
}

void cache_release (struct cache *c, const char *ref)
{
    struct entry *e;

    if (!c || !ref || !(e = entry_get (c, ref, false)) || e->holds == 0)
        return;
    e->holds--;
    relist (c, e);
}

void cache_holds_add (struct cache *c, struct cache_holds *h, const char *ref)
{
    if (h->n == h->max) {
        int n = h->max ? h->max * 2 : 16;
        void *v = realloc (h->ref, n * sizeof (*h->ref));
        if (!v)
            return;
        h->ref = v;
        h->max = n;
    }
    if (cache_hold (c, ref) == 0)
        snprintf (h->ref[h->n++], sizeof (h->ref[0]), "%s", ref);
}

void cache_holds_release (struct cache *c, struct cache_holds *h)
{
    for (int i = 0; i < h->n; i++)
        cache_release (c, h->ref[i]);
    free (h->ref);
    h->ref = NULL;
    h->n = h->max = 0;
}

void cache_get_stats (struct cache *c, struct cache_stats *st)
{
    if (c && st)
        *st = c->st;
}
