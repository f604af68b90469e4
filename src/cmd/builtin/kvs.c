/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs.c - `flux kvs`: the group, and the members that read or write keys
 * (get, put, unlink, mkdir, link, readlink, copy, move) or the root
 * (version, wait, sync, getroot).  ls/dir are in kvs_ls.c, namespace in
 * kvs_namespace.c, eventlog in kvs_eventlog.c.  All of them go through
 * libkvs (PROTOCOLS.md section 4).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "libkvs/treeobj.h"

#include "kvs_cmd.h"

static const char usage[]
    = "Usage: flux kvs COMMAND [OPTIONS] [ARGS...]\n"
      "Access the Flux key-value store.  Keys are '.'-separated paths;\n"
      "'.' is the root.  Most commands take -N, --namespace=NS (default\n"
      "$FLUX_KVS_NAMESPACE, or 'primary').\n";

static const char get_usage[]
    = "Usage: flux kvs get [OPTIONS] KEY...\n"
      "Print the value of each KEY, followed by a newline if not empty.\n"
      "  -N, --namespace=NS  Use namespace NS\n"
      "  -r, --raw           Print the value as-is, without a newline\n"
      "  -t, --treeobj       Print the RFC 11 object instead of the value\n"
      "  -a, --at=TREEOBJ    Look up relative to an RFC 11 snapshot (dirref)\n"
      "  -l, --label         Print KEY= before the value\n"
      "  -W, --waitcreate    Wait for KEY to be created\n"
      "  -w, --watch         Print the value again each time KEY is written\n"
      "  -u, --uniq          With --watch, only when the value changed\n"
      "  -A, --append        With --watch, print only appended data\n"
      "  -f, --full          With --watch, also notice indirect changes\n"
      "  -c, --count=N       With --watch, stop after N values\n"
      "  -h, --help          Display this message\n";

static const char put_usage[]
    = "Usage: flux kvs put [OPTIONS] KEY=VALUE...\n"
      "Store each VALUE under KEY and commit them in one transaction.\n"
      "  -N, --namespace=NS  Use namespace NS\n"
      "  -r, --raw           Store VALUE as raw bytes; VALUE '-' reads stdin\n"
      "  -t, --treeobj       VALUE is an RFC 11 object; '-' reads stdin\n"
      "  -A, --append        Append VALUE to the current value\n"
      "  -n, --no-merge      Do not merge this commit with others\n"
      "      --sync          Wait until the new root is checkpointed\n"
      "  -O, --treeobj-root  Print the new root as an RFC 11 dirref\n"
      "  -s, --sequence      Print the new root sequence number\n"
      "  -h, --help          Display this message\n";

static const char unlink_usage[]
    = "Usage: flux kvs unlink [OPTIONS] KEY...\n"
      "Remove each KEY and commit.\n"
      "  -N, --namespace=NS  Use namespace NS\n"
      "  -R, --recursive     Remove non-empty directories\n"
      "  -f, --force         Ignore keys that do not exist\n"
      "  -O, --treeobj-root  Print the new root as an RFC 11 dirref\n"
      "  -s, --sequence      Print the new root sequence number\n"
      "  -h, --help          Display this message\n";

static const char mkdir_usage[]
    = "Usage: flux kvs mkdir [OPTIONS] KEY...\n"
      "Make each KEY an empty directory (replacing it) and commit.\n"
      "  -N, --namespace=NS  Use namespace NS\n"
      "  -O, --treeobj-root  Print the new root as an RFC 11 dirref\n"
      "  -s, --sequence      Print the new root sequence number\n"
      "  -h, --help          Display this message\n";

static const char link_usage[]
    = "Usage: flux kvs link [OPTIONS] TARGET LINKNAME\n"
      "Make LINKNAME a symbolic link to TARGET (which need not exist).\n"
      "  -N, --namespace=NS         Namespace of LINKNAME\n"
      "  -T, --target-namespace=NS  Namespace of TARGET\n"
      "  -O, --treeobj-root         Print the new root as an RFC 11 dirref\n"
      "  -s, --sequence             Print the new root sequence number\n"
      "  -h, --help                 Display this message\n";

