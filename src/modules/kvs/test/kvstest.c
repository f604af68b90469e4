/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvstest - a raw KVS client for the integration tests (t1002, t1003).
 * It speaks the wire protocol of PROTOCOLS.md 4 directly, so the tests
 * exercise the kvs module and nothing else.
 *
 * Usage: kvstest [-n NS] [-r RANK] [-g UID] [-c FLAGS] COMMAND ARGS...
 *   -n NS    namespace (default primary)
 *   -c FLAGS commit flags added to every commit (e.g. 8: LAZY)
 *   -r RANK  send requests to RANK (default: the local broker)
 *   -g UID   act as guest UID (the owner presets the credentials)
 * Commands:
 *   put KEY=VAL...      one commit of puts; prints the new rootseq
 *   append KEY=VAL...   one commit of appends; prints the new rootseq
 *   mkdir KEY | unlink KEY | link KEY TARGET [TARGETNS]
 *   get [-f FLAGS] KEY  prints the value (or with -f, the raw response)
 *   version             prints the namespace's rootseq (kvs.getroot)
 *   wait SEQ            kvs.wait-version
 *   loop N PREFIX       N commits of {PREFIX.k<i> = i, append PREFIX.log
 *                       "i\n"}, printing i once each is acknowledged
 *   appends N KEY       N commits, the i-th appending "i\n" (1..N) to KEY
 *   verify N PREFIX     checks that PREFIX.k0..k<N-1> exist and that
 *                       PREFIX.log starts with 0..N-1 with no gap after
 *   rpc TOPIC [JSON]    any request; prints the response payload
 *   pipe TOPIC JSON...  several requests (pairs), all sent before any
 *                       answer is read; prints "TOPIC ok" or "TOPIC
 *                       errno N" for each, in order
 *   store TEXT          stores TEXT in the content service (past the
 *                       kvs and its cache); prints its blobref
 *   race N              three more connections: A sends N durable
 *                       NO_MERGE commits (race.d<i>), B a durable one
 *                       then a LAZY one (race.bd, race.bl), C a LAZY one
 *                       (race.cl), all before any answer is read; prints
 *                       "C ahead" if C's rootseq is below A's last
 *                       ("C behind" otherwise) and "B kept" if B's LAZY
 *                       commit came after its durable one ("B reordered")
 * Errors print "kvstest: TOPIC: message" and exit with the errno.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libcontent/content.h"
#include "libflux/flux.h"
#include "libkvs/kvs.h"
#include "libkvs/treeobj.h"

static const char *ns = "primary";
static uint32_t nodeid = FLUX_NODEID_ANY;
static long guest = -1;
static int commit_flags = 0;
static flux_t *h;

static void die (const char *topic, flux_future_t *f, int errnum)
{
    fprintf (stderr, "kvstest: %s: %s\n", topic,
             f ? future_strerror (f, errnum) : strerror (errnum));
    exit (errnum ? errnum : 1);
}

/* Send topic with payload o (stolen), with guest credentials if -g. */
static flux_future_t *rpc (const char *topic, json_t *o)
{
    char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
    flux_msg_t *msg = flux_request_encode (topic, s);
    flux_future_t *f;

    free (s);
    json_decref (o);
    if (!msg)
        die (topic, NULL, errno);
    if (guest >= 0) {
        struct flux_msg_cred cred = {(uint32_t)guest, FLUX_ROLE_USER};
        if (flux_msg_set_cred (msg, cred) < 0)
            die (topic, NULL, errno);
    }
    if (!(f = flux_rpc_message (h, msg, nodeid, 0)))
        die (topic, NULL, errno);
    flux_msg_decref (msg);
    return f;
}

static json_t *op (const char *key, int flags, json_t *dirent)
{
    return json_pack ("{s:s s:i s:o}", "key", key, "flags", flags, "dirent",
                      dirent ? dirent : json_null ());
}

/* Commit ops (stolen); returns the new rootseq. */
static int commit (json_t *ops, int flags)
{
    flux_future_t *f = rpc (
        "kvs.commit", json_pack ("{s:s s:i s:o}", "namespace", ns, "flags",
                                 flags | commit_flags, "ops", ops));
    int seq;
    const char *ref;

    if (flux_rpc_get_unpack (f, "{s:s s:i}", "rootref", &ref, "rootseq", &seq)
        < 0)
        die ("kvs.commit", f, errno);
    flux_future_destroy (f);
    return seq;
}

