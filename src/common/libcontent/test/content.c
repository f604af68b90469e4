/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for the content client (content.c) over loop://: a fake
 * content service in the same handle checks what the client sends
 * (topics, raw payloads, flags, checkpoint objects) and answers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "libcontent/blobref.h"
#include "libcontent/content.h"
#include "libflux/flux.h"
#include "tap.h"

struct server {
    uint8_t hash[20];
    char *blob;
    size_t len;
    bool have_blob;
    char last_topic[64];
    bool last_upstream;
    bool last_had_payload;
    json_t *checkpoint; /* last put value */
    json_t *get_reply;  /* if set, the checkpoint-get answer */
};

static void store_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct server *s = arg;
    const char *topic;
    const void *data;
    size_t len;

    if (flux_request_decode_raw (msg, &topic, &data, &len) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    snprintf (s->last_topic, sizeof (s->last_topic), "%s", topic);
    s->last_upstream = flux_msg_has_flag (msg, FLUX_MSGFLAG_UPSTREAM);
    s->last_had_payload = flux_msg_has_payload (msg);
    free (s->blob);
    s->blob = len ? malloc (len) : NULL;
    if (len)
        memcpy (s->blob, data, len);
    s->len = len;
    s->have_blob = true;
    blobref_hash_raw ("sha1", data, len, s->hash, sizeof (s->hash));
    flux_respond_raw (h, msg, s->hash, sizeof (s->hash));
}

static void load_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct server *s = arg;
    const char *topic;
    const void *data;
    size_t len;

    if (flux_request_decode_raw (msg, &topic, &data, &len) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    snprintf (s->last_topic, sizeof (s->last_topic), "%s", topic);
    s->last_upstream = flux_msg_has_flag (msg, FLUX_MSGFLAG_UPSTREAM);
    if (len != 20) {
        flux_respond_error (h, msg, EPROTO, "bad digest size");
        return;
    }
    if (!s->have_blob || memcmp (data, s->hash, 20) != 0) {
        flux_respond_error (h, msg, ENOENT, NULL);
        return;
    }
    flux_respond_raw (h, msg, s->blob, s->len);
}

static void put_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
    struct server *s = arg;
    json_t *value;

    if (flux_request_unpack (msg, NULL, "{s:o}", "value", &value) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    json_decref (s->checkpoint);
    s->checkpoint = json_incref (value);
    flux_respond (h, msg, NULL);
}

static void get_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
    struct server *s = arg;

    if (s->get_reply)
        flux_respond_pack (h, msg, "{s:O}", "value", s->get_reply);
    else if (s->checkpoint)
        flux_respond_pack (h, msg, "{s:[O]}", "value", s->checkpoint);
    else
        flux_respond_error (h, msg, ENOENT, NULL);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "content.store", store_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content-backing.store", store_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.load", load_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content-backing.load", load_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.checkpoint-put", put_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.checkpoint-get", get_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

static void wait_ready (flux_t *h, flux_future_t *f)
{
    flux_reactor_t *r = flux_get_reactor (h);
    int n = 0;

    while (!flux_future_is_ready (f) && n++ < 1000)
        flux_reactor_run (r, FLUX_REACTOR_ONCE);
    if (!flux_future_is_ready (f))
        BAIL_OUT ("future never became ready");
}