static const char readlink_usage[]
    = "Usage: flux kvs readlink [OPTIONS] KEY...\n"
      "Print the target of each symbolic link KEY (NS::TARGET if the link\n"
      "names a namespace).\n"
      "  -N, --namespace=NS      Use namespace NS\n"
      "  -a, --at=TREEOBJ        Look up relative to an RFC 11 snapshot\n"
      "  -o, --namespace-only    Print only the namespace, if there is one\n"
      "  -k, --key-only          Print only the target key\n"
      "  -h, --help              Display this message\n";

static const char copy_usage[]
    = "Usage: flux kvs copy [OPTIONS] SOURCE DESTINATION\n"
      "Copy SOURCE to DESTINATION (a directory is copied by reference).\n"
      "  -S, --src-namespace=NS  Namespace of SOURCE\n"
      "  -D, --dst-namespace=NS  Namespace of DESTINATION\n"
      "  -h, --help              Display this message\n";

static const char move_usage[]
    = "Usage: flux kvs move [OPTIONS] SOURCE DESTINATION\n"
      "Copy SOURCE to DESTINATION, then unlink SOURCE.\n"
      "  -S, --src-namespace=NS  Namespace of SOURCE\n"
      "  -D, --dst-namespace=NS  Namespace of DESTINATION\n"
      "  -h, --help              Display this message\n";

static const char version_usage[]
    = "Usage: flux kvs version [OPTIONS]\n"
      "Print the root sequence number (the KVS version).\n"
      "  -N, --namespace=NS  Use namespace NS\n"
      "  -h, --help          Display this message\n";

static const char wait_usage[]
    = "Usage: flux kvs wait [OPTIONS] VERSION\n"
      "Wait until the KVS version is at least VERSION.\n"
      "  -N, --namespace=NS  Use namespace NS\n"
      "  -h, --help          Display this message\n";

static const char sync_usage[]
    = "Usage: flux kvs sync [OPTIONS]\n"
      "Wait until all data committed so far is checkpointed (an empty\n"
      "commit with the SYNC flag; only the primary namespace).\n"
      "  -N, --namespace=NS  Use namespace NS\n"
      "  -O, --treeobj-root  Print the root as an RFC 11 dirref\n"
      "  -s, --sequence      Print the root sequence number\n"
      "  -h, --help          Display this message\n";

static const char getroot_usage[]
    = "Usage: flux kvs getroot [OPTIONS]\n"
      "Print the current root as an RFC 11 dirref.\n"
      "  -N, --namespace=NS  Use namespace NS\n"
      "  -s, --sequence      Print the root sequence number instead\n"
      "  -o, --owner         Print the namespace owner instead\n"
      "  -b, --blobref       Print the root blobref instead\n"
      "  -h, --help          Display this message\n";

static int cmd_kvs_get (int argc, char **argv);
static int cmd_kvs_put (int argc, char **argv);
static int cmd_kvs_unlink (int argc, char **argv);
static int cmd_kvs_mkdir (int argc, char **argv);
static int cmd_kvs_link (int argc, char **argv);
static int cmd_kvs_readlink (int argc, char **argv);
static int cmd_kvs_copy (int argc, char **argv);
static int cmd_kvs_move (int argc, char **argv);
static int cmd_kvs_version (int argc, char **argv);
static int cmd_kvs_wait (int argc, char **argv);
static int cmd_kvs_sync (int argc, char **argv);
static int cmd_kvs_getroot (int argc, char **argv);

const struct builtin builtin_kvs = {
    .name = "kvs",
    .summary = "Access the Flux key-value store",
    .usage = usage,
    .main = cmd_kvs,
};

#define MEMBER(n, sum, fn)     \
    {                          \
#n, sum, n##_usage, fn \
    }
