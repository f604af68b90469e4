/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* dump.c - `flux dump` and `flux restore`: a KVS namespace as a POSIX
 * ustar archive, written and read here (no libarchive).
 *
 * Each value is a regular file whose path is its key with '/' for '.';
 * a symlink is a symlink entry whose target is TARGET or NS::TARGET; an
 * empty directory is a directory entry (directories with content are
 * implied by their files).  Paths or targets too long for ustar get a
 * pax extended header ("x").  dump reads one snapshot of the namespace
 * (its current root, or the last checkpoint with --checkpoint), so the
 * archive is consistent.  restore replays the archive into a namespace
 * as puts, symlinks and mkdirs, committed in batches; keys not in the
 * archive are left alone.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libcontent/content.h"
#include "libkvs/kvs.h"
#include "libkvs/treeobj.h"

#include "cmdutil.h"

static const char dump_usage[]
    = "Usage: flux dump [OPTIONS] FILE\n"
      "Write the content of a KVS namespace to FILE ('-': stdout) as a\n"
      "ustar archive: one file per key, with '/' in place of '.'.\n"
      "  -N, --namespace=NS  Dump namespace NS\n"
      "      --checkpoint    Dump the last checkpoint (primary only)\n"
      "  -v, --verbose       List keys on stderr as they are archived\n"
      "  -q, --quiet         Do not warn about keys that cannot be archived\n"
      "  -h, --help          Display this message\n";

static const char restore_usage[]
    = "Usage: flux restore [OPTIONS] FILE\n"
      "Put the keys of a `flux dump` archive FILE ('-': stdin) into a KVS\n"
      "namespace.  Keys not in the archive are left alone.\n"
      "  -N, --namespace=NS  Restore into namespace NS\n"
      "      --key=KEY       Restore under KEY instead of the root\n"
      "  -v, --verbose       List keys on stderr as they are restored\n"
      "  -q, --quiet         Do not warn about skipped archive entries\n"
      "  -h, --help          Display this message\n";

const struct builtin builtin_dump = {
    .name = "dump",
    .summary = "Write a KVS namespace to a tar archive",
    .usage = dump_usage,
    .main = cmd_dump,
};

const struct builtin builtin_restore = {
    .name = "restore",
    .summary = "Restore a KVS namespace from a tar archive",
    .usage = restore_usage,
    .main = cmd_restore,
};

#define BLOCK 512
#define RECORD (20 * BLOCK)

/* ustar header field offsets and sizes */
enum {
    H_NAME = 0,
    H_MODE = 100,
    H_UID = 108,
    H_GID = 116,
    H_SIZE = 124,
    H_MTIME = 136,
    H_CHKSUM = 148,
    H_TYPE = 156,
    H_LINKNAME = 157,
    H_MAGIC = 257,
    H_VERSION = 263,
    H_UNAME = 265,
    H_GNAME = 297,
    H_PREFIX = 345,
};

/* Writing
 */

struct tar_writer {
    FILE *f;
    const char *path;
    uint64_t written;
    time_t mtime;
};

static void tw_write (struct tar_writer *tw, const void *buf, size_t len)
{
    if (len > 0 && fwrite (buf, 1, len, tw->f) != len)
        cmd_die ("%s: %s", tw->path, strerror (errno));
    tw->written += len;
}

/* Write data and pad it to a whole block. */
static void tw_data (struct tar_writer *tw, const void *data, size_t len)
{
    static const char zero[BLOCK];

    tw_write (tw, data, len);
    if (len % BLOCK)
        tw_write (tw, zero, BLOCK - len % BLOCK);
}

static void octal (char *field, size_t size, uint64_t v)
{
    snprintf (field, size, "%0*llo", (int)size - 1, (unsigned long long)v);
}

static void header_checksum (char *h)
{
    unsigned int sum = 0;

    memset (h + H_CHKSUM, ' ', 8);
    for (int i = 0; i < BLOCK; i++)
        sum += (unsigned char)h[i];
    snprintf (h + H_CHKSUM, 8, "%06o", sum);
    h[H_CHKSUM + 7] = ' ';
}

