/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/engine.c - the kvs-watch engine over loop://, against a fake kvs
 * (kvs.lookup-plus) and a fake content store (content.load) answered on
 * the same handle.  Commits of the fake kvs make setroot events that the
 * test hands to the engine when it chooses, so races between events and
 * lookups can be played in either order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvswatch.h"
#include "libcontent/blobref.h"
#include "libflux/flux.h"
#include "libkvs/treeobj.h"
#include "tap.h"

/* Lookup flags */
enum {
    READDIR = 1,
    WATCH = 4,
    WAITCREATE = 8,
    TREEOBJ = 16,
    WATCH_FULL = 64,
    WATCH_UNIQ = 128,
    WATCH_APPEND = 256,
    STREAM = 512,
    INITIAL_SENTINEL = 1024,
};

static flux_t *h;
static flux_reactor_t *r;
static kvswatch_t *kw;
static unsigned long progress;

/* The fake content store: blobref -> bytes (a JSON string) */

static json_t *blobs;
static int content_loads;

static void store_blob (const void *data, size_t len, char *ref)
{
    if (blobref_hash ("sha1", data, len, ref, BLOBREF_MAX_STRING_SIZE) < 0)
        BAIL_OUT ("blobref_hash");
    json_object_set_new (blobs, ref, json_stringn (data, len));
}

static void store_obj (json_t *obj, char *ref)
{
    char *s = treeobj_encode (obj);
    if (!s)
        BAIL_OUT ("treeobj_encode");
    store_blob (s, strlen (s), ref);
    free (s);
}

static json_t *load_obj (const char *ref)
{
    json_t *s = json_object_get (blobs, ref);
    return s ? treeobj_decodeb (json_string_value (s), json_string_length (s))
             : NULL;
}