static const struct builtin kvs_get = MEMBER (get, "Print values", cmd_kvs_get);
static const struct builtin kvs_put = MEMBER (put, "Store values", cmd_kvs_put);
static const struct builtin kvs_unlink
    = MEMBER (unlink, "Remove keys", cmd_kvs_unlink);
static const struct builtin kvs_mkdir
    = MEMBER (mkdir, "Create directories", cmd_kvs_mkdir);
static const struct builtin kvs_link
    = MEMBER (link, "Create a symbolic link", cmd_kvs_link);
static const struct builtin kvs_readlink
    = MEMBER (readlink, "Print symbolic link targets", cmd_kvs_readlink);
static const struct builtin kvs_copy
    = MEMBER (copy, "Copy a key", cmd_kvs_copy);
static const struct builtin kvs_move
    = MEMBER (move, "Move a key", cmd_kvs_move);
static const struct builtin kvs_version
    = MEMBER (version, "Print the KVS version", cmd_kvs_version);
static const struct builtin kvs_wait
    = MEMBER (wait, "Wait for a KVS version", cmd_kvs_wait);
static const struct builtin kvs_sync
    = MEMBER (sync, "Wait for a checkpoint of the KVS", cmd_kvs_sync);
static const struct builtin kvs_getroot
    = MEMBER (getroot, "Print the KVS root", cmd_kvs_getroot);

static const struct builtin *const members[] = {
    &kvs_get,    &kvs_put,     &kvs_ls_cmd,        &kvs_dir_cmd,
    &kvs_unlink, &kvs_mkdir,   &kvs_link,          &kvs_readlink,
    &kvs_copy,   &kvs_move,    &kvs_version,       &kvs_wait,
    &kvs_sync,   &kvs_getroot, &kvs_namespace_cmd, &kvs_eventlog_cmd,
    NULL,
};

int cmd_kvs (int argc, char **argv)
{
    return cmd_run_group (&builtin_kvs, members, argc, argv);
}

/* Shared helpers
 */

int kvs_run_subgroup (const struct builtin *group,
                      const struct builtin *const list[], int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : NULL;
    char fullname[64];

    if (!name)
        cmd_usage_error ("missing command");
    if (!strcmp (name, "-h") || !strcmp (name, "--help")) {
        fputs (group->usage, stdout);
        printf ("\nCommands:\n");
        for (int i = 0; list[i]; i++)
            printf ("  %-12s %s\n", list[i]->name, list[i]->summary);
        exit (0);
    }
    for (int i = 0; list[i]; i++) {
        if (!strcmp (list[i]->name, name)) {
            struct builtin b = *list[i];
            snprintf (fullname, sizeof (fullname), "%s %s", group->name,
                      list[i]->name);
            b.name = fullname;
            cmd_init (&b, "kvs");
            return b.main (argc - 1, argv + 1);
        }
    }
    cmd_usage_error ("unknown command '%s'", name);
}

