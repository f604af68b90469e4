/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/strhash.c - the kvs-watch hash map */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strhash.h"
#include "tap.h"

static int freed;

static void count_free (void *val)
{
    freed++;
    free (val);
}

static int sum_cb (const char *key, void *val, void *arg)
{
    long *sum = arg;
    *sum += strtol (val, NULL, 10);
    return 0;
}

static int stop_cb (const char *key, void *val, void *arg)
{
    int *n = arg;
    return ++(*n) == 3 ? 42 : 0;
}

int main (int argc, char **argv)
{
    strhash_t *m;
    char key[32];
    long sum = 0, expect = 0;
    int i, n, missing;

    plan (NO_PLAN);

    ok ((m = strhash_create (count_free)) != NULL, "strhash_create works");
    ok (strhash_count (m) == 0, "a new map is empty");
    ok (strhash_lookup (m, "a") == NULL, "lookup in an empty map is NULL");
    errno = 0;
    ok (strhash_insert (m, NULL, NULL) < 0 && errno == EINVAL,
        "insert of a NULL key fails with EINVAL");
    ok (strhash_insert (m, "a", strdup ("1")) == 0, "insert a");
    {
        char *dup = strdup ("2");
        errno = 0;
        ok (strhash_insert (m, "a", dup) < 0 && errno == EEXIST,
            "a second insert of a fails with EEXIST");
        is (strhash_lookup (m, "a"), "1", "and a keeps its value");
        free (dup);
    }
    ok (strhash_insert (m, "", strdup ("0")) == 0,
        "the empty string is a key like any other");
    ok (strhash_count (m) == 2, "count is 2");
    errno = 0;
    ok (strhash_delete (m, "nope") < 0 && errno == ENOENT,
        "delete of a missing key fails with ENOENT");
    freed = 0;
    ok (strhash_delete (m, "") == 0 && freed == 1, "delete destroys the value");
    {
        char *v = strhash_take (m, "a");
        is (v, "1", "take returns the value");
        ok (strhash_count (m) == 0 && strhash_lookup (m, "a") == NULL,
            "and removes it");
        free (v);
    }
    ok (strhash_take (m, "a") == NULL, "take of a missing key is NULL");

    /* enough entries to grow several times */
    for (i = 0; i < 5000; i++) {
        snprintf (key, sizeof (key), "key.%d", i);
        char *v = malloc (16);
        snprintf (v, 16, "%d", i);
        if (strhash_insert (m, key, v) < 0)
            break;
        expect += i;
    }
    ok (i == 5000 && strhash_count (m) == 5000, "5000 keys inserted");
    missing = 0;
    for (i = 0; i < 5000; i++) {
        char *v;
        snprintf (key, sizeof (key), "key.%d", i);
        if (!(v = strhash_lookup (m, key)) || strtol (v, NULL, 10) != i)
            missing++;
    }
    ok (missing == 0, "every key finds its own value after growth");
    ok (strhash_foreach (m, sum_cb, &sum) == 0 && sum == expect,
        "foreach visits every entry once");
    n = 0;
    ok (strhash_foreach (m, stop_cb, &n) == 42 && n == 3,
        "foreach stops at the first non-zero return and returns it");
    for (i = 0; i < 5000; i += 2) {
        snprintf (key, sizeof (key), "key.%d", i);
        if (strhash_delete (m, key) < 0)
            break;
    }
    ok (i >= 5000 && strhash_count (m) == 2500, "half of them deleted");
    missing = 0;
    for (i = 0; i < 5000; i++) {
        snprintf (key, sizeof (key), "key.%d", i);
        if ((strhash_lookup (m, key) != NULL) != (i % 2 == 1))
            missing++;
    }
    ok (missing == 0, "exactly the odd keys remain");
    freed = 0;
    errno = 4242;
    strhash_destroy (m);
    ok (freed == 2500, "destroy frees the remaining values");
    ok (errno == 4242, "destroy preserves errno");
    strhash_destroy (NULL);
    pass ("strhash_destroy (NULL) is a no-op");

    ok ((m = strhash_create (NULL)) != NULL, "a map without destructor");
    ok (strhash_insert (m, "x", &n) == 0 && strhash_delete (m, "x") == 0,
        "deleting from it leaves the value alone");
    strhash_destroy (m);

    done_testing ();
    return 0;
}