static void content_load_cb (flux_t *h, flux_msg_handler_t *mh,
                             const flux_msg_t *msg, void *arg)
{
    const void *hash;
    size_t len;
    char ref[BLOBREF_MAX_STRING_SIZE];
    json_t *s;

    progress++;
    content_loads++;
    if (flux_request_decode_raw (msg, NULL, &hash, &len) < 0
        || blobref_hashtostr ("sha1", hash, len, ref, sizeof (ref)) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (!(s = json_object_get (blobs, ref))) {
        flux_respond_error (h, msg, ENOENT, NULL);
        return;
    }
    flux_respond_raw (h, msg, json_string_value (s), json_string_length (s));
}

/* The fake kvs: namespaces with numbered roots */

#define MAXROOTS 4096
struct fakens {
    char name[64];
    bool exists;
    uint32_t owner;
    int seq;     /* newest root */
    int kvs_seq; /* root answered to lookups without rootdir */
    bool lag;    /* keep kvs_seq behind seq */
    char roots[MAXROOTS][BLOBREF_MAX_STRING_SIZE];
};
static struct fakens fns[8];
static int nfns;
static int lookups;           /* kvs.lookup-plus requests seen */
static bool kvs_down;         /* the kvs is reloading: ENOSYS */
static int lookups_with_root; /* ... naming a rootdir */
static bool hold;             /* queue lookups instead of answering */
static flux_msg_t *held[4096];
static int nheld;

static struct fakens *ns_find (const char *name)
{
    for (int i = 0; i < nfns; i++)
        if (!strcmp (fns[i].name, name))
            return &fns[i];
    return NULL;
}

static json_t *walk (json_t *dir, const char *key)
{
    char *cpy = strdup (key), *save = NULL, *tok;
    json_t *o = dir;

    if (!strcmp (key, ".")) {
        free (cpy);
        return dir;
    }
    for (tok = strtok_r (cpy, ".", &save); tok && o;
         tok = strtok_r (NULL, ".", &save)) {
        if (!treeobj_is_dir (o))
            o = NULL;
        else
            o = json_object_get (treeobj_get_data (o), tok);
    }
    free (cpy);
    return o;
}

static void answer_lookup (const flux_msg_t *msg)
{
    const char *key, *nsname;
    int flags, rootseq = -1;
    json_t *rootdir = NULL, *root, *ent, *val = NULL;
    struct flux_msg_cred cred;
    struct fakens *ns;
    const char *ref;

    if (flux_request_unpack (msg, NULL, "{s:s s:i s:s s?o s?i}", "key", &key,
                             "flags", &flags, "namespace", &nsname, "rootdir",
                             &rootdir, "rootseq", &rootseq)
        < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    lookups++;
    if (kvs_down) {
        flux_respond_error (h, msg, ENOSYS, "kvs is unloading");
        return;
    }
    if (!(ns = ns_find (nsname)) || !ns->exists) {
        flux_respond_error (h, msg, ENOTSUP, NULL);
        return;
    }
    flux_msg_get_cred (msg, &cred);
    if (!(cred.rolemask & FLUX_ROLE_OWNER) && cred.userid != ns->owner) {
        flux_respond_error (h, msg, EPERM, NULL);
        return;
    }
    if (rootdir) {
        lookups_with_root++;
        ref = treeobj_get_blobref (rootdir, 0);
    }
    else {
        rootseq = ns->kvs_seq;
        ref = ns->roots[rootseq];
    }
    if (!ref || !(root = load_obj (ref))) {
        flux_respond_error (h, msg, ENOTRECOVERABLE, NULL);
        return;
    }
    if (!(ent = walk (root, key))) {
        flux_respond_pack (h, msg, "{s:i s:i s:s}", "errno", ENOENT, "rootseq",
                           rootseq, "rootref", ref);
        json_decref (root);
        return;
    }
    if ((flags & TREEOBJ))
        val = json_incref (ent);
    else if (treeobj_is_dir (ent)) {
        if (!(flags & READDIR)) {
            flux_respond_error (h, msg, EISDIR, NULL);
            json_decref (root);
            return;
        }
        val = json_incref (ent);
    }
    else if (treeobj_is_valref (ent)) {
        char buf[65536];
        size_t len = 0;
        for (int i = 0; i < treeobj_get_count (ent); i++) {
            json_t *b = json_object_get (blobs, treeobj_get_blobref (ent, i));
            memcpy (buf + len, json_string_value (b), json_string_length (b));
            len += json_string_length (b);
        }
        val = treeobj_create_val (buf, len);
    }
    else
        val = json_incref (ent);
    flux_respond_pack (h, msg, "{s:o s:i s:s}", "val", val, "rootseq", rootseq,
                       "rootref", ref);
    json_decref (root);
}

static void lookup_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    progress++;
    if (hold) {
        held[nheld++] = (flux_msg_t *)flux_msg_incref (msg);
        return;
    }
    answer_lookup (msg);
}

static void release (void)
{
    int n = nheld;
    hold = false;
    nheld = 0;
    for (int i = 0; i < n; i++) {
        answer_lookup (held[i]);
        flux_msg_decref (held[i]);
    }
}

/* Events */

static void deliver (flux_msg_t *ev)
{
    kvswatch_event (kw, ev);
    flux_msg_decref (ev);
}

static flux_msg_t *ev_setroot (struct fakens *ns, const char *key)
{
    char topic[128];
    snprintf (topic, sizeof (topic), "kvs.namespace-%s-setroot", ns->name);
    return flux_event_pack (topic, "{s:s s:i s:s s:[] s:[s] s:I}", "namespace",
                            ns->name, "rootseq", ns->seq, "rootref",
                            ns->roots[ns->seq], "names", "keys", key, "owner",
                            (json_int_t)ns->owner);
}

static void ns_create (const char *name, uint32_t owner, bool event)
{
    struct fakens *ns = ns_find (name);
    json_t *dir = treeobj_create_dir ();

    if (!ns)
        ns = &fns[nfns++];
    memset (ns, 0, sizeof (*ns));
    snprintf (ns->name, sizeof (ns->name), "%s", name);
    ns->exists = true;
    ns->owner = owner;
    store_obj (dir, ns->roots[0]);
    json_decref (dir);
    if (event) {
        char topic[128];
        snprintf (topic, sizeof (topic), "kvs.namespace-%s-created", name);
        deliver (flux_event_pack (topic, "{s:s s:i s:s s:I}", "namespace", name,
                                  "rootseq", 0, "rootref", ns->roots[0],
                                  "owner", (json_int_t)owner));
    }
}

static void ns_remove (const char *name)
{
    char topic[128];
    ns_find (name)->exists = false;
    snprintf (topic, sizeof (topic), "kvs.namespace-%s-removed", name);
    deliver (flux_event_pack (topic, "{s:s}", "namespace", name));
}

enum op { PUT, APPEND, UNLINK, SETOBJ };

/* Set key to dirent (NULL: unlink) in a copy of dir, recursively. */
static json_t *set_path (json_t *dir, const char *key, json_t *dirent)
{
    const char *dot = strchr (key, '.');
    json_t *cpy = dir ? treeobj_deep_copy (dir) : treeobj_create_dir ();

    if (!dot) {
        if (dirent)
            treeobj_insert_entry (cpy, key, dirent);
        else
            (void)treeobj_delete_entry (cpy, key);
    }
    else {
        char name[128];
        json_t *sub, *nsub;
        snprintf (name, sizeof (name), "%.*s", (int)(dot - key), key);
        sub = json_object_get (treeobj_get_data (cpy), name);
        nsub = set_path (treeobj_is_dir (sub) ? sub : NULL, dot + 1, dirent);
        treeobj_insert_entry (cpy, name, nsub);
        json_decref (nsub);
    }
    return cpy;
}

/* Commit one op to ns and return its setroot event (not delivered). */
static flux_msg_t *commit (const char *nsname, enum op op, const char *key,
                           const char *s, json_t *obj)
{
    struct fakens *ns = ns_find (nsname);
    json_t *root = load_obj (ns->roots[ns->seq]);
    json_t *dirent = NULL, *nroot;
    char ref[BLOBREF_MAX_STRING_SIZE];

    if (op == PUT) {
        if (strlen (s) >= 16) {
            store_blob (s, strlen (s), ref);
            dirent = treeobj_create_valref (ref);
        }
        else
            dirent = treeobj_create_val (s, strlen (s));
    }
    else if (op == APPEND) {
        json_t *old = walk (root, key);
        if (treeobj_is_val (old)) {
            void *data;
            size_t len;
            treeobj_decode_val (old, &data, &len);
            store_blob (data, len, ref);
            free (data);
            dirent = treeobj_create_valref (ref);
        }
        else if (treeobj_is_valref (old))
            dirent = treeobj_deep_copy (old);
        if (dirent) {
            store_blob (s, strlen (s), ref);
            treeobj_append_blobref (dirent, ref);
        }
        else
            dirent = treeobj_create_val (s, strlen (s));
    }
    else if (op == SETOBJ)
        dirent = json_incref (obj);
    nroot = set_path (root, key, dirent);
    ns->seq++;
    store_obj (nroot, ns->roots[ns->seq]);
    if (!ns->lag)
        ns->kvs_seq = ns->seq;
    json_decref (root);
    json_decref (nroot);
    json_decref (dirent);
    return ev_setroot (ns, key);
}

static void put (const char *ns, const char *key, const char *val)
{
    deliver (commit (ns, PUT, key, val, NULL));
}

static void append (const char *ns, const char *key, const char *val)
{
    deliver (commit (ns, APPEND, key, val, NULL));
}

/* Clients: fabricated requests; their responses come back on the loop */

#define TAGBASE 1000000
#define MAXCLIENTS 1024
struct client {
    char sender[32];
    uint32_t matchtag;
    char log[8192];
    int nresp;
    bool ended;
};
static struct client clients[MAXCLIENTS];
static int nclients;

static void response_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    uint32_t tag;
    int errnum = 0;
    struct client *c;
    char item[512];
    json_t *val;

    progress++;
    if (flux_msg_get_matchtag (msg, &tag) < 0 || tag < TAGBASE
        || tag - TAGBASE >= (uint32_t)nclients)
        BAIL_OUT ("response with unexpected matchtag");
    c = &clients[tag - TAGBASE];
    (void)flux_msg_get_errnum (msg, &errnum);
    if (errnum) {
        snprintf (item, sizeof (item), "E%d", errnum);
        c->ended = true;
    }
    else if (!flux_msg_has_payload (msg))
        snprintf (item, sizeof (item), "SENTINEL");
    else if (flux_msg_unpack (msg, "{s:o}", "val", &val) < 0)
        snprintf (item, sizeof (item), "BADPAYLOAD");
    else if (treeobj_is_val (val)) {
        void *data;
        size_t len;
        treeobj_decode_val (val, &data, &len);
        snprintf (item, sizeof (item), "%.*s", (int)len, (char *)data);
        free (data);
    }
    else
        snprintf (item, sizeof (item), "<%s>", treeobj_get_type (val));
    if (!flux_msg_is_streaming (msg))
        c->ended = true;
    if (c->nresp++ > 0)
        strncat (c->log, ",", sizeof (c->log) - strlen (c->log) - 1);
    strncat (c->log, item, sizeof (c->log) - strlen (c->log) - 1);
}

