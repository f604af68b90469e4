/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* reqlist.c - held requests in a doubly linked list. */
#include <errno.h>
#include <stdlib.h>

#include "reqlist.h"

struct node {
    const flux_msg_t *msg;
    struct node *next, *prev;
};

struct reqlist {
    struct node *head, *tail;
    int count, max;
};

struct reqlist *reqlist_create (int max)
{
    struct reqlist *l = calloc (1, sizeof (*l));

    if (!l || max < 0) {
        free (l);
        errno = l ? EINVAL : ENOMEM;
        return NULL;
    }
    l->max = max;
    return l;
}

static void unlink_node (struct reqlist *l, struct node *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        l->tail = n->prev;
    l->count--;
}

void reqlist_destroy (struct reqlist *l)
{
    if (l) {
        struct node *n;
        while ((n = l->head)) {
            unlink_node (l, n);
            flux_msg_decref (n->msg);
            free (n);
        }
        free (l);
    }
}

int reqlist_add (struct reqlist *l, const flux_msg_t *msg)
{
    struct node *n;

    if (l->max > 0 && l->count >= l->max) {
        errno = EAGAIN;
        return -1;
    }
    if (!(n = calloc (1, sizeof (*n)))) {
        errno = ENOMEM;
        return -1;
    }
    n->msg = flux_msg_incref (msg);
    n->prev = l->tail;
    if (l->tail)
        l->tail->next = n;
    else
        l->head = n;
    l->tail = n;
    l->count++;
    return 0;
}

int reqlist_count (const struct reqlist *l)
{
    return l ? l->count : 0;
}

void reqlist_foreach (struct reqlist *l, reqlist_f cb, void *arg)
{
    struct node *n = l->head, *next;

    while (n) {
        next = n->next;
        if (cb (n->msg, arg)) {
            unlink_node (l, n);
            flux_msg_decref (n->msg);
            free (n);
        }
        n = next;
    }
}

/* May the sender of req (its credentials in req) be acted on by msg? */
static bool same_sender (const flux_msg_t *req, const flux_msg_t *msg)
{
    uint32_t userid = FLUX_USERID_UNKNOWN;

    if (!flux_msg_route_match_first (req, msg))
        return false;
    (void)flux_msg_get_userid (req, &userid);
    return flux_msg_authorize (msg, userid) == 0;
}

const flux_msg_t *reqlist_cancel (struct reqlist *l, const flux_msg_t *msg)
{
    int matchtag;
    struct node *n;

    if (flux_request_unpack (msg, NULL, "{s:i}", "matchtag", &matchtag) < 0) {
        errno = EPROTO;
        return NULL;
    }
    for (n = l->head; n; n = n->next) {
        uint32_t tag;
        if (flux_msg_get_matchtag (n->msg, &tag) == 0
            && tag == (uint32_t)matchtag && same_sender (n->msg, msg)) {
            const flux_msg_t *req = n->msg;
            unlink_node (l, n);
            free (n);
            return req;
        }
    }
    errno = ENOENT;
    return NULL;
}

int reqlist_disconnect (struct reqlist *l, const flux_msg_t *msg)
{
    struct node *n = l->head, *next;
    int count = 0;

    while (n) {
        next = n->next;
        if (same_sender (n->msg, msg)) {
            unlink_node (l, n);
            flux_msg_decref (n->msg);
            free (n);
            count++;
        }
        n = next;
    }
    return count;
}

void reqlist_fail_all (struct reqlist *l, flux_t *h, int errnum,
                       const char *errstr)
{
    struct node *n;

    while ((n = l->head)) {
        unlink_node (l, n);
        (void)flux_respond_error (h, n->msg, errnum, errstr);
        flux_msg_decref (n->msg);
        free (n);
    }
}
