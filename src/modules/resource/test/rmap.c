/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/rmap.c - R validation, rank <-> host, subsets, targets */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rmap.h"
#include "tap.h"

static json_t *R_of (const char *s)
{
    json_error_t jerr;
    json_t *o = json_loads (s, 0, &jerr);
    if (!o)
        BAIL_OUT ("bad test JSON: %s", jerr.text);
    return o;
}

static const char *R4
    = "{\"version\":1,\"execution\":{\"R_lite\":["
      "{\"rank\":\"0-1\",\"children\":{\"core\":\"0-3\"}},"
      "{\"rank\":\"2-3\",\"children\":{\"core\":\"0-1\",\"gpu\":\"0\"}}],"
      "\"starttime\":0,\"expiration\":100,"
      "\"nodelist\":[\"n[0-1]\",\"big,big\"],"
      "\"properties\":{\"fast\":\"0,2\",\"slow\":\"3\"}},"
      "\"scheduling\":{\"writer\":\"x\"}}";

static void test_bad (void)
{
    static const char *bad[] = {
        "{}",
        "{\"version\":2,\"execution\":{\"R_lite\":[],\"nodelist\":[]}}",
        "{\"version\":1,\"execution\":{\"R_lite\":{},\"nodelist\":[]}}",
        "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\"}],"
        "\"nodelist\":[\"a\"]}}",
        "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"x\","
        "\"children\":{\"core\":\"0\"}}],\"nodelist\":[\"a\"]}}",
        "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
        "\"children\":{\"core\":\"0-\"}}],\"nodelist\":[\"a\"]}}",
        /* ranks twice */
        "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0-1\","
        "\"children\":{\"core\":\"0\"}},{\"rank\":\"1\",\"children\":"
        "{\"core\":\"1\"}}],\"nodelist\":[\"a,b\"]}}",
        /* count mismatch */
        "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0-1\","
        "\"children\":{\"core\":\"0\"}}],\"nodelist\":[\"a\"]}}",
        /* bad hostlist */
        "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
        "\"children\":{\"core\":\"0\"}}],\"nodelist\":[\"a[\"]}}",
        NULL,
    };
    flux_error_t error;

    for (int i = 0; bad[i]; i++) {
        json_t *R = R_of (bad[i]);
        errno = 0;
        error.text[0] = '\0';
        ok (rmap_create (R, &error) == NULL && errno == EINVAL
                && error.text[0] != '\0',
            "bad R %d is refused: %s", i, error.text);
        json_decref (R);
    }
    ok (rmap_create (NULL, NULL) == NULL && errno == EINVAL,
        "NULL R is refused");
}

static void test_map (void)
{
    json_t *R = R_of (R4), *sub, *o;
    struct rmap *m;
    struct idset *ids;
    flux_error_t error;
    char *s;

    ok ((m = rmap_create (R, &error)) != NULL, "a valid R is accepted");
    ok (rmap_R (m) == R, "rmap_R is the R given");
    s = rmap_idset_str (rmap_ranks (m));
    is (s, "0-3", "ranks are 0-3");
    free (s);
    is (rmap_host (m, 0), "n0", "rank 0 is n0");
    is (rmap_host (m, 3), "big", "rank 3 is big");
    errno = 0;
    ok (rmap_host (m, 4) == NULL && errno == ENOENT, "rank 4 is unknown");
    ok (rmap_first_rank (m, "big") == 2, "first rank of big is 2");
    ok (rmap_first_rank (m, "nope") < 0 && errno == ENOENT,
        "an unknown host has no rank");

    ids = idset_decode ("1,3");
    s = rmap_nodelist (m, ids);
    is (s, "n1,big", "nodelist of 1,3");
    free (s);

    ok ((sub = rmap_subset (m, ids)) != NULL, "subset 1,3");
    o = json_object_get (sub, "execution");
    ok (json_array_size (json_object_get (o, "R_lite")) == 2,
        "subset has two R_lite entries");
    is (json_string_value (json_object_get (
            json_array_get (json_object_get (o, "R_lite"), 1), "rank")),
        "3", "second entry is rank 3");
    is (json_string_value (json_array_get (json_object_get (o, "nodelist"), 0)),
        "n1,big", "subset nodelist");
    ok (json_number_value (json_object_get (o, "expiration")) == 100,
        "expiration is kept");
    ok (json_object_get (json_object_get (o, "properties"), "fast") == NULL,
        "a property with no rank left is dropped");
    is (json_string_value (
            json_object_get (json_object_get (o, "properties"), "slow")),
        "3", "a property is intersected");
    ok (json_object_get (sub, "scheduling") != NULL, "scheduling is kept");
    {
        struct rmap *m2 = rmap_create (sub, &error);
        ok (m2 != NULL, "the subset is a valid R");
        rmap_destroy (m2);
    }
    json_decref (sub);
    idset_destroy (ids);

    ids = idset_create (0, 0);
    ok ((sub = rmap_subset (m, ids)) != NULL, "empty subset");
    o = json_object_get (sub, "execution");
    ok (json_array_size (json_object_get (o, "R_lite")) == 0
            && json_array_size (json_object_get (o, "nodelist")) == 0,
        "empty subset has no ranks and no hosts");
    json_decref (sub);
    idset_destroy (ids);

    ok ((sub = rmap_subset (m, NULL)) != NULL, "subset NULL is everything");
    s = json_dumps (
        json_object_get (json_object_get (sub, "execution"), "nodelist"),
        JSON_COMPACT);
    is (s, "[\"n[0-1],big,big\"]", "full nodelist");
    free (s);
    json_decref (sub);

    rmap_destroy (m);
    json_decref (R);
}

