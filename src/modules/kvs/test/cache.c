/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* cache unit tests: hits and misses, one load per blobref, hash checks,
 * decoding, dirty entries, LRU expiry, demotion.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcontent/blobref.h"
#include "libkvs/treeobj.h"
#include "tap.h"

#include "../cache.h"
#include "treeutil.h"

struct wres {
    int calls;
    int errnum;
    int order;
    char ref[BLOBREF_MAX_STRING_SIZE];
};

static int order_counter;

static void wait_cb (int errnum, const char *ref, void *arg)
{
    struct wres *w = arg;
    snprintf (w->ref, sizeof (w->ref), "%s", ref);
    w->calls++;
    w->errnum = errnum;
    w->order = ++order_counter;
}

static void *fail_load (const char *ref, void *arg)
{
    errno = EHOSTUNREACH;
    return NULL;
}

static void nofree (void *h)
{
}

/* The blobref of the text "<prefix><i>", as a name for test entries. */
static void name_ref (char *ref, const char *prefix, int i)
{
    char s[32];

    snprintf (s, sizeof (s), "%s%d", prefix, i);
    if (blobref_hash ("sha1", s, strlen (s), ref, BLOBREF_MAX_STRING_SIZE) < 0)
        BAIL_OUT ("blobref_hash failed");
}

static void name_refs (char refs[][BLOBREF_MAX_STRING_SIZE], int n,
                       const char *prefix)
{
    for (int i = 0; i < n; i++)
        name_ref (refs[i], prefix, i);
}

static void test_basic (void)
{
    struct fakestore *fs = fakestore_create ("sha1");
    struct cache *c = fakestore_cache (fs, 0);
    json_t *dir = treeobj_create_dir (), *got;
    const char *ref;
    const void *data;
    size_t len;
    struct cache_stats st;
    struct wres w1 = {0}, w2 = {0};

    got = val_str ("x");
    treeobj_insert_entry (dir, "a", got);
    json_decref (got);
    ref = fakestore_put_obj (fs, dir);

    ok (cache_get_treeobj (c, ref) == NULL && errno == ENOENT,
        "get_treeobj of an absent ref: ENOENT");
    ok (cache_get_raw (c, ref, &data, &len) < 0 && errno == ENOENT,
        "get_raw of an absent ref: ENOENT");
    ok (cache_wait (c, ref, wait_cb, &w1) == 0
            && cache_wait (c, ref, wait_cb, &w2) == 0,
        "two waiters on the same ref");
    cmp_ok (fakestore_loads (fs), "==", 1, "only one load was started");
    ok (w1.calls == 0 && w2.calls == 0, "waiters are not called before");
    cache_get_stats (c, &st);
    ok (st.loading == 1 && st.count == 1, "stats: one entry, one load");
    fakestore_deliver (fs);
    ok (w1.calls == 1 && w2.calls == 1 && w1.errnum == 0 && w2.errnum == 0,
        "both waiters called once with success");
    ok (w1.order < w2.order, "waiters called in registration order");
    got = cache_get_treeobj (c, ref);
    ok (got && json_equal (got, dir), "get_treeobj gives the decoded object");
    ok (cache_get_raw (c, ref, &data, &len) == 0 && len > 0,
        "get_raw gives the blob too");
    ok (cache_is_clean (c, ref), "a loaded entry is clean");
    cache_get_stats (c, &st);
    ok (st.loading == 0 && st.count == 1 && st.hits >= 2,
        "stats: load finished, hits counted");

    ok (cache_wait (c, "sha1-zz", wait_cb, &w1) < 0 && errno == EINVAL,
        "cache_wait of a malformed ref: EINVAL");

    json_decref (dir);
    cache_destroy (c);
    fakestore_destroy (fs);
}