static int watch_as (const char *ns, const char *key, int flags,
                     struct flux_msg_cred cred, const char *sender)
{
    struct client *c = &clients[nclients];
    flux_msg_t *msg;

    snprintf (c->sender, sizeof (c->sender), "%s", sender ? sender : "client");
    c->matchtag = TAGBASE + nclients;
    msg = flux_request_encode ("kvs-watch.lookup", NULL);
    if (!msg
        || flux_msg_pack (msg, "{s:s s:s s:i}", "namespace", ns, "key", key,
                          "flags", flags)
               < 0
        || flux_msg_route_push (msg, c->sender) < 0
        || flux_msg_set_matchtag (msg, c->matchtag) < 0
        || flux_msg_set_cred (msg, cred) < 0
        || ((flags & (WATCH | STREAM)) && flux_msg_set_streaming (msg) < 0))
        BAIL_OUT ("building a watch request failed");
    kvswatch_lookup (kw, msg);
    flux_msg_decref (msg);
    return nclients++;
}

static int watch (const char *ns, const char *key, int flags)
{
    return watch_as (ns, key, flags,
                     (struct flux_msg_cred){getuid (), FLUX_ROLE_OWNER}, NULL);
}

static void cancel_as (int c, const char *sender)
{
    flux_msg_t *msg = flux_request_encode ("kvs-watch.cancel", NULL);
    flux_msg_pack (msg, "{s:i}", "matchtag", (int)clients[c].matchtag);
    flux_msg_route_push (msg, sender ? sender : clients[c].sender);
    flux_msg_set_cred (msg, (struct flux_msg_cred){getuid (), FLUX_ROLE_OWNER});
    flux_msg_set_noresponse (msg);
    kvswatch_cancel (kw, msg);
    flux_msg_decref (msg);
}