int kvs_window_width (int cols)
{
    struct winsize w;
    const char *s;
    char *end;
    long v;

    if (cols >= 0)
        return cols;
    if (ioctl (STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0)
        return w.ws_col;
    if ((s = getenv ("COLUMNS"))) {
        v = strtol (s, &end, 10);
        if (end != s && *end == '\0' && v >= 0 && v < 100000)
            return v;
    }
    return 80;
}

void kvs_commit_finish (flux_future_t *f, bool treeobj_root, bool sequence)
{
    const char *s;
    int seq;

    if (flux_future_get (f, NULL) < 0)
        cmd_die ("commit: %s", future_strerror (f, errno));
    if (treeobj_root) {
        if (flux_kvs_commit_get_treeobj (f, &s) < 0)
            cmd_die ("commit: %s", future_strerror (f, errno));
        printf ("%s\n", s);
    }
    else if (sequence) {
        if (flux_kvs_commit_get_sequence (f, &seq) < 0)
            cmd_die ("commit: %s", future_strerror (f, errno));
        printf ("%d\n", seq);
    }
}

/* Commit txn to ns and finish as above. */
/* The options of every command that commits: --namespace, and what to
 * print of the new root (--treeobj-root, --sequence). */
struct commit_opts {
    const char *ns;
    bool root, seq;
};

/* their struct option entries */
/* clang-format off */
#define COMMIT_LONGOPTS \
    {"namespace", required_argument, NULL, 'N'}, \
    {"treeobj-root", no_argument, NULL, 'O'}, \
    {"sequence", no_argument, NULL, 's'}
/* clang-format on */

/* Take option c if it is one of struct commit_opts (true). */
static bool commit_opt (int c, struct commit_opts *o)
{
    if (c == 'N')
        o->ns = optarg;
    else if (c == 'O')
        o->root = true;
    else if (c == 's')
        o->seq = true;
    else
        return false;
    return true;
}

/* Commit txn with flags (exit with a message on error), print what o
 * asks for, and free txn and h. */
static void commit_close (flux_t *h, const struct commit_opts *o, int flags,
                          flux_kvs_txn_t *txn)
{
    flux_future_t *f;

    if (!(f = flux_kvs_commit (h, o->ns, flags, txn)))
        cmd_die ("commit: %s", strerror (errno));
    kvs_commit_finish (f, o->root, o->seq);
    flux_future_destroy (f);
    flux_kvs_txn_destroy (txn);
    flux_close (h);
}

static flux_future_t *lookup (flux_t *h, const char *ns, const char *at,
                              int flags, const char *key)
{
    flux_future_t *f;

    if (at)
        f = flux_kvs_lookupat (h, flags, key, at);
    else
        f = flux_kvs_lookup (h, ns, flags, key);
    if (!f) {
        if (at && errno == EINVAL)
            cmd_die ("--at: not an RFC 11 dirref");
        cmd_die ("%s: %s", key, strerror (errno));
    }
    return f;
}

/* get
 */

struct get_ctx {
    bool raw, treeobj, label;
    int maxcount;
    int active; /* watches not yet ended */
    flux_reactor_t *r;
};

struct watch_item {
    struct get_ctx *ctx;
    int count;
};

/* Print the current response of f; exit on error. */
static void print_result (flux_future_t *f, struct get_ctx *ctx)
{
    const char *key = flux_kvs_lookup_get_key (f);
    const char *s;
    const void *data;
    size_t len;

    if (ctx->treeobj) {
        if (flux_kvs_lookup_get_treeobj (f, &s) < 0)
            cmd_die ("%s: %s", key, strerror (errno));
        printf ("%s%s%s\n", ctx->label ? key : "", ctx->label ? "=" : "", s);
    }
    else if (ctx->raw) {
        if (flux_kvs_lookup_get_raw (f, &data, &len) < 0)
            cmd_die ("%s: %s", key, strerror (errno));
        if (ctx->label)
            printf ("%s=", key);
        fflush (stdout);
        if (len > 0 && fwrite (data, 1, len, stdout) != len)
            cmd_die ("stdout: %s", strerror (errno));
    }
    else {
        if (flux_kvs_lookup_get (f, &s) < 0)
            cmd_die ("%s: %s", key, strerror (errno));
        if (ctx->label)
            printf ("%s=", key);
        if (s)
            printf ("%s\n", s);
        else if (ctx->label)
            printf ("\n");
    }
    fflush (stdout);
}

static void watch_cb (flux_future_t *f, void *arg)
{
    struct watch_item *item = arg;
    struct get_ctx *ctx = item->ctx;

    if (flux_rpc_get (f, NULL) < 0) {
        if (errno != ENODATA)
            cmd_die ("%s: %s", flux_kvs_lookup_get_key (f), strerror (errno));
        flux_future_destroy (f);
        if (--ctx->active == 0)
            flux_reactor_stop (ctx->r);
        return;
    }
    print_result (f, ctx);
    flux_future_reset (f);
    if (ctx->maxcount > 0 && ++item->count == ctx->maxcount) {
        if (flux_kvs_lookup_cancel (f) < 0)
            cmd_die ("cancel: %s", strerror (errno));
    }
}

static int cmd_kvs_get (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'N'},
        {"raw", no_argument, NULL, 'r'},
        {"treeobj", no_argument, NULL, 't'},
        {"at", required_argument, NULL, 'a'},
        {"label", no_argument, NULL, 'l'},
        {"waitcreate", no_argument, NULL, 'W'},
        {"watch", no_argument, NULL, 'w'},
        {"uniq", no_argument, NULL, 'u'},
        {"append", no_argument, NULL, 'A'},
        {"full", no_argument, NULL, 'f'},
        {"count", required_argument, NULL, 'c'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct get_ctx ctx = {0};
    const char *ns = NULL, *at = NULL;
    int c, flags = 0, watchflags = 0;
    bool watch = false;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "N:rta:lWwuAfc:", longopts)) != -1) {
        switch (c) {
            case 'N':
                ns = optarg;
                break;
            case 'r':
                ctx.raw = true;
                break;
            case 't':
                ctx.treeobj = true;
                flags |= FLUX_KVS_TREEOBJ;
                break;
            case 'a':
                at = optarg;
                break;
            case 'l':
                ctx.label = true;
                break;
            case 'W':
                flags |= FLUX_KVS_WAITCREATE;
                break;
            case 'w':
                watch = true;
                break;
            case 'u':
                watchflags |= FLUX_KVS_WATCH_UNIQ;
                break;
            case 'A':
                watchflags |= FLUX_KVS_WATCH_APPEND;
                break;
            case 'f':
                watchflags |= FLUX_KVS_WATCH_FULL;
                break;
            case 'c':
                ctx.maxcount = cmd_parse_long ("--count", optarg, 1, INT32_MAX);
                break;
        }
    }
    if (optind >= argc)
        cmd_usage_error ("missing KEY");
    if (ctx.raw && ctx.treeobj)
        cmd_usage_error ("--raw and --treeobj are exclusive");
    if ((watchflags || ctx.maxcount) && !watch)
        cmd_usage_error ("--uniq, --append, --full and --count need --watch");
    if (at && (watch || (flags & FLUX_KVS_WAITCREATE)))
        cmd_usage_error ("--at cannot be used with --watch or --waitcreate");
    if (watch)
        flags |= FLUX_KVS_WATCH | watchflags;
    h = cmd_open ();
    ctx.r = flux_get_reactor (h);
    for (int i = optind; i < argc; i++) {
        flux_future_t *f = lookup (h, ns, at, flags, argv[i]);
        if (watch) {
            struct watch_item *item = calloc (1, sizeof (*item));
            if (!item
                || flux_future_aux_set (f, "watch_item", item, free) < 0) {
                free (item);
                cmd_die ("out of memory");
            }
            item->ctx = &ctx;
            if (flux_future_then (f, -1., watch_cb, item) < 0)
                cmd_die ("%s: %s", argv[i], strerror (errno));
            ctx.active++;
        }
        else {
            print_result (f, &ctx);
            flux_future_destroy (f);
        }
    }
    if (watch && flux_reactor_run (ctx.r, 0) < 0)
        cmd_die ("reactor: %s", strerror (errno));
    flux_close (h);
    return 0;
}

