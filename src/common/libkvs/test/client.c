/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/client.c - the KVS client API against a scripted server on a
 * loop:// handle: each request's topic, nodeid, flags and payload are
 * checked against PROTOCOLS.md 4, then a response is sent and decoded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/flux.h"
#include "libkvs/kvs.h"
#include "libkvs/treeobj.h"
#include "tap.h"

#define REF1 "sha1-c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91"
#define REF256 \
    "sha256-61b85efa2a76db9377692c700b4e1edfc480bf224e0e9764b76f8082159d0ca0"
#define DIRREF1 "{\"data\":[\"" REF1 "\"],\"type\":\"dirref\",\"ver\":1}"
#define VAL_HELLO "{\"data\":\"aGVsbG8=\",\"type\":\"val\",\"ver\":1}"

static flux_t *h;

/* The payload of msg re-encoded with sorted keys (caller frees). */
static char *payload_sorted (const flux_msg_t *msg)
{
    const char *s = NULL;
    json_t *o;
    char *out;

    if (flux_msg_get_string (msg, &s) < 0 || !s)
        return strdup ("(none)");
    if (!(o = json_loads (s, 0, NULL)))
        return strdup ("(not json)");
    out = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref (o);
    return out;
}

/* Receive the next request and check its topic, nodeid, streaming flag
 * and payload.  Returns it for the test to respond to.
 */
static flux_msg_t *expect_request (const char *topic, uint32_t nodeid,
                                   bool streaming, const char *payload)
{
    flux_msg_t *msg = flux_recv (h, 0);
    const char *t = NULL;
    uint32_t n = 0;
    int type = 0;
    char *p;

    if (!msg)
        BAIL_OUT ("flux_recv: %s", strerror (errno));
    ok (flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_REQUEST,
        "received a request");
    flux_msg_get_topic (msg, &t);
    flux_msg_get_nodeid (msg, &n);
    is (t, topic, "request topic is %s", topic);
    ok (n == nodeid, "%s: nodeid is %s", topic,
        nodeid == FLUX_NODEID_ANY ? "ANY" : "0");
    ok (flux_msg_is_streaming (msg) == streaming, "%s: %sstreaming", topic,
        streaming ? "" : "not ");
    p = payload_sorted (msg);
    is (p, payload, "%s: payload %s", topic, payload);
    free (p);
    return msg;
}

static void respond_val (flux_msg_t *req, const char *treeobj)
{
    json_t *o = json_loads (treeobj, 0, NULL);
    if (!o || flux_respond_pack (h, req, "{s:o}", "val", o) < 0)
        BAIL_OUT ("respond failed");
}

/* flux_kvs_lookup (key) in the primary namespace, flags 0: check the
 * request and answer it with the val treeobj.  Returns the future. */
static flux_future_t *lookup_answered (const char *key, const char *treeobj)
{
    char payload[256];
    flux_future_t *f = flux_kvs_lookup (h, NULL, 0, key);
    flux_msg_t *req;

    snprintf (payload, sizeof (payload),
              "{\"flags\":0,\"key\":\"%s\",\"namespace\":\"primary\"}", key);
    req = expect_request ("kvs.lookup", FLUX_NODEID_ANY, false, payload);
    respond_val (req, treeobj);
    flux_msg_destroy (req);
    return f;
}