static int cmd_put (int argc, char **argv, int flags)
{
    json_t *ops = json_array ();

    for (int i = 0; i < argc; i++) {
        char *eq = strchr (argv[i], '=');
        if (!eq) {
            fprintf (stderr, "kvstest: expected KEY=VAL\n");
            return 1;
        }
        *eq = '\0';
        json_array_append_new (
            ops,
            op (argv[i], flags, treeobj_create_val (eq + 1, strlen (eq + 1))));
    }
    printf ("%d\n", commit (ops, 0));
    return 0;
}

static int lookup (const char *key, int flags, json_t **val)
{
    flux_future_t *f
        = rpc ("kvs.lookup", json_pack ("{s:s s:i s:s}", "key", key, "flags",
                                        flags, "namespace", ns));
    json_t *v;

    if (flux_rpc_get_unpack (f, "{s:o}", "val", &v) < 0) {
        int e = errno;
        if (!val)
            die ("kvs.lookup", f, e);
        flux_future_destroy (f);
        errno = e;
        return -1;
    }
    if (val)
        *val = json_incref (v);
    else {
        char *s = json_dumps (v, JSON_COMPACT | JSON_SORT_KEYS);
        printf ("%s\n", s);
        free (s);
    }
    flux_future_destroy (f);
    return 0;
}

static char *get_string (const char *key)
{
    json_t *v;
    void *data;
    size_t len;

    if (lookup (key, 0, &v) < 0)
        return NULL;
    if (treeobj_decode_val (v, &data, &len) < 0) {
        json_decref (v);
        errno = EPROTO;
        return NULL;
    }
    json_decref (v);
    return data;
}

static int cmd_get (int argc, char **argv)
{
    char *s;

    if (argc == 3 && !strcmp (argv[0], "-f"))
        return lookup (argv[2], (int)strtol (argv[1], NULL, 0), NULL);
    if (argc != 1)
        return 1;
    if (!(s = get_string (argv[0]))) {
        fprintf (stderr, "kvstest: kvs.lookup: %s\n", strerror (errno));
        return errno;
    }
    printf ("%s\n", s);
    free (s);
    return 0;
}

static int cmd_loop (int n, const char *prefix)
{
    char key[256], val[32];

    for (int i = 0; i < n; i++) {
        json_t *ops = json_array ();
        snprintf (key, sizeof (key), "%s.k%d", prefix, i);
        snprintf (val, sizeof (val), "%d", i);
        json_array_append_new (
            ops, op (key, 0, treeobj_create_val (val, strlen (val))));
        snprintf (key, sizeof (key), "%s.log", prefix);
        snprintf (val, sizeof (val), "%d\n", i);
        json_array_append_new (
            ops,
            op (key, FLUX_KVS_APPEND, treeobj_create_val (val, strlen (val))));
        (void)commit (ops, 0);
        printf ("%d\n", i);
        fflush (stdout);
    }
    return 0;
}

static int cmd_appends (int n, const char *key)
{
    char val[32];

    for (int i = 1; i <= n; i++) {
        snprintf (val, sizeof (val), "%d\n", i);
        (void)commit (
            json_pack ("[o]", op (key, FLUX_KVS_APPEND,
                                  treeobj_create_val (val, strlen (val)))),
            0);
    }
    return 0;
}

static int cmd_verify (int n, const char *prefix)
{
    char key[256], val[32];
    char *s, *log, *p;
    int next = 0;

    for (int i = 0; i < n; i++) {
        snprintf (key, sizeof (key), "%s.k%d", prefix, i);
        snprintf (val, sizeof (val), "%d", i);
        if (!(s = get_string (key)) || strcmp (s, val) != 0) {
            fprintf (stderr, "kvstest: %s: %s\n", key,
                     s ? "wrong value" : strerror (errno));
            return 1;
        }
        free (s);
    }
    snprintf (key, sizeof (key), "%s.log", prefix);
    if (!(log = get_string (key))) {
        if (n == 0)
            return 0;
        fprintf (stderr, "kvstest: %s: %s\n", key, strerror (errno));
        return 1;
    }
    /* every line is the next number: 0..n-1 at least, no gap, no dup */
    for (p = log; *p; next++) {
        char *end;
        long v = strtol (p, &end, 10);
        if (end == p || *end != '\n' || v != next) {
            fprintf (stderr, "kvstest: %s: line %d is not %d\n", key, next,
                     next);
            return 1;
        }
        p = end + 1;
    }
    free (log);
    if (next < n) {
        fprintf (stderr, "kvstest: %s: %d lines, %d acknowledged\n", key, next,
                 n);
        return 1;
    }
    printf ("%d acknowledged, %d durable\n", n, next);
    return 0;
}

