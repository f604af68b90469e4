/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* content.c - `flux content`: load and store blobs in the content store
 * (RFC 10), flush and drop the cache, read and write the KVS root
 * checkpoint (PROTOCOLS.md 4).  Blobrefs use the instance's hash type
 * (the content.hash attribute, sha1 if unset).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libcontent/blobref.h"
#include "libcontent/content.h"

#include "cmdutil.h"

static const char usage[] = "Usage: flux content COMMAND [OPTIONS] [ARGS...]\n"
                            "Access the content store.\n";

static const char load_usage[]
    = "Usage: flux content load [OPTIONS] BLOBREF\n"
      "Write the blob BLOBREF to standard output.\n"
      "  -b, --bypass-cache Load from the backing store directly\n"
      "  -r, --rank=N       Ask the content service of broker rank N\n"
      "  -h, --help         Display this message\n";

static const char store_usage[]
    = "Usage: flux content store [OPTIONS]\n"
      "Store standard input as one blob and print its blobref.\n"
      "  -b, --bypass-cache Store to the backing store directly\n"
      "  -r, --rank=N       Ask the content service of broker rank N\n"
      "  -h, --help         Display this message\n";

static const char flush_usage[]
    = "Usage: flux content flush [OPTIONS]\n"
      "Wait until every blob stored so far has reached its destination\n"
      "(rank 0: the backing store; other ranks: rank 0).\n"
      "  -r, --rank=N       Flush broker rank N (default: this broker)\n"
      "  -h, --help         Display this message\n";

static const char dropcache_usage[]
    = "Usage: flux content dropcache [OPTIONS]\n"
      "Drop the cached blobs that can be loaded again.\n"
      "  -r, --rank=N       Drop the cache of broker rank N\n"
      "  -h, --help         Display this message\n";

static const char checkpoint_usage[]
    = "Usage: flux content checkpoint get [--json]\n"
      "       flux content checkpoint put ROOTREF SEQUENCE\n"
      "Print the KVS root checkpoint (\"ROOTREF SEQUENCE\", or the whole\n"
      "object with --json), or save a new one.\n"
      "  -j, --json         get: print the checkpoint object as JSON\n"
      "  -h, --help         Display this message\n";

static int cmd_content_load (int argc, char **argv);
static int cmd_content_store (int argc, char **argv);
static int cmd_content_flush (int argc, char **argv);
static int cmd_content_dropcache (int argc, char **argv);
static int cmd_content_checkpoint (int argc, char **argv);

const struct builtin builtin_content = {
    .name = "content",
    .summary = "Access the content store",
    .usage = usage,
    .main = cmd_content,
};

static const struct builtin member_load = {
    .name = "load",
    .summary = "Write a blob to standard output",
    .usage = load_usage,
    .main = cmd_content_load,
};

static const struct builtin member_store = {
    .name = "store",
    .summary = "Store standard input and print its blobref",
    .usage = store_usage,
    .main = cmd_content_store,
};

static const struct builtin member_flush = {
    .name = "flush",
    .summary = "Wait until stored blobs are saved",
    .usage = flush_usage,
    .main = cmd_content_flush,
};

static const struct builtin member_dropcache = {
    .name = "dropcache",
    .summary = "Drop clean blobs from the cache",
    .usage = dropcache_usage,
    .main = cmd_content_dropcache,
};

static const struct builtin member_checkpoint = {
    .name = "checkpoint",
    .summary = "Get or put the KVS root checkpoint",
    .usage = checkpoint_usage,
    .main = cmd_content_checkpoint,
};

static const struct builtin *const members[] = {
    &member_load,      &member_store,      &member_flush,
    &member_dropcache, &member_checkpoint, NULL,
};

int cmd_content (int argc, char **argv)
{
    return cmd_run_group (&builtin_content, members, argc, argv);
}

static const struct option rank_longopts[] = {
    {"bypass-cache", no_argument, NULL, 'b'},
    {"rank", required_argument, NULL, 'r'},
    CMD_OPT_HELP,
    {NULL, 0, NULL, 0},
};

/* Die with the service's error text, or "what: strerror" without one. */
static void die_rpc (const char *what, flux_future_t *f)
{
    int errnum = errno;
    const char *text = f ? flux_future_error_string (f) : NULL;

    if (text)
        cmd_die ("%s", text);
    cmd_die ("%s: %s", what, strerror (errnum));
}

static const char *hashtype_of (flux_t *h)
{
    const char *s = flux_attr_get (h, "content.hash");
    return s ? s : "sha1";
}

