/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */

/* libFuzzer target for the parsers of client-supplied text in
 * src/common (scripts/fuzz.sh builds it).
 *
 * The first input byte, modulo NPARSERS, picks the parser; the rest is
 * its input, given to string APIs as a NUL-terminated copy (so they see
 * it up to the first NUL) and to length-taking APIs as an exact-size
 * heap copy (so that ASAN catches a read past the end):
 *   0  jobspec_parse (JSON, or YAML when the text does not start '{')
 *   1  jobspec_yaml_to_json, then jobspec_parse_json
 *   2  sign_unwrap of J (mechanism none)
 *   3  treeobj_decode / treeobj_decodeb, and jsonparse against json_loadb
 *   4  kvs_txn: "KEY\nTREEOBJ" through the client's put operations
 *   5  eventlog_decode, eventlog_entry_decode and the incremental parser
 *   6  rlist_from_R (Rv1 JSON)
 *   7  idset_decode / idset_decode_ex
 *   8  hostlist_decode
 *   9  fsd_parse_duration
 *  10  fluid_decode_type and fluid_decode (every RFC 19 form)
 *  11  toml_parse (libutil/toml.h), on the exact-size copy
 * Whatever decodes is encoded again where there is an encoder, and
 * checked where the headers promise it: a canonical encoding decodes to
 * the same value and encodes to the same text; two decoders documented
 * to accept the same input agree.  A failed check aborts, which libFuzzer
 * reports as a crash.  Everything is freed: leaks are findings too.
 * The seeds in corpus/ are valid inputs, a few per parser, each file's
 * first byte its parser number.
 */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "libeventlog/eventlog.h"
#include "libflux/jsonparse.h"
#include "libhostlist/hostlist.h"
#include "libidset/idset.h"
#include "libjob/jobspec.h"
#include "libjob/sign.h"
#include "libkvs/kvs.h"
#include "libkvs/kvs_private.h"
#include "libkvs/kvs_util.h"
#include "libkvs/treeobj.h"
#include "librlist/rlist.h"
#include "libutil/fluid.h"
#include "libutil/fsd.h"
#include "libutil/toml.h"

/* work on more ids, hosts or ranks than this is skipped (time, memory) */
#define MAX_EXPAND 100000

static void check (bool cond, const char *what)
{
    if (!cond) {
        fprintf (stderr, "parse_fuzz: check failed: %s\n", what);
        abort ();
    }
}

/* ---- libjob ---- */

/* What any jobspec that validates must look like. */
static void jobspec_check (const struct jobspec *js)
{
    check (js->name != NULL && js->command != NULL && js->jobspec != NULL,
           "jobspec has name, command and the object");
    check (js->nslots >= 1 && js->cores_per_slot >= 1 && js->gpus_per_slot >= 0,
           "jobspec counts are positive");
    check (js->ntasks >= 1 && js->ntasks <= js->nslots,
           "jobspec has 1 to nslots tasks");
    check (js->nnodes == 0 ? js->slots_per_node == -1
                           : js->nslots == js->nnodes * js->slots_per_node,
           "jobspec nslots is nnodes times slots_per_node");
    check (isfinite (js->duration) && js->duration >= 0,
           "jobspec duration >= 0");
}

/* A jobspec that validates is stored as JSON text: that text must
 * validate again, to the same summary. */
static void jobspec_again (const struct jobspec *js)
{
    flux_error_t error;
    struct jobspec *js2;
    char *s;

    jobspec_check (js);
    check ((s = json_dumps (js->jobspec, JSON_COMPACT)) != NULL,
           "jobspec encodes");
    js2 = jobspec_parse (s, &error);
    if (!js2)
        fprintf (stderr, "parse_fuzz: %s\n", error.text);
    check (js2 != NULL, "encoded jobspec parses again");
    check (js2->nslots == js->nslots && js2->ntasks == js->ntasks
               && js2->nnodes == js->nnodes
               && js2->cores_per_slot == js->cores_per_slot
               && js2->gpus_per_slot == js->gpus_per_slot
               && js2->duration == js->duration
               && !strcmp (js2->name, js->name),
           "encoded jobspec parses to the same summary");
    jobspec_destroy (js2);
    free (s);
}

