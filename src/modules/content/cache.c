/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* cache.c - the content cache: a chained hash table of entries keyed by
 * digest, an LRU list of evictable candidates (valid and clean) and a
 * list of dirty entries in sequence order.  Digests are cryptographic
 * hashes, so their first bytes index the table as they are.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

/* A doubly-linked list through a pair of pointers in the entry. */
struct link {
    struct cache_entry *prev, *next;
};
struct dlist {
    struct cache_entry *head, *tail;
};

struct cache_entry {
    struct cache_entry *hnext; /* hash chain */
    struct link lru;           /* on c->lru iff valid and clean */
    struct link dirty;         /* on c->dirty iff dirty */
    uint64_t seq;
    const void *data;
    size_t len;
    void *owner; /* data's owner; NULL if data was copied */
    cache_release_f release;
    bool valid;
    bool is_dirty;
    void *aux;
    unsigned char digest[];
};

struct cache {
    size_t digest_size;
    struct cache_entry **buckets;
    size_t nbuckets;    /* a power of two */
    struct dlist lru;   /* least recently used first */
    struct dlist dirty; /* oldest first */
    uint64_t seq;
    struct cache_stats stats;
};

static void dlist_append (struct dlist *l, struct cache_entry *e,
                          struct link *(*lk) (struct cache_entry *))
{
    lk (e)->prev = l->tail;
    lk (e)->next = NULL;
    if (l->tail)
        lk (l->tail)->next = e;
    else
        l->head = e;
    l->tail = e;
}

static void dlist_remove (struct dlist *l, struct cache_entry *e,
                          struct link *(*lk) (struct cache_entry *))
{
    if (lk (e)->prev)
        lk (lk (e)->prev)->next = lk (e)->next;
    else
        l->head = lk (e)->next;
    if (lk (e)->next)
        lk (lk (e)->next)->prev = lk (e)->prev;
    else
        l->tail = lk (e)->prev;
    lk (e)->prev = lk (e)->next = NULL;
}

static struct link *lru_link (struct cache_entry *e)
{
    return &e->lru;
}

static struct link *dirty_link (struct cache_entry *e)
{
    return &e->dirty;
}

static size_t bucket_of (const struct cache *c, const void *digest)
{
    uint64_t x = 0;
    memcpy (&x, digest, c->digest_size < 8 ? c->digest_size : 8);
    return (size_t)(x & (c->nbuckets - 1));
}

struct cache *cache_create (size_t digest_size)
{
    struct cache *c;

    if (digest_size == 0 || digest_size > 64) {
        errno = EINVAL;
        return NULL;
    }
    if (!(c = calloc (1, sizeof (*c))))
        return NULL;
    c->digest_size = digest_size;
    c->nbuckets = 1024;
    if (!(c->buckets = calloc (c->nbuckets, sizeof (*c->buckets)))) {
        free (c);
        return NULL;
    }
    return c;
}

static void entry_free (struct cache_entry *e)
{
    if (e->owner) {
        if (e->release)
            e->release (e->owner);
    }
    else
        free ((void *)e->data);
    free (e);
}

void cache_destroy (struct cache *c)
{
    if (c) {
        int saved_errno = errno;
        size_t i;
        for (i = 0; i < c->nbuckets; i++) {
            struct cache_entry *e;
            while ((e = c->buckets[i])) {
                c->buckets[i] = e->hnext;
                entry_free (e);
            }
        }
        free (c->buckets);
        free (c);
        errno = saved_errno;
    }
}

struct cache_entry *cache_lookup (struct cache *c, const void *digest)
{
    struct cache_entry *e;

    if (!c || !digest)
        return NULL;
    for (e = c->buckets[bucket_of (c, digest)]; e; e = e->hnext)
        if (!memcmp (e->digest, digest, c->digest_size))
            return e;
    return NULL;
}

/* Double the table when it holds more entries than buckets.  Failure to
 * grow is harmless (chains get longer). */
static void maybe_grow (struct cache *c)
{
    struct cache_entry **nb;
    size_t i, n = c->nbuckets * 2;

    if ((size_t)c->stats.count <= c->nbuckets
        || !(nb = calloc (n, sizeof (*nb))))
        return;
    for (i = 0; i < c->nbuckets; i++) {
        struct cache_entry *e, *next;
        for (e = c->buckets[i]; e; e = next) {
            size_t b;
            next = e->hnext;
            c->nbuckets = n; /* for bucket_of */
            b = bucket_of (c, e->digest);
            c->nbuckets = n / 2;
            e->hnext = nb[b];
            nb[b] = e;
        }
    }
    free (c->buckets);
    c->buckets = nb;
    c->nbuckets = n;
}

struct cache_entry *cache_insert (struct cache *c, const void *digest)
{
    struct cache_entry *e;
    size_t b;

    if (!c || !digest) {
        errno = EINVAL;
        return NULL;
    }
    if (cache_lookup (c, digest)) {
        errno = EEXIST;
        return NULL;
    }
    if (!(e = calloc (1, sizeof (*e) + c->digest_size)))
        return NULL;
    memcpy (e->digest, digest, c->digest_size);
    b = bucket_of (c, digest);
    e->hnext = c->buckets[b];
    c->buckets[b] = e;
    c->stats.count++;
    maybe_grow (c);
    return e;
}

