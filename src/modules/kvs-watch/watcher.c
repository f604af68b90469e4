/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* watcher.c - decode and check a kvs-watch.lookup request. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkvs/kvs_util.h"
#include "watcher.h"

int watcher_check_flags (int flags, bool streaming, flux_error_t *error)
{
    if ((flags & (KW_WATCH | KW_STREAM)) && !streaming) {
        errno = EPROTO;
        return errprintf (error, "WATCH and STREAM lookups must be "
                                 "streaming requests");
    }
    if (flags < 0 || (flags & ~KW_KNOWN_FLAGS)) {
        errno = EINVAL;
        return errprintf (error, "unknown lookup flags 0x%x", flags);
    }
    if ((flags & KW_WATCH) && (flags & KW_STREAM)) {
        errno = EINVAL;
        return errprintf (error, "WATCH and STREAM are mutually exclusive");
    }
    if ((flags & (KW_WATCH_FULL | KW_WATCH_UNIQ | KW_WATCH_APPEND))
        && !(flags & KW_WATCH)) {
        errno = EINVAL;
        return errprintf (error, "WATCH_FULL, WATCH_UNIQ and WATCH_APPEND "
                                 "require WATCH");
    }
    if ((flags & KW_WATCH_INITIAL_SENTINEL) && !(flags & KW_WATCH_APPEND)) {
        errno = EINVAL;
        return errprintf (error, "WATCH_INITIAL_SENTINEL requires "
                                 "WATCH_APPEND");
    }
    return 0;
}

static enum watcher_mode mode_of (int flags)
{
    if (flags & KW_STREAM)
        return MODE_STREAM;
    if ((flags & KW_WATCH) && (flags & KW_WATCH_APPEND))
        return MODE_APPEND;
    if (flags & KW_WATCH)
        return MODE_WATCH;
    return MODE_ONCE;
}

struct watcher *watcher_create (const flux_msg_t *msg, flux_error_t *error)
{
    struct watcher *w;
    const char *ns, *key, *sender;
    int flags;

    if (flux_request_unpack (msg, NULL, "{s:s s:s s:i !}", "namespace", &ns,
                             "key", &key, "flags", &flags)
        < 0) {
        errprintf (error, "malformed kvs-watch.lookup payload: %s",
                   flux_msg_last_error (msg));
        errno = EPROTO;
        return NULL;
    }
    if (flux_msg_is_noresponse (msg)) {
        errprintf (error, "kvs-watch.lookup needs a response");
        errno = EPROTO;
        return NULL;
    }
    if (!(sender = flux_msg_route_first (msg))) {
        errprintf (error, "kvs-watch.lookup request has no sender");
        errno = EPROTO;
        return NULL;
    }
    if (watcher_check_flags (flags, flux_msg_is_streaming (msg), error) < 0)
        return NULL;
    if (strlen (ns) == 0) {
        errprintf (error, "empty namespace name");
        errno = EINVAL;
        return NULL;
    }
    if (!(w = calloc (1, sizeof (*w))))
        goto nomem;
    w->req = flux_msg_incref (msg);
    w->flags = flags;
    w->mode = mode_of (flags);
    w->streaming = flux_msg_is_streaming (msg);
    if (w->mode == MODE_APPEND || w->mode == MODE_STREAM)
        w->lookup_flags = KW_TREEOBJ;
    else
        w->lookup_flags = flags & (KW_READDIR | KW_READLINK | KW_TREEOBJ);
    if (flux_msg_get_cred (msg, &w->cred) < 0
        || flux_msg_get_matchtag (msg, &w->matchtag) < 0) {
        errprintf (error, "kvs-watch.lookup request lacks credentials");
        errno = EPROTO;
        goto error;
    }
    if (!(w->ns_name = strdup (ns)) || !(w->sender = strdup (sender))
        || !(w->key = kvs_util_normalize_key (key, NULL))
        || asprintf (&w->id, "%s:%u", sender, (unsigned)w->matchtag) < 0) {
        w->id = NULL;
        goto nomem;
    }
    if (w->mode == MODE_APPEND && !(w->at = appendtrack_create ()))
        goto nomem;
    list_init (&w->sendernode);
    list_init (&w->runnode);
    waitlist_item_init (&w->kvs_wi);
    w->last_seq = -1;
    w->want_seq = -1;
    w->sent_seq = -1;
    w->initial = true;
    return w;
nomem:
    errprintf (error, "out of memory");
    errno = ENOMEM;
error:
    watcher_destroy (w);
    return NULL;
}

void watcher_destroy (struct watcher *w)
{
    if (w) {
        int saved_errno = errno;
        flux_future_destroy (w->lookup_f);
        for (size_t i = w->load_done; i < w->load_next; i++)
            flux_future_destroy (w->loads[i % KW_LOAD_WINDOW]);
        json_decref (w->loadq);
        json_decref (w->prev);
        appendtrack_destroy (w->at);
        flux_msg_decref (w->req);
        free (w->ns_name);
        free (w->key);
        free (w->sender);
        free (w->id);
        free (w);
        errno = saved_errno;
    }
}

bool watcher_allowed (const struct watcher *w, uint32_t owner)
{
    if ((w->cred.rolemask & FLUX_ROLE_OWNER))
        return true;
    if (owner == FLUX_USERID_UNKNOWN)
        return true;
    return (w->cred.rolemask & FLUX_ROLE_USER) && w->cred.userid == owner;
}
