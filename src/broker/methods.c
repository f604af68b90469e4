/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* methods.c - default methods answered the same way by every service. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include <jansson.h>

#include "libflux/stats.h"
#include "methods.h"

void method_ping_respond (flux_t *h, const flux_msg_t *msg, const char *self_id,
                          uint32_t rank)
{
    const char *s = NULL;
    json_t *o = NULL;
    char *route = NULL, *full = NULL;
    struct flux_msg_cred cred = {0};

    if (flux_request_decode (msg, NULL, &s) < 0
        || !(o = s ? json_loads (s, 0, NULL) : json_object ())
        || !json_is_object (o)) {
        flux_respond_error (h, msg, EPROTO, "ping: payload must be an object");
        json_decref (o);
        return;
    }
    (void)flux_msg_get_cred (msg, &cred);
    route = flux_msg_route_string (msg);
    if (asprintf (&full, "%s%s%.8s", route ? route : "",
                  route && *route ? "!" : "", self_id)
        < 0)
        full = NULL;
    json_object_set_new (o, "route", json_string (full ? full : ""));
    json_object_set_new (o, "userid", json_integer (cred.userid));
    json_object_set_new (o, "rolemask", json_integer (cred.rolemask));
    json_object_set_new (o, "rank", json_integer (rank));
    flux_respond_pack (h, msg, "O", o);
    json_decref (o);
    free (route);
    free (full);
}

void method_stats_respond (flux_t *h, const flux_msg_t *msg)
{
    flux_stats_respond (h, msg, json_object ());
}

int method_uuid (char *buf, size_t size)
{
    unsigned char r[16];

    if (size < 37 || getrandom (r, sizeof (r), 0) != (ssize_t)sizeof (r))
        return -1;
    r[6] = (r[6] & 0x0f) | 0x40;
    r[8] = (r[8] & 0x3f) | 0x80;
    snprintf (buf, size,
              "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
              "%02x%02x%02x%02x%02x%02x",
              r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
              r[11], r[12], r[13], r[14], r[15]);
    return 0;
}
