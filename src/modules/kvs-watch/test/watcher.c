/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/watcher.c - decoding and checking kvs-watch.lookup requests */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/flux.h"
#include "tap.h"
#include "watcher.h"

static flux_msg_t *request (const char *payload, bool streaming)
{
    flux_msg_t *msg = flux_request_encode ("kvs-watch.lookup", payload);

    if (!msg || flux_msg_route_push (msg, "client-uuid") < 0
        || flux_msg_set_matchtag (msg, 42) < 0
        || flux_msg_set_cred (msg, (struct flux_msg_cred){1000, FLUX_ROLE_USER})
               < 0
        || (streaming && flux_msg_set_streaming (msg) < 0))
        BAIL_OUT ("could not build a request");
    return msg;
}

static struct watcher *create (const char *payload, bool streaming,
                               flux_error_t *error)
{
    flux_msg_t *msg = request (payload, streaming);
    struct watcher *w = watcher_create (msg, error);
    int saved_errno = errno;
    flux_msg_decref (msg);
    errno = saved_errno;
    return w;
}

static void fails (const char *payload, bool streaming, int errnum,
                   const char *what)
{
    flux_error_t error = {.text = ""};
    errno = 0;
    ok (create (payload, streaming, &error) == NULL && errno == errnum
            && strlen (error.text) > 0,
        "%s fails with %s", what, strerror (errnum));
    diag ("%s", error.text);
}

static void lookup (int flags, bool streaming, enum watcher_mode mode,
                    int lookup_flags)
{
    char payload[128];
    flux_error_t error;
    struct watcher *w;

    snprintf (payload, sizeof (payload),
              "{\"namespace\":\"primary\",\"key\":\"a.b\",\"flags\":%d}",
              flags);
    w = create (payload, streaming, &error);
    ok (w && w->mode == mode && w->lookup_flags == lookup_flags,
        "flags 0x%x: mode %d, kvs lookup flags 0x%x", flags, (int)mode,
        lookup_flags);
    watcher_destroy (w);
}

int main (int argc, char **argv)
{
    flux_error_t error;
    struct watcher *w;
    flux_msg_t *msg;

    plan (NO_PLAN);

    w = create ("{\"namespace\":\"ns1\",\"key\":\"..a...b.\",\"flags\":4}",
                true, &error);
    ok (w != NULL, "a WATCH request is accepted");
    is (w->ns_name, "ns1", "namespace");
    is (w->key, "a.b", "key is normalized");
    is (w->sender, "client-uuid", "sender is the first route");
    ok (w->matchtag == 42, "matchtag");
    is (w->id, "client-uuid:42", "cancel index key");
    ok (w->cred.userid == 1000 && w->cred.rolemask == FLUX_ROLE_USER,
        "credentials");
    ok (w->streaming && w->initial && w->last_seq == -1 && !w->responded,
        "state: initial lookup needed");
    ok (w->at == NULL, "no append tracker for a plain watch");
    errno = 55;
    watcher_destroy (w);
    ok (errno == 55, "watcher_destroy preserves errno");
    watcher_destroy (NULL);
    pass ("watcher_destroy (NULL) is a no-op");

    w = create ("{\"namespace\":\"ns1\",\"key\":\"\",\"flags\":9}", false,
                &error);
    ok (w && !strcmp (w->key, ".") && w->mode == MODE_ONCE
            && w->lookup_flags == 1,
        "WAITCREATE|READDIR of the root needs no streaming");
    watcher_destroy (w);

    lookup (4, true, MODE_WATCH, 0);
    lookup (4 | 1, true, MODE_WATCH, 1);
    lookup (4 | 2 | 16, true, MODE_WATCH, 2 | 16);
    lookup (4 | 128 | 64 | 8, true, MODE_WATCH, 0);
    lookup (4 | 256, true, MODE_APPEND, 16);
    lookup (4 | 256 | 1024 | 8, true, MODE_APPEND, 16);
    lookup (512, true, MODE_STREAM, 16);
    lookup (512 | 8, true, MODE_STREAM, 16);
    lookup (8, false, MODE_ONCE, 0);
    lookup (8, true, MODE_ONCE, 0);

    w = create ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":260}", true,
                &error);
    ok (w && w->at != NULL, "an APPEND watcher has an append tracker");
    watcher_destroy (w);

    fails (NULL, true, EPROTO, "no payload");
    fails ("[1,2]", true, EPROTO, "an array payload");
    fails ("{\"namespace\":\"p\",\"key\":\"k\"}", true, EPROTO,
           "a missing flags");
    fails ("{\"namespace\":\"p\",\"key\":1,\"flags\":4}", true, EPROTO,
           "a non-string key");
    fails ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":4,\"x\":1}", true,
           EPROTO, "an extra member");
    fails ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":4}", false, EPROTO,
           "WATCH without FLAG_STREAMING");
    fails ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":512}", false, EPROTO,
           "STREAM without FLAG_STREAMING");
    fails ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":516}", true, EINVAL,
           "WATCH with STREAM");
    fails ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":64}", true, EINVAL,
           "WATCH_FULL without WATCH");
    fails ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":128}", true, EINVAL,
           "WATCH_UNIQ without WATCH");
    fails ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":264}", true, EINVAL,
           "WATCH_APPEND without WATCH");
    fails ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":1028}", true, EINVAL,
           "INITIAL_SENTINEL without WATCH_APPEND");
    fails ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":4100}", true, EINVAL,
           "an unknown flag");
    fails ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":-1}", true, EINVAL,
           "negative flags");
    fails ("{\"namespace\":\"\",\"key\":\"k\",\"flags\":4}", true, EINVAL,
           "an empty namespace");

    msg = request ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":8}", false);
    flux_msg_set_noresponse (msg);
    errno = 0;
    ok (watcher_create (msg, &error) == NULL && errno == EPROTO,
        "a NORESPONSE request fails with EPROTO");
    flux_msg_decref (msg);

    msg = flux_request_encode ("kvs-watch.lookup",
                               "{\"namespace\":\"p\",\"key\":\"k\","
                               "\"flags\":8}");
    flux_msg_route_disable (msg);
    errno = 0;
    ok (watcher_create (msg, &error) == NULL && errno == EPROTO,
        "a request without sender fails with EPROTO");
    flux_msg_decref (msg);

    /* access */
    w = create ("{\"namespace\":\"p\",\"key\":\"k\",\"flags\":8}", false,
                &error);
    ok (watcher_allowed (w, FLUX_USERID_UNKNOWN),
        "a guest passes while the owner is unknown");
    ok (watcher_allowed (w, 1000), "a guest may read its own namespace");
    ok (!watcher_allowed (w, 1001), "but not another's");
    w->cred.rolemask = FLUX_ROLE_OWNER;
    ok (watcher_allowed (w, 1001), "the instance owner may read any");
    w->cred.rolemask = FLUX_ROLE_NONE;
    ok (!watcher_allowed (w, 1000), "no role, no access");
    watcher_destroy (w);

    done_testing ();
    return 0;
}