/* put
 */

static int cmd_kvs_put (int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMIT_LONGOPTS,
        {"raw", no_argument, NULL, 'r'},
        {"treeobj", no_argument, NULL, 't'},
        {"append", no_argument, NULL, 'A'},
        {"no-merge", no_argument, NULL, 'n'},
        {"sync", no_argument, NULL, 'Y'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct commit_opts co = {0};
    bool raw = false, treeobj = false;
    int c, put_flags = 0, commit_flags = 0;
    flux_kvs_txn_t *txn;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "N:rtAnOs", longopts)) != -1) {
        if (commit_opt (c, &co))
            continue;
        switch (c) {
            case 'r':
                raw = true;
                break;
            case 't':
                treeobj = true;
                break;
            case 'A':
                put_flags |= FLUX_KVS_APPEND;
                break;
            case 'n':
                commit_flags |= FLUX_KVS_NO_MERGE;
                break;
            case 'Y':
                commit_flags |= FLUX_KVS_SYNC;
                break;
        }
    }
    if (optind >= argc)
        cmd_usage_error ("missing KEY=VALUE");
    if (raw && treeobj)
        cmd_usage_error ("--raw and --treeobj are exclusive");
    if (treeobj && put_flags)
        cmd_usage_error ("--append cannot be used with --treeobj");
    if (!(txn = flux_kvs_txn_create ()))
        cmd_die ("out of memory");
    for (int i = optind; i < argc; i++) {
        char *key = strdup (argv[i]);
        char *val = key ? strchr (key, '=') : NULL;
        char *buf = NULL;
        size_t len;
        int rc;

        if (!val)
            cmd_usage_error ("'%s': specify a value as KEY=VALUE", argv[i]);
        *val++ = '\0';
        len = strlen (val);
        if ((raw || treeobj) && !strcmp (val, "-"))
            val = buf = cmd_read_all (stdin, "stdin", &len);
        if (treeobj)
            rc = flux_kvs_txn_put_treeobj (txn, 0, key, val);
        else
            rc = flux_kvs_txn_put_raw (txn, put_flags, key, val, len);
        if (rc < 0) {
            if (errno == EINVAL && treeobj)
                cmd_die ("%s: not a valid RFC 11 object", key);
            cmd_die ("%s: %s", key, strerror (errno));
        }
        free (buf);
        free (key);
    }
    h = cmd_open ();
    commit_close (h, &co, commit_flags, txn);
    return 0;
}