/* Split path into ustar prefix and name if possible. */
static bool split_path (const char *path, char *h)
{
    size_t len = strlen (path);
    const char *slash;

    if (len < 100) {
        memcpy (h + H_NAME, path, len);
        return true;
    }
    for (slash = strchr (path, '/'); slash; slash = strchr (slash + 1, '/')) {
        size_t plen = slash - path;
        if (plen <= 155 && len - plen - 1 < 100 && len - plen - 1 > 0) {
            memcpy (h + H_PREFIX, path, plen);
            memcpy (h + H_NAME, slash + 1, len - plen - 1);
            return true;
        }
    }
    return false;
}

/* Fill in header h (name and prefix already set) and write it. */
static void write_header (struct tar_writer *tw, char *h, char type,
                          uint64_t size, const char *linkname, int mode)
{
    octal (h + H_MODE, 8, mode);
    octal (h + H_UID, 8, 0);
    octal (h + H_GID, 8, 0);
    octal (h + H_SIZE, 12, size);
    octal (h + H_MTIME, 12, (uint64_t)tw->mtime);
    h[H_TYPE] = type;
    if (linkname)
        memcpy (h + H_LINKNAME, linkname, strlen (linkname));
    memcpy (h + H_MAGIC, "ustar", 6);
    memcpy (h + H_VERSION, "00", 2);
    memcpy (h + H_UNAME, "flux", 4);
    memcpy (h + H_GNAME, "flux", 4);
    header_checksum (h);
    tw_write (tw, h, BLOCK);
}

/* Append a pax record "LEN key=value\n" (LEN counts the whole record). */
static void pax_record (char **buf, size_t *len, const char *key,
                        const char *value)
{
    size_t body = strlen (key) + strlen (value) + 3; /* ' ' '=' '\n' */
    size_t n = body + 1, digits;
    char *p;

    for (;;) { /* the length includes its own digits */
        digits = snprintf (NULL, 0, "%zu", n);
        if (body + digits == n)
            break;
        n = body + digits;
    }
    if (!(p = realloc (*buf, *len + n + 1)))
        cmd_die ("out of memory");
    snprintf (p + *len, n + 1, "%zu %s=%s\n", n, key, value);
    *buf = p;
    *len += n;
}

/* Write one archive member: a pax header first if the path or link
 * target does not fit ustar, then the header and the data.
 */
static void tar_add (struct tar_writer *tw, const char *path, char type,
                     const void *data, size_t len, const char *linkname)
{
    int mode = type == '5' ? 0755 : type == '2' ? 0777 : 0644;
    bool longlink = linkname && strlen (linkname) >= 100;
    char h[BLOCK] = {0};
    bool fits = split_path (path, h);

    if (!fits || longlink) {
        char ph[BLOCK] = {0};
        char *pax = NULL;
        size_t paxlen = 0;
        if (!fits)
            pax_record (&pax, &paxlen, "path", path);
        if (longlink)
            pax_record (&pax, &paxlen, "linkpath", linkname);
        memcpy (ph + H_NAME, "PaxHeader", 9);
        write_header (tw, ph, 'x', paxlen, NULL, 0644);
        tw_data (tw, pax, paxlen);
        free (pax);
        if (!fits)
            memcpy (h + H_NAME, path, 99); /* readers use the pax path */
    }
    write_header (tw, h, type, type == '0' ? len : 0,
                  longlink ? NULL : linkname, mode);
    if (type == '0')
        tw_data (tw, data, len);
}

static void tar_finish (struct tar_writer *tw)
{
    static const char zero[RECORD];

    tw_write (tw, zero, 2 * BLOCK);
    if (tw->written % RECORD)
        tw_write (tw, zero, RECORD - tw->written % RECORD);
}

/* dump
 */

struct dump_ctx {
    flux_t *h;
    const char *snapshot; /* RFC 11 dirref text of the root */
    struct tar_writer tw;
    bool verbose, quiet;
    int count;
};

/* key "a.b" -> path "a/b"; NULL if a name holds '/' (ambiguous). */
static char *key_to_path (const char *key)
{
    char *path;

    if (strchr (key, '/') || !(path = strdup (key)))
        return NULL;
    for (char *p = path; *p; p++) {
        if (*p == '.')
            *p = '/';
    }
    return path;
}