static void test_store_load (flux_t *h, struct server *s)
{
    char exp[BLOBREF_MAX_STRING_SIZE];
    const char *ref;
    const void *buf;
    size_t len;
    flux_future_t *f;

    blobref_hash ("sha1", "hello", 5, exp, sizeof (exp));
    ok ((f = content_store (h, "hello", 5, 0)) != NULL, "content_store");
    wait_ready (h, f);
    is (s->last_topic, "content.store", "store goes to content.store");
    ok (!s->last_upstream, "without UPSTREAM flag");
    ok (content_store_get_blobref (f, "sha1", &ref) == 0 && !strcmp (ref, exp),
        "store gives the blobref %s", exp);
    ok (content_store_get_blobref (f, "sha1", &ref) == 0 && !strcmp (ref, exp),
        "and again (cached in the future)");
    errno = 0;
    ok (content_store_get_blobref (f, "sha256", &ref) < 0 && errno == EPROTO,
        "a 20-byte digest is not a sha256 blobref: EPROTO");
    errno = 0;
    ok (content_store_get_blobref (f, "md5", &ref) < 0 && errno == EINVAL,
        "unknown hash type: EINVAL");
    flux_future_destroy (f);

    ok ((f = content_load_byblobref (h, exp, 0)) != NULL,
        "content_load_byblobref");
    wait_ready (h, f);
    is (s->last_topic, "content.load", "load goes to content.load");
    ok (content_load_get (f, &buf, &len) == 0 && len == 5
            && !memcmp (buf, "hello", 5),
        "the blob comes back");
    flux_future_destroy (f);

    ok ((f = content_load_byblobref (
             h, exp, CONTENT_FLAG_CACHE_BYPASS | CONTENT_FLAG_UPSTREAM))
            != NULL,
        "load with CACHE_BYPASS|UPSTREAM");
    wait_ready (h, f);
    is (s->last_topic, "content-backing.load", "goes to content-backing.load");
    ok (s->last_upstream, "with the UPSTREAM flag");
    ok (content_load_get (f, NULL, &len) == 0 && len == 5, "blob loaded");
    flux_future_destroy (f);

    f = content_load_byblobref (
        h, "sha1-0000000000000000000000000000000000000000", 0);
    wait_ready (h, f);
    errno = 0;
    ok (content_load_get (f, &buf, &len) < 0 && errno == ENOENT,
        "unknown blob: ENOENT");
    flux_future_destroy (f);

    ok ((f = content_store (h, NULL, 0, CONTENT_FLAG_CACHE_BYPASS)) != NULL,
        "store the empty blob, bypassing the cache");
    wait_ready (h, f);
    is (s->last_topic, "content-backing.store", "to content-backing.store");
    ok (!s->last_had_payload, "the empty blob is sent with no payload");
    ok (content_store_get_blobref (f, "sha1", &ref) == 0
            && !strcmp (ref, "sha1-da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        "and has the sha1 of nothing");
    flux_future_destroy (f);
    f = content_load_byblobref (
        h, "sha1-da39a3ee5e6b4b0d3255bfef95601890afd80709", 0);
    wait_ready (h, f);
    buf = "x";
    ok (content_load_get (f, &buf, &len) == 0 && buf == NULL && len == 0,
        "the empty blob loads as NULL, 0");
    flux_future_destroy (f);
}

static void test_badargs (flux_t *h)
{
    errno = 0;
    ok (content_load_byblobref (h, "sha1-xyz", 0) == NULL && errno == EINVAL,
        "load of a malformed blobref: EINVAL");
    errno = 0;
    ok (content_load_byhash (h, "x", 0, 0) == NULL && errno == EINVAL,
        "load of an empty digest: EINVAL");
    errno = 0;
    ok (content_load_byhash (h, "x", 1, 0x100) == NULL && errno == EINVAL,
        "unknown flags: EINVAL");
    errno = 0;
    ok (content_store (h, NULL, 3, 0) == NULL && errno == EINVAL,
        "store NULL, 3: EINVAL");
    errno = 0;
    ok (content_checkpoint_put (h, "notablobref", 1) == NULL && errno == EINVAL,
        "checkpoint_put of a malformed rootref: EINVAL");
}

static void test_checkpoint (flux_t *h, struct server *s)
{
    const char *ref = "sha1-c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91";
    const char *rootref;
    int seq, version;
    double ts = 0;
    flux_future_t *f;

    f = content_checkpoint_get (h);
    wait_ready (h, f);
    errno = 0;
    ok (content_checkpoint_get_rootref (f, &rootref, &seq) < 0
            && errno == ENOENT,
        "checkpoint_get with none: ENOENT");
    flux_future_destroy (f);

    ok ((f = content_checkpoint_put (h, ref, 42)) != NULL, "checkpoint_put");
    wait_ready (h, f);
    ok (flux_future_get (f, NULL) == 0, "succeeds");
    flux_future_destroy (f);
    ok (s->checkpoint
            && json_unpack (s->checkpoint, "{s:i s:s s:i s:F !}", "version",
                            &version, "rootref", &rootref, "sequence", &seq,
                            "timestamp", &ts)
                   == 0
            && version == 1 && !strcmp (rootref, ref) && seq == 42 && ts > 0,
        "sends {value:{version:1, rootref, sequence, timestamp}}");

    f = content_checkpoint_get (h);
    wait_ready (h, f);
    ok (content_checkpoint_get_value (f, &rootref, &seq, &ts) == 0
            && !strcmp (rootref, ref) && seq == 42 && ts > 0,
        "checkpoint_get decodes {value:[obj]}");
    flux_future_destroy (f);

    json_t *extra = json_pack ("{s:{s:i}}", "namespaces", "a", 1), *o;
    json_t *notobj = json_array ();
    errno = 0;
    ok (content_checkpoint_put_with (h, ref, 43, notobj) == NULL
            && errno == EINVAL,
        "checkpoint_put_with extra not an object: EINVAL");
    json_decref (notobj);
    ok ((f = content_checkpoint_put_with (h, ref, 43, extra)) != NULL,
        "checkpoint_put_with");
    wait_ready (h, f);
    ok (flux_future_get (f, NULL) == 0, "succeeds");
    flux_future_destroy (f);
    ok (s->checkpoint
            && json_unpack (s->checkpoint, "{s:i s:s s:i s:F s:{s:i} !}",
                            "version", &version, "rootref", &rootref,
                            "sequence", &seq, "timestamp", &ts, "namespaces",
                            "a", &version)
                   == 0
            && seq == 43,
        "sends the extra members in the value");
    ok (json_object_size (extra) == 1, "extra is not modified");
    json_decref (extra);
    f = content_checkpoint_get (h);
    wait_ready (h, f);
    ok (content_checkpoint_get_object (f, &o) == 0
            && json_object_get (o, "namespaces") != NULL
            && content_checkpoint_get_rootref (f, &rootref, &seq) == 0
            && seq == 43,
        "checkpoint_get_object gives the whole newest object");
    flux_future_destroy (f);

    s->get_reply = json_pack ("{s:i s:s s:i s:f}", "version", 1, "rootref", ref,
                              "sequence", 7, "timestamp", 1.5);
    f = content_checkpoint_get (h);
    wait_ready (h, f);
    ok (content_checkpoint_get_rootref (f, &rootref, &seq) == 0 && seq == 7,
        "and the single object older brokers send");
    flux_future_destroy (f);
    json_decref (s->get_reply);

    s->get_reply = json_pack ("[{s:i s:s s:i}]", "version", 2, "rootref", ref,
                              "sequence", 7);
    f = content_checkpoint_get (h);
    wait_ready (h, f);
    errno = 0;
    ok (content_checkpoint_get_rootref (f, &rootref, &seq) < 0
            && errno == EINVAL,
        "version 2: EINVAL");
    flux_future_destroy (f);
    json_decref (s->get_reply);

    s->get_reply = json_array ();
    f = content_checkpoint_get (h);
    wait_ready (h, f);
    errno = 0;
    ok (content_checkpoint_get_rootref (f, &rootref, &seq) < 0
            && errno == ENOENT,
        "an empty array: ENOENT");
    flux_future_destroy (f);
    json_decref (s->get_reply);

    s->get_reply = json_pack ("{s:s}", "rootref", ref);
    f = content_checkpoint_get (h);
    wait_ready (h, f);
    errno = 0;
    ok (content_checkpoint_get_rootref (f, &rootref, &seq) < 0
            && errno == EPROTO,
        "an object without version/sequence: EPROTO");
    flux_future_destroy (f);
    json_decref (s->get_reply);
    s->get_reply = NULL;
}

int main (void)
{
    struct server s = {0};
    flux_msg_handler_t **handlers;
    flux_t *h;

    plan (NO_PLAN);
    if (!(h = flux_open ("loop://", 0)))
        BAIL_OUT ("cannot open loop://");
    flux_attr_set_cacheonly (h, "rank", "0");
    if (flux_msg_handler_addvec (h, htab, &s, &handlers) < 0)
        BAIL_OUT ("cannot register handlers");
    test_store_load (h, &s);
    test_badargs (h);
    test_checkpoint (h, &s);
    flux_msg_handler_delvec (handlers);
    flux_close (h);
    free (s.blob);
    json_decref (s.checkpoint);
    done_testing ();
    return 0;
}