static void disconnect_as (const char *sender, struct flux_msg_cred cred)
{
    flux_msg_t *msg = flux_request_encode ("kvs-watch.disconnect", NULL);
    flux_msg_route_push (msg, sender);
    flux_msg_set_cred (msg, cred);
    flux_msg_set_noresponse (msg);
    kvswatch_disconnect (kw, msg);
    flux_msg_decref (msg);
}

static void disconnect (const char *sender)
{
    disconnect_as (sender, (struct flux_msg_cred){getuid (), FLUX_ROLE_OWNER});
}

/* Run the reactor until nothing happens any more. */
static void settle (void)
{
    int quiet = 0;
    for (int i = 0; i < 10000000 && quiet < 8; i++) {
        unsigned long before = progress;
        flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
        quiet = progress == before ? quiet + 1 : 0;
    }
}

static const char *rlog (int c)
{
    return clients[c].log;
}

static json_int_t stat_int (const char *path)
{
    json_t *o = kvswatch_stats (kw);
    json_int_t v = -1;
    if (json_unpack (o, "{s:I}", path, &v) < 0)
        v = -1;
    json_decref (o);
    return v;
}

static json_int_t ns_stat (const char *ns, const char *name)
{
    json_t *o = kvswatch_stats (kw);
    json_int_t v = -1;
    if (json_unpack (o, "{s:{s:{s:I}}}", "namespaces", ns, name, &v) < 0)
        v = -1;
    json_decref (o);
    return v;
}

/* Tests */

static void test_basic (void)
{
    int a, b, n0;

    put ("primary", "a", "1");
    a = watch ("primary", "a", WATCH);
    b = watch ("primary", "..b.", WATCH | WAITCREATE);
    settle ();
    is (rlog (a), "1", "WATCH: the first response is the current value");
    is (rlog (b), "", "WATCH|WAITCREATE of a missing key: nothing yet");
    ok (stat_int ("watchers") == 2 && ns_stat ("primary", "keys") == 2,
        "stats: 2 watchers on 2 keys");
    put ("primary", "a", "2");
    put ("primary", "a", "2");
    settle ();
    is (rlog (a), "1,2,2", "a response per commit of the key, duplicates too");
    n0 = lookups;
    put ("primary", "c", "9");
    put ("primary", "c", "10");
    settle ();
    ok (lookups == n0, "commits of other keys cause no lookup at all");
    is (rlog (a), "1,2,2", "and no response");
    put ("primary", "b", "x");
    settle ();
    is (rlog (b), "x", "the normalized key ..b. sees b created");
    deliver (commit ("primary", UNLINK, "b", NULL, NULL));
    settle ();
    is (rlog (b), "x,E2", "unlinking a watched key ends the watch: ENOENT");
    cancel_as (a, "someone-else");
    settle ();
    ok (!clients[a].ended, "a cancel from another sender is ignored");
    cancel_as (a, NULL);
    settle ();
    is (rlog (a), "1,2,2,E61", "cancel ends the stream with ENODATA");
    ok (stat_int ("watchers") == 0 && stat_int ("namespace-count") == 0
            && stat_int ("senders") == 0,
        "no watcher, namespace or sender left");
}

static void test_errors (void)
{
    int c;

    c = watch ("primary", "nokey", WATCH);
    settle ();
    is (rlog (c), "E2", "WATCH of a missing key: ENOENT");
    c = watch ("nons", "a", WATCH);
    settle ();
    is (rlog (c), "E95", "WATCH in a missing namespace: ENOTSUP");
    put ("primary", "dir.x", "1");
    c = watch ("primary", "dir", WATCH);
    settle ();
    is (rlog (c), "E21", "WATCH of a directory without READDIR: EISDIR");
    c = watch ("primary", "dir", WATCH | READDIR);
    settle ();
    is (rlog (c), "<dir>", "with READDIR: the dir");
    cancel_as (c, NULL);
    c = watch ("primary", "a", WATCH);
    {
        /* same sender and matchtag again */
        flux_msg_t *msg = flux_request_encode ("kvs-watch.lookup", NULL);
        flux_msg_pack (msg, "{s:s s:s s:i}", "namespace", "primary", "key", "a",
                       "flags", WATCH);
        flux_msg_route_push (msg, clients[c].sender);
        flux_msg_set_matchtag (msg, clients[c].matchtag);
        flux_msg_set_streaming (msg);
        kvswatch_lookup (kw, msg);
        flux_msg_decref (msg);
    }
    settle ();
    is (rlog (c), "E17,2", "a duplicate (sender, matchtag) gets EEXIST");
    cancel_as (c, NULL);
    c = watch ("primary", "a", WATCH | STREAM);
    settle ();
    is (rlog (c), "E22", "bad flags are answered EINVAL");
    settle ();
    ok (stat_int ("watchers") == 0, "nothing left");
}