static flux_future_t *lookupat (struct dump_ctx *ctx, int flags,
                                const char *key)
{
    flux_future_t *f;

    if (!(f = flux_kvs_lookupat (ctx->h, flags, key, ctx->snapshot)))
        cmd_die ("%s: %s", key, strerror (errno));
    return f;
}

static void dump_entry (struct dump_ctx *ctx, const flux_kvsdir_t *dir,
                        const char *name);

static void dump_dir (struct dump_ctx *ctx, const char *key)
{
    const flux_kvsdir_t *dir;
    flux_kvsitr_t *itr;
    flux_future_t *f;
    const char *name;

    f = lookupat (ctx, FLUX_KVS_READDIR, key);
    if (flux_kvs_lookup_get_dir (f, &dir) < 0)
        cmd_die ("%s: %s", key, strerror (errno));
    if (flux_kvsdir_get_size (dir) == 0 && strcmp (key, ".") != 0) {
        char *path = key_to_path (key), *dpath;
        if (!path || asprintf (&dpath, "%s/", path) < 0) {
            if (!ctx->quiet)
                cmd_warn ("%s: skipping key with '/' in a name", key);
        }
        else {
            tar_add (&ctx->tw, dpath, '5', NULL, 0, NULL);
            free (dpath);
            ctx->count++;
        }
        free (path);
    }
    if (!(itr = flux_kvsitr_create (dir)))
        cmd_die ("out of memory");
    while ((name = flux_kvsitr_next (itr)))
        dump_entry (ctx, dir, name);
    flux_kvsitr_destroy (itr);
    flux_future_destroy (f);
}

static void dump_entry (struct dump_ctx *ctx, const flux_kvsdir_t *dir,
                        const char *name)
{
    char *key = flux_kvsdir_key_at (dir, name);
    char *path = NULL;
    flux_future_t *f = NULL;

    if (!key)
        cmd_die ("out of memory");
    if (flux_kvsdir_isdir (dir, name)) {
        dump_dir (ctx, key);
        free (key);
        return;
    }
    if (!(path = key_to_path (key))) {
        if (!ctx->quiet)
            cmd_warn ("%s: skipping key with '/' in a name", key);
        free (key);
        return;
    }
    if (flux_kvsdir_issymlink (dir, name)) {
        const char *ns, *target;
        char *link;
        f = lookupat (ctx, FLUX_KVS_READLINK, key);
        if (flux_kvs_lookup_get_symlink (f, &ns, &target) < 0)
            cmd_die ("%s: %s", key, strerror (errno));
        if (asprintf (&link, "%s%s%s", ns ? ns : "", ns ? "::" : "", target)
            < 0)
            cmd_die ("out of memory");
        tar_add (&ctx->tw, path, '2', NULL, 0, link);
        free (link);
    }
    else {
        const void *data;
        size_t len;
        f = lookupat (ctx, 0, key);
        if (flux_kvs_lookup_get_raw (f, &data, &len) < 0)
            cmd_die ("%s: %s", key, strerror (errno));
        tar_add (&ctx->tw, path, '0', data, len, NULL);
    }
    if (ctx->verbose)
        fprintf (stderr, "%s\n", key);
    ctx->count++;
    flux_future_destroy (f);
    free (path);
    free (key);
}

/* The RFC 11 dirref text of the root to dump (caller frees). */
static char *dump_root (flux_t *h, const char *ns, bool checkpoint)
{
    flux_future_t *f;
    const char *s;
    char *snapshot;

    if (checkpoint) {
        const char *rootref;
        json_t *o;
        int seq;
        if (ns && strcmp (ns, KVS_PRIMARY_NAMESPACE) != 0)
            cmd_usage_error ("--checkpoint is for the primary namespace");
        if (!(f = content_checkpoint_get (h))
            || content_checkpoint_get_rootref (f, &rootref, &seq) < 0)
            cmd_die ("checkpoint: %s",
                     f ? future_strerror (f, errno) : strerror (errno));
        if (!(o = treeobj_create_dirref (rootref))
            || !(snapshot = treeobj_encode (o)))
            cmd_die ("checkpoint: malformed rootref %s", rootref);
        json_decref (o);
    }
    else {
        if (!(f = flux_kvs_getroot (h, ns, 0))
            || flux_kvs_getroot_get_treeobj (f, &s) < 0)
            cmd_die ("getroot: %s",
                     f ? future_strerror (f, errno) : strerror (errno));
        if (!(snapshot = strdup (s)))
            cmd_die ("out of memory");
    }
    flux_future_destroy (f);
    return snapshot;
}