static void test_commit (void)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    const char *s;
    flux_future_t *f;
    flux_msg_t *req;
    int seq;

    flux_kvs_txn_put (txn, 0, "a.b", "hello");
    f = flux_kvs_commit (h, NULL, 0, txn);
    ok (f != NULL, "flux_kvs_commit works");
    req = expect_request ("kvs.commit", FLUX_NODEID_ANY, false,
                          "{\"flags\":0,\"namespace\":\"primary\",\"ops\":"
                          "[{\"dirent\":" VAL_HELLO
                          ",\"flags\":0,\"key\":\"a.b\"}]}");
    flux_respond_pack (h, req, "{s:s s:i}", "rootref", REF1, "rootseq", 5);
    flux_msg_destroy (req);
    ok (flux_kvs_commit_get_sequence (f, &seq) == 0 && seq == 5,
        "commit_get_sequence is 5");
    ok (flux_kvs_commit_get_rootref (f, &s) == 0 && !strcmp (s, REF1),
        "commit_get_rootref");
    ok (flux_kvs_commit_get_treeobj (f, &s) == 0 && !strcmp (s, DIRREF1),
        "commit_get_treeobj is the dirref of the root");
    flux_future_destroy (f);

    /* namespace from the environment; compact and no-merge flags */
    setenv ("FLUX_KVS_NAMESPACE", "test", 1);
    flux_kvs_txn_clear (txn);
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "l", "a");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "l", "b");
    f = flux_kvs_commit (h, NULL, FLUX_KVS_NO_MERGE | FLUX_KVS_TXN_COMPACT,
                         txn);
    req = expect_request ("kvs.commit", FLUX_NODEID_ANY, false,
                          "{\"flags\":1,\"namespace\":\"test\",\"ops\":"
                          "[{\"dirent\":{\"data\":\"YWI=\",\"type\":\"val\","
                          "\"ver\":1},\"flags\":32,\"key\":\"l\"}]}");
    flux_respond_error (h, req, ENOTSUP, "namespace test does not exist");
    flux_msg_destroy (req);
    errno = 0;
    ok (flux_future_get (f, NULL) < 0 && errno == ENOTSUP,
        "a commit error is returned");
    is (flux_future_error_string (f), "namespace test does not exist",
        "with its text");
    flux_future_destroy (f);
    unsetenv ("FLUX_KVS_NAMESPACE");

    /* an empty SYNC commit (flux kvs sync) to an explicit namespace */
    flux_kvs_txn_clear (txn);
    f = flux_kvs_commit (h, "primary", FLUX_KVS_SYNC, txn);
    req = expect_request ("kvs.commit", FLUX_NODEID_ANY, false,
                          "{\"flags\":4,\"namespace\":\"primary\","
                          "\"ops\":[]}");
    flux_respond_pack (h, req, "{s:s s:i}", "rootref", REF1, "rootseq", 6);
    flux_msg_destroy (req);
    ok (flux_kvs_commit_get_sequence (f, &seq) == 0 && seq == 6,
        "sync commit answered");
    flux_future_destroy (f);

    /* LAZY goes on the wire as flag 8 */
    f = flux_kvs_commit (h, "primary", FLUX_KVS_LAZY, txn);
    req = expect_request ("kvs.commit", FLUX_NODEID_ANY, false,
                          "{\"flags\":8,\"namespace\":\"primary\","
                          "\"ops\":[]}");
    flux_respond_pack (h, req, "{s:s s:i}", "rootref", REF1, "rootseq", 7);
    flux_msg_destroy (req);
    ok (flux_kvs_commit_get_sequence (f, &seq) == 0 && seq == 7,
        "lazy commit answered");
    flux_future_destroy (f);

    errno = 0;
    ok (flux_kvs_commit (h, NULL, 16, txn) == NULL && errno == EINVAL,
        "commit with an unknown flag fails with EINVAL");
    ok (flux_kvs_commit (h, NULL, FLUX_KVS_SYNC | FLUX_KVS_LAZY, txn) == NULL
            && errno == EINVAL,
        "commit with SYNC and LAZY fails with EINVAL");
    errno = 0;
    ok (flux_kvs_commit (h, NULL, 0, NULL) == NULL && errno == EINVAL,
        "commit of a NULL txn fails with EINVAL");
    flux_kvs_txn_destroy (txn);
}