static void test_errors (void)
{
    struct fakestore *fs = fakestore_create ("sha1");
    struct cache *c = fakestore_cache (fs, 0);
    const char *bad, *val;
    char missing[BLOBREF_MAX_STRING_SIZE], ref[BLOBREF_MAX_STRING_SIZE];
    struct wres w = {0};
    const void *data;
    size_t len;

    /* unknown blob: the load fails with ENOENT */
    blobref_hash ("sha1", "nothing", 7, missing, sizeof (missing));
    ok (cache_wait (c, missing, wait_cb, &w) == 0, "wait for an unknown blob");
    fakestore_deliver (fs);
    ok (w.calls == 1 && w.errnum == ENOENT, "waiter gets ENOENT");
    ok (!strcmp (w.ref, missing), "and the ref it waited for");
    ok (cache_get_raw (c, missing, &data, &len) < 0 && errno == ENOENT,
        "and nothing is cached");

    /* corrupt store: bytes that do not hash to the ref */
    snprintf (ref, sizeof (ref), "%s", fakestore_put (fs, "hello", 5));
    fakestore_corrupt (fs, ref, "HELLO");
    memset (&w, 0, sizeof (w));
    ok (cache_wait (c, ref, wait_cb, &w) == 0, "wait for a corrupt blob");
    fakestore_deliver (fs);
    ok (w.calls == 1 && w.errnum == ENOTRECOVERABLE,
        "hash mismatch: waiter gets ENOTRECOVERABLE");
    ok (cache_get_raw (c, ref, &data, &len) < 0,
        "and the bad bytes are not cached");

    /* a blob that is not a tree object */
    bad = fakestore_put (fs, "{not json", 9);
    memset (&w, 0, sizeof (w));
    cache_wait (c, bad, wait_cb, &w);
    fakestore_deliver (fs);
    ok (w.calls == 1 && w.errnum == 0, "a non-treeobj blob loads fine");
    ok (cache_get_treeobj (c, bad) == NULL && errno == ENOTRECOVERABLE,
        "get_treeobj of it: ENOTRECOVERABLE (no crash)");
    ok (cache_get_raw (c, bad, &data, &len) == 0 && len == 9
            && !memcmp (data, "{not json", 9),
        "it is still usable as raw value bytes");

    /* empty blob */
    val = fakestore_put (fs, "", 0);
    memset (&w, 0, sizeof (w));
    cache_wait (c, val, wait_cb, &w);
    fakestore_deliver (fs);
    ok (w.errnum == 0 && cache_get_raw (c, val, &data, &len) == 0 && len == 0,
        "an empty blob is cached with length 0");

    /* the load function fails: no waiter is registered */
    cache_destroy (c);
    c = cache_create (0, 0, fail_load, nofree, NULL);
    memset (&w, 0, sizeof (w));
    ok (cache_wait (c, ref, wait_cb, &w) < 0 && errno == EHOSTUNREACH,
        "cache_wait fails when the load cannot start");
    {
        struct cache_stats st;
        cache_get_stats (c, &st);
        ok (st.count == 0, "and leaves no entry behind");
    }
    cache_destroy (c);
    fakestore_destroy (fs);
}