static void fuzz_jobspec (const char *text)
{
    flux_error_t error;
    struct jobspec *js;

    if ((js = jobspec_parse (text, &error))) {
        jobspec_again (js);
        jobspec_destroy (js);
    }
    else
        check (errno == EINVAL || errno == ENOMEM || errno == ENOSYS,
               "jobspec_parse error is EINVAL");
}

static void fuzz_yaml (const char *text)
{
    flux_error_t error;
    struct jobspec *js;
    json_t *o;

    if (!(o = jobspec_yaml_to_json (text, &error))) {
        check (errno == EINVAL || errno == ENOMEM || errno == ENOSYS,
               "jobspec_yaml_to_json error is EINVAL");
        return;
    }
    if ((js = jobspec_parse_json (o, &error))) {
        jobspec_again (js);
        jobspec_destroy (js);
    }
    json_decref (o);
}

static void fuzz_sign (const char *J)
{
    flux_error_t error;
    const char *mech;
    char *payload, *payload2, *J2;
    size_t len, len2;
    uint32_t uid, uid2;

    if (sign_unwrap (J, &payload, &len, &uid, &mech, &error) == 0) {
        check (strlen (payload) == len && !strcmp (mech, "none"),
               "unwrapped payload has its length, mechanism none");
        check ((J2 = sign_none_wrap (payload, len, uid)) != NULL,
               "unwrapped payload wraps");
        check (sign_unwrap (J2, &payload2, &len2, &uid2, &mech, &error) == 0,
               "rewrapped J unwraps");
        check (len2 == len && !memcmp (payload2, payload, len) && uid2 == uid,
               "rewrapped J unwraps to the same payload and userid");
        free (payload2);
        free (J2);
        free (payload);
    }
    else
        check (errno == EINVAL || errno == ENOMEM, "sign_unwrap error");
    /* the input as a payload */
    check ((J2 = sign_none_wrap (J, strlen (J), 42)) != NULL, "wrap");
    check (sign_unwrap (J2, &payload, &len, &uid, &mech, &error) == 0
               && len == strlen (J) && !strcmp (payload, J) && uid == 42,
           "wrapped J unwraps to the payload");
    free (payload);
    free (J2);
}

/* ---- libkvs ---- */

/* jsonparse builds what json_loadb builds and fails where it fails.
 * Not with NUL bytes: jansson 2.14 skips one after a number or a literal
 * ("[0\0]" loads as [0]), jsonparse rejects every NUL outside strings. */
static void jsonparse_diff (const char *buf, size_t size)
{
    json_t *a, *b;
    char err[128];

    if (memchr (buf, '\0', size))
        return;
    a = jsonparse_ex (buf, size, JSON_REJECT_DUPLICATES, err, sizeof (err));
    b = json_loadb (buf, size, JSON_REJECT_DUPLICATES, NULL);
    check ((a == NULL) == (b == NULL),
           "jsonparse accepts what json_loadb accepts");
    check (!a || json_equal (a, b), "jsonparse builds what json_loadb builds");
    json_decref (a);
    json_decref (b);
}