int cmd_dump (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'N'},
        {"checkpoint", no_argument, NULL, 'C'},
        {"verbose", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, 'q'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct dump_ctx ctx = {0};
    bool checkpoint = false;
    const char *ns = NULL;
    char *snapshot;
    int c;

    while ((c = cmd_getopt (argc, argv, "N:vq", longopts)) != -1) {
        if (c == 'N')
            ns = optarg;
        if (c == 'C')
            checkpoint = true;
        if (c == 'v')
            ctx.verbose = true;
        if (c == 'q')
            ctx.quiet = true;
    }
    if (argc - optind != 1)
        cmd_usage_error ("specify one FILE");
    ctx.tw.path = argv[optind];
    ctx.h = cmd_open ();
    snapshot = dump_root (ctx.h, ns, checkpoint);
    ctx.snapshot = snapshot;
    if (!strcmp (ctx.tw.path, "-"))
        ctx.tw.f = stdout;
    else if (!(ctx.tw.f = fopen (ctx.tw.path, "w")))
        cmd_die ("%s: %s", ctx.tw.path, strerror (errno));
    ctx.tw.mtime = time (NULL);
    dump_dir (&ctx, ".");
    tar_finish (&ctx.tw);
    if (fflush (ctx.tw.f) != 0
        || (ctx.tw.f != stdout && fclose (ctx.tw.f) != 0))
        cmd_die ("%s: %s", ctx.tw.path, strerror (errno));
    if (ctx.verbose)
        fprintf (stderr, "%s: archived %d keys\n", cmd_prog (), ctx.count);
    free (snapshot);
    flux_close (ctx.h);
    return 0;
}

/* Reading
 */

struct tar_entry {
    char type;
    char *path;
    char *linkname;
    void *data;
    size_t size;
};

struct tar_reader {
    FILE *f;
    const char *path;
    char *pax_path;     /* from a preceding 'x' or 'L' entry */
    char *pax_linkpath; /* from a preceding 'x' or 'K' entry */
};

static void tr_read (struct tar_reader *tr, void *buf, size_t len)
{
    if (fread (buf, 1, len, tr->f) != len)
        cmd_die ("%s: %s", tr->path,
                 ferror (tr->f) ? strerror (errno) : "truncated archive");
}

/* Read size bytes plus block padding into a new buffer (NUL added). */
static char *tr_data (struct tar_reader *tr, uint64_t size)
{
    uint64_t padded = (size + BLOCK - 1) / BLOCK * BLOCK;
    char *buf;

    if (size > SIZE_MAX - BLOCK - 1 || !(buf = malloc (padded + 1)))
        cmd_die ("%s: entry too large", tr->path);
    tr_read (tr, buf, padded);
    buf[size] = '\0';
    return buf;
}

static bool parse_octal (const char *field, size_t size, uint64_t *v)
{
    uint64_t n = 0;
    size_t i = 0;

    while (i < size && field[i] == ' ')
        i++;
    if (i == size || field[i] < '0' || field[i] > '7')
        return false;
    for (; i < size && field[i] >= '0' && field[i] <= '7'; i++) {
        if (n > (UINT64_MAX >> 3))
            return false;
        n = n * 8 + (field[i] - '0');
    }
    for (; i < size; i++) {
        if (field[i] != ' ' && field[i] != '\0')
            return false;
    }
    *v = n;
    return true;
}

static bool checksum_ok (const unsigned char *h)
{
    unsigned int sum = 0;
    int ssum = 0;
    uint64_t v;

    if (!parse_octal ((const char *)h + H_CHKSUM, 8, &v))
        return false;
    for (int i = 0; i < BLOCK; i++) {
        unsigned char c = i >= H_CHKSUM && i < H_CHKSUM + 8 ? ' ' : h[i];
        sum += c;
        ssum += (signed char)c;
    }
    return v == sum || (int64_t)v == ssum;
}