static void test_insert_dirty_expire (void)
{
    struct fakestore *fs = fakestore_create ("sha1");
    struct cache *c = fakestore_cache (fs, 3);
    char refs[6][BLOBREF_MAX_STRING_SIZE];
    struct cache_stats st;
    json_t *obj = val_str ("v");
    struct wres w = {0};
    const char *pending;

    name_refs (refs, 6, "blob");
    ok (cache_insert_raw (c, refs[0], "blob0", 5, true) == 0,
        "insert a dirty raw blob");
    ok (!cache_is_clean (c, refs[0]), "a dirty entry is not clean");
    ok (cache_insert_treeobj (c, refs[1], obj, 10, false) == 0,
        "insert a clean object");
    ok (!cache_is_clean (c, refs[1]),
        "an inserted, never stored entry is not known to be stored");
    cache_insert_raw (c, refs[2], "blob2", 5, false);
    cache_insert_raw (c, refs[3], "blob3", 5, false);
    cache_insert_raw (c, refs[4], "blob4", 5, false);
    cache_get_stats (c, &st);
    ok (st.count == 3 && st.dirty == 1, "bound 3: expired down to 3 entries");
    ok (cache_get_raw (c, refs[0], NULL, NULL) == 0,
        "the dirty entry was not expired");
    ok (cache_get_raw (c, refs[1], NULL, NULL) < 0
            && cache_get_raw (c, refs[2], NULL, NULL) < 0,
        "the least recently used clean entries were");
    /* touch 3, insert 5: 4 goes */
    cache_get_raw (c, refs[3], NULL, NULL);
    cache_insert_raw (c, refs[5], "blob5", 5, false);
    ok (cache_get_raw (c, refs[3], NULL, NULL) == 0
            && cache_get_raw (c, refs[4], NULL, NULL) < 0,
        "a recently used entry survives, the older one is expired");
    cache_clear_dirty (c, refs[0], true);
    ok (cache_is_clean (c, refs[0]), "after its store it is clean");
    cache_get_raw (c, refs[3], NULL, NULL);
    cache_get_raw (c, refs[5], NULL, NULL);
    cache_insert_raw (c, refs[1], "blob1", 5, false);
    ok (cache_get_raw (c, refs[0], NULL, NULL) < 0,
        "and now it can be expired");

    /* an entry with a load in flight is not expired */
    pending = fakestore_put (fs, "pending", 7);
    cache_wait (c, pending, wait_cb, &w);
    for (int i = 0; i < 5; i++)
        cache_insert_raw (c, refs[i], "x", 1, false); /* wrong bytes, fine */
    cache_get_stats (c, &st);
    ok (st.loading == 1, "a load in flight survives expiry");
    fakestore_deliver (fs);
    ok (w.calls == 1 && w.errnum == 0, "and completes");
    cache_expire (c);
    cache_get_stats (c, &st);
    cmp_ok (st.count, "<=", 3, "cache_expire keeps the bound");

    /* dirty twice needs two clears */
    cache_insert_raw (c, refs[2], "blob2", 5, true);
    cache_insert_raw (c, refs[2], "blob2", 5, true);
    cache_clear_dirty (c, refs[2], true);
    ok (!cache_is_clean (c, refs[2]), "two inserts: still dirty after one");
    cache_clear_dirty (c, refs[2], true);
    ok (cache_is_clean (c, refs[2]), "clean after the second");

    json_decref (obj);
    cache_destroy (c);
    fakestore_destroy (fs);
}

/* The byte bound counts 200 per entry, the blob, and 6 times the encoded
 * size of a decoded object (cache.c). */
static void test_bytes (void)
{
    struct cache *c = cache_create (0, 500, fail_load, nofree, NULL);
    char refs[4][BLOBREF_MAX_STRING_SIZE];
    struct cache_stats st;
    json_t *obj = val_str ("o");

    name_refs (refs, 4, "bytes");
    cache_insert_raw (c, refs[0], "12345678", 8, true);
    cache_insert_raw (c, refs[1], "12345678", 8, false);
    cache_insert_raw (c, refs[2], "12345678", 8, false);
    cache_get_stats (c, &st);
    ok (st.bytes == 3 * 208 && st.count == 3,
        "3 entries of 8 bytes count 624 (bound 500)");
    cache_expire (c);
    cache_get_stats (c, &st);
    ok (st.bytes == 2 * 208 && cache_get_raw (c, refs[0], NULL, NULL) == 0
            && cache_get_raw (c, refs[1], NULL, NULL) < 0,
        "expiry drops the oldest clean entry, keeps the dirty one");
    ok (cache_insert_treeobj (c, refs[3], obj, 100, false) == 0,
        "insert an object of encoded size 100");
    cache_get_stats (c, &st);
    ok (st.bytes == 2 * 208 + 200 + 600, "it counts as decoded");
    cache_expire (c);
    cache_get_stats (c, &st);
    ok (st.bytes == 208 && st.count == 1, "over the bound: only the dirty entry"
                                          " is left");
    json_decref (obj);
    cache_destroy (c);
}

/* Decoding a cached blob adds the decoded object to what it counts. */
static void test_bytes_decode (void)
{
    struct cache *c = cache_create (0, 0, fail_load, nofree, NULL);
    char ref[BLOBREF_MAX_STRING_SIZE];
    json_t *obj = val_str ("abc");
    char *s = treeobj_encode (obj);
    struct cache_stats st;

    blobref_hash ("sha1", s, strlen (s), ref, sizeof (ref));
    ok (cache_insert_raw (c, ref, s, strlen (s), false) == 0,
        "insert a tree object as a blob");
    cache_get_stats (c, &st);
    ok (st.bytes == 200 + strlen (s), "it counts its bytes");
    ok (cache_get_treeobj (c, ref) != NULL, "decode it");
    cache_get_stats (c, &st);
    ok (st.bytes == 200 + 7 * strlen (s), "now it counts the object too");
    free (s);
    json_decref (obj);
    cache_destroy (c);
}