static void test_lookup_val (void)
{
    const char *s;
    const void *data;
    const flux_kvsdir_t *dir;
    size_t len;
    flux_future_t *f;
    flux_msg_t *req;
    int x = 0;

    f = lookup_answered ("a.b", VAL_HELLO);
    ok (flux_kvs_lookup_get (f, &s) == 0 && !strcmp (s, "hello"),
        "lookup_get returns the value");
    ok (flux_kvs_lookup_get_raw (f, &data, &len) == 0 && len == 5
            && !memcmp (data, "hello", 5),
        "lookup_get_raw returns the bytes");
    ok (flux_kvs_lookup_get_treeobj (f, &s) == 0 && !strcmp (s, VAL_HELLO),
        "lookup_get_treeobj returns the val object");
    errno = 0;
    ok (flux_kvs_lookup_get_unpack (f, "i", &x) < 0 && errno == EINVAL,
        "get_unpack of a non-JSON value fails with EINVAL");
    errno = 0;
    ok (flux_kvs_lookup_get_dir (f, &dir) < 0 && errno == ENOTDIR,
        "get_dir of a value fails with ENOTDIR");
    errno = 0;
    ok (flux_kvs_lookup_get_symlink (f, NULL, &s) < 0 && errno == EINVAL,
        "get_symlink of a value fails with EINVAL");
    is (flux_kvs_lookup_get_key (f), "a.b", "get_key");
    is (flux_kvs_lookup_get_namespace (f), "primary", "get_namespace");
    ok (!flux_kvs_lookup_is_sentinel (f), "a value is not the sentinel");
    errno = 0;
    ok (flux_kvs_lookup_cancel (f) < 0 && errno == EINVAL,
        "cancel of a plain lookup fails with EINVAL");
    flux_future_destroy (f);

    f = flux_kvs_lookup (h, "ns2", 0, "j");
    req = expect_request ("kvs.lookup", FLUX_NODEID_ANY, false,
                          "{\"flags\":0,\"key\":\"j\",\"namespace\":\"ns2\"}");
    respond_val (req, "{\"data\":\"eyJ4IjozfQ==\",\"type\":\"val\",\"ver\":1}");
    flux_msg_destroy (req);
    ok (flux_kvs_lookup_get_unpack (f, "{s:i}", "x", &x) == 0 && x == 3,
        "get_unpack decodes a JSON value");
    flux_future_destroy (f);

    /* a scalar, and an array after white space */
    {
        static const char *vals[] = {
            "{\"data\":\"NDI=\",\"type\":\"val\",\"ver\":1}",
            "{\"data\":\"IFsxLDJd\",\"type\":\"val\",\"ver\":1}",
        };
        int y = 0;
        f = lookup_answered ("n", vals[0]);
        ok (flux_kvs_lookup_get_unpack (f, "i", &x) == 0 && x == 42,
            "get_unpack decodes a number");
        flux_future_destroy (f);
        f = lookup_answered ("n", vals[1]);
        ok (flux_kvs_lookup_get_unpack (f, "[ii]", &x, &y) == 0 && x == 1
                && y == 2,
            "get_unpack decodes an array after white space");
        flux_future_destroy (f);
    }

    f = lookup_answered ("empty", "{\"data\":\"\",\"type\":\"val\",\"ver\":1}");
    s = "x";
    ok (flux_kvs_lookup_get (f, &s) == 0 && s == NULL,
        "an empty value gets NULL");
    ok (flux_kvs_lookup_get_raw (f, &data, &len) == 0 && data == NULL
            && len == 0,
        "an empty raw value gets NULL, 0");
    flux_future_destroy (f);

    f = flux_kvs_lookup (h, NULL, 0, "missing");
    req = expect_request ("kvs.lookup", FLUX_NODEID_ANY, false,
                          "{\"flags\":0,\"key\":\"missing\",\"namespace\":"
                          "\"primary\"}");
    flux_respond_error (h, req, ENOENT, NULL);
    flux_msg_destroy (req);
    errno = 0;
    ok (flux_kvs_lookup_get (f, &s) < 0 && errno == ENOENT,
        "ENOENT response: lookup_get fails with ENOENT");
    errno = 0;
    ok (flux_kvs_lookup_get_treeobj (f, &s) < 0 && errno == ENOENT,
        "and so does get_treeobj");
    flux_future_destroy (f);

    f = lookup_answered ("bad", "{\"data\":\"!!\",\"type\":\"val\",\"ver\":1}");
    errno = 0;
    ok (flux_kvs_lookup_get (f, &s) < 0 && errno == EPROTO,
        "a malformed treeobj in the response gives EPROTO");
    flux_future_destroy (f);

    f = flux_kvs_lookup (h, NULL, 0, "bad2");
    req = expect_request ("kvs.lookup", FLUX_NODEID_ANY, false,
                          "{\"flags\":0,\"key\":\"bad2\",\"namespace\":"
                          "\"primary\"}");
    flux_respond_pack (h, req, "{s:s}", "value", "x");
    flux_msg_destroy (req);
    errno = 0;
    ok (flux_kvs_lookup_get (f, &s) < 0 && errno == EPROTO,
        "a response without val gives EPROTO");
    flux_future_destroy (f);
}

