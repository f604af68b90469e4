/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for the content cache: insert/lookup, fill, dirty sequence
 * numbers and the dirty list, LRU purge and drop of clean entries only,
 * pinning with aux, borrowed blobs released, table growth.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "tap.h"

static void mkdigest (unsigned char d[20], int n)
{
    memset (d, 0, 20);
    /* spread n over the first bytes, as a real digest would */
    d[0] = n * 37;
    d[1] = n >> 3;
    d[2] = n >> 11;
    d[19] = n;
}

static int released;
static void release (void *owner)
{
    released++;
    free (owner);
}

static void test_basic (void)
{
    struct cache *c = cache_create (20);
    unsigned char d[20];
    struct cache_entry *e, *e2;
    struct cache_stats st;
    const void *data;
    size_t len;

    ok (c != NULL, "cache_create");
    errno = 0;
    ok (cache_create (0) == NULL && errno == EINVAL, "digest size 0: EINVAL");
    mkdigest (d, 1);
    ok (cache_lookup (c, d) == NULL, "lookup of a missing entry: NULL");
    ok ((e = cache_insert (c, d)) != NULL, "insert");
    errno = 0;
    ok (cache_insert (c, d) == NULL && errno == EEXIST, "insert again: EEXIST");
    ok (cache_lookup (c, d) == e, "lookup finds it");
    ok (!cache_entry_valid (e) && !cache_entry_dirty (e),
        "a new entry is invalid and clean");
    errno = 0;
    ok (cache_entry_set_dirty (c, e) < 0 && errno == EINVAL,
        "an invalid entry cannot be dirty");
    cache_get_stats (c, &st);
    ok (st.count == 1 && st.valid == 0 && st.size == 0, "stats: 1 invalid");
    ok (cache_entry_fill (c, e, "hello", 5) == 0 && cache_entry_valid (e),
        "fill makes it valid");
    data = cache_entry_data (e, &len);
    ok (len == 5 && !memcmp (data, "hello", 5), "the blob is there");
    ok (cache_entry_fill (c, e, "other", 5) == 0
            && !memcmp (cache_entry_data (e, NULL), "hello", 5),
        "filling again changes nothing");
    cache_get_stats (c, &st);
    ok (st.count == 1 && st.valid == 1 && st.size == 5 && st.dirty == 0,
        "stats: 1 valid, 5 bytes");
    ok (!memcmp (cache_entry_digest (e), d, 20), "digest kept");

    mkdigest (d, 2);
    e2 = cache_insert (c, d);
    ok (cache_entry_fill (c, e2, NULL, 0) == 0 && cache_entry_valid (e2),
        "the empty blob");
    data = cache_entry_data (e2, &len);
    ok (data == NULL && len == 0, "has no data");
    cache_remove (c, e2);
    ok (cache_lookup (c, d) == NULL, "remove");
    cache_get_stats (c, &st);
    ok (st.count == 1 && st.valid == 1 && st.size == 5, "stats after remove");
    cache_destroy (c);
    cache_destroy (NULL);
    pass ("destroy, and destroy NULL");
}

static void test_dirty (void)
{
    struct cache *c = cache_create (20);
    struct cache_entry *e[5], *x;
    unsigned char d[20];
    struct cache_stats st;
    int i;

    ok (cache_oldest_dirty (c) == 0 && cache_last_seq (c) == 0,
        "no dirty entry, no sequence yet");
    for (i = 0; i < 5; i++) {
        mkdigest (d, 100 + i);
        e[i] = cache_insert (c, d);
        cache_entry_fill (c, e[i], "x", 1);
        cache_entry_set_dirty (c, e[i]);
    }
    ok (cache_last_seq (c) == 5 && cache_oldest_dirty (c) == 1,
        "five dirty entries: seq 1..5");
    cache_entry_set_dirty (c, e[0]);
    ok (cache_entry_seq (e[0]) == 1 && cache_last_seq (c) == 5,
        "making a dirty entry dirty again keeps its seq");
    cache_get_stats (c, &st);
    ok (st.dirty == 5, "stats: 5 dirty");
    ok (cache_purge (c, 0) == 0 && cache_drop (c) == 0,
        "dirty entries are never evicted");
    cache_entry_set_clean (c, e[0]);
    cache_entry_set_clean (c, e[2]);
    ok (cache_oldest_dirty (c) == 2, "oldest dirty follows cleaning");
    i = 0;
    for (x = cache_dirty_first (c); x; x = cache_dirty_next (x))
        i = i * 10 + (int)cache_entry_seq (x);
    ok (i == 245, "dirty walk in sequence order: 2 4 5");
    cache_entry_set_clean (c, e[1]);
    cache_entry_set_clean (c, e[3]);
    cache_entry_set_clean (c, e[4]);
    ok (cache_oldest_dirty (c) == 0, "all clean: oldest dirty 0");
    ok (cache_drop (c) == 5, "clean entries can be dropped");
    cache_get_stats (c, &st);
    ok (st.count == 0 && st.size == 0, "cache empty");
    cache_destroy (c);
}