/* unlink
 */

/* Whether key may be unlinked: exit with a message if not; false if it
 * does not exist and force is set.
 */
static bool unlink_check (flux_t *h, const char *ns, const char *key,
                          bool recursive, bool force)
{
    const flux_kvsdir_t *dir;
    flux_future_t *f, *f2;
    const char *s;
    json_t *o;
    int count;

    f = lookup (h, ns, NULL, FLUX_KVS_TREEOBJ, key);
    if (flux_kvs_lookup_get_treeobj (f, &s) < 0) {
        if (errno == ENOENT && force) {
            flux_future_destroy (f);
            return false;
        }
        cmd_die ("cannot unlink '%s': %s", key, strerror (errno));
    }
    if (!(o = treeobj_decode (s)))
        cmd_die ("%s: malformed RFC 11 object", key);
    if (!recursive && treeobj_is_dir (o) && treeobj_get_count (o) > 0)
        cmd_die ("cannot unlink '%s': %s", key, strerror (ENOTEMPTY));
    if (!recursive && treeobj_is_dirref (o)) {
        f2 = lookup (h, ns, NULL, FLUX_KVS_READDIR, key);
        if (flux_kvs_lookup_get_dir (f2, &dir) < 0)
            cmd_die ("cannot unlink '%s': %s", key, strerror (errno));
        count = flux_kvsdir_get_size (dir);
        flux_future_destroy (f2);
        if (count > 0)
            cmd_die ("cannot unlink '%s': %s", key, strerror (ENOTEMPTY));
    }
    json_decref (o);
    flux_future_destroy (f);
    return true;
}

static int cmd_kvs_unlink (int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMIT_LONGOPTS,
        {"recursive", no_argument, NULL, 'R'},
        {"force", no_argument, NULL, 'f'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct commit_opts co = {0};
    bool recursive = false, force = false;
    flux_kvs_txn_t *txn;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "N:RfOs", longopts)) != -1) {
        if (c == 'R')
            recursive = true;
        else if (c == 'f')
            force = true;
        else
            (void)commit_opt (c, &co);
    }
    if (optind >= argc)
        cmd_usage_error ("missing KEY");
    h = cmd_open ();
    if (!(txn = flux_kvs_txn_create ()))
        cmd_die ("out of memory");
    for (int i = optind; i < argc; i++) {
        if (unlink_check (h, co.ns, argv[i], recursive, force)
            && flux_kvs_txn_unlink (txn, 0, argv[i]) < 0)
            cmd_die ("cannot unlink '%s': %s", argv[i], strerror (errno));
    }
    commit_close (h, &co, 0, txn);
    return 0;
}

