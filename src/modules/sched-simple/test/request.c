/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/request.c - jobspec resources to rlist_request: the four RFC 25
 * shapes, exclusive, duration, and malformed resources with their
 * one-line reasons.
 */
#include <errno.h>
#include <string.h>

#include "request.h"
#include "tap.h"

static json_t *js (const char *resources, const char *attributes)
{
    char buf[2048];
    json_error_t e;
    json_t *o;

    snprintf (buf, sizeof (buf),
              "{\"version\":1,\"resources\":%s,\"tasks\":[{\"command\":"
              "[\"true\"],\"slot\":\"task\",\"count\":{\"per_slot\":1}}],"
              "\"attributes\":%s}",
              resources, attributes ? attributes : "{\"system\":{}}");
    if (!(o = json_loads (buf, 0, &e)))
        BAIL_OUT ("bad test jobspec: %s", e.text);
    return o;
}

static void good (const char *res, const char *attrs, int nnodes, int nslots,
                  int c, int g, int x, double duration)
{
    json_t *o = js (res, attrs);
    struct rlist_request req;
    double d;
    flux_error_t error;
    int rc = request_parse (o, &req, &d, &error);

    ok (rc == 0 && req.nnodes == nnodes && req.nslots == nslots
            && req.cores_per_slot == c && req.gpus_per_slot == g
            && req.exclusive == x && d == duration,
        "%s -> N=%d n=%d c=%d g=%d x=%d t=%g%s%s", res, nnodes, nslots, c, g, x,
        duration, rc < 0 ? ": " : "", rc < 0 ? error.text : "");
    json_decref (o);
}

static void bad (const char *res, const char *attrs, const char *reason)
{
    json_t *o = js (res, attrs);
    struct rlist_request req;
    double d;
    flux_error_t error = {{0}};

    ok (request_parse (o, &req, &d, &error) < 0 && errno == EINVAL
            && !strcmp (error.text, reason),
        "%s: \"%s\"", res, error.text);
    json_decref (o);
}

#define SLOT(n, with) \
    "{\"type\":\"slot\",\"count\":" #n ",\"label\":\"task\",\"with\":" with "}"
#define CORE(n) "{\"type\":\"core\",\"count\":" #n "}"
#define GPU(n) "{\"type\":\"gpu\",\"count\":" #n "}"

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    good ("[" SLOT (1, "[" CORE (1) "]") "]", NULL, 0, 1, 1, 0, 0, 0.);
    good ("[" SLOT (4, "[" CORE (2) "," GPU (1) "]") "]",
          "{\"system\":{\"duration\":60}}", 0, 4, 2, 1, 0, 60.);
    good ("[{\"type\":\"node\",\"count\":2,\"with\":[" SLOT (
              3, "[" CORE (1) "]") "]}]",
          NULL, 2, 6, 1, 0, 0, 0.);
    good ("[{\"type\":\"node\",\"count\":2,\"exclusive\":true,\"with\":[" SLOT (
              1, "[" GPU (2) "," CORE (4) "]") "]}]",
          "{\"system\":{\"duration\":1.5}}", 2, 2, 4, 2, 1, 1.5);

    bad ("[]", NULL, "resources: must be a list of exactly one node or slot");
    bad ("{}", NULL, "resources: must be a list of exactly one node or slot");
    bad ("[" CORE (1) "]", NULL,
         "resources[0]: the first resource must be a node or a slot");
    bad ("[{\"type\":\"slot\",\"count\":0,\"with\":[" CORE (1) "]}]", NULL,
         "resources[0]: count must be an integer >= 1");
    bad ("[{\"type\":\"slot\",\"count\":{\"min\":1},\"with\":[" CORE (1) "]}]",
         NULL, "resources[0]: count must be an integer >= 1");
    bad ("[{\"type\":\"slot\",\"count\":1}]", NULL,
         "resources[0]: slot must have 'with': a core and an optional gpu");
    bad ("[" SLOT (1, "[" GPU (1) "]") "]", NULL,
         "resources[0]: slot has no core");
    bad ("[" SLOT (1, "[" CORE (1) "," CORE (1) "]") "]", NULL,
         "resources[0].with[1]: expected one core and at most one gpu");
    bad ("[" SLOT (1, "[{\"type\":\"socket\",\"count\":1}]") "]", NULL,
         "resources[0].with[0]: expected one core and at most one gpu");
    bad ("[" SLOT (1, "[{\"count\":1}]") "]", NULL,
         "resources[0].with[0]: type must be a string");
    bad ("[{\"type\":\"node\",\"count\":1,\"with\":[" CORE (1) "]}]", NULL,
         "resources[0].with[0]: a node may contain only a slot");
    bad ("[{\"type\":\"node\",\"count\":1,\"exclusive\":1,\"with\":[" SLOT (
             1, "[" CORE (1) "]") "]}]",
         NULL, "resources[0]: exclusive must be a boolean");
    bad ("[{\"type\":\"node\",\"count\":65536,\"with\":[" SLOT (
             65536, "[" CORE (1) "]") "]}]",
         NULL, "resources[0]: too many slots");
    bad ("[" SLOT (1, "[" CORE (1) "]") "]", "{\"system\":{\"duration\":-1}}",
         "attributes.system.duration must be a number >= 0");
    bad ("[" SLOT (1, "[" CORE (1) "]") "]",
         "{\"system\":{\"duration\":\"1h\"}}",
         "attributes.system.duration must be a number >= 0");
    {
        struct rlist_request req;
        double d;
        flux_error_t error;
        json_t *o = json_string ("x");
        ok (request_parse (o, &req, &d, &error) < 0 && errno == EINVAL,
            "a jobspec that is not an object: %s", error.text);
        json_decref (o);
    }
    done_testing ();
    return 0;
}
