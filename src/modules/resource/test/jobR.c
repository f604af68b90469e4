/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/jobR.c - a job's R renumbered for the sub-instance it runs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobR.h"
#include "tap.h"

static char *remap_str (const char *in, flux_error_t *error)
{
    json_t *R = json_loads (in, 0, NULL), *out;
    char *s = NULL;

    if (!R)
        BAIL_OUT ("bad test input %s", in);
    if ((out = jobR_remap (R, error))) {
        s = json_dumps (
            json_object_get (json_object_get (out, "execution"), "R_lite"),
            JSON_COMPACT | JSON_SORT_KEYS);
        json_decref (out);
    }
    json_decref (R);
    return s;
}

static void check (const char *in, const char *want, const char *what)
{
    flux_error_t error;
    char *s = remap_str (in, &error);

    ok (s && !strcmp (s, want), "%s", what);
    if (!s || strcmp (s, want))
        diag ("got %s want %s", s ? s : error.text, want);
    free (s);
}

int main (void)
{
    flux_error_t error;
    char *s;

    plan (NO_PLAN);
    check ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"2-3\","
           "\"children\":{\"core\":\"0-1\"}}],\"nodelist\":[\"h[2-3]\"]}}",
           "[{\"children\":{\"core\":\"0-1\"},\"rank\":\"0-1\"}]",
           "a contiguous range is renumbered from 0");
    check ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"5,9\","
           "\"children\":{\"core\":\"0\"}},{\"rank\":\"7\",\"children\":"
           "{\"core\":\"1\"}}]}}",
           "[{\"children\":{\"core\":\"0\"},\"rank\":\"0,2\"},"
           "{\"children\":{\"core\":\"1\"},\"rank\":\"1\"}]",
           "interleaved entries keep the ascending order of all ranks");
    check ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
           "\"children\":{\"core\":\"3\"}}]}}",
           "[{\"children\":{\"core\":\"3\"},\"rank\":\"0\"}]",
           "rank 0 stays 0");
    s = remap_str ("{\"version\":1,\"execution\":{}}", &error);
    ok (s == NULL && strstr (error.text, "R_lite"), "R without R_lite: error");
    free (s);
    s = remap_str ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":"
                   "\"x\"}]}}",
                   &error);
    ok (s == NULL && strstr (error.text, "bad rank"), "a bad rank: error");
    free (s);
    s = remap_str ("{\"version\":1,\"execution\":{\"R_lite\":[{}]}}", &error);
    ok (s == NULL, "a missing rank: error");
    free (s);
    done_testing ();
    return 0;
}