/* A cache of 3 entries: refs[0] and refs[1] clean, refs[2] dirty and
 * forgotten (a replaced version whose store is pending). */
static struct cache *forgotten_dirty (char refs[][BLOBREF_MAX_STRING_SIZE])
{
    struct cache *c = cache_create (3, 0, fail_load, nofree, NULL);

    cache_insert_raw (c, refs[0], "a", 1, false);
    cache_insert_raw (c, refs[1], "b", 1, false);
    cache_insert_raw (c, refs[2], "c", 1, true);
    cache_forget (c, refs[2]);
    return c;
}

/* Replaced versions (cache_forget) go first and are bounded (8 MiB). */
static void test_forget (void)
{
    struct cache *c = cache_create (0, 0, fail_load, nofree, NULL);
    char refs[12][BLOBREF_MAX_STRING_SIZE];
    size_t mb = 1 << 20;
    char *big = calloc (1, mb);
    struct cache_stats st;
    int present = 0;

    name_refs (refs, 12, "forget");
    for (int i = 0; i < 12; i++) {
        big[0] = i;
        /* each entry counts 1 MiB: its blob and 200 for itself */
        cache_insert_raw (c, refs[i], big, mb - 200, i == 11);
    }
    cache_forget (c, refs[0]);
    ok (cache_get_raw (c, refs[0], NULL, NULL) == 0,
        "a forgotten entry is still there while there is room");
    for (int i = 0; i < 12; i++)
        cache_forget (c, refs[i]);
    for (int i = 0; i < 11; i++)
        if (cache_get_raw (c, refs[i], NULL, NULL) == 0)
            present++;
    cache_get_stats (c, &st);
    ok (present == 8 && st.count == 9,
        "11 forgotten MiB: 8 kept (the newest), the dirty one untouched");
    ok (cache_get_raw (c, refs[11], NULL, NULL) == 0,
        "a dirty entry is not forgotten");
    cache_destroy (c);

    /* forgotten while dirty (a store written behind): once stored, it
     * expires before the least recently used entry */
    c = forgotten_dirty (refs);
    cache_clear_dirty (c, refs[2], true);
    cache_insert_raw (c, refs[3], "d", 1, false);
    cache_expire (c);
    ok (cache_get_raw (c, refs[2], NULL, NULL) != 0
            && cache_get_raw (c, refs[0], NULL, NULL) == 0,
        "forgotten while dirty, then stored: it expires first");
    cache_destroy (c);

    /* forgotten while dirty, then used again: not forgotten */
    c = forgotten_dirty (refs);
    ok (cache_get_raw (c, refs[2], NULL, NULL) == 0, "read again while dirty");
    cache_clear_dirty (c, refs[2], true);
    cache_insert_raw (c, refs[3], "d", 1, false);
    cache_expire (c);
    ok (cache_get_raw (c, refs[2], NULL, NULL) == 0
            && cache_get_raw (c, refs[0], NULL, NULL) != 0,
        "then stored: it stays, the least recently used one expires");
    cache_destroy (c);
    free (big);
}

/* A demoted entry is the first to expire; using it again promotes it. */
static void test_demote (void)
{
    struct cache *c = cache_create (3, 0, fail_load, nofree, NULL);
    char refs[5][BLOBREF_MAX_STRING_SIZE];

    name_refs (refs, 5, "demote");
    for (int i = 0; i < 3; i++)
        cache_insert_raw (c, refs[i], "x", 1, false);
    cache_demote (c, refs[2]); /* the newest, now the first to go */
    cache_insert_raw (c, refs[3], "x", 1, false);
    ok (cache_get_raw (c, refs[2], NULL, NULL) < 0
            && cache_get_raw (c, refs[0], NULL, NULL) == 0,
        "the demoted entry expires before older ones");
    cache_demote (c, refs[1]);
    ok (cache_get_raw (c, refs[1], NULL, NULL) == 0,
        "a demoted entry that is used again");
    cache_insert_raw (c, refs[4], "x", 1, false);
    /* (the lookups above touched 0, then 1: 3 is the oldest now) */
    ok (cache_get_raw (c, refs[3], NULL, NULL) < 0
            && cache_get_raw (c, refs[1], NULL, NULL) == 0,
        "is kept as recently used");
    cache_demote (c, "sha1-0000000000000000000000000000000000000000");
    cache_demote (NULL, refs[0]);
    pass ("demoting an unknown ref or with no cache does nothing");
    cache_destroy (c);
}