static void test_once (void)
{
    int c, d;

    c = watch ("primary", "a", WAITCREATE);
    settle ();
    is (rlog (c), "2", "WAITCREATE of an existing key: its value");
    ok (clients[c].ended, "as a single, final response");
    d = watch ("primary", "later", WAITCREATE);
    settle ();
    is (rlog (d), "", "WAITCREATE of a missing key waits");
    put ("primary", "later", "here");
    settle ();
    is (rlog (d), "here", "and answers once the key is created");
    ok (stat_int ("watchers") == 0, "then the watcher is gone");
}

static void test_uniq_full (void)
{
    int u, f, p;
    json_t *dir;

    put ("primary", "u", "1");
    u = watch ("primary", "u", WATCH | WATCH_UNIQ);
    settle ();
    put ("primary", "u", "1");
    put ("primary", "u", "2");
    settle ();
    put ("primary", "u", "2");
    put ("primary", "u", "1");
    settle ();
    is (rlog (u), "1,2,1", "WATCH_UNIQ: only values that differ");
    cancel_as (u, NULL);

    put ("primary", "d.x", "old");
    f = watch ("primary", "d.x", WATCH | WATCH_FULL);
    p = watch ("primary", "d.x", WATCH);
    settle ();
    dir = treeobj_create_dir ();
    {
        json_t *v = treeobj_create_val ("new", 3);
        treeobj_insert_entry (dir, "x", v);
        json_decref (v);
    }
    deliver (commit ("primary", SETOBJ, "d", NULL, dir));
    json_decref (dir);
    settle ();
    is (rlog (f), "old,new", "WATCH_FULL sees its parent dir replaced");
    is (rlog (p), "old", "a plain WATCH does not");
    put ("primary", "zzz", "1");
    settle ();
    is (rlog (f), "old,new",
        "WATCH_FULL checks every commit but sends only "
        "changes");
    deliver (commit ("primary", UNLINK, "d", NULL, NULL));
    settle ();
    is (rlog (f), "old,new,E2",
        "WATCH_FULL sees the key vanish with its "
        "parent: ENOENT");
    cancel_as (p, NULL);
    settle ();
}

static void test_append (void)
{
    int c, s, n0, i;
    char val[32], *expect;
    size_t off = 0;

    put ("primary", "log", "e0");
    c = watch ("primary", "log", WATCH | WATCH_APPEND);
    s = watch ("primary", "log", WATCH | WATCH_APPEND | INITIAL_SENTINEL);
    settle ();
    is (rlog (c), "e0", "APPEND: the initial val");
    is (rlog (s), "e0,SENTINEL", "INITIAL_SENTINEL follows the initial data");
    n0 = content_loads;
    expect = calloc (1, 16 * 1001);
    off = sprintf (expect, "e0");
    for (i = 1; i <= 1000; i++) {
        snprintf (val, sizeof (val), "e%d", i);
        append ("primary", "log", val);
        off += sprintf (expect + off, ",e%d", i);
        if (i % 7 == 0)
            settle ();
    }
    settle ();
    is (rlog (c), expect, "1000 appends: each seen once, in order");
    diag ("content loads for 2 watchers x 1000 appends: %d",
          content_loads - n0);
    ok (content_loads - n0 <= 2 * 1001,
        "each blob is loaded once per watcher (O(N), not O(N^2))");
    ok (!strncmp (rlog (s), "e0,SENTINEL,e1,e2,", 18),
        "the sentinel is sent only once");
    deliver (commit ("primary", PUT, "log", "rewritten", NULL));
    settle ();
    ok (clients[c].ended && !strcmp (strrchr (rlog (c), ',') + 1, "E22"),
        "an overwrite ends APPEND watchers with EINVAL");
    free (expect);

    put ("primary", "adir.x", "1");
    c = watch ("primary", "adir", WATCH | WATCH_APPEND);
    settle ();
    is (rlog (c), "E21", "APPEND on a directory: EISDIR");

    c = watch ("primary", "newlog",
               WATCH | WATCH_APPEND | WAITCREATE | INITIAL_SENTINEL);
    settle ();
    is (rlog (c), "SENTINEL",
        "APPEND|WAITCREATE of a missing key: the "
        "sentinel at once");
    append ("primary", "newlog", "a");
    append ("primary", "newlog", "b");
    settle ();
    is (rlog (c), "SENTINEL,a,b", "then the value as it is created and grows");
    cancel_as (c, NULL);
    settle ();
}

