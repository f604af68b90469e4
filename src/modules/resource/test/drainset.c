/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/drainset.c - drain bookkeeping: modes, replay, remap, grouping */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drainset.h"
#include "libeventlog/eventlog.h"
#include "tap.h"

static struct idset *ids_of (const char *s)
{
    struct idset *ids = idset_decode (s);
    if (!ids)
        BAIL_OUT ("bad idset %s", s);
    return ids;
}

static char *drained (struct drainset *ds)
{
    return rmap_idset_str (drainset_ranks (ds));
}

static void test_modes (void)
{
    struct drainset *ds = drainset_create ();
    struct idset *ids = ids_of ("1-3");
    const char *reason, *host;
    double ts;
    char *s;

    ok (ds != NULL, "drainset_create works");
    ok (drainset_drain (ds, ids, "a,b,c", 10., "first", DRAIN_KEEP) == 0,
        "drain 1-3");
    s = drained (ds);
    is (s, "1-3", "1-3 are drained");
    free (s);
    ok (drainset_get (ds, 2, &ts, &reason, &host) == 0 && ts == 10.
            && !strcmp (reason, "first") && !strcmp (host, "b"),
        "rank 2: ts 10, reason first, host b");
    idset_destroy (ids);

    ids = ids_of ("3-4");
    ok (drainset_drain (ds, ids, NULL, 20., "second", DRAIN_KEEP) == 0,
        "drain 3-4 with KEEP");
    ok (drainset_get (ds, 3, &ts, &reason, &host) == 0 && ts == 10.
            && !strcmp (reason, "first") && !strcmp (host, "c"),
        "KEEP leaves rank 3 alone");
    ok (drainset_get (ds, 4, &ts, &reason, &host) == 0 && ts == 20.
            && !strcmp (reason, "second") && host == NULL,
        "KEEP drains rank 4 (host unknown)");
    ok (drainset_drain (ds, ids, NULL, 30., "third", DRAIN_UPDATE_REASON) == 0,
        "drain 3-4 with UPDATE_REASON");
    ok (drainset_get (ds, 3, &ts, &reason, &host) == 0 && ts == 10.
            && !strcmp (reason, "third") && !strcmp (host, "c"),
        "UPDATE_REASON: new reason, old timestamp, host kept");
    ok (drainset_drain (ds, ids, NULL, 40., NULL, DRAIN_UPDATE_ALL) == 0,
        "drain 3-4 with UPDATE_ALL and no reason");
    ok (drainset_get (ds, 3, &ts, &reason, NULL) == 0 && ts == 40.
            && !strcmp (reason, ""),
        "UPDATE_ALL: new timestamp, empty reason");
    idset_destroy (ids);

    ids = ids_of ("0-2");
    ok (drainset_undrain (ds, ids) == 0, "undrain 0-2 (0 was not drained)");
    s = drained (ds);
    is (s, "3-4", "3-4 remain");
    free (s);
    ok (!drainset_test (ds, 2) && drainset_test (ds, 4), "drainset_test");
    errno = 0;
    ok (drainset_get (ds, 1, NULL, NULL, NULL) < 0 && errno == ENOENT,
        "an undrained rank has no record");
    idset_destroy (ids);

    ids = ids_of ("5-6");
    errno = 0;
    ok (drainset_drain (ds, ids, "a", 1., NULL, 0) < 0 && errno == EINVAL,
        "a hosts count that does not match is EINVAL");
    ok (drainset_drain (ds, ids, NULL, 1., NULL, 3) < 0 && errno == EINVAL,
        "overwrite 3 is EINVAL");
    ok (!drainset_test (ds, 5), "nothing was drained");
    idset_destroy (ids);
    drainset_destroy (ds);
}

static void test_json (void)
{
    struct drainset *ds = drainset_create ();
    struct idset *a = ids_of ("0-1,5"), *b = ids_of ("3");
    json_t *o;
    char *s;

    (void)drainset_drain (ds, a, NULL, 100.5, "broken", 0);
    (void)drainset_drain (ds, b, NULL, 200., "other", 0);
    ok ((o = drainset_to_json (ds)) != NULL, "drainset_to_json works");
    s = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS);
    is (s,
        "{\"0-1,5\":{\"reason\":\"broken\",\"timestamp\":100.5},"
        "\"3\":{\"reason\":\"other\",\"timestamp\":200.0}}",
        "ranks with the same timestamp and reason are grouped");
    free (s);
    json_decref (o);
    drainset_destroy (ds);
    ds = drainset_create ();
    o = drainset_to_json (ds);
    ok (o && json_object_size (o) == 0, "an empty set gives {}");
    json_decref (o);
    drainset_destroy (ds);
    idset_destroy (a);
    idset_destroy (b);
}