static void test_targets (void)
{
    json_t *R = R_of (R4);
    struct rmap *m = rmap_create (R, NULL);
    flux_error_t error;
    struct idset *ids;
    char *s;

    ok ((ids = rmap_targets (m, "1-2", &error)) != NULL, "targets 1-2");
    s = rmap_idset_str (ids);
    is (s, "1-2", "idset target");
    free (s);
    idset_destroy (ids);

    ok ((ids = rmap_targets (m, "big", &error)) != NULL, "targets big");
    s = rmap_idset_str (ids);
    is (s, "2-3", "a host stands for all its ranks");
    free (s);
    idset_destroy (ids);

    ok ((ids = rmap_targets (m, "n0,big", &error)) != NULL, "targets n0,big");
    s = rmap_idset_str (ids);
    is (s, "0,2-3", "hostlist target");
    free (s);
    idset_destroy (ids);

    errno = 0;
    ok (rmap_targets (m, "2-7", &error) == NULL && errno == EINVAL
            && strstr (error.text, "4-7"),
        "ranks out of range: %s", error.text);
    ok (rmap_targets (m, "n7", &error) == NULL && errno == EINVAL
            && strstr (error.text, "n7"),
        "unknown host: %s", error.text);
    ok (rmap_targets (m, "", &error) == NULL && errno == EINVAL,
        "empty targets: %s", error.text);
    ok (rmap_targets (m, "[]", &error) == NULL && errno == EINVAL,
        "empty idset: %s", error.text);
    ok (rmap_targets (m, "n[", &error) == NULL && errno == EINVAL,
        "malformed targets: %s", error.text);
    rmap_destroy (m);
    json_decref (R);
}

static void test_empty (void)
{
    json_t *R = rmap_empty_R ();
    struct rmap *m;

    ok (R != NULL, "rmap_empty_R works");
    ok ((m = rmap_create (R, NULL)) != NULL && idset_empty (rmap_ranks (m)),
        "the empty R is valid and empty");
    rmap_destroy (m);
    json_decref (R);
}

/* 16384 ranks: the map and a subset stay fast (O(n)). */
static void test_large (void)
{
    json_t *R = R_of ("{\"version\":1,\"execution\":{\"R_lite\":["
                      "{\"rank\":\"0-16383\",\"children\":{\"core\":"
                      "\"0-63\"}}],\"nodelist\":[\"node[0-16383]\"]}}");
    struct rmap *m = rmap_create (R, NULL);
    struct idset *ids = idset_decode ("100-199,5000");
    json_t *sub = m ? rmap_subset (m, ids) : NULL;
    char *s;

    ok (m != NULL, "16384 ranks are accepted");
    is (rmap_host (m, 16383), "node16383", "last host");
    s = sub ? json_dumps (
            json_object_get (json_object_get (sub, "execution"), "nodelist"),
            JSON_COMPACT)
            : NULL;
    is (s, "[\"node[100-199,5000]\"]", "subset of a large R");
    free (s);
    ok (rmap_first_rank (m, "node9999") == 9999, "host lookup in a large R");
    json_decref (sub);
    idset_destroy (ids);
    rmap_destroy (m);
    json_decref (R);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_bad ();
    test_map ();
    test_targets ();
    test_empty ();
    test_large ();
    done_testing ();
    return 0;
}
