/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* dict unit tests */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

#include "../dict.h"

static int freed;

static void count_free (void *val)
{
    freed++;
    free (val);
}

static int sum_cb (const char *key, void *val, void *arg)
{
    *(int *)arg += *(int *)val;
    return 0;
}

int main (void)
{
    struct dict *d;
    char key[32];
    int i, sum = 0, ok_all = 1;

    plan (NO_PLAN);
    ok ((d = dict_create (count_free)) != NULL, "dict_create works");
    for (i = 0; i < 1000; i++) {
        int *v = malloc (sizeof (*v));
        *v = i;
        snprintf (key, sizeof (key), "key%d", i);
        if (dict_insert (d, key, v) < 0)
            ok_all = 0;
    }
    ok (ok_all, "1000 inserts (the table grows)");
    cmp_ok (dict_count (d), "==", 1000, "count is 1000");
    ok (*(int *)dict_lookup (d, "key567") == 567, "lookup finds a value");
    ok (dict_lookup (d, "nope") == NULL, "lookup of an absent key is NULL");
    ok (dict_insert (d, "key1", NULL) < 0 && errno == EEXIST,
        "inserting a present key fails with EEXIST");
    ok (dict_delete (d, "key2") == 0 && freed == 1,
        "delete destroys the value");
    ok (dict_delete (d, "key2") < 0 && errno == ENOENT,
        "delete of an absent key fails with ENOENT");
    {
        int *v = dict_take (d, "key3");
        ok (v && *v == 3 && freed == 1, "take returns the value undestroyed");
        free (v);
    }
    dict_foreach (d, sum_cb, &sum);
    cmp_ok (sum, "==", 999 * 1000 / 2 - 2 - 3, "foreach visits every value");
    ok (dict_insert (NULL, "x", NULL) < 0 && errno == EINVAL,
        "NULL dict is EINVAL");
    dict_destroy (d);
    cmp_ok (freed, "==", 999, "destroy frees the rest");
    dict_destroy (NULL);
    done_testing ();
    return 0;
}