static void test_replay (void)
{
    const char *log
        = "{\"timestamp\":1.0,\"name\":\"resource-define\",\"context\":"
          "{\"method\":\"dynamic-discovery\"}}\n"
          "{\"timestamp\":2.0,\"name\":\"drain\",\"context\":{\"idset\":\"1-"
          "2\","
          "\"nodelist\":\"n[1-2]\",\"reason\":\"bad\",\"overwrite\":0}}\n"
          "{\"timestamp\":3.0,\"name\":\"drain\",\"context\":{\"idset\":\"2\","
          "\"nodelist\":\"n2\",\"reason\":\"worse\",\"overwrite\":1}}\n"
          "{\"timestamp\":4.0,\"name\":\"undrain\",\"context\":{\"idset\":"
          "\"1\","
          "\"nodelist\":\"n1\"}}\n"
          "{\"timestamp\":5.0,\"name\":\"drain\",\"context\":{\"idset\":\"3\","
          "\"nodelist\":\"n3\",\"overwrite\":0}}\n";
    json_t *events = eventlog_decode (log), *e;
    struct drainset *ds = drainset_create ();
    flux_error_t error;
    const char *reason;
    double ts;
    size_t i;
    int rc = 0;
    char *s;

    json_array_foreach (events, i, e) rc
        |= drainset_apply_event (ds, e, &error);
    ok (rc == 0, "replaying an eventlog works");
    s = drained (ds);
    is (s, "2-3", "2-3 are drained after replay");
    free (s);
    ok (drainset_get (ds, 2, &ts, &reason, NULL) == 0 && ts == 2.
            && !strcmp (reason, "worse"),
        "overwrite 1 kept the first timestamp");
    json_decref (events);

    e = json_pack ("{s:f s:s s:{s:s}}", "timestamp", 1., "name", "drain",
                   "context", "nodelist", "x");
    errno = 0;
    ok (drainset_apply_event (ds, e, &error) < 0 && errno == EPROTO,
        "a drain event without idset is EPROTO: %s", error.text);
    json_decref (e);
    e = json_pack ("{s:f s:s}", "timestamp", 1., "name", "undrain");
    ok (drainset_apply_event (ds, e, &error) < 0 && errno == EPROTO,
        "an undrain event without context is EPROTO: %s", error.text);
    json_decref (e);
    e = json_pack ("{s:f s:s s:{s:s s:s s:i}}", "timestamp", 1., "name",
                   "drain", "context", "idset", "7-8", "nodelist", "a",
                   "overwrite", 0);
    ok (drainset_apply_event (ds, e, &error) < 0 && errno == EPROTO,
        "a nodelist that does not match the idset is EPROTO: %s", error.text);
    json_decref (e);
    e = json_pack ("{s:f s:s s:{s:s}}", "timestamp", 1., "name", "online",
                   "context", "idset", "0");
    ok (drainset_apply_event (ds, e, &error) == 0, "other events are ignored");
    json_decref (e);
    drainset_destroy (ds);
}

static void test_remap (void)
{
    json_t *R = json_pack ("{s:i s:{s:[{s:s s:{s:s}}] s:[s]}}", "version", 1,
                           "execution", "R_lite", "rank", "0-3", "children",
                           "core", "0", "nodelist", "n[3,1,2,9]");
    struct rmap *m = rmap_create (R, NULL);
    struct drainset *ds = drainset_create ();
    struct idset *ids = ids_of ("1-2");
    int changed = -1;
    const char *host;
    char *s;

    /* drained when rank 1 was n1 and rank 2 was n2; now n1 is rank 1, n2
     * is rank 2... but rank 0 was n0, which is gone */
    (void)drainset_drain (ds, ids, "n[1-2]", 1., "x", 0);
    idset_destroy (ids);
    ids = ids_of ("0");
    (void)drainset_drain (ds, ids, "n0", 1., "gone", 0);
    idset_destroy (ids);
    ids = ids_of ("3");
    (void)drainset_drain (ds, ids, "n3", 1., "moved", 0);
    idset_destroy (ids);
    ok (m && drainset_remap (ds, m, &changed) == 0, "drainset_remap works");
    s = drained (ds);
    is (s, "0-2", "n3 moved from rank 3 to 0, n0 dropped");
    free (s);
    ok (changed == 2, "two records changed");
    ok (drainset_get (ds, 0, NULL, NULL, &host) == 0 && !strcmp (host, "n3"),
        "rank 0 is drained as n3");
    drainset_destroy (ds);
    rmap_destroy (m);
    json_decref (R);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_modes ();
    test_json ();
    test_replay ();
    test_remap ();
    done_testing ();
    return 0;
}