/* Apply the records of a pax extended header we care about. */
static void pax_parse (struct tar_reader *tr, char *buf, size_t len)
{
    size_t off = 0;

    while (off < len) {
        char *rec = buf + off, *end, *eq;
        unsigned long n = strtoul (rec, &end, 10);
        if (end == rec || *end != ' ' || n == 0 || n > len - off
            || rec[n - 1] != '\n' || !(eq = memchr (end, '=', n)))
            cmd_die ("%s: malformed pax header", tr->path);
        rec[n - 1] = '\0';
        if (!strncmp (end + 1, "path=", 5)) {
            free (tr->pax_path);
            tr->pax_path = strdup (eq + 1);
        }
        else if (!strncmp (end + 1, "linkpath=", 9)) {
            free (tr->pax_linkpath);
            tr->pax_linkpath = strdup (eq + 1);
        }
        off += n;
    }
}

static char *field_string (const unsigned char *h, int off, size_t size)
{
    return strndup ((const char *)h + off, size);
}

/* Read the next member into e.  Returns false at the end of the archive. */
static bool tar_next (struct tar_reader *tr, struct tar_entry *e)
{
    unsigned char h[BLOCK];
    static const unsigned char zero[BLOCK];
    uint64_t size;

    for (;;) {
        size_t n = fread (h, 1, BLOCK, tr->f);
        if (n != BLOCK) {
            if (ferror (tr->f))
                cmd_die ("%s: %s", tr->path, strerror (errno));
            if (n > 0)
                cmd_die ("%s: truncated archive", tr->path);
            return false; /* EOF without end blocks: accept */
        }
        if (!memcmp (h, zero, BLOCK))
            return false;
        if (!checksum_ok (h))
            cmd_die ("%s: bad header checksum (not a tar archive?)", tr->path);
        if (!parse_octal ((char *)h + H_SIZE, 12, &size))
            cmd_die ("%s: bad size field", tr->path);
        if (h[H_TYPE] == 'x' || h[H_TYPE] == 'L' || h[H_TYPE] == 'K') {
            char *buf = tr_data (tr, size);
            if (h[H_TYPE] == 'x')
                pax_parse (tr, buf, size);
            else if (h[H_TYPE] == 'L') {
                free (tr->pax_path);
                tr->pax_path = strdup (buf);
            }
            else {
                free (tr->pax_linkpath);
                tr->pax_linkpath = strdup (buf);
            }
            free (buf);
            continue;
        }
        break;
    }
    memset (e, 0, sizeof (*e));
    e->type = h[H_TYPE] ? h[H_TYPE] : '0';
    if (tr->pax_path) {
        e->path = tr->pax_path;
        tr->pax_path = NULL;
    }
    else if (!memcmp (h + H_MAGIC, "ustar", 5) && h[H_PREFIX]) {
        char *prefix = field_string (h, H_PREFIX, 155);
        char *name = field_string (h, H_NAME, 100);
        if (asprintf (&e->path, "%s/%s", prefix, name) < 0)
            cmd_die ("out of memory");
        free (prefix);
        free (name);
    }
    else
        e->path = field_string (h, H_NAME, 100);
    if (tr->pax_linkpath) {
        e->linkname = tr->pax_linkpath;
        tr->pax_linkpath = NULL;
    }
    else
        e->linkname = field_string (h, H_LINKNAME, 100);
    if (!e->path || !e->linkname)
        cmd_die ("out of memory");
    if (e->type == '0' || e->type == '7' || size > 0) {
        e->data = tr_data (tr, size);
        e->size = size;
    }
    return true;
}

static void tar_entry_clear (struct tar_entry *e)
{
    free (e->path);
    free (e->linkname);
    free (e->data);
}

/* restore
 */

struct restore_ctx {
    flux_t *h;
    const char *ns;
    const char *prefix; /* --key */
    flux_kvs_txn_t *txn;
    size_t ops, bytes;
    bool verbose, quiet;
    int count;
};