static void test_lookup_dir (void)
{
    const char *dirobj
        = "{\"data\":{\"l\":{\"data\":{\"namespace\":\"n\",\"target\":\"x.y\"},"
          "\"type\":\"symlink\",\"ver\":1},\"c\":" DIRREF1 ",\"b\":" VAL_HELLO
          "},\"type\":\"dir\",\"ver\":1}";
    const flux_kvsdir_t *dir;
    flux_kvsitr_t *itr;
    const char *ns, *target;
    flux_future_t *f;
    flux_msg_t *req;
    char *k;

    f = flux_kvs_lookup (h, NULL, FLUX_KVS_READDIR, "a");
    req = expect_request ("kvs.lookup", FLUX_NODEID_ANY, false,
                          "{\"flags\":1,\"key\":\"a\",\"namespace\":"
                          "\"primary\"}");
    respond_val (req, dirobj);
    flux_msg_destroy (req);
    ok (flux_kvs_lookup_get_dir (f, &dir) == 0, "get_dir works");
    ok (flux_kvsdir_get_size (dir) == 3, "dir has 3 entries");
    ok (flux_kvsdir_isdir (dir, "c") && !flux_kvsdir_isdir (dir, "b"),
        "c (a dirref) is a dir, b is not");
    ok (flux_kvsdir_issymlink (dir, "l") && !flux_kvsdir_issymlink (dir, "c"),
        "l is a symlink");
    ok (flux_kvsdir_exists (dir, "b") && !flux_kvsdir_exists (dir, "z"),
        "exists");
    is (flux_kvsdir_key (dir), "a", "dir key");
    k = flux_kvsdir_key_at (dir, "b");
    is (k, "a.b", "key_at");
    free (k);
    ok (flux_kvsdir_rootref (dir) == NULL, "no rootref for a plain lookup");
    itr = flux_kvsitr_create (dir);
    is (flux_kvsitr_next (itr), "b", "iterator: b");
    is (flux_kvsitr_next (itr), "c", "iterator: c");
    is (flux_kvsitr_next (itr), "l", "iterator: l");
    ok (flux_kvsitr_next (itr) == NULL, "iterator: end");
    flux_kvsitr_rewind (itr);
    is (flux_kvsitr_next (itr), "b", "rewind starts over");
    flux_kvsitr_destroy (itr);
    errno = 0;
    ok (flux_kvs_lookup_get (f, &ns) < 0 && errno == EISDIR,
        "lookup_get of a dir fails with EISDIR");
    flux_future_destroy (f);

    f = flux_kvs_lookup (h, NULL, FLUX_KVS_READLINK, "l");
    req = expect_request ("kvs.lookup", FLUX_NODEID_ANY, false,
                          "{\"flags\":2,\"key\":\"l\",\"namespace\":"
                          "\"primary\"}");
    respond_val (req, "{\"data\":{\"namespace\":\"n\",\"target\":\"x.y\"},"
                      "\"type\":\"symlink\",\"ver\":1}");
    flux_msg_destroy (req);
    ok (flux_kvs_lookup_get_symlink (f, &ns, &target) == 0 && !strcmp (ns, "n")
            && !strcmp (target, "x.y"),
        "get_symlink returns namespace and target");
    flux_future_destroy (f);

    f = flux_kvs_lookupat (h, FLUX_KVS_READDIR, ".", DIRREF1);
    ok (f != NULL, "lookupat works");
    req = expect_request ("kvs.lookup", FLUX_NODEID_ANY, false,
                          "{\"flags\":1,\"key\":\".\",\"rootdir\":" DIRREF1
                          "}");
    respond_val (req, dirobj);
    flux_msg_destroy (req);
    ok (flux_kvs_lookup_get_dir (f, &dir) == 0
            && !strcmp (flux_kvsdir_rootref (dir), DIRREF1),
        "a lookupat dir carries the snapshot");
    k = flux_kvsdir_key_at (dir, "c");
    is (k, "c", "key_at in the root has no leading dot");
    free (k);
    ok (flux_kvs_lookup_get_namespace (f) == NULL, "lookupat has no namespace");
    flux_future_destroy (f);

    errno = 0;
    ok (flux_kvs_lookupat (h, 0, "a", VAL_HELLO) == NULL && errno == EINVAL,
        "lookupat relative to a val fails with EINVAL");
    errno = 0;
    ok (flux_kvs_lookupat (h, FLUX_KVS_WATCH, "a", DIRREF1) == NULL
            && errno == EINVAL,
        "lookupat with WATCH fails with EINVAL");
    errno = 0;
    ok (flux_kvs_lookupat (h, 0, "a", "junk") == NULL && errno == EINVAL,
        "lookupat relative to junk fails with EINVAL");
}