/* mkdir, link
 */

static int cmd_kvs_mkdir (int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMIT_LONGOPTS,
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct commit_opts co = {0};
    flux_kvs_txn_t *txn;
    int c;

    while ((c = cmd_getopt (argc, argv, "N:Os", longopts)) != -1)
        (void)commit_opt (c, &co);
    if (optind >= argc)
        cmd_usage_error ("missing KEY");
    if (!(txn = flux_kvs_txn_create ()))
        cmd_die ("out of memory");
    for (int i = optind; i < argc; i++) {
        if (flux_kvs_txn_mkdir (txn, 0, argv[i]) < 0)
            cmd_die ("%s: %s", argv[i], strerror (errno));
    }
    commit_close (cmd_open (), &co, 0, txn);
    return 0;
}

static int cmd_kvs_link (int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMIT_LONGOPTS,
        {"target-namespace", required_argument, NULL, 'T'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct commit_opts co = {0};
    const char *targetns = NULL;
    flux_kvs_txn_t *txn;
    int c;

    while ((c = cmd_getopt (argc, argv, "N:T:Os", longopts)) != -1) {
        if (c == 'T')
            targetns = optarg;
        else
            (void)commit_opt (c, &co);
    }
    if (argc - optind != 2)
        cmd_usage_error ("specify TARGET and LINKNAME");
    if (!(txn = flux_kvs_txn_create ()))
        cmd_die ("out of memory");
    if (flux_kvs_txn_symlink (txn, 0, argv[optind + 1], targetns, argv[optind])
        < 0)
        cmd_die ("%s: %s", argv[optind + 1], strerror (errno));
    commit_close (cmd_open (), &co, 0, txn);
    return 0;
}

static int cmd_kvs_readlink (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'N'},
        {"at", required_argument, NULL, 'a'},
        {"namespace-only", no_argument, NULL, 'o'},
        {"key-only", no_argument, NULL, 'k'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *ns = NULL, *at = NULL;
    bool ns_only = false, key_only = false;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "N:a:ok", longopts)) != -1) {
        if (c == 'N')
            ns = optarg;
        if (c == 'a')
            at = optarg;
        if (c == 'o')
            ns_only = true;
        if (c == 'k')
            key_only = true;
    }
    if (optind >= argc)
        cmd_usage_error ("missing KEY");
    if (ns_only && key_only)
        cmd_usage_error ("--namespace-only and --key-only are exclusive");
    h = cmd_open ();
    for (int i = optind; i < argc; i++) {
        flux_future_t *f = lookup (h, ns, at, FLUX_KVS_READLINK, argv[i]);
        const char *linkns, *target;

        if (flux_kvs_lookup_get_symlink (f, &linkns, &target) < 0)
            cmd_die ("%s: %s", argv[i],
                     errno == EINVAL ? "not a symbolic link"
                                     : strerror (errno));
        if (ns_only) {
            if (linkns)
                printf ("%s\n", linkns);
        }
        else if (key_only || !linkns)
            printf ("%s\n", target);
        else
            printf ("%s::%s\n", linkns, target);
        flux_future_destroy (f);
    }
    flux_close (h);
    return 0;
}

/* copy, move
 */

