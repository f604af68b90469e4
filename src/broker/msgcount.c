/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Per-topic message counts of the router (msgcount.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msgcount.h"
#include "strmap.h"

struct msgcount {
    struct strmap *counts; /* "FROM TYPE TOPIC" -> uint64_t * */
};

struct msgcount *msgcount_create (void)
{
    struct msgcount *mc;
    const char *s = getenv ("FLUX_BROKER_MSGCOUNT");

    if (!s || !*s || !strcmp (s, "0")) {
        errno = 0;
        return NULL;
    }
    if (!(mc = calloc (1, sizeof (*mc))))
        return NULL;
    if (!(mc->counts = strmap_create (free))) {
        free (mc);
        return NULL;
    }
    return mc;
}

void msgcount_destroy (struct msgcount *mc)
{
    if (mc) {
        int saved = errno;
        strmap_destroy (mc->counts);
        free (mc);
        errno = saved;
    }
}

void msgcount_add (struct msgcount *mc, const char *from, const flux_msg_t *msg)
{
    const char *topic = NULL;
    int type = 0;
    char key[256];
    uint64_t *n;

    if (!mc)
        return;
    (void)flux_msg_get_type (msg, &type);
    (void)flux_msg_get_topic (msg, &topic);
    snprintf (key, sizeof (key), "%s %s %s", from, flux_msg_typestr (type),
              topic ? topic : "-");
    if ((n = strmap_get (mc->counts, key)))
        (*n)++;
    else if ((n = calloc (1, sizeof (*n)))) {
        *n = 1;
        if (strmap_put (mc->counts, key, n) < 0)
            free (n);
    }
}

static int put_count (const char *key, void *val, void *arg)
{
    uint64_t *n = val;
    (void)json_object_set_new (arg, key, json_integer ((json_int_t)*n));
    return 0;
}

static int zero_count (const char *key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    *(uint64_t *)val = 0;
    return 0;
}

json_t *msgcount_json (struct msgcount *mc, bool clear)
{
    json_t *o;

    if (!mc || !(o = json_object ()))
        return NULL;
    (void)strmap_foreach (mc->counts, put_count, o);
    if (clear)
        (void)strmap_foreach (mc->counts, zero_count, NULL);
    return o;
}
