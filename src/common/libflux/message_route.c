/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */

/* Message route stack (RFC 3 source-address routing).  Ids are kept
 * bottom (original sender) to top (newest hop) in one string pool, so
 * push and pop are appends and truncations; small stacks live inside the
 * message allocation.
 */

#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "message_private.h"

int msg__routes_reserve (flux_msg_t *msg, size_t count, size_t pool)
{
    if (count > msg->route_cap) {
        size_t cap = msg->route_cap * 2;
        struct msg_route *r;
        while (cap < count)
            cap *= 2;
        if (cap > FLUX_MSG_MAX_ROUTES)
            cap = FLUX_MSG_MAX_ROUTES;
        if (msg->routes == msg->routes_inline) {
            if ((r = malloc (cap * sizeof (*r))))
                memcpy (r, msg->routes, msg->route_count * sizeof (*r));
        }
        else
            r = realloc (msg->routes, cap * sizeof (*r));
        if (!r)
            return -1;
        msg->routes = r;
        msg->route_cap = cap;
    }
    if (pool > msg->pool_cap) {
        size_t cap = msg->pool_cap * 2;
        char *p;
        while (cap < pool)
            cap *= 2;
        if (cap > MSG_POOL_MAX)
            cap = MSG_POOL_MAX;
        if (msg->pool == msg->pool_inline) {
            if ((p = malloc (cap)))
                memcpy (p, msg->pool, msg->pool_len);
        }
        else
            p = realloc (msg->pool, cap);
        if (!p)
            return -1;
        msg->pool = p;
        msg->pool_cap = cap;
    }
    return 0;
}

int msg__route_append (flux_msg_t *msg, const char *id, size_t len)
{
    uintptr_t base = (uintptr_t)msg->pool;
    uintptr_t at = (uintptr_t)id;
    struct msg_route *r;

    if (at >= base && at < base + msg->pool_cap) {
        /* id lives in the pool, which may move: copy it out first */
        char tmp[MSG_ROUTE_ID_MAX];
        memcpy (tmp, id, len);
        return msg__route_append (msg, tmp, len);
    }
    if (msg__routes_reserve (msg, msg->route_count + 1, msg->pool_len + len + 1)
        < 0)
        return -1;
    r = &msg->routes[msg->route_count++];
    r->off = msg->pool_len;
    r->len = len;
    memcpy (msg->pool + msg->pool_len, id, len);
    msg->pool[msg->pool_len + len] = '\0';
    msg->pool_len += len + 1;
    return 0;
}

void flux_msg_route_enable (flux_msg_t *msg)
{
    if (msg && msg__flags_valid (msg->type, msg->flags | FLUX_MSGFLAG_ROUTE))
        msg->flags |= FLUX_MSGFLAG_ROUTE;
}

void flux_msg_route_disable (flux_msg_t *msg)
{
    if (msg) {
        flux_msg_route_clear (msg);
        msg->flags &= ~FLUX_MSGFLAG_ROUTE;
    }
}

void flux_msg_route_clear (flux_msg_t *msg)
{
    if (msg) {
        msg->route_count = 0;
        msg->pool_len = 0;
    }
}

int flux_msg_route_push (flux_msg_t *msg, const char *id)
{
    size_t len;

    if (!msg || !id) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->flags & FLUX_MSGFLAG_ROUTE)) {
        errno = EPROTO;
        return -1;
    }
    len = strnlen (id, MSG_ROUTE_ID_MAX + 1);
    if (len == 0 || len > MSG_ROUTE_ID_MAX) {
        errno = EINVAL;
        return -1;
    }
    if (msg->route_count >= FLUX_MSG_MAX_ROUTES) {
        errno = EOVERFLOW;
        return -1;
    }
    return msg__route_append (msg, id, len);
}

int flux_msg_route_pop (flux_msg_t *msg)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->flags & FLUX_MSGFLAG_ROUTE)) {
        errno = EPROTO;
        return -1;
    }
    if (msg->route_count > 0)
        msg->pool_len = msg->routes[--msg->route_count].off;
    return 0;
}

const char *flux_msg_route_first (const flux_msg_t *msg)
{
    if (!msg || !(msg->flags & FLUX_MSGFLAG_ROUTE) || msg->route_count == 0)
        return NULL;
    return msg->pool + msg->routes[0].off;
}

const char *flux_msg_route_last (const flux_msg_t *msg)
{
    if (!msg || !(msg->flags & FLUX_MSGFLAG_ROUTE) || msg->route_count == 0)
        return NULL;
    return msg->pool + msg->routes[msg->route_count - 1].off;
}

int flux_msg_route_count (const flux_msg_t *msg)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->flags & FLUX_MSGFLAG_ROUTE)) {
        errno = EPROTO;
        return -1;
    }
    return msg->route_count;
}

char *flux_msg_route_string (const flux_msg_t *msg)
{
    char *s, *p;

    if (flux_msg_route_count (msg) < 0)
        return NULL;
    if (!(s = malloc (msg->route_count * 9 + 1)))
        return NULL;
    p = s;
    for (int i = 0; i < msg->route_count; i++) {
        size_t n = msg->routes[i].len < 8 ? msg->routes[i].len : 8;
        if (i > 0)
            *p++ = '!';
        memcpy (p, msg->pool + msg->routes[i].off, n);
        p += n;
    }
    *p = '\0';
    return s;
}

bool flux_msg_route_match_first (const flux_msg_t *a, const flux_msg_t *b)
{
    const char *ida, *idb;

    if (!a || !b)
        return false;
    ida = flux_msg_route_first (a);
    idb = flux_msg_route_first (b);
    if (!ida || !idb)
        return !ida && !idb;
    return strcmp (ida, idb) == 0;
}