static int copy_or_move (int argc, char **argv, bool move)
{
    static const struct option longopts[] = {
        {"src-namespace", required_argument, NULL, 'S'},
        {"dst-namespace", required_argument, NULL, 'D'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *srcns = NULL, *dstns = NULL;
    flux_future_t *f;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "S:D:", longopts)) != -1) {
        if (c == 'S')
            srcns = optarg;
        if (c == 'D')
            dstns = optarg;
    }
    if (argc - optind != 2)
        cmd_usage_error ("specify SOURCE and DESTINATION");
    h = cmd_open ();
    if (move)
        f = flux_kvs_move (h, srcns, argv[optind], dstns, argv[optind + 1], 0);
    else
        f = flux_kvs_copy (h, srcns, argv[optind], dstns, argv[optind + 1], 0);
    if (!f || flux_future_get (f, NULL) < 0)
        cmd_die ("%s: %s", argv[optind],
                 f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

static int cmd_kvs_copy (int argc, char **argv)
{
    return copy_or_move (argc, argv, false);
}

static int cmd_kvs_move (int argc, char **argv)
{
    return copy_or_move (argc, argv, true);
}

/* version, wait, sync, getroot
 */

static const char *parse_ns_only (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'N'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *ns = NULL;
    int c;

    while ((c = cmd_getopt (argc, argv, "N:", longopts)) != -1) {
        if (c == 'N')
            ns = optarg;
    }
    return ns;
}

static int cmd_kvs_version (int argc, char **argv)
{
    const char *ns = parse_ns_only (argc, argv);
    int version;
    flux_t *h;

    if (optind != argc)
        cmd_usage_error ("too many arguments");
    h = cmd_open ();
    if (flux_kvs_get_version (h, ns, &version) < 0)
        cmd_die ("%s", strerror (errno));
    printf ("%d\n", version);
    flux_close (h);
    return 0;
}

static int cmd_kvs_wait (int argc, char **argv)
{
    const char *ns = parse_ns_only (argc, argv);
    long version;
    flux_t *h;

    if (argc - optind != 1)
        cmd_usage_error ("specify one VERSION");
    version = cmd_parse_long ("VERSION", argv[optind], 0, INT32_MAX);
    h = cmd_open ();
    if (flux_kvs_wait_version (h, ns, (int)version) < 0)
        cmd_die ("%s", strerror (errno));
    flux_close (h);
    return 0;
}

static int cmd_kvs_sync (int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMIT_LONGOPTS,
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct commit_opts co = {0};
    flux_kvs_txn_t *txn;
    int c;

    while ((c = cmd_getopt (argc, argv, "N:Os", longopts)) != -1)
        (void)commit_opt (c, &co);
    if (optind != argc)
        cmd_usage_error ("too many arguments");
    if (!(txn = flux_kvs_txn_create ()))
        cmd_die ("out of memory");
    commit_close (cmd_open (), &co, FLUX_KVS_SYNC, txn);
    return 0;
}

static int cmd_kvs_getroot (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'N'},
        {"sequence", no_argument, NULL, 's'},
        {"owner", no_argument, NULL, 'o'},
        {"blobref", no_argument, NULL, 'b'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *ns = NULL, *s;
    int c, what = 0, seq;
    flux_future_t *f;
    uint32_t owner;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "N:sob", longopts)) != -1) {
        if (c == 'N')
            ns = optarg;
        else {
            if (what && what != c)
                cmd_usage_error ("--sequence, --owner and --blobref are "
                                 "exclusive");
            what = c;
        }
    }
    if (optind != argc)
        cmd_usage_error ("too many arguments");
    h = cmd_open ();
    if (!(f = flux_kvs_getroot (h, ns, 0)) || flux_future_get (f, NULL) < 0)
        cmd_die ("%s", f ? future_strerror (f, errno) : strerror (errno));
    if (what == 's' && flux_kvs_getroot_get_sequence (f, &seq) == 0)
        printf ("%d\n", seq);
    else if (what == 'o' && flux_kvs_getroot_get_owner (f, &owner) == 0)
        printf ("%lu\n", (unsigned long)owner);
    else if (what == 'b' && flux_kvs_getroot_get_blobref (f, &s) == 0)
        printf ("%s\n", s);
    else if (what == 0 && flux_kvs_getroot_get_treeobj (f, &s) == 0)
        printf ("%s\n", s);
    else
        cmd_die ("getroot: %s", strerror (errno));
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