/* Every accessor of a valid tree object works. */
static void treeobj_touch (const json_t *o)
{
    const char *type = treeobj_get_type (o);
    char blobref[128];
    json_t *cpy;
    int count;

    check (type != NULL && treeobj_get_data (o) != NULL, "type and data");
    check (treeobj_hash ("sha1", o, blobref, sizeof (blobref)) == 0
               && treeobj_hash ("sha256", o, blobref, sizeof (blobref)) == 0,
           "treeobj_hash");
    if (!strcmp (type, "hdir")) {
        int size = treeobj_hdir_size (o);
        check (size >= 1 && treeobj_hdir_index (o, "a") >= 0
                   && treeobj_hdir_index (o, "a") < size
                   && treeobj_hdir_get_buckets (o) != NULL,
               "hdir accessors");
        for (int i = 0; i < size; i++)
            check (treeobj_hdir_get_bucket (o, i) != NULL || errno == ENOENT,
                   "hdir bucket");
    }
    else {
        count = treeobj_get_count (o);
        check (count >= 0, "treeobj_get_count");
        if (!strcmp (type, "val")) {
            void *data;
            size_t len;
            check (treeobj_decode_val (o, &data, &len) == 0, "decode_val");
            free (data);
        }
        else if (!strcmp (type, "valref") || !strcmp (type, "dirref")) {
            check (count >= 1, "a ref has a blobref");
            for (int i = 0; i < count; i++)
                check (treeobj_get_blobref (o, i) != NULL, "get_blobref");
        }
        else if (!strcmp (type, "symlink")) {
            const char *ns, *target;
            check (treeobj_get_symlink (o, &ns, &target) == 0 && target
                       && *target,
                   "get_symlink");
        }
        else if (!strcmp (type, "dir")) {
            const char *name;
            json_t *v;
            json_object_foreach (treeobj_get_data (o), name, v)
                check (treeobj_get_entry (o, name) == v, "get_entry");
        }
    }
    check ((cpy = treeobj_copy (o)) != NULL && json_equal (cpy, o)
               && treeobj_validate (cpy) == 0,
           "treeobj_copy");
    json_decref (cpy);
    check ((cpy = treeobj_deep_copy (o)) != NULL && json_equal (cpy, o),
           "treeobj_deep_copy");
    json_decref (cpy);
}

static void fuzz_treeobj (const char *buf, size_t size, const char *text)
{
    json_t *a, *b, *c;
    char *s, *s2;

    jsonparse_diff (buf, size);
    a = treeobj_decode (text);
    b = treeobj_decodeb (buf, size);
    if (strlen (text) == size)
        check ((a == NULL) == (b == NULL) && (!a || json_equal (a, b)),
               "treeobj_decode and treeobj_decodeb agree");
    if (a) {
        check (treeobj_validate (a) == 0, "decoded treeobj validates");
        treeobj_touch (a);
        /* the encoding is canonical */
        check ((s = treeobj_encode (a)) != NULL, "treeobj_encode");
        check ((c = treeobj_decode (s)) != NULL && json_equal (a, c),
               "encoded treeobj decodes to the same object");
        check ((s2 = treeobj_encode (c)) != NULL && !strcmp (s, s2),
               "treeobj encoding is canonical");
        free (s2);
        free (s);
        json_decref (c);
    }
    json_decref (a);
    json_decref (b);
}

/* Each op of a transaction is {key, flags, dirent: null or valid}. */
static void ops_check (const json_t *ops)
{
    size_t i;
    json_t *op, *dirent;

    check (json_is_array (ops), "ops is an array");
    json_array_foreach (ops, i, op)
    {
        const char *key = json_string_value (json_object_get (op, "key"));
        check (key && *key && strcmp (key, ".") != 0, "op has a key");
        dirent = json_object_get (op, "dirent");
        check (json_is_null (dirent) || treeobj_validate (dirent) == 0,
               "op dirent is null or valid");
    }
}