static void test_lru (void)
{
    struct cache *c = cache_create (20);
    struct cache_entry *e[10];
    unsigned char d[20];
    char blob[100];
    struct cache_stats st;
    int i, n;

    memset (blob, 'b', sizeof (blob));
    for (i = 0; i < 10; i++) {
        mkdigest (d, 200 + i);
        e[i] = cache_insert (c, d);
        cache_entry_fill (c, e[i], blob, 100);
    }
    cache_entry_touch (c, e[0]);           /* 0 is now most recent */
    cache_entry_set_aux (e[1], (void *)1); /* 1 is pinned */
    cache_entry_fill (c, e[2], blob, 100);
    cache_entry_set_dirty (c, e[2]); /* 2 is dirty */
    n = cache_purge (c, 500);
    cache_get_stats (c, &st);
    ok (n == 5 && st.size == 500, "purge to 500 bytes evicts 5 entries");
    mkdigest (d, 200);
    ok (cache_lookup (c, d) != NULL, "the recently touched entry stays");
    mkdigest (d, 201);
    ok (cache_lookup (c, d) != NULL, "the pinned entry stays");
    mkdigest (d, 202);
    ok (cache_lookup (c, d) != NULL, "the dirty entry stays");
    for (i = 3; i < 8; i++) {
        mkdigest (d, 200 + i);
        if (cache_lookup (c, d))
            break;
    }
    ok (i == 8, "the least recently used (3..7) went");
    n = cache_drop (c);
    cache_get_stats (c, &st);
    ok (n == 3 && st.count == 2, "drop leaves the pinned and the dirty one");
    ok (cache_purge (c, 0) == 0, "nothing more to purge");
    cache_entry_set_aux (e[1], NULL);
    ok (cache_entry_aux (e[1]) == NULL && cache_purge (c, 0) == 1,
        "unpinned, it can go");
    cache_destroy (c);
}

static void test_borrow (void)
{
    struct cache *c = cache_create (20);
    unsigned char d[20];
    struct cache_entry *e;
    char *buf;

    released = 0;
    mkdigest (d, 300);
    e = cache_insert (c, d);
    buf = strdup ("borrowed");
    ok (cache_entry_fill_borrow (c, e, buf, 8, buf, release) == 0
            && cache_entry_data (e, NULL) == buf,
        "fill_borrow keeps the caller's buffer");
    buf = strdup ("again");
    ok (cache_entry_fill_borrow (c, e, buf, 5, buf, release) == 0
            && released == 1,
        "borrowing for a valid entry releases the owner at once");
    cache_remove (c, e);
    ok (released == 2, "removing the entry releases its owner");
    mkdigest (d, 301);
    e = cache_insert (c, d);
    buf = strdup ("kept");
    cache_entry_fill_borrow (c, e, buf, 4, buf, release);
    cache_destroy (c);
    ok (released == 3, "destroy releases owners too");
}

static void test_many (void)
{
    struct cache *c = cache_create (20);
    unsigned char d[20];
    int i, found = 0;
    struct cache_stats st;

    for (i = 0; i < 20000; i++) {
        mkdigest (d, i);
        d[5] = i & 0xff;
        d[6] = i >> 8;
        struct cache_entry *e = cache_insert (c, d);
        if (e)
            cache_entry_fill (c, e, &i, sizeof (i));
    }
    for (i = 0; i < 20000; i++) {
        struct cache_entry *e;
        mkdigest (d, i);
        d[5] = i & 0xff;
        d[6] = i >> 8;
        if ((e = cache_lookup (c, d))
            && !memcmp (cache_entry_data (e, NULL), &i, sizeof (i)))
            found++;
    }
    cache_get_stats (c, &st);
    ok (found == 20000 && st.count == 20000,
        "20000 entries survive table growth");
    cache_destroy (c);
}

int main (void)
{
    plan (NO_PLAN);
    test_basic ();
    test_dirty ();
    test_lru ();
    test_borrow ();
    test_many ();
    done_testing ();
    return 0;
}