static void test_stream (void)
{
    int c;

    for (int i = 0; i < 20; i++) {
        char v[16];
        snprintf (v, sizeof (v), "%c", 'a' + i);
        append ("primary", "slog", v);
    }
    c = watch ("primary", "slog", STREAM);
    settle ();
    is (rlog (c), "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,E61",
        "STREAM: the blobs one per response, then ENODATA");
    c = watch ("primary", "a", STREAM);
    settle ();
    is (rlog (c), "2,E61", "STREAM of a val: the val, then ENODATA");
    c = watch ("primary", "dir", STREAM);
    settle ();
    is (rlog (c), "E21", "STREAM of a dir: EISDIR");
    c = watch ("primary", "nostream", STREAM);
    settle ();
    is (rlog (c), "E2", "STREAM of a missing key: ENOENT");
    c = watch ("primary", "nostream", STREAM | WAITCREATE);
    settle ();
    put ("primary", "nostream", "created");
    settle ();
    is (rlog (c), "created,E61", "STREAM|WAITCREATE waits for the key");
}

static void test_namespaces (void)
{
    int w1, w2, w3, w4;

    w1 = watch ("ns1", "k", WATCH | WAITCREATE);
    w2 = watch ("ns1", "k", WAITCREATE);
    settle ();
    ok (ns_stat ("ns1", "waiting") == 2, "two watchers wait for ns1");
    ns_create ("ns1", getuid (), true);
    settle ();
    is (rlog (w1), "", "ns1 created: the key is still missing");
    put ("ns1", "k", "v1");
    settle ();
    is (rlog (w1), "v1", "WATCH|WAITCREATE sees the key in the new ns");
    is (rlog (w2), "v1", "and so does WAITCREATE");
    w3 = watch ("ns1", "k", WATCH);
    w4 = watch ("ns1", "other", WATCH | WAITCREATE);
    settle ();
    ns_remove ("ns1");
    settle ();
    is (rlog (w1), "v1,E95", "namespace removal ends watchers with ENOTSUP");
    is (rlog (w3), "v1,E95", "every one of them");
    is (rlog (w4), "E95", "waiting ones too");
    ok (ns_stat ("ns1", "watchers") == -1, "the namespace is forgotten");
}

static void test_guest (void)
{
    struct flux_msg_cred g1 = {5001, FLUX_ROLE_USER};
    struct flux_msg_cred g2 = {5002, FLUX_ROLE_USER};
    int a, b, c, n0;

    ns_create ("g", 5001, true);
    put ("g", "k", "secret");
    a = watch_as ("g", "k", WATCH, g1, "guest1");
    b = watch_as ("g", "k", WATCH, g2, "guest2");
    c = watch_as ("primary", "a", WATCH, g1, "guest1");
    settle ();
    is (rlog (a), "secret", "a guest watches its own namespace");
    is (rlog (b), "E1", "another guest gets EPERM");
    is (rlog (c), "E1", "a guest cannot watch primary");
    put ("g", "k", "x");
    settle ();
    n0 = lookups;
    b = watch_as ("g", "k", WATCH, g2, "guest2");
    settle ();
    is (rlog (b), "E1", "once the owner is known, EPERM without a lookup");
    ok (lookups == n0, "(no lookup was made)");
    /* A disconnect names its sender by its first route: one with
     * another user's credentials ends nothing. */
    disconnect_as ("guest1", g2);
    put ("g", "k", "y");
    settle ();
    is (rlog (a), "secret,x,y",
        "a disconnect naming guest1 with guest2's credentials ends nothing");
    ok (stat_int ("watchers") == 1 && stat_int ("senders") == 1,
        "(guest1's watcher and sender are kept)");
    disconnect_as ("guest1", g1);
    settle ();
    is (rlog (a), "secret,x,y", "disconnect sends nothing");
    ok (stat_int ("watchers") == 0 && stat_int ("senders") == 0,
        "and drops the sender's watchers");
}

