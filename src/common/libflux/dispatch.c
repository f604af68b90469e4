/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* dispatch.c - message handlers and the dispatch of one received message
 * to them.  Handlers are reference counted while their callback runs, so a
 * callback may destroy any handler (itself included) safely.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "handle_private.h"
#include "msg_handler.h"
#include "response.h"

struct flux_msg_handler {
    struct list_node node; /* on dispatch->handlers while started */
    flux_t *h;
    int typemask;
    uint32_t matchtag;
    char *topic;     /* NULL matches any */
    bool topic_glob; /* topic has glob characters */
    uint32_t rolemask;
    flux_msg_handler_f cb;
    void *arg;
    int refcount;
    bool started;
    bool destroyed;
};

struct dispatch {
    struct list_node handlers; /* started handlers, newest first */
    size_t count;
};

static struct dispatch *dispatch_get (flux_t *h)
{
    if (!h->dispatch) {
        if (!(h->dispatch = calloc (1, sizeof (*h->dispatch))))
            return NULL;
        list_init (&h->dispatch->handlers);
    }
    return h->dispatch;
}

void dispatch_destroy (flux_t *h)
{
    struct dispatch *d = h->dispatch;
    struct list_node *pos, *tmp;

    if (!d)
        return;
    /* Handlers outliving the handle are a caller bug; detach them so a
     * later destroy does not touch freed memory. */
    list_for_each_safe (pos, tmp, &d->handlers)
    {
        flux_msg_handler_t *mh = list_entry (pos, flux_msg_handler_t, node);
        list_del (&mh->node);
        mh->started = false;
        mh->h = NULL;
    }
    free (d);
    h->dispatch = NULL;
}

static bool topic_matches (const flux_msg_handler_t *mh, const char *topic)
{
    if (!mh->topic)
        return true;
    if (!topic)
        return false;
    if (!mh->topic_glob)
        return !strcmp (mh->topic, topic);
    return fnmatch (mh->topic, topic, 0) == 0;
}

bool flux_msg_cmp (const flux_msg_t *msg, struct flux_match match)
{
    int type;
    const char *topic = NULL;

    if (flux_msg_get_type (msg, &type) < 0 || !(type & match.typemask))
        return false;
    if (match.matchtag != FLUX_MATCHTAG_NONE) {
        uint32_t tag;
        if (flux_msg_get_matchtag (msg, &tag) < 0 || tag != match.matchtag)
            return false;
    }
    if (match.topic_glob && strcmp (match.topic_glob, "*") != 0) {
        if (flux_msg_get_topic (msg, &topic) < 0
            || fnmatch (match.topic_glob, topic, 0) != 0)
            return false;
    }
    return true;
}

static bool handler_matches (const flux_msg_handler_t *mh, int type,
                             uint32_t tag, const char *topic)
{
    if (!(mh->typemask & type))
        return false;
    if (mh->matchtag != FLUX_MATCHTAG_NONE && mh->matchtag != tag)
        return false;
    return topic_matches (mh, topic);
}

flux_msg_handler_t *flux_msg_handler_create (flux_t *h,
                                             const struct flux_match match,
                                             flux_msg_handler_f cb, void *arg)
{
    flux_msg_handler_t *mh;

    if (!h || !cb) {
        errno = EINVAL;
        return NULL;
    }
    if (!dispatch_get (h) || !(mh = calloc (1, sizeof (*mh))))
        return NULL;
    list_init (&mh->node);
    mh->h = h;
    mh->typemask = match.typemask;
    mh->matchtag = match.matchtag;
    if (match.topic_glob && strcmp (match.topic_glob, "*") != 0) {
        if (!(mh->topic = strdup (match.topic_glob))) {
            free (mh);
            return NULL;
        }
        mh->topic_glob = strpbrk (mh->topic, "*?[") != NULL;
    }
    mh->rolemask = FLUX_ROLE_OWNER;
    mh->cb = cb;
    mh->arg = arg;
    mh->refcount = 1;
    return mh;
}

static void handler_decref (flux_msg_handler_t *mh)
{
    if (--mh->refcount == 0) {
        free (mh->topic);
        free (mh);
    }
}

void flux_msg_handler_start (flux_msg_handler_t *mh)
{
    if (mh && !mh->started && !mh->destroyed && mh->h) {
        list_add_head (&mh->h->dispatch->handlers, &mh->node);
        mh->h->dispatch->count++;
        mh->started = true;
        handle_active_incref (mh->h);
    }
}

void flux_msg_handler_stop (flux_msg_handler_t *mh)
{
    if (mh && mh->started) {
        list_del (&mh->node);
        mh->started = false;
        if (mh->h) {
            mh->h->dispatch->count--;
            handle_active_decref (mh->h);
        }
    }
}

void flux_msg_handler_destroy (flux_msg_handler_t *mh)
{
    if (mh) {
        int saved_errno = errno;
        flux_msg_handler_stop (mh);
        mh->destroyed = true;
        handler_decref (mh);
        errno = saved_errno;
    }
}