static int cmd_content_load (int argc, char **argv)
{
    uint32_t nodeid = FLUX_NODEID_ANY;
    bool bypass = false;
    char hash[BLOBREF_MAX_DIGEST_SIZE];
    const void *data;
    size_t len;
    int c, hashlen;
    flux_future_t *f;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "br:", rank_longopts)) != -1) {
        if (c == 'b')
            bypass = true;
        if (c == 'r')
            nodeid = (uint32_t)cmd_parse_long ("--rank", optarg, 0, INT32_MAX);
    }
    if (optind != argc - 1)
        cmd_usage_error ("expected one BLOBREF");
    if ((hashlen = blobref_strtohash (argv[optind], hash, sizeof (hash))) < 0)
        cmd_die ("%s: not a valid blobref", argv[optind]);
    h = cmd_open ();
    f = flux_rpc_raw (h, bypass ? "content-backing.load" : "content.load", hash,
                      hashlen, nodeid, 0);
    if (!f || content_load_get (f, &data, &len) < 0)
        die_rpc (argv[optind], f);
    if (len > 0 && fwrite (data, 1, len, stdout) != len)
        cmd_die ("write: %s", strerror (errno));
    if (fflush (stdout) != 0)
        cmd_die ("write: %s", strerror (errno));
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

static int cmd_content_store (int argc, char **argv)
{
    uint32_t nodeid = FLUX_NODEID_ANY;
    bool bypass = false;
    const char *blobref;
    size_t len;
    char *data;
    int c;
    flux_future_t *f;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "br:", rank_longopts)) != -1) {
        if (c == 'b')
            bypass = true;
        if (c == 'r')
            nodeid = (uint32_t)cmd_parse_long ("--rank", optarg, 0, INT32_MAX);
    }
    if (optind != argc)
        cmd_usage_error ("too many arguments");
    data = cmd_read_all (stdin, "read", &len);
    h = cmd_open ();
    f = flux_rpc_raw (h, bypass ? "content-backing.store" : "content.store",
                      len > 0 ? data : NULL, len, nodeid, 0);
    if (!f || content_store_get_blobref (f, hashtype_of (h), &blobref) < 0)
        die_rpc ("store", f);
    printf ("%s\n", blobref);
    flux_future_destroy (f);
    flux_close (h);
    free (data);
    return 0;
}

/* A request with no payload to topic on rank nodeid. */
static int simple_rpc (int argc, char **argv, const char *topic)
{
    static const struct option longopts[] = {
        {"rank", required_argument, NULL, 'r'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    uint32_t nodeid = FLUX_NODEID_ANY;
    flux_future_t *f;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "r:", longopts)) != -1) {
        if (c == 'r')
            nodeid = (uint32_t)cmd_parse_long ("--rank", optarg, 0, INT32_MAX);
    }
    if (optind != argc)
        cmd_usage_error ("too many arguments");
    h = cmd_open ();
    if (!(f = flux_rpc (h, topic, NULL, nodeid, 0))
        || flux_rpc_get (f, NULL) < 0)
        die_rpc (topic, f);
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

static int cmd_content_flush (int argc, char **argv)
{
    return simple_rpc (argc, argv, "content.flush");
}

static int cmd_content_dropcache (int argc, char **argv)
{
    return simple_rpc (argc, argv, "content.dropcache");
}

static int checkpoint_get (flux_t *h, bool json)
{
    flux_future_t *f;
    const char *rootref;
    int seq;
    double ts;

    if (!(f = content_checkpoint_get (h))
        || content_checkpoint_get_value (f, &rootref, &seq, &ts) < 0)
        die_rpc ("checkpoint get", f);
    if (json) {
        json_t *o = json_pack ("{s:i s:s s:i s:f}", "version", 1, "rootref",
                               rootref, "sequence", seq, "timestamp", ts);
        char *s = o ? json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        if (!s)
            cmd_die ("out of memory");
        printf ("%s\n", s);
        free (s);
        json_decref (o);
    }
    else
        printf ("%s %d\n", rootref, seq);
    flux_future_destroy (f);
    return 0;
}

static int checkpoint_put (flux_t *h, const char *rootref, const char *seqstr)
{
    int seq = (int)cmd_parse_long ("SEQUENCE", seqstr, 0, INT32_MAX);
    flux_future_t *f;

    if (blobref_validate (rootref) < 0)
        cmd_die ("%s: not a valid blobref", rootref);
    if (!(f = content_checkpoint_put (h, rootref, seq))
        || flux_future_get (f, NULL) < 0)
        die_rpc ("checkpoint put", f);
    flux_future_destroy (f);
    return 0;
}

static int cmd_content_checkpoint (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    const char *what;
    flux_t *h;
    int c, rc;

    if (argc < 2)
        cmd_usage_error ("expected get or put");
    what = argv[1];
    if (!strcmp (what, "-h") || !strcmp (what, "--help"))
        cmd_help ();
    if (strcmp (what, "get") != 0 && strcmp (what, "put") != 0)
        cmd_usage_error ("unknown checkpoint command '%s'", what);
    while ((c = cmd_getopt (argc - 1, argv + 1, "j", longopts)) != -1) {
        if (c == 'j')
            json = true;
    }
    optind++; /* we parsed argv + 1 */
    if (!strcmp (what, "get") && optind != argc)
        cmd_usage_error ("checkpoint get takes no arguments");
    if (!strcmp (what, "put") && optind != argc - 2)
        cmd_usage_error ("expected ROOTREF SEQUENCE");
    h = cmd_open ();
    if (!strcmp (what, "get"))
        rc = checkpoint_get (h, json);
    else
        rc = checkpoint_put (h, argv[optind], argv[optind + 1]);
    flux_close (h);
    return rc;
}