static void test_scale (void)
{
    int c[200], n0, bad = 0, i;
    char key[32], val[32];

    for (i = 0; i < 200; i++) {
        snprintf (key, sizeof (key), "job.%d.eventlog", i);
        put ("primary", key, "submit");
    }
    for (i = 0; i < 200; i++) {
        snprintf (key, sizeof (key), "job.%d.eventlog", i);
        c[i] = watch_as ("primary", key, WATCH | WATCH_APPEND,
                         (struct flux_msg_cred){getuid (), FLUX_ROLE_OWNER},
                         "job-info");
    }
    settle ();
    ok (stat_int ("watchers") == 200 && stat_int ("senders") == 1,
        "200 watchers from one sender");
    n0 = lookups;
    for (i = 0; i < 200; i += 2) {
        snprintf (key, sizeof (key), "job.%d.eventlog", i);
        snprintf (val, sizeof (val), "start%d", i);
        append ("primary", key, val);
    }
    settle ();
    ok (lookups - n0 == 100, "100 commits of 100 keys: 100 lookups");
    for (i = 0; i < 200; i++) {
        snprintf (val, sizeof (val), "submit,start%d", i);
        if (strcmp (rlog (c[i]), i % 2 ? "submit" : val))
            bad++;
    }
    ok (bad == 0, "each watcher sees only its own key's changes");
    disconnect ("job-info");
    settle ();
    ok (stat_int ("watchers") == 0 && stat_int ("namespace-count") == 0,
        "disconnect of the sender drops all 200");
}

static void test_coalesce (void)
{
    int c, n0, nr0, i, keeper;
    char v[16];

    /* keeps the primary monitor (and its newest root) alive */
    keeper = watch ("primary", "keeper", WATCH | WAITCREATE);
    put ("primary", "co", "0");
    c = watch ("primary", "co", WATCH);
    settle ();
    n0 = lookups;
    hold = true;
    put ("primary", "co", "1");
    settle ();
    ok (nheld == 1, "a lookup is in flight");
    for (i = 2; i <= 10; i++) {
        snprintf (v, sizeof (v), "%d", i);
        put ("primary", "co", v);
    }
    settle ();
    ok (nheld == 1, "more events while it is in flight start no lookup");
    release ();
    settle ();
    ok (lookups - n0 == 2, "one more lookup follows, at the newest root");
    is (rlog (c), "0,1,10", "responses: each from one root, in order");
    cancel_as (c, NULL);

    /* an event racing ahead of the first lookup's answer */
    put ("primary", "race", "r0");
    hold = true;
    c = watch ("primary", "race", WATCH);
    settle ();
    ns_find ("primary")->lag = true; /* answer from the root before r1 */
    put ("primary", "race", "r1");
    settle ();
    release ();
    settle ();
    is (rlog (c), "r0,r1",
        "an event seen before the first answer is not "
        "lost");
    ns_find ("primary")->lag = false;
    ns_find ("primary")->kvs_seq = ns_find ("primary")->seq;
    cancel_as (c, NULL);

    /* the kvs answering from a root older than events announced */
    ns_find ("primary")->lag = true;
    put ("primary", "lag", "new");
    nr0 = lookups;
    c = watch ("primary", "lag", WATCH | WAITCREATE);
    settle ();
    is (rlog (c), "new", "a lagging kvs: looked up again at the newest root");
    ok (lookups - nr0 == 2, "(two lookups)");
    ns_find ("primary")->lag = false;
    ns_find ("primary")->kvs_seq = ns_find ("primary")->seq;
    cancel_as (c, NULL);

    /* namespace created while the ENOTSUP answer was in flight */
    hold = true;
    c = watch ("late", "k", WAITCREATE);
    settle ();
    ok (nheld == 1, "lookup in a missing namespace held");
    ns_create ("late", getuid (), false);
    ns_find ("late")->exists = false; /* the kvs answered before creation */
    release ();
    ns_find ("late")->exists = true;
    hold = true; /* keep the retry from being answered in this order */
    {
        char topic[] = "kvs.namespace-late-created";
        deliver (flux_event_pack (topic, "{s:s s:i s:s s:I}", "namespace",
                                  "late", "rootseq", 0, "rootref",
                                  ns_find ("late")->roots[0], "owner",
                                  (json_int_t)getuid ()));
    }
    settle ();
    release ();
    settle ();
    put ("late", "k", "ok");
    settle ();
    is (rlog (c), "ok", "no creation is missed");
    cancel_as (keeper, NULL);
    settle ();
}

static void test_inflight_bound (void)
{
    int c[50], i, bad = 0;
    char key[32];

    kvswatch_destroy (kw);
    ok ((kw = kvswatch_create (h, 0, 4)) != NULL, "engine with max-lookups 4");
    for (i = 0; i < 50; i++) {
        snprintf (key, sizeof (key), "b.%d", i);
        put ("primary", key, "v");
    }
    hold = true;
    for (i = 0; i < 50; i++) {
        snprintf (key, sizeof (key), "b.%d", i);
        c[i] = watch ("primary", key, WATCH);
    }
    settle ();
    ok (nheld == 4 && stat_int ("lookups-active") == 4
            && stat_int ("lookups-queued") == 46,
        "4 lookups in flight, 46 queued");
    while (nheld > 0) {
        release ();
        hold = true;
        settle ();
    }
    hold = false;
    for (i = 0; i < 50; i++)
        if (strcmp (rlog (c[i]), "v"))
            bad++;
    ok (bad == 0 && stat_int ("lookups-active") == 0
            && stat_int ("lookups-queued") == 0,
        "all 50 answered, nothing left in flight");
    kvswatch_destroy (kw);
    settle ();
    bad = 0;
    for (i = 0; i < 50; i++)
        if (strcmp (rlog (c[i]), "v,E38"))
            bad++;
    ok (bad == 0, "destroying the engine ends watchers with ENOSYS");
    kw = kvswatch_create (h, 0, KVSWATCH_DEFAULT_MAX_LOOKUPS);
}