static void fuzz_kvstxn (const char *text)
{
    const char *nl = strchr (text, '\n');
    const char *value = nl ? nl + 1 : "";
    char *key = strndup (text, nl ? (size_t)(nl - text) : strlen (text));
    char *norm;
    flux_kvs_txn_t *txn = NULL;
    json_t *ops;
    bool dir;
    size_t n;

    check (key != NULL && (txn = flux_kvs_txn_create ()) != NULL, "txn");
    check ((norm = kvs_util_normalize_key (key, &dir)) != NULL
               && !strstr (norm, "..")
               && (!strcmp (norm, ".")
                   || (norm[0] != '.' && norm[strlen (norm) - 1] != '.')),
           "normalized key");
    n = json_array_size (kvs_txn__ops (txn));
    if (flux_kvs_txn_put_treeobj (txn, 0, key, value) == 0)
        check (json_array_size (kvs_txn__ops (txn)) == n + 1, "op added");
    else
        check (errno == EINVAL && json_array_size (kvs_txn__ops (txn)) == n,
               "failed put_treeobj is EINVAL and leaves txn unchanged");
    (void)flux_kvs_txn_put (txn, 0, key, value);
    (void)flux_kvs_txn_put (txn, FLUX_KVS_APPEND, key, value);
    (void)flux_kvs_txn_put (txn, FLUX_KVS_APPEND, key, key);
    (void)flux_kvs_txn_put (txn, FLUX_KVS_APPEND, value, key);
    (void)flux_kvs_txn_symlink (txn, 0, key, NULL, value);
    (void)flux_kvs_txn_put_raw (txn, FLUX_KVS_APPEND, value, text,
                                strlen (text));
    ops_check (kvs_txn__ops (txn));
    check ((ops = kvs_txn__compact (txn)) != NULL, "compact");
    ops_check (ops);
    check (json_array_size (ops) <= json_array_size (kvs_txn__ops (txn)),
           "compact does not add ops");
    json_decref (ops);
    flux_kvs_txn_destroy (txn);
    free (norm);
    free (key);
}

/* ---- libeventlog ---- */

static void entry_same (const json_t *a, const json_t *b)
{
    double ta = 0, tb = 0;
    const char *na = NULL, *nb = NULL;
    json_t *ca = NULL, *cb = NULL;

    check (eventlog_entry_parse (a, &ta, &na, &ca) == 0
               && eventlog_entry_parse (b, &tb, &nb, &cb) == 0,
           "entries parse");
    check (ta == tb && !strcmp (na, nb)
               && ((!ca && !cb) || (ca && cb && json_equal (ca, cb))),
           "entries are the same");
}

static void fuzz_eventlog (const char *buf, size_t size, const char *text)
{
    json_t *log, *log2, *entry;
    eventlog_parser_t *p;
    char *s, *s2, *acc = NULL;
    size_t i = 0, off = 0, k;

    /* the first line alone, as a KVS append would check it */
    if ((entry = eventlog_entry_decode (text))) {
        check ((s = eventlog_entry_encode (entry)) != NULL, "entry encodes");
        check (eventlog_append (&acc, text) == 0, "eventlog_append");
        free (acc);
        free (s);
        json_decref (entry);
    }
    else
        check (errno == EPROTO || errno == ENOMEM, "entry_decode is EPROTO");

    log = eventlog_decode (text);
    if (!log)
        check (errno == EPROTO || errno == ENOMEM, "eventlog_decode is EPROTO");

    /* the same bytes in chunks of 1, 2, 3... bytes */
    check ((p = eventlog_parser_create ()) != NULL, "parser");
    for (size_t chunk = 1; off < size; chunk++) {
        size_t n = chunk < size - off ? chunk : size - off;
        check (eventlog_parser_feed (p, buf + off, n) == 0, "feed");
        off += n;
        while ((entry = eventlog_parser_next (p)) || errno != EAGAIN) {
            if (entry && log && strlen (text) == size) {
                check (i < json_array_size (log), "parser: no extra entry");
                entry_same (entry, json_array_get (log, i));
            }
            if (!entry)
                check (errno == EPROTO || errno == ENOMEM,
                       "parser error is EPROTO");
            json_decref (entry);
            i++;
        }
    }
    if (log && strlen (text) == size)
        check (i == json_array_size (log) && eventlog_parser_pending (p) == 0,
               "the parser returns the entries eventlog_decode does");
    eventlog_parser_destroy (p);
    if (!log)
        return;

    /* encode, decode, encode: the same entries, then the same text */
    check ((s = eventlog_encode (log)) != NULL, "eventlog_encode");
    check ((log2 = eventlog_decode (s)) != NULL
               && json_array_size (log2) == json_array_size (log),
           "encoded eventlog decodes");
    json_array_foreach (log, k, entry)
        entry_same (entry, json_array_get (log2, k));
    check ((s2 = eventlog_encode (log2)) != NULL && !strcmp (s, s2),
           "eventlog encoding is canonical");
    free (s2);
    free (s);
    json_decref (log2);
    json_decref (log);
}