static void test_lookup_watch (void)
{
    flux_future_t *f;
    flux_msg_t *req, *cancel;
    const char *s;
    char exp[128];

    f = flux_kvs_lookup (h, NULL, FLUX_KVS_WATCH | FLUX_KVS_WATCH_UNIQ, "w");
    req = expect_request ("kvs-watch.lookup", FLUX_NODEID_ANY, true,
                          "{\"flags\":132,\"key\":\"w\",\"namespace\":"
                          "\"primary\"}");
    respond_val (req, VAL_HELLO);
    respond_val (req, "{\"data\":\"Mg==\",\"type\":\"val\",\"ver\":1}");
    ok (flux_kvs_lookup_get (f, &s) == 0 && !strcmp (s, "hello"),
        "watch: first value");
    flux_future_reset (f);
    ok (flux_kvs_lookup_get (f, &s) == 0 && !strcmp (s, "2"),
        "watch: second value after reset");
    flux_future_reset (f);
    ok (flux_kvs_lookup_cancel (f) == 0, "lookup_cancel works");
    snprintf (exp, sizeof (exp), "{\"matchtag\":%u}",
              (unsigned)flux_rpc_get_matchtag (f));
    cancel = expect_request ("kvs-watch.cancel", FLUX_NODEID_ANY, false, exp);
    ok (flux_msg_is_noresponse (cancel), "cancel is sent without response");
    flux_msg_destroy (cancel);
    flux_respond_error (h, req, ENODATA, NULL);
    flux_msg_destroy (req);
    errno = 0;
    ok (flux_kvs_lookup_get (f, &s) < 0 && errno == ENODATA,
        "the stream ends with ENODATA");
    flux_future_destroy (f);

    f = flux_kvs_lookup (h, NULL, FLUX_KVS_WAITCREATE, "wc");
    req = expect_request ("kvs-watch.lookup", FLUX_NODEID_ANY, false,
                          "{\"flags\":8,\"key\":\"wc\",\"namespace\":"
                          "\"primary\"}");
    respond_val (req, VAL_HELLO);
    flux_msg_destroy (req);
    ok (flux_kvs_lookup_get (f, &s) == 0 && !strcmp (s, "hello"),
        "waitcreate lookup answered");
    flux_future_destroy (f);

    f = flux_kvs_lookup (h, NULL, FLUX_KVS_STREAM, "st");
    req = expect_request ("kvs-watch.lookup", FLUX_NODEID_ANY, true,
                          "{\"flags\":512,\"key\":\"st\",\"namespace\":"
                          "\"primary\"}");
    flux_respond_error (h, req, ENODATA, NULL);
    flux_msg_destroy (req);
    errno = 0;
    ok (flux_future_get (f, NULL) < 0 && errno == ENODATA,
        "an empty stream ends with ENODATA");
    flux_future_destroy (f);

    f = flux_kvs_lookup (h, NULL,
                         FLUX_KVS_WATCH | FLUX_KVS_WATCH_APPEND
                             | FLUX_KVS_WATCH_INITIAL_SENTINEL,
                         "log");
    req = expect_request ("kvs-watch.lookup", FLUX_NODEID_ANY, true,
                          "{\"flags\":1284,\"key\":\"log\",\"namespace\":"
                          "\"primary\"}");
    respond_val (req, VAL_HELLO);
    flux_respond (h, req, NULL);
    ok (flux_kvs_lookup_get (f, &s) == 0 && !strcmp (s, "hello"),
        "append watch: initial data");
    ok (!flux_kvs_lookup_is_sentinel (f), "which is not the sentinel");
    flux_future_reset (f);
    ok (flux_kvs_lookup_is_sentinel (f), "then the sentinel");
    s = "x";
    ok (flux_kvs_lookup_get (f, &s) == 0 && s == NULL,
        "lookup_get of the sentinel gives NULL");
    errno = 0;
    ok (flux_kvs_lookup_get_treeobj (f, &s) < 0 && errno == EINVAL,
        "get_treeobj of the sentinel fails with EINVAL");
    flux_respond_error (h, req, ENODATA, NULL);
    flux_msg_destroy (req);
    flux_future_reset (f);
    errno = 0;
    ok (flux_kvs_lookup_get (f, &s) < 0 && errno == ENODATA,
        "append watch ends with ENODATA");
    flux_future_destroy (f);

    struct {
        int flags;
        const char *what;
    } bad[] = {
        {FLUX_KVS_WATCH | FLUX_KVS_STREAM, "WATCH|STREAM"},
        {FLUX_KVS_WATCH_UNIQ, "WATCH_UNIQ without WATCH"},
        {FLUX_KVS_WATCH_FULL | FLUX_KVS_WAITCREATE, "WATCH_FULL without WATCH"},
        {FLUX_KVS_WATCH | FLUX_KVS_WATCH_INITIAL_SENTINEL,
         "INITIAL_SENTINEL without WATCH_APPEND"},
        {FLUX_KVS_READDIR | FLUX_KVS_READLINK, "READDIR|READLINK"},
        {FLUX_KVS_APPEND, "APPEND"},
        {FLUX_KVS_READLINK | FLUX_KVS_TREEOBJ, "READLINK|TREEOBJ"},
        {0x10000, "an unknown flag"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        ok (flux_kvs_lookup (h, NULL, bad[i].flags, "a") == NULL
                && errno == EINVAL,
            "lookup with %s fails with EINVAL", bad[i].what);
    }
    errno = 0;
    ok (flux_kvs_lookup (h, NULL, 0, NULL) == NULL && errno == EINVAL,
        "lookup of a NULL key fails with EINVAL");
}

static void test_getroot (void)
{
    flux_future_t *f;
    flux_msg_t *req;
    const char *s;
    uint32_t owner;
    int seq;

    f = flux_kvs_getroot (h, NULL, 0);
    req = expect_request ("kvs.getroot", FLUX_NODEID_ANY, false,
                          "{\"flags\":0,\"namespace\":\"primary\"}");
    flux_respond_pack (h, req, "{s:i s:i s:s s:i s:s}", "owner", 1000,
                       "rootseq", 7, "rootref", REF1, "flags", 0, "namespace",
                       "primary");
    flux_msg_destroy (req);
    ok (flux_kvs_getroot_get_sequence (f, &seq) == 0 && seq == 7,
        "getroot sequence");
    ok (flux_kvs_getroot_get_owner (f, &owner) == 0 && owner == 1000,
        "getroot owner");
    ok (flux_kvs_getroot_get_blobref (f, &s) == 0 && !strcmp (s, REF1),
        "getroot blobref");
    ok (flux_kvs_getroot_get_treeobj (f, &s) == 0 && !strcmp (s, DIRREF1),
        "getroot treeobj");
    flux_future_destroy (f);
    errno = 0;
    ok (flux_kvs_getroot (h, NULL, 1) == NULL && errno == EINVAL,
        "getroot with flags fails with EINVAL");
}

static void test_namespace (void)
{
    flux_future_t *f;
    flux_msg_t *req;

    flux_attr_set_cacheonly (h, "content.hash", "sha256");
    f = flux_kvs_namespace_create (h, "ns1", FLUX_USERID_UNKNOWN, 0);
    req = expect_request ("kvs.namespace-create", 0, false,
                          "{\"flags\":0,\"namespace\":\"ns1\",\"owner\":-1,"
                          "\"rootref\":\"" REF256 "\"}");
    flux_respond (h, req, NULL);
    flux_msg_destroy (req);
    ok (flux_future_get (f, NULL) == 0,
        "namespace_create hashes the empty dir with content.hash");
    flux_future_destroy (f);

    f = flux_kvs_namespace_create_with (h, "ns2", REF1, 42, 0);
    req = expect_request ("kvs.namespace-create", 0, false,
                          "{\"flags\":0,\"namespace\":\"ns2\",\"owner\":42,"
                          "\"rootref\":\"" REF1 "\"}");
    flux_respond_error (h, req, EEXIST, NULL);
    flux_msg_destroy (req);
    errno = 0;
    ok (flux_future_get (f, NULL) < 0 && errno == EEXIST,
        "namespace_create_with: EEXIST passes through");
    flux_future_destroy (f);

    f = flux_kvs_namespace_remove (h, "ns1");
    req = expect_request ("kvs.namespace-remove", 0, false,
                          "{\"namespace\":\"ns1\"}");
    flux_respond (h, req, NULL);
    flux_msg_destroy (req);
    ok (flux_future_get (f, NULL) == 0, "namespace_remove");
    flux_future_destroy (f);

    f = flux_kvs_namespace_list (h);
    req = expect_request ("kvs.namespace-list", FLUX_NODEID_ANY, false,
                          "(none)");
    flux_respond (h, req, "{\"namespaces\":[]}");
    flux_msg_destroy (req);
    ok (flux_future_get (f, NULL) == 0, "namespace_list");
    flux_future_destroy (f);

    errno = 0;
    ok (flux_kvs_namespace_create (h, "x", 0, 1) == NULL && errno == EINVAL,
        "namespace_create with flags fails with EINVAL");
    errno = 0;
    ok (flux_kvs_namespace_create_with (h, "x", "sha1-x", 0, 0) == NULL
            && errno == EINVAL,
        "namespace_create_with a bad rootref fails with EINVAL");
}

/* copy/move run as chains on the reactor: serve them from handlers. */
static json_t *commits;

static void fake_lookup_cb (flux_t *h, flux_msg_handler_t *mh,
                            const flux_msg_t *msg, void *arg)
{
    const char *key;
    int flags;

    if (flux_request_unpack (msg, NULL, "{s:s s:i}", "key", &key, "flags",
                             &flags)
            < 0
        || flags != FLUX_KVS_TREEOBJ) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (!strcmp (key, "src"))
        flux_respond_pack (h, msg, "{s:o}", "val",
                           json_loads (DIRREF1, 0, NULL));
    else
        flux_respond_error (h, msg, ENOENT, NULL);
}

static void fake_commit_cb (flux_t *h, flux_msg_handler_t *mh,
                            const flux_msg_t *msg, void *arg)
{
    json_t *o;

    if (flux_request_unpack (msg, NULL, "o", &o) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    json_array_append (commits, o);
    flux_respond_pack (h, msg, "{s:s s:i}", "rootref", REF1, "rootseq",
                       (int)json_array_size (commits));
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "kvs.lookup", fake_lookup_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.commit", fake_commit_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

static void ready_cb (flux_future_t *f, void *arg)
{
    flux_reactor_stop (flux_future_get_reactor (f));
}

/* Wait for f from the reactor, so that the handlers above run. */
static int run (flux_future_t *f)
{
    if (!f || flux_future_then (f, 5., ready_cb, NULL) < 0
        || flux_reactor_run (flux_get_reactor (h), 0) < 0)
        return -1;
    return flux_future_get (f, NULL);
}

static void test_copy_move (void)
{
    flux_msg_handler_t **handlers;
    flux_future_t *f;
    char *s;
    int seq;

    commits = json_array ();
    if (flux_msg_handler_addvec (h, htab, NULL, &handlers) < 0)
        BAIL_OUT ("addvec failed");

    f = flux_kvs_copy (h, NULL, "src", "other", "dst", 0);
    ok (run (f) == 0, "copy works");
    ok (flux_kvs_commit_get_sequence (f, &seq) == 0 && seq == 1,
        "copy's future gives the commit's sequence");
    flux_future_destroy (f);
    s = json_dumps (commits, JSON_COMPACT | JSON_SORT_KEYS);
    is (s,
        "[{\"flags\":0,\"namespace\":\"other\",\"ops\":[{\"dirent\":" DIRREF1
        ",\"flags\":0,\"key\":\"dst\"}]}]",
        "copy committed the source treeobj under dst");
    free (s);

    json_array_clear (commits);
    f = flux_kvs_move (h, "a", "src", "b", "dst", FLUX_KVS_NO_MERGE);
    ok (run (f) == 0, "move works");
    flux_future_destroy (f);
    s = json_dumps (commits, JSON_COMPACT | JSON_SORT_KEYS);
    is (s,
        "[{\"flags\":1,\"namespace\":\"b\",\"ops\":[{\"dirent\":" DIRREF1
        ",\"flags\":0,\"key\":\"dst\"}]},{\"flags\":1,\"namespace\":\"a\","
        "\"ops\":[{\"dirent\":null,\"flags\":0,\"key\":\"src\"}]}]",
        "move committed the copy, then the unlink of the source");
    free (s);

    json_array_clear (commits);
    f = flux_kvs_move (h, NULL, "nosuch", NULL, "dst", 0);
    errno = 0;
    ok (run (f) < 0 && errno == ENOENT,
        "move of a missing key fails with ENOENT");
    ok (json_array_size (commits) == 0, "and commits nothing");
    flux_future_destroy (f);

    flux_msg_handler_delvec (handlers);
    json_decref (commits);
}

int main (void)
{
    plan (NO_PLAN);
    unsetenv ("FLUX_KVS_NAMESPACE");
    if (!(h = flux_open ("loop://", 0)))
        BAIL_OUT ("loop://: %s", strerror (errno));
    is (flux_kvs_default_namespace (), "primary", "default namespace");
    test_commit ();
    test_lookup_val ();
    test_lookup_dir ();
    test_lookup_watch ();
    test_getroot ();
    test_namespace ();
    test_copy_move ();
    flux_close (h);
    done_testing ();
    return 0;
}