void cache_remove (struct cache *c, struct cache_entry *e)
{
    struct cache_entry **pp;

    if (!c || !e)
        return;
    for (pp = &c->buckets[bucket_of (c, e->digest)]; *pp; pp = &(*pp)->hnext) {
        if (*pp == e) {
            *pp = e->hnext;
            break;
        }
    }
    if (e->valid) {
        c->stats.valid--;
        c->stats.size -= e->len;
        if (e->is_dirty) {
            dlist_remove (&c->dirty, e, dirty_link);
            c->stats.dirty--;
        }
        else
            dlist_remove (&c->lru, e, lru_link);
    }
    c->stats.count--;
    entry_free (e);
}

static void make_valid (struct cache *c, struct cache_entry *e)
{
    e->valid = true;
    c->stats.valid++;
    c->stats.size += e->len;
    dlist_append (&c->lru, e, lru_link); /* valid and clean */
}

int cache_entry_fill (struct cache *c, struct cache_entry *e, const void *data,
                      size_t len)
{
    void *copy = NULL;

    if (!c || !e || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (e->valid)
        return 0;
    if (len > 0) {
        if (!(copy = malloc (len)))
            return -1;
        memcpy (copy, data, len);
    }
    e->data = copy;
    e->len = len;
    e->owner = NULL;
    make_valid (c, e);
    return 0;
}

int cache_entry_fill_borrow (struct cache *c, struct cache_entry *e,
                             const void *data, size_t len, void *owner,
                             cache_release_f release)
{
    if (!c || !e || (!data && len > 0) || !owner) {
        errno = EINVAL;
        return -1;
    }
    if (e->valid) {
        if (release)
            release (owner);
        return 0;
    }
    e->data = len > 0 ? data : NULL;
    e->len = len;
    e->owner = owner;
    e->release = release;
    make_valid (c, e);
    return 0;
}

bool cache_entry_valid (const struct cache_entry *e)
{
    return e && e->valid;
}

const void *cache_entry_digest (const struct cache_entry *e)
{
    return e ? e->digest : NULL;
}

const void *cache_entry_data (const struct cache_entry *e, size_t *len)
{
    if (len)
        *len = e && e->valid ? e->len : 0;
    return e && e->valid ? e->data : NULL;
}

int cache_entry_set_dirty (struct cache *c, struct cache_entry *e)
{
    if (!c || !e || !e->valid) {
        errno = EINVAL;
        return -1;
    }
    if (e->is_dirty)
        return 0;
    dlist_remove (&c->lru, e, lru_link);
    e->is_dirty = true;
    e->seq = ++c->seq;
    dlist_append (&c->dirty, e, dirty_link);
    c->stats.dirty++;
    return 0;
}

void cache_entry_set_clean (struct cache *c, struct cache_entry *e)
{
    if (!c || !e || !e->is_dirty)
        return;
    dlist_remove (&c->dirty, e, dirty_link);
    e->is_dirty = false;
    c->stats.dirty--;
    dlist_append (&c->lru, e, lru_link);
}

bool cache_entry_dirty (const struct cache_entry *e)
{
    return e && e->is_dirty;
}

uint64_t cache_entry_seq (const struct cache_entry *e)
{
    return e ? e->seq : 0;
}

void cache_entry_touch (struct cache *c, struct cache_entry *e)
{
    if (!c || !e || !e->valid || e->is_dirty)
        return;
    dlist_remove (&c->lru, e, lru_link);
    dlist_append (&c->lru, e, lru_link);
}

void cache_entry_set_aux (struct cache_entry *e, void *aux)
{
    if (e)
        e->aux = aux;
}

void *cache_entry_aux (const struct cache_entry *e)
{
    return e ? e->aux : NULL;
}

uint64_t cache_last_seq (const struct cache *c)
{
    return c ? c->seq : 0;
}

uint64_t cache_oldest_dirty (const struct cache *c)
{
    return c && c->dirty.head ? c->dirty.head->seq : 0;
}

struct cache_entry *cache_dirty_first (struct cache *c)
{
    return c ? c->dirty.head : NULL;
}

struct cache_entry *cache_dirty_next (struct cache_entry *e)
{
    return e ? e->dirty.next : NULL;
}

int cache_purge (struct cache *c, size_t target)
{
    struct cache_entry *e, *next;
    int n = 0;

    if (!c)
        return 0;
    for (e = c->lru.head; e && c->stats.size > target; e = next) {
        next = e->lru.next;
        if (!e->aux) {
            cache_remove (c, e);
            n++;
        }
    }
    return n;
}

int cache_drop (struct cache *c)
{
    struct cache_entry *e, *next;
    int n = 0;

    if (!c)
        return 0;
    for (e = c->lru.head; e; e = next) {
        next = e->lru.next;
        if (!e->aux) {
            cache_remove (c, e);
            n++;
        }
    }
    return n;
}

void cache_get_stats (const struct cache *c, struct cache_stats *st)
{
    if (c && st)
        *st = c->stats;
}