/* ---- librlist ---- */

/* How many nodes rlist_from_R (R) builds at most: each rank of R_lite up
 * to the entry that takes it past RLIST_MAX_RANKS. */
static size_t R_cost (json_t *R)
{
    json_t *lite = NULL, *entry;
    size_t i, built = 0;

    (void)json_unpack (R, "{s:{s:o}}", "execution", "R_lite", &lite);
    json_array_foreach (lite, i, entry)
    {
        const char *ranks;
        struct idset *ids;
        size_t n;

        if (json_unpack (entry, "{s:s}", "rank", &ranks) < 0
            || !(ids = idset_decode (ranks)))
            continue;
        n = idset_count (ids);
        idset_destroy (ids);
        if (n > RLIST_MAX_RANKS - built)
            break;
        built += n;
    }
    return built;
}

static void fuzz_rlist (const char *text)
{
    flux_error_t error;
    struct rlist *rl, *rl2;
    json_t *R, *R2, *R3;
    char *s;

    if (!(R = json_loads (text, 0, NULL)))
        return;
    /* a million ranks are valid, but take seconds and a gigabyte here */
    if (R_cost (R) > MAX_EXPAND) {
        json_decref (R);
        return;
    }
    if (!(rl = rlist_from_R (R, &error))) {
        check (errno == EINVAL || errno == ENOMEM, "rlist_from_R error");
        json_decref (R);
        return;
    }
    check ((s = rlist_dumps (rl)) != NULL, "rlist_dumps");
    free (s);
    check ((s = rlist_ranks (rl)) != NULL, "rlist_ranks");
    free (s);
    check ((R2 = rlist_to_R (rl)) != NULL, "rlist_to_R");
    rl2 = rlist_from_R (R2, &error);
    if (!rl2)
        fprintf (stderr, "parse_fuzz: %s\n", error.text);
    check (rl2 != NULL, "rlist_to_R output is valid R");
    check (rlist_nnodes (rl2) == rlist_nnodes (rl)
               && rlist_count_cores (rl2) == rlist_count_cores (rl)
               && rlist_count_gpus (rl2) == rlist_count_gpus (rl),
           "R round trip keeps the resources");
    check ((R3 = rlist_to_R (rl2)) != NULL && json_equal (R2, R3),
           "rlist_to_R is canonical");
    json_decref (R3);
    rlist_destroy (rl2);
    json_decref (R2);
    rlist_destroy (rl);
    json_decref (R);
}

/* ---- libidset, libhostlist ---- */

static void idset_again (const struct idset *set, int flags)
{
    struct idset *set2;
    char *s, *s2;

    check ((s = idset_encode (set, flags)) != NULL, "idset_encode");
    check ((set2 = idset_decode (s)) != NULL && idset_equal (set, set2),
           "encoded idset decodes to the same set");
    check ((s2 = idset_encode (set2, flags)) != NULL && !strcmp (s, s2),
           "idset encoding is canonical");
    free (s2);
    free (s);
    idset_destroy (set2);
}