static int cmd_pipe (int argc, char **argv)
{
    flux_future_t *f[16];
    int n = argc / 2;

    if (argc % 2 || n < 1 || n > 16) {
        fprintf (stderr, "kvstest: pipe: 1 to 16 TOPIC JSON pairs\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        if (!(f[i] = flux_rpc (h, argv[2 * i], argv[2 * i + 1], nodeid, 0)))
            die (argv[2 * i], NULL, errno);
    }
    for (int i = 0; i < n; i++) {
        if (flux_rpc_get (f[i], NULL) < 0)
            printf ("%s errno %d\n", argv[2 * i], errno);
        else
            printf ("%s ok\n", argv[2 * i]);
        flux_future_destroy (f[i]);
    }
    return 0;
}

/* Send a commit of KEY=1 with flags on hh; the future. */
static flux_future_t *race_send (flux_t *hh, const char *key, int flags)
{
    json_t *ops = json_pack ("[o]", op (key, 0, treeobj_create_val ("1", 1)));
    flux_future_t *f;

    if (!ops
        || !(f = flux_rpc_pack (hh, "kvs.commit", nodeid, 0, "{s:s s:i s:o}",
                                "namespace", ns, "flags", flags, "ops", ops)))
        die ("kvs.commit", NULL, errno ? errno : ENOMEM);
    return f;
}

static int race_seq (flux_future_t *f)
{
    int seq;

    if (flux_rpc_get_unpack (f, "{s:i}", "rootseq", &seq) < 0)
        die ("kvs.commit", f, errno);
    flux_future_destroy (f);
    return seq;
}

static int cmd_race (int n)
{
    flux_t *ha, *hb, *hc;
    flux_future_t **fa, *fbd, *fbl, *fc;
    char key[64];
    int last = 0, bd, bl, c;

    if (n < 1 || n > 10000 || !(fa = calloc (n, sizeof (*fa))))
        return 1;
    if (!(ha = flux_open (NULL, 0)) || !(hb = flux_open (NULL, 0))
        || !(hc = flux_open (NULL, 0)))
        die ("flux_open", NULL, errno);
    for (int i = 0; i < n; i++) {
        snprintf (key, sizeof (key), "race.d%d", i);
        fa[i] = race_send (ha, key, FLUX_KVS_NO_MERGE);
    }
    fbd = race_send (hb, "race.bd", 0);
    fbl = race_send (hb, "race.bl", FLUX_KVS_LAZY);
    fc = race_send (hc, "race.cl", FLUX_KVS_LAZY);
    for (int i = 0; i < n; i++)
        last = race_seq (fa[i]);
    bd = race_seq (fbd);
    bl = race_seq (fbl);
    c = race_seq (fc);
    printf ("C %s\n", c < last ? "ahead" : "behind");
    printf ("B %s\n", bl >= bd ? "kept" : "reordered");
    free (fa);
    flux_close (ha);
    flux_close (hb);
    flux_close (hc);
    return 0;
}

static int cmd_store (const char *text)
{
    flux_future_t *f;
    const char *ref;

    if (!(f = content_store (h, text, strlen (text), 0))
        || content_store_get_blobref (f, "sha1", &ref) < 0)
        die ("content.store", f, errno);
    printf ("%s\n", ref);
    flux_future_destroy (f);
    return 0;
}

int main (int argc, char **argv)
{
    int c, rc = 1;
    const char *cmd;

    while ((c = getopt (argc, argv, "+n:r:g:c:")) != -1) {
        if (c == 'n')
            ns = optarg;
        else if (c == 'r')
            nodeid = strtoul (optarg, NULL, 10);
        else if (c == 'g')
            guest = strtol (optarg, NULL, 10);
        else if (c == 'c')
            commit_flags = (int)strtol (optarg, NULL, 0);
        else
            return 1;
    }
    if (optind >= argc) {
        fprintf (stderr, "Usage: kvstest [-n NS] [-r RANK] [-g UID] [-c FLAGS] "
                         "CMD...\n");
        return 1;
    }
    if (!(h = flux_open (NULL, 0)))
        die ("flux_open", NULL, errno);
    cmd = argv[optind++];
    argc -= optind;
    argv += optind;
    if (!strcmp (cmd, "put"))
        rc = cmd_put (argc, argv, 0);
    else if (!strcmp (cmd, "append"))
        rc = cmd_put (argc, argv, FLUX_KVS_APPEND);
    else if (!strcmp (cmd, "mkdir") && argc == 1)
        printf ("%d\n", commit (json_pack ("[o]", op (argv[0], 0,
                                                      treeobj_create_dir ())),
                                0)),
            rc = 0;
    else if (!strcmp (cmd, "unlink") && argc == 1)
        printf ("%d\n", commit (json_pack ("[o]", op (argv[0], 0, NULL)), 0)),
            rc = 0;
    else if (!strcmp (cmd, "link") && (argc == 2 || argc == 3))
        printf ("%d\n",
                commit (json_pack ("[o]", op (argv[0], 0,
                                              treeobj_create_symlink (
                                                  argc == 3 ? argv[2] : NULL,
                                                  argv[1]))),
                        0)),
            rc = 0;
    else if (!strcmp (cmd, "get"))
        rc = cmd_get (argc, argv);
    else if (!strcmp (cmd, "version") && argc == 0) {
        flux_future_t *f
            = rpc ("kvs.getroot",
                   json_pack ("{s:s s:i}", "namespace", ns, "flags", 0));
        int seq;
        if (flux_rpc_get_unpack (f, "{s:i}", "rootseq", &seq) < 0)
            die ("kvs.getroot", f, errno);
        printf ("%d\n", seq);
        flux_future_destroy (f);
        rc = 0;
    }
    else if (!strcmp (cmd, "wait") && argc == 1) {
        flux_future_t *f = rpc ("kvs.wait-version",
                                json_pack ("{s:i s:s}", "rootseq",
                                           atoi (argv[0]), "namespace", ns));
        if (flux_rpc_get (f, NULL) < 0)
            die ("kvs.wait-version", f, errno);
        flux_future_destroy (f);
        rc = 0;
    }
    else if (!strcmp (cmd, "loop") && argc == 2)
        rc = cmd_loop (atoi (argv[0]), argv[1]);
    else if (!strcmp (cmd, "appends") && argc == 2)
        rc = cmd_appends (atoi (argv[0]), argv[1]);
    else if (!strcmp (cmd, "verify") && argc == 2)
        rc = cmd_verify (atoi (argv[0]), argv[1]);
    else if (!strcmp (cmd, "rpc") && (argc == 1 || argc == 2)) {
        json_t *o = NULL;
        flux_future_t *f;
        const char *s;
        if (argc == 2 && !(o = json_loads (argv[1], 0, NULL))) {
            /* not JSON: send the text as is */
            flux_msg_t *msg = flux_request_encode (argv[0], argv[1]);
            if (!msg || !(f = flux_rpc_message (h, msg, nodeid, 0)))
                die (argv[0], NULL, errno);
            flux_msg_decref (msg);
        }
        else
            f = rpc (argv[0], o);
        if (flux_rpc_get (f, &s) < 0)
            die (argv[0], f, errno);
        printf ("%s\n", s ? s : "");
        flux_future_destroy (f);
        rc = 0;
    }
    else if (!strcmp (cmd, "pipe"))
        rc = cmd_pipe (argc, argv);
    else if (!strcmp (cmd, "race") && argc == 1)
        rc = cmd_race (atoi (argv[0]));
    else if (!strcmp (cmd, "store") && argc == 1)
        rc = cmd_store (argv[0]);
    else
        fprintf (stderr, "kvstest: unknown command or arguments: %s\n", cmd);
    flux_close (h);
    return rc;
}
