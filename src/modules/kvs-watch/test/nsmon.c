/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/nsmon.c - per-namespace key index of watchers */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/message.h"
#include "nsmon.h"
#include "tap.h"

struct fake {
    struct nsmon_link link;
    int id;
    int woken;
};

static void wake_cb (void *arg, void *cbarg)
{
    struct fake *f = arg;
    int *total = cbarg;
    f->woken++;
    (*total)++;
}

struct rmctx {
    nsmon_t *ns;
    int n;
};

static void remove_cb (void *arg, void *cbarg)
{
    struct fake *f = arg;
    struct rmctx *ctx = cbarg;
    nsmon_remove (ctx->ns, &f->link);
    ctx->n++;
}

static void reset (struct fake *f, int n)
{
    for (int i = 0; i < n; i++)
        f[i].woken = 0;
}

static json_t *keys (const char *k1, const char *k2)
{
    json_t *a = json_array ();
    if (k1)
        json_array_append_new (a, json_string (k1));
    if (k2)
        json_array_append_new (a, json_string (k2));
    return a;
}

#define NFAKE 1000

int main (int argc, char **argv)
{
    nsmon_t *ns;
    struct fake *f = calloc (NFAKE, sizeof (*f));
    struct fake full = {.id = -1};
    json_t *k;
    int total, i, bad;

    plan (NO_PLAN);

    ok ((ns = nsmon_create ("test")) != NULL, "nsmon_create works");
    is (nsmon_name (ns), "test", "name is kept");
    ok (nsmon_rootseq (ns) == -1 && nsmon_rootref (ns) == NULL,
        "no root known at first");
    ok (nsmon_owner (ns) == FLUX_USERID_UNKNOWN, "owner unknown at first");
    ok (nsmon_count (ns) == 0 && nsmon_key_count (ns) == 0, "no links");

    /* 1000 watchers over 500 keys: two per key */
    bad = 0;
    for (i = 0; i < NFAKE; i++) {
        char key[32];
        snprintf (key, sizeof (key), "job.%d.eventlog", i / 2);
        f[i].id = i;
        if (nsmon_add (ns, &f[i].link, key, false, &f[i]) < 0)
            bad++;
    }
    ok (bad == 0, "1000 links added");
    ok (nsmon_add (ns, &full.link, "job", true, &full) == 0, "a FULL link");
    ok (nsmon_count (ns) == NFAKE + 1, "count counts every link");
    ok (nsmon_key_count (ns) == NFAKE / 2, "500 keys indexed");
    errno = 0;
    ok (nsmon_add (ns, &f[0].link, "x", false, &f[0]) < 0 && errno == EINVAL,
        "adding an attached link fails with EINVAL");

    total = 0;
    k = keys ("job.7.eventlog", NULL);
    ok (nsmon_wake_keys (ns, k, wake_cb, &total) == 3 && total == 3,
        "a key wakes its two watchers and the FULL one");
    ok (f[14].woken == 1 && f[15].woken == 1 && full.woken == 1,
        "exactly those");
    bad = 0;
    for (i = 0; i < NFAKE; i++)
        if (i != 14 && i != 15 && f[i].woken)
            bad++;
    ok (bad == 0, "no other watcher is woken");
    json_decref (k);

    reset (f, NFAKE);
    full.woken = 0;
    total = 0;
    k = keys ("..job..3.eventlog.", "job.4");
    ok (nsmon_wake_keys (ns, k, wake_cb, &total) == 3 && f[6].woken == 1
            && f[7].woken == 1,
        "event keys are normalized before matching; a prefix matches "
        "nothing");
    json_decref (k);

    reset (f, NFAKE);
    full.woken = 0;
    total = 0;
    k = json_pack ("[i s n s]", 42, "job.1.eventlog", "job.1.eventlog");
    ok (nsmon_wake_keys (ns, k, wake_cb, &total) == 5 && f[2].woken == 2,
        "non-string elements are skipped; duplicates wake twice");
    json_decref (k);
    total = 0;
    errno = 0;
    ok (nsmon_wake_keys (ns, NULL, wake_cb, &total) < 0 && errno == EINVAL
            && total == 0,
        "keys must be an array (EINVAL)");

    nsmon_remove (ns, &f[2].link);
    ok (nsmon_count (ns) == NFAKE && nsmon_key_count (ns) == NFAKE / 2,
        "removing one of two watchers keeps the key");
    nsmon_remove (ns, &f[3].link);
    ok (nsmon_key_count (ns) == NFAKE / 2 - 1,
        "removing the last watcher of a key drops the key");
    nsmon_remove (ns, &f[3].link);
    ok (nsmon_count (ns) == NFAKE - 1, "removing a detached link is a no-op");
    ok (nsmon_add (ns, &f[3].link, "other", false, &f[3]) == 0,
        "a removed link can be added again");
    reset (f, NFAKE);
    total = 0;
    k = keys ("job.1.eventlog", "other");
    ok (nsmon_wake_keys (ns, k, wake_cb, &total) == 2 && f[3].woken == 1
            && f[2].woken == 0,
        "removed links are no longer woken, re-added ones under their new "
        "key");
    json_decref (k);

    /* waiting for the namespace */
    nsmon_wait_create (ns, &f[10].link);
    nsmon_wait_create (ns, &f[11].link);
    nsmon_wait_create (ns, &f[11].link);
    ok (nsmon_waiting_count (ns) == 2 && nsmon_is_waiting (&f[10].link),
        "two links wait for the namespace (parking twice counts once)");
    nsmon_remove (ns, &f[11].link);
    ok (nsmon_waiting_count (ns) == 1, "remove unparks");
    reset (f, NFAKE);
    total = 0;
    nsmon_wake_waiting (ns, wake_cb, &total);
    ok (total == 1 && f[10].woken == 1 && !nsmon_is_waiting (&f[10].link)
            && nsmon_waiting_count (ns) == 0,
        "wake_waiting unparks and wakes each waiting link once");

    /* roots, owner, generation */
    ok (nsmon_update_root (ns, 5, "sha1-5") == 1 && nsmon_rootseq (ns) == 5,
        "update_root sets the root");
    ok (nsmon_update_root (ns, 4, "sha1-4") == 0, "an older root is ignored");
    ok (nsmon_update_root (ns, 5, "sha1-x") == 0
            && !strcmp (nsmon_rootref (ns), "sha1-5"),
        "the same sequence is ignored");
    ok (nsmon_update_root (ns, 9, "sha1-9") == 1
            && !strcmp (nsmon_rootref (ns), "sha1-9"),
        "a newer root replaces it");
    errno = 0;
    ok (nsmon_update_root (ns, 10, NULL) < 0 && errno == EINVAL,
        "update_root without a rootref fails with EINVAL");
    nsmon_set_owner (ns, 1234);
    ok (nsmon_owner (ns) == 1234, "owner is kept");
    nsmon_bump_gen (ns);
    nsmon_bump_gen (ns);
    ok (nsmon_gen (ns) == 2, "generation counts bumps");

    /* foreach with removal of the current link */
    {
        struct rmctx ctx = {.ns = ns};
        int before = nsmon_count (ns);
        nsmon_foreach (ns, remove_cb, &ctx);
        ok (ctx.n == before && nsmon_count (ns) == 0
                && nsmon_key_count (ns) == 0,
            "foreach may remove the link it is given");
    }
    ok (nsmon_add (ns, &f[0].link, "a", false, &f[0]) == 0
            && nsmon_add (ns, &f[1].link, "a", false, &f[1]) == 0,
        "two links on one key");
    {
        /* a wake callback that detaches its own link, the last of its key */
        struct rmctx ctx = {.ns = ns};
        k = keys ("a", NULL);
        ok (nsmon_wake_keys (ns, k, remove_cb, &ctx) == 2 && ctx.n == 2
                && nsmon_key_count (ns) == 0,
            "wake callbacks may detach their own link, even the last one");
        json_decref (k);
    }
    ok (nsmon_add (ns, &f[0].link, "b", false, &f[0]) == 0, "re-add one");
    errno = 77;
    nsmon_destroy (ns);
    ok (errno == 77, "nsmon_destroy preserves errno");
    ok (!nsmon_is_waiting (&f[0].link), "destroy detaches remaining links");
    nsmon_destroy (NULL);
    pass ("nsmon_destroy (NULL) is a no-op");
    free (f);
    done_testing ();
    return 0;
}
