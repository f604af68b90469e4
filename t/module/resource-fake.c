/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* resource-fake - a stand-in for the resource module in scheduler tests:
 * it serves the RFC 28 resource.acquire stream from an R file.  Load it
 * under the name "resource":
 *
 *   flux module load --name=resource .../resource-fake.so R.json [up=IDSET]
 *
 * "<name>.acquire" (streaming): first {resources:R, up} (up defaults to
 * every rank of R), then whatever is posted with "<name>.fake-update"
 * {up?:s, down?:s, shrink?:s, expiration?:f} (answered {streams:i}, the
 * number of acquire streams it went to).  "<name>.disconnect" drops the
 * sender's streams.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "libflux/flux.h"
#include "libidset/idset.h"

#define MAX_STREAMS 64

struct ctx {
    flux_t *h;
    json_t *R;
    struct idset *up;
    const flux_msg_t *streams[MAX_STREAMS];
    int nstreams;
};

static void acquire_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    struct ctx *c = arg;
    char *up;

    if (!flux_msg_is_streaming (msg)) {
        flux_respond_error (h, msg, EPROTO, "acquire requires streaming");
        return;
    }
    if (c->nstreams == MAX_STREAMS) {
        flux_respond_error (h, msg, EBUSY, "too many acquire streams");
        return;
    }
    if (!(up = idset_encode (c->up, IDSET_FLAG_RANGE))) {
        flux_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    if (flux_respond_pack (h, msg, "{s:O s:s}", "resources", c->R, "up", up)
        == 0)
        c->streams[c->nstreams++] = flux_msg_incref (msg);
    free (up);
}

/* Apply an idset string to the up set. */
static int apply (struct idset *up, const char *ids, bool set)
{
    struct idset *s = idset_decode (ids);
    int rc;

    if (!s)
        return -1;
    rc = set ? idset_add (up, s) : idset_subtract (up, s);
    idset_destroy (s);
    return rc;
}

static void update_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct ctx *c = arg;
    const char *up = NULL, *down = NULL, *shrink = NULL;
    double expiration = -1.;
    json_t *o;
    int n = 0;

    if (flux_request_unpack (msg, NULL, "{s?s s?s s?s s?F}", "up", &up, "down",
                             &down, "shrink", &shrink, "expiration",
                             &expiration)
            < 0
        || (down && apply (c->up, down, false) < 0)
        || (shrink && apply (c->up, shrink, false) < 0)
        || (up && apply (c->up, up, true) < 0)) {
        flux_respond_error (h, msg, EPROTO, "bad fake-update");
        return;
    }
    flux_request_unpack (msg, NULL, "o", &o);
    for (int i = 0; i < c->nstreams; i++)
        if (flux_respond_pack (h, c->streams[i], "O", o) == 0)
            n++;
    flux_respond_pack (h, msg, "{s:i}", "streams", n);
}

static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct ctx *c = arg;

    for (int i = 0; i < c->nstreams;) {
        if (flux_msg_route_match_first (c->streams[i], msg)) {
            flux_msg_decref (c->streams[i]);
            c->streams[i] = c->streams[--c->nstreams];
        }
        else
            i++;
    }
}

static int load_R (struct ctx *c, const char *path)
{
    json_error_t e;
    json_t *lite, *entry;
    size_t i;

    if (!(c->R = json_load_file (path, 0, &e))) {
        fprintf (stderr, "resource-fake: %s: %s\n", path, e.text);
        return -1;
    }
    if (!(c->up = idset_create (0, 0))
        || json_unpack (c->R, "{s:{s:o}}", "execution", "R_lite", &lite) < 0)
        return -1;
    json_array_foreach (lite, i, entry)
    {
        const char *rank;
        if (json_unpack (entry, "{s:s}", "rank", &rank) < 0
            || apply (c->up, rank, true) < 0)
            return -1;
    }
    return 0;
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct ctx c = {.h = h};
    const char *name = flux_aux_get (h, "flux::name");
    char acquire[128], update[128], disconnect[128];
    struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, acquire, acquire_cb, 0},
        {FLUX_MSGTYPE_REQUEST, update, update_cb, 0},
        {FLUX_MSGTYPE_REQUEST, disconnect, disconnect_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers = NULL;
    int rc = -1;

    if (argc < 1 || load_R (&c, argv[0]) < 0)
        goto done;
    for (int i = 1; i < argc; i++) {
        if (!strncmp (argv[i], "up=", 3)) {
            idset_destroy (c.up);
            if (!(c.up = idset_decode (argv[i] + 3)))
                goto done;
        }
        else
            goto done;
    }
    snprintf (acquire, sizeof (acquire), "%s.acquire", name);
    snprintf (update, sizeof (update), "%s.fake-update", name);
    snprintf (disconnect, sizeof (disconnect), "%s.disconnect", name);
    if (flux_msg_handler_addvec (h, htab, &c, &handlers) < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done:
    if (rc < 0 && errno == 0)
        errno = EINVAL;
    flux_msg_handler_delvec (handlers);
    for (int i = 0; i < c.nstreams; i++)
        flux_msg_decref (c.streams[i]);
    idset_destroy (c.up);
    json_decref (c.R);
    return rc;
}
