/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/rset.c - decoding the parts of R that job-exec uses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rset.h"
#include "tap.h"

static int decode (const char *s, struct rset *rs, flux_error_t *error)
{
    json_error_t e;
    json_t *R = json_loads (s, 0, &e);
    int rc;

    if (!R)
        BAIL_OUT ("bad test JSON: %s: %s", s, e.text);
    rc = rset_decode (R, rs, error);
    json_decref (R);
    return rc;
}

static void good (void)
{
    struct rset rs;
    flux_error_t error;
    char *s;

    ok (decode ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0-3\","
                "\"children\":{\"core\":\"0-1\"}}],\"nodelist\":[\"n[0-3]\"],"
                "\"starttime\":100.5,\"expiration\":160.5}}",
                &rs, &error)
            == 0,
        "a simple R decodes");
    s = idset_encode (rs.ranks, IDSET_FLAG_RANGE);
    is (s, "0-3", "ranks 0-3");
    ok (rs.starttime == 100.5 && rs.expiration == 160.5,
        "starttime and expiration");
    free (s);
    rset_clear (&rs);
    ok (rs.ranks == NULL, "rset_clear empties it");

    ok (decode ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"5,7\","
                "\"children\":{\"core\":\"0\"}},{\"rank\":\"1-2\",\"children\":"
                "{\"core\":\"0\",\"gpu\":\"0\"}}]}}",
                &rs, &error)
            == 0,
        "several R_lite entries, no times");
    s = idset_encode (rs.ranks, IDSET_FLAG_RANGE);
    is (s, "1-2,5,7", "ranks are their union");
    ok (rs.starttime == 0. && rs.expiration == 0., "times default to 0");
    free (s);
    rset_clear (&rs);
}

static void bad (const char *s, const char *why)
{
    struct rset rs = {0};
    flux_error_t error = {{0}};

    errno = 0;
    ok (decode (s, &rs, &error) < 0 && errno == EINVAL && rs.ranks == NULL
            && strlen (error.text) > 0,
        "%s: EINVAL (%s)", why, error.text);
}

static void hosts_is (const char *R_s, const char *ranks, const char *want)
{
    json_t *R = json_loads (R_s, 0, NULL);
    struct idset *ids = idset_decode (ranks);
    char *s;

    if (!R || !ids)
        BAIL_OUT ("bad test input");
    s = rset_hosts (R, ids);
    if (want)
        ok (s && !strcmp (s, want), "rset_hosts %s -> %s (got %s)", ranks, want,
            s ? s : "NULL");
    else
        ok (!s && errno == EINVAL, "rset_hosts %s fails with EINVAL", ranks);
    free (s);
    idset_destroy (ids);
    json_decref (R);
}

static void hosts (void)
{
    const char *R = "{\"version\":1,\"execution\":{\"R_lite\":["
                    "{\"rank\":\"4-5\",\"children\":{}},"
                    "{\"rank\":\"1,8\",\"children\":{}}],"
                    "\"nodelist\":[\"n[1,4]\",\"n5,big8\"]}}";
    const char *none = "{\"version\":1,\"execution\":{\"R_lite\":["
                       "{\"rank\":\"0-1\",\"children\":{}}]}}";
    const char *short_list = "{\"version\":1,\"execution\":{\"R_lite\":["
                             "{\"rank\":\"0-1\",\"children\":{}}],"
                             "\"nodelist\":[\"n0\"]}}";

    hosts_is (R, "1", "n1");
    hosts_is (R, "4-5", "n[4-5]");
    hosts_is (R, "1,8", "n1,big8");
    hosts_is (R, "1,4-5,8", "n[1,4-5],big8");
    hosts_is (R, "2", NULL);
    hosts_is (R, "9", NULL);
    hosts_is (none, "0", NULL);
    hosts_is (short_list, "0", NULL);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    good ();
    bad ("[]", "not an object");
    bad ("{\"version\":2,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{}}]}}",
         "version 2");
    bad ("{\"version\":1}", "no execution");
    bad ("{\"version\":1,\"execution\":{\"R_lite\":[]}}", "empty R_lite");
    bad ("{\"version\":1,\"execution\":{\"R_lite\":{}}}", "R_lite an object");
    bad ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"x\","
         "\"children\":{}}]}}",
         "bad rank idset");
    bad ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"\","
         "\"children\":{}}]}}",
         "empty rank idset");
    bad ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\"}]}}",
         "no children");
    bad ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":0,"
         "\"children\":{}}]}}",
         "rank a number");
    bad ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{}}],\"expiration\":-1}}",
         "negative expiration");
    bad ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{}}],\"starttime\":\"now\"}}",
         "starttime a string");
    bad ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{}}],\"starttime\":10,\"expiration\":5}}",
         "expiration before starttime");
    errno = 0;
    ok (rset_decode (NULL, NULL, NULL) < 0 && errno == EINVAL,
        "NULL arguments: EINVAL");
    hosts ();
    done_testing ();
    return 0;
}