static void restore_commit (struct restore_ctx *ctx)
{
    flux_future_t *f;

    if (ctx->ops == 0)
        return;
    if (!(f = flux_kvs_commit (ctx->h, ctx->ns, 0, ctx->txn))
        || flux_future_get (f, NULL) < 0)
        cmd_die ("commit: %s",
                 f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
    flux_kvs_txn_clear (ctx->txn);
    ctx->ops = ctx->bytes = 0;
}

/* archive path -> KVS key (with --key prefix); NULL if empty. */
static char *path_to_key (const char *prefix, const char *path)
{
    char *key, *p;

    while (!strncmp (path, "./", 2))
        path += 2;
    if (asprintf (&key, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", path)
        < 0)
        cmd_die ("out of memory");
    for (p = key; *p; p++) {
        if (*p == '/')
            *p = '.';
    }
    /* drop trailing separators (directory entries end in '/') */
    while (p > key && p[-1] == '.')
        *--p = '\0';
    if (!*key || !strcmp (key, prefix ? prefix : "")) {
        free (key);
        return NULL;
    }
    return key;
}

static void restore_entry (struct restore_ctx *ctx, struct tar_entry *e)
{
    char *key = path_to_key (ctx->prefix, e->path);
    int rc = 0;

    if (!key)
        return;
    switch (e->type) {
        case '0':
        case '7':
            rc = flux_kvs_txn_put_raw (ctx->txn, 0, key, e->data, e->size);
            ctx->bytes += e->size;
            break;
        case '2': {
            char *sep = strstr (e->linkname, "::");
            if (sep) {
                *sep = '\0';
                rc = flux_kvs_txn_symlink (ctx->txn, 0, key, e->linkname,
                                           sep + 2);
            }
            else
                rc = flux_kvs_txn_symlink (ctx->txn, 0, key, NULL, e->linkname);
            break;
        }
        case '5':
            rc = flux_kvs_txn_mkdir (ctx->txn, 0, key);
            break;
        default:
            if (!ctx->quiet)
                cmd_warn ("%s: skipping archive entry of type '%c'", e->path,
                          e->type);
            free (key);
            return;
    }
    if (rc < 0)
        cmd_die ("%s: %s", key, strerror (errno));
    if (ctx->verbose)
        fprintf (stderr, "%s\n", key);
    ctx->count++;
    if (++ctx->ops >= 1000 || ctx->bytes >= 4 * 1024 * 1024)
        restore_commit (ctx);
    free (key);
}

int cmd_restore (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'N'},
        {"key", required_argument, NULL, 'k'},
        {"verbose", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, 'q'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct restore_ctx ctx = {0};
    struct tar_reader tr = {0};
    struct tar_entry e;
    int c;

    while ((c = cmd_getopt (argc, argv, "N:vq", longopts)) != -1) {
        if (c == 'N')
            ctx.ns = optarg;
        if (c == 'k')
            ctx.prefix = optarg;
        if (c == 'v')
            ctx.verbose = true;
        if (c == 'q')
            ctx.quiet = true;
    }
    if (argc - optind != 1)
        cmd_usage_error ("specify one FILE");
    tr.path = argv[optind];
    if (!strcmp (tr.path, "-"))
        tr.f = stdin;
    else if (!(tr.f = fopen (tr.path, "r")))
        cmd_die ("%s: %s", tr.path, strerror (errno));
    if (!(ctx.txn = flux_kvs_txn_create ()))
        cmd_die ("out of memory");
    ctx.h = cmd_open ();
    if (ctx.prefix) {
        /* start from an empty directory at KEY */
        if (flux_kvs_txn_mkdir (ctx.txn, 0, ctx.prefix) < 0)
            cmd_die ("--key %s: %s", ctx.prefix, strerror (errno));
        ctx.ops++;
    }
    while (tar_next (&tr, &e)) {
        restore_entry (&ctx, &e);
        tar_entry_clear (&e);
    }
    restore_commit (&ctx);
    if (ctx.verbose)
        fprintf (stderr, "%s: restored %d keys\n", cmd_prog (), ctx.count);
    if (tr.f != stdin)
        fclose (tr.f);
    free (tr.pax_path);
    free (tr.pax_linkpath);
    flux_kvs_txn_destroy (ctx.txn);
    flux_close (ctx.h);
    return 0;
}