/* A held entry is not expired until released as many times. */
static void test_hold (void)
{
    struct cache *c = cache_create (2, 0, fail_load, nofree, NULL);
    char refs[6][BLOBREF_MAX_STRING_SIZE];

    name_refs (refs, 6, "hold");
    cache_insert_raw (c, refs[0], "x", 1, false);
    ok (cache_hold (c, refs[0]) == 0 && cache_hold (c, refs[0]) == 0,
        "an entry is held twice");
    errno = 0;
    ok (cache_hold (c, refs[5]) < 0 && errno == ENOENT,
        "holding what is not cached: ENOENT");
    for (int i = 1; i < 4; i++)
        cache_insert_raw (c, refs[i], "x", 1, false);
    ok (cache_get_raw (c, refs[0], NULL, NULL) == 0
            && cache_get_raw (c, refs[1], NULL, NULL) < 0,
        "the held (oldest) entry stays, the others expire past the bound");
    cache_release (c, refs[0]);
    cache_insert_raw (c, refs[4], "x", 1, false);
    ok (cache_get_raw (c, refs[0], NULL, NULL) == 0,
        "released once of twice: still held");
    cache_release (c, refs[0]);
    cache_release (c, refs[0]); /* one too many: ignored */
    cache_release (c, refs[5]);
    cache_release (NULL, refs[0]);
    cache_insert_raw (c, refs[5], "x", 1, false);
    cache_insert_raw (c, refs[1], "x", 1, false);
    ok (cache_get_raw (c, refs[0], NULL, NULL) < 0,
        "released as many times as held: it expires again");
    cache_destroy (c);
}

static void test_destroy_pending (void)
{
    struct fakestore *fs = fakestore_create ("sha1");
    struct cache *c = fakestore_cache (fs, 0);
    const char *ref = fakestore_put (fs, "abc", 3);
    struct wres w = {0};

    cache_wait (c, ref, wait_cb, &w);
    cmp_ok (fakestore_pending (fs), "==", 1, "a load is pending");
    cache_destroy (c);
    ok (fakestore_pending (fs) == 0 && w.calls == 0,
        "destroy frees the load handle without calling the waiter");
    fakestore_destroy (fs);
}

/* Many dirty entries: they are not expired (nor walked over), and the
 * bound is still kept with the clean ones. */
static void test_many_dirty (void)
{
    struct fakestore *fs = fakestore_create ("sha1");
    struct cache *c = fakestore_cache (fs, 2);
    char ref[BLOBREF_MAX_STRING_SIZE];
    struct cache_stats st;
    int bad = 0;

    for (int i = 0; i < 100; i++) {
        char s[32];
        int dirty = i < 50;
        snprintf (s, sizeof (s), "%s%d", dirty ? "dirty" : "clean", i);
        blobref_hash ("sha1", s, strlen (s), ref, sizeof (ref));
        if (cache_insert_raw (c, ref, s, strlen (s), dirty) < 0)
            bad++;
    }
    cache_get_stats (c, &st);
    ok (bad == 0 && st.count == 51 && st.dirty == 50,
        "50 dirty then 50 clean inserts, bound 2: the dirty ones and the "
        "newest clean one are left");
    for (int i = 0; i < 50; i++) {
        name_ref (ref, "dirty", i);
        if (cache_get_raw (c, ref, NULL, NULL) < 0)
            bad++;
        cache_clear_dirty (c, ref, true);
    }
    ok (bad == 0, "every dirty entry survived");
    cache_expire (c);
    cache_get_stats (c, &st);
    ok (st.count == 2 && st.dirty == 0,
        "once stored, they expire down to the bound");
    cache_destroy (c);
    fakestore_destroy (fs);
}

/* An entry in use comes back as the most recently used; one taken from
 * the replaced versions no longer counts among them. */