/* The kvs reloading refuses lookups with ENOSYS: the watchers wait for
 * kvs.online and look again, none ends. */
static void test_kvs_reload (void)
{
    int a, b, n0;

    put ("primary", "ra", "1");
    a = watch ("primary", "ra", WATCH);
    settle ();
    is (rlog (a), "1", "a watcher before the reload");
    kvs_down = true;
    b = watch ("primary", "ra", 0);
    put ("primary", "ra", "2");
    settle ();
    ok (!clients[a].ended && !clients[b].ended,
        "lookups refused with ENOSYS end no watcher");
    is (rlog (b), "", "the new one has no answer yet");
    ok (stat_int ("refused") >= 2, "stats: refused counts them");
    n0 = lookups;
    settle ();
    ok (lookups == n0, "they wait: no lookup until kvs.online");
    kvs_down = false;
    kvswatch_kvs_online (kw);
    settle ();
    is (rlog (a), "1,2", "kvs.online: the watcher sees the commit");
    is (rlog (b), "2", "and the new lookup is answered");
    put ("primary", "ra", "3");
    settle ();
    is (rlog (a), "1,2,3", "and it goes on");
    cancel_as (a, NULL);
    settle ();
    kvs_down = true;
    a = watch ("primary", "ra", WATCH);
    settle ();
    cancel_as (a, NULL);
    settle ();
    is (rlog (a), "E61", "a waiting watcher can be canceled");
    kvs_down = false;
    kvswatch_kvs_online (kw);
    settle ();
    ok (stat_int ("watchers") == 0, "no watcher left");
}

static void test_bad_events (void)
{
    int c, bad0 = (int)stat_int ("bad-events");

    put ("primary", "be", "1");
    c = watch ("primary", "be", WATCH);
    settle ();
    deliver (flux_event_pack ("kvs.namespace-primary-setroot", "{s:s}",
                              "namespace", "primary"));
    deliver (flux_event_pack ("kvs.namespace-primary-setroot",
                              "{s:s s:i s:s s:s}", "namespace", "primary",
                              "rootseq", 1, "rootref", "x", "keys", "be"));
    deliver (flux_event_pack ("kvs.namespace-other-setroot",
                              "{s:s s:i s:s s:[s]}", "namespace", "primary",
                              "rootseq", 1, "rootref", "x", "keys", "be"));
    deliver (flux_event_encode ("kvs.namespace-primary-setroot", "[1]"));
    deliver (flux_event_encode ("kvs.namespace-primary-removed", NULL));
    ok (stat_int ("bad-events") == bad0 + 5, "5 malformed events counted");
    put ("primary", "be", "2");
    settle ();
    is (rlog (c), "1,2", "and ignored: the watcher carries on");
    cancel_as (c, NULL);
    settle ();
}

int main (int argc, char **argv)
{
    struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, "kvs.lookup-plus", lookup_cb, FLUX_ROLE_ALL},
        {FLUX_MSGTYPE_REQUEST, "content.load", content_load_cb, FLUX_ROLE_ALL},
        {FLUX_MSGTYPE_RESPONSE, "kvs-watch.lookup", response_cb, FLUX_ROLE_ALL},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers;

    plan (NO_PLAN);

    if (!(h = flux_open ("loop://", 0)) || !(r = flux_get_reactor (h)))
        BAIL_OUT ("cannot open loop://");
    if (flux_msg_handler_addvec (h, htab, NULL, &handlers) < 0)
        BAIL_OUT ("cannot register handlers");
    blobs = json_object ();
    ok ((kw = kvswatch_create (h, 0, KVSWATCH_DEFAULT_MAX_LOOKUPS)) != NULL,
        "kvswatch_create works");
    errno = 0;
    ok (kvswatch_create (h, 0, 0) == NULL && errno == EINVAL,
        "max_lookups 0 fails with EINVAL");
    ns_create ("primary", getuid (), false);

    test_basic ();
    test_errors ();
    test_once ();
    test_uniq_full ();
    test_append ();
    test_stream ();
    test_namespaces ();
    test_guest ();
    test_scale ();
    test_coalesce ();
    test_kvs_reload ();
    test_inflight_bound ();
    test_bad_events ();

    kvswatch_destroy (kw);
    flux_msg_handler_delvec (handlers);
    flux_close (h);
    json_decref (blobs);
    done_testing ();
    return 0;
}