static void fuzz_idset (const char *buf, size_t size, const char *text)
{
    struct idset *a, *b;
    idset_error_t error;

    a = idset_decode (text);
    b = idset_decode_ex (buf, size, -1, 0, &error);
    if (strlen (text) == size)
        check ((a == NULL) == (b == NULL) && (!a || idset_equal (a, b)),
               "idset_decode and idset_decode_ex agree");
    if (a) {
        size_t count = idset_count (a);
        check (count == 0 || idset_universe_size (a) > idset_last (a),
               "universe holds the last id");
        idset_again (a, IDSET_FLAG_RANGE);
        idset_again (a, IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS);
        if (count <= MAX_EXPAND)
            idset_again (a, 0);
    }
    if (b)
        check (idset_count (b) == 0
                   || idset_universe_size (b) == (size_t)idset_last (b) + 1,
               "decode_ex with size -1 fits the universe");
    idset_destroy (a);
    idset_destroy (b);
}

static void fuzz_hostlist (const char *text)
{
    struct hostlist *hl, *hl2;
    const char *h;
    char *s, *s2;
    int count, i = 0;

    if (!(hl = hostlist_decode (text))) {
        check (errno == EINVAL || errno == ERANGE || errno == ENOMEM,
               "hostlist_decode error");
        return;
    }
    count = hostlist_count (hl);
    check ((s = hostlist_encode (hl)) != NULL, "hostlist_encode");
    check ((hl2 = hostlist_decode (s)) != NULL && hostlist_count (hl2) == count,
           "encoded hostlist decodes to as many hosts");
    check ((s2 = hostlist_encode (hl2)) != NULL && !strcmp (s, s2),
           "hostlist encoding is canonical");
    free (s2);
    /* the first hosts, two ways */
    for (h = hostlist_first (hl); h && i < 64; h = hostlist_next (hl), i++) {
        char *name = strdup (h);
        const char *h2 = hostlist_nth (hl2, i);
        check (name && h2 && !strcmp (name, h2), "nth is the i-th host");
        check (hostlist_find (hl2, name) >= 0 && hostlist_find (hl2, name) <= i,
               "find a host");
        free (name);
    }
    check (i == (count < 64 ? count : 64), "iteration sees every host");
    if (count <= MAX_EXPAND / 10) {
        check (hostlist_uniq (hl2) == 0 && hostlist_count (hl2) <= count,
               "uniq");
        check (hostlist_sort (hl) == 0 && hostlist_count (hl) == count, "sort");
        check (hostlist_delete (hl, s) == count && hostlist_count (hl) == 0,
               "deleting every host empties the list");
    }
    free (s);
    hostlist_destroy (hl2);
    hostlist_destroy (hl);
}

/* ---- libutil ---- */

static void fuzz_fsd (const char *text)
{
    static const int precisions[] = {0, 2, 15};
    char buf[64];
    double d, d2;

    if (fsd_parse_duration (text, &d) < 0) {
        check (errno == EINVAL, "fsd_parse_duration error is EINVAL");
        return;
    }
    check (!isnan (d) && d >= 0 && !signbit (d), "duration >= 0");
    /* what fsd_format_duration writes is a valid FSD string */
    for (size_t i = 0; i < sizeof (precisions) / sizeof (precisions[0]); i++) {
        check (fsd_format_duration_ex (buf, sizeof (buf), d, precisions[i]) == 0
                   && fsd_parse_duration (buf, &d2) == 0,
               "formatted duration parses");
        check (isinf (d) == isinf (d2), "formatted duration keeps infinity");
    }
}

static void fluid_again (fluid_t v)
{
    char buf[FLUID_STRING_MAX];
    enum fluid_string_type t, t2;
    fluid_t w;

    for (t = FLUID_STRING_DEC; t <= FLUID_STRING_F58_PLAIN; t++) {
        check (fluid_encode (buf, sizeof (buf), v, t) == 0, "fluid_encode");
        check (fluid_decode (buf, &w, t) == 0 && w == v,
               "encoded fluid decodes strictly to the same value");
        check (fluid_decode_type (buf, &w, &t2) == 0 && w == v && t2 == t,
               "encoded fluid decodes to the same value and form");
    }
}