static void test_busy_returns (void)
{
    struct cache *c = cache_create (3, 0, fail_load, nofree, NULL);
    char refs[13][BLOBREF_MAX_STRING_SIZE];
    size_t mb = 1 << 20;
    char *big = calloc (1, mb);
    int present = 0;

    name_refs (refs, 13, "busy");
    cache_insert_raw (c, refs[0], "a", 1, true);
    cache_insert_raw (c, refs[1], "b", 1, false);
    cache_insert_raw (c, refs[2], "c", 1, false);
    cache_clear_dirty (c, refs[0], true);
    cache_insert_raw (c, refs[3], "d", 1, false);
    ok (cache_get_raw (c, refs[1], NULL, NULL) < 0
            && cache_get_raw (c, refs[0], NULL, NULL) == 0,
        "a stored entry is the most recent: an older clean one expires");
    cache_destroy (c);

    c = cache_create (0, 0, fail_load, nofree, NULL);
    big[0] = 'x';
    cache_insert_raw (c, refs[4], big, mb - 200, false);
    cache_forget (c, refs[4]);
    cache_insert_raw (c, refs[4], big, mb - 200, true);
    for (int i = 5; i < 13; i++) {
        big[0] = i;
        cache_insert_raw (c, refs[i], big, mb - 200, false);
        cache_forget (c, refs[i]);
    }
    for (int i = 5; i < 13; i++)
        if (cache_get_raw (c, refs[i], NULL, NULL) == 0)
            present++;
    ok (present == 8 && cache_get_raw (c, refs[4], NULL, NULL) == 0,
        "a replaced version made dirty again leaves the 8 MiB of replaced"
        " versions to the others");
    cache_destroy (c);
    free (big);
}

/* cache_age(): what was not used for more than max_age ticks goes, in
 * use or not; entries in use, held or dirty stay, and age from when they
 * were last in use; demoted and replaced entries age too. */
static void test_age (void)
{
    struct cache *c = cache_create (0, 0, fail_load, nofree, NULL);
    char refs[8][BLOBREF_MAX_STRING_SIZE];
    struct cache_stats st;
    int gone = 0;

    name_refs (refs, 8, "age");
    for (int i = 0; i < 4; i++)
        cache_insert_raw (c, refs[i], "x", 1, false);
    cache_insert_raw (c, refs[4], "x", 1, true); /* dirty */
    cache_insert_raw (c, refs[5], "x", 1, false);
    cache_hold (c, refs[5]);
    cache_age (c, 2);
    cache_age (c, 2);
    cache_get_stats (c, &st);
    ok (st.count == 6 && st.aged == 0, "2 ticks old, max_age 2: all kept");
    ok (cache_get_raw (c, refs[1], NULL, NULL) == 0, "entry 1 is used");
    cache_age (c, 2);
    for (int i = 0; i < 6; i++)
        if (cache_get_raw (c, refs[i], NULL, NULL) < 0)
            gone |= 1 << i;
    cache_get_stats (c, &st);
    ok (gone == (1 << 0 | 1 << 2 | 1 << 3) && st.aged == 3 && st.count == 3,
        "3 ticks old: the clean unused entries went, not the used, dirty "
        "or held ones (gone 0x%x)",
        gone);
    /* the lookups above used 1, 4 and 5 at this tick */
    cache_clear_dirty (c, refs[4], true);
    cache_release (c, refs[5]);
    cache_demote (c, refs[1]);
    cache_age (c, 2);
    ok (cache_get_raw (c, refs[1], NULL, NULL) < 0
            && cache_get_raw (c, refs[4], NULL, NULL) == 0
            && cache_get_raw (c, refs[5], NULL, NULL) == 0,
        "the next tick: the demoted entry went, the released ones stay");
    cache_insert_raw (c, refs[6], "x", 1, false);
    cache_forget (c, refs[6]);
    cache_age (c, 0);
    cache_get_stats (c, &st);
    ok (st.count == 0, "max_age 0: everything not used since the last tick "
                       "went, replaced versions too");
    cache_insert_raw (c, refs[7], "x", 1, false);
    cache_age (c, 0);
    cache_age (NULL, 0);
    cache_get_stats (c, &st);
    ok (st.count == 0 && st.aged == 8 && st.expired == 8,
        "aged entries count as expired too");
    cache_destroy (c);
}

int main (void)
{
    plan (NO_PLAN);
    test_basic ();
    test_errors ();
    test_insert_dirty_expire ();
    test_many_dirty ();
    test_busy_returns ();
    test_bytes ();
    test_bytes_decode ();
    test_forget ();
    test_demote ();
    test_hold ();
    test_age ();
    test_destroy_pending ();
    done_testing ();
    return 0;
}