void flux_msg_handler_allow_rolemask (flux_msg_handler_t *mh, uint32_t rolemask)
{
    if (mh)
        mh->rolemask |= rolemask;
}

void flux_msg_handler_deny_rolemask (flux_msg_handler_t *mh, uint32_t rolemask)
{
    if (mh)
        mh->rolemask = (mh->rolemask & ~rolemask) | FLUX_ROLE_OWNER;
}

static bool role_allowed (const flux_msg_handler_t *mh, const flux_msg_t *msg)
{
    uint32_t rolemask = 0;
    (void)flux_msg_get_rolemask (msg, &rolemask);
    return (rolemask & mh->rolemask) != 0;
}

static void call_handler (flux_t *h, flux_msg_handler_t *mh, int type,
                          const flux_msg_t *msg)
{
    if (!role_allowed (mh, msg)) {
        if (type == FLUX_MSGTYPE_REQUEST)
            (void)flux_respond_error (h, msg, EPERM,
                                      "Request requires owner credentials");
        return;
    }
    mh->cb (h, mh, msg, mh->arg);
}

/* Events go to every match: collect the matches first (with references)
 * because callbacks may start, stop or destroy handlers. */
static void dispatch_event (flux_t *h, const flux_msg_t *msg, const char *topic)
{
    struct list_node *pos, *tmp;
    flux_msg_handler_t *stackbuf[16], **v = stackbuf;
    size_t n = 0, i;

    if (h->dispatch->count > 16
        && !(v = malloc (h->dispatch->count * sizeof (*v))))
        return;
    list_for_each_safe (pos, tmp, &h->dispatch->handlers)
    {
        flux_msg_handler_t *mh = list_entry (pos, flux_msg_handler_t, node);
        if (handler_matches (mh, FLUX_MSGTYPE_EVENT, 0, topic)) {
            mh->refcount++;
            v[n++] = mh;
        }
    }
    for (i = 0; i < n; i++) {
        if (v[i]->started && h->dispatch)
            call_handler (h, v[i], FLUX_MSGTYPE_EVENT, msg);
        handler_decref (v[i]);
    }
    if (v != stackbuf)
        free (v);
}

void dispatch_message (flux_t *h, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;
    const char *topic = NULL;
    uint32_t tag = 0;
    int type;

    if (flux_msg_get_type (msg, &type) < 0)
        return;
    (void)flux_msg_get_topic (msg, &topic);
    if (!h->dispatch) {
        if (type == FLUX_MSGTYPE_REQUEST)
            goto nosys;
        return;
    }
    if (type == FLUX_MSGTYPE_EVENT) {
        dispatch_event (h, msg, topic);
        return;
    }
    if (type & (FLUX_MSGTYPE_REQUEST | FLUX_MSGTYPE_RESPONSE))
        (void)flux_msg_get_matchtag (msg, &tag);
    list_for_each_safe (pos, tmp, &h->dispatch->handlers)
    {
        flux_msg_handler_t *mh = list_entry (pos, flux_msg_handler_t, node);
        if (handler_matches (mh, type, type == FLUX_MSGTYPE_RESPONSE ? tag : 0,
                             topic)) {
            mh->refcount++;
            call_handler (h, mh, type, msg);
            handler_decref (mh);
            return;
        }
    }
nosys:
    if (type == FLUX_MSGTYPE_REQUEST)
        (void)flux_respond_error (h, msg, ENOSYS, NULL);
}

int flux_msg_handler_addvec (flux_t *h,
                             const struct flux_msg_handler_spec tab[],
                             void *arg, flux_msg_handler_t ***handlers)
{
    size_t count = 0, i;
    flux_msg_handler_t **v;

    if (!h || !tab || !handlers) {
        errno = EINVAL;
        return -1;
    }
    while (tab[count].cb)
        count++;
    if (!(v = calloc (count + 1, sizeof (*v))))
        return -1;
    for (i = 0; i < count; i++) {
        struct flux_match match = {
            .typemask = tab[i].typemask,
            .matchtag = FLUX_MATCHTAG_NONE,
            .topic_glob = tab[i].topic_glob,
        };
        if (!(v[i] = flux_msg_handler_create (h, match, tab[i].cb, arg))) {
            flux_msg_handler_delvec (v);
            return -1;
        }
        flux_msg_handler_allow_rolemask (v[i], tab[i].rolemask);
        flux_msg_handler_start (v[i]);
    }
    *handlers = v;
    return 0;
}

void flux_msg_handler_delvec (flux_msg_handler_t **handlers)
{
    if (handlers) {
        int saved_errno = errno;
        size_t i;
        for (i = 0; handlers[i]; i++)
            flux_msg_handler_destroy (handlers[i]);
        free (handlers);
        errno = saved_errno;
    }
}