static void fuzz_fluid (const char *text)
{
    enum fluid_string_type t, t2;
    fluid_t v, w;

    if (fluid_decode_type (text, &v, &t) == 0) {
        check (t >= FLUID_STRING_DEC && t <= FLUID_STRING_F58_PLAIN,
               "known form");
        check (fluid_parse (text, &w) == 0 && w == v, "fluid_parse agrees");
        fluid_again (v);
    }
    else
        check (errno == EINVAL, "fluid_decode_type error is EINVAL");
    for (t = FLUID_STRING_DEC; t <= FLUID_STRING_F58_PLAIN; t++) {
        if (fluid_decode (text, &v, t) == 0) {
            /* a strict decode is what the general one finds */
            check (fluid_decode_type (text, &w, &t2) == 0 && w == v && t2 == t,
                   "strict decode agrees with fluid_decode_type");
            fluid_again (v);
        }
    }
}

/* ---- libutil/toml ---- */

/* What parses is an object, the same again; an error has a position in
 * the text and a reason. */
static void fuzz_toml (const char *buf, size_t size)
{
    toml_error_t error;
    json_t *o, *o2;
    char *s;

    if ((o = toml_parse (buf, size, &error))) {
        check (json_is_object (o), "toml_parse returns an object");
        check ((s = json_dumps (o, JSON_COMPACT)) != NULL,
               "toml result encodes");
        check ((o2 = toml_parse (buf, size, NULL)) != NULL
                   && json_equal (o, o2),
               "toml_parse parses the same text the same way");
        free (s);
        json_decref (o2);
        json_decref (o);
    }
    else {
        check (errno == EINVAL || errno == ENOMEM, "toml_parse errno");
        check (errno != EINVAL
                   || (error.line >= 1 && error.column >= 1
                       && error.text[0] != '\0'),
               "toml_parse error has a line, a column and a reason");
    }
}

/* ---- dispatch ---- */

enum {
    P_JOBSPEC,
    P_YAML,
    P_SIGN,
    P_TREEOBJ,
    P_KVSTXN,
    P_EVENTLOG,
    P_RLIST,
    P_IDSET,
    P_HOSTLIST,
    P_FSD,
    P_FLUID,
    P_TOML,
    NPARSERS,
};

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *buf, *text;

    if (size < 1)
        return 0;
    size--;
    /* exact size, for the length-taking APIs (malloc (0) may be NULL) */
    check ((buf = malloc (size ? size : 1)) != NULL, "malloc");
    check ((text = malloc (size + 1)) != NULL, "malloc");
    memcpy (buf, data + 1, size);
    memcpy (text, data + 1, size);
    text[size] = '\0';

    switch (data[0] % NPARSERS) {
        case P_JOBSPEC:
            fuzz_jobspec (text);
            break;
        case P_YAML:
            fuzz_yaml (text);
            break;
        case P_SIGN:
            fuzz_sign (text);
            break;
        case P_TREEOBJ:
            fuzz_treeobj (buf, size, text);
            break;
        case P_KVSTXN:
            fuzz_kvstxn (text);
            break;
        case P_EVENTLOG:
            fuzz_eventlog (buf, size, text);
            break;
        case P_RLIST:
            fuzz_rlist (text);
            break;
        case P_IDSET:
            fuzz_idset (buf, size, text);
            break;
        case P_HOSTLIST:
            fuzz_hostlist (text);
            break;
        case P_FSD:
            fuzz_fsd (text);
            break;
        case P_FLUID:
            fuzz_fluid (text);
            break;
        case P_TOML:
            fuzz_toml (buf, size);
            break;
    }
    free (text);
    free (buf);
    return 0;
}
