/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs_ls.c - `flux kvs ls` (names in columns, like ls(1)) and `flux kvs
 * dir` (KEY = VALUE lines), with the output formats of flux-core's
 * flux kvs.
 */
#define _GNU_SOURCE 1
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkvs/treeobj.h"

#include "kvs_cmd.h"

static const char ls_usage[]
    = "Usage: flux kvs ls [OPTIONS] [KEY...]\n"
      "List directory KEY ('.' if none), or KEY itself if not a directory.\n"
      "A KEY ending in '.' must be a directory.\n"
      "  -N, --namespace=NS  Use namespace NS\n"
      "  -R, --recursive     List subdirectories recursively\n"
      "  -d, --directory     List directories themselves, not their content\n"
      "  -F, --classify      Append '.' to directories, '@' to symlinks\n"
      "  -w, --width=COLS    Fit output in COLS columns (0: no limit)\n"
      "  -1, --one-column    One entry per line\n"
      "  -h, --help          Display this message\n";

static const char dir_usage[]
    = "Usage: flux kvs dir [OPTIONS] [KEY]\n"
      "Print 'KEY = VALUE' for every key in directory KEY ('.' if none);\n"
      "subdirectories print as 'KEY.', symlinks as 'KEY -> TARGET'.\n"
      "Lines are cut to the output width, ending in '...'.\n"
      "  -N, --namespace=NS  Use namespace NS\n"
      "  -R, --recursive     Descend into subdirectories\n"
      "  -d, --directory     Print keys only, not values\n"
      "  -w, --width=COLS    Cut lines at COLS columns (0: no limit)\n"
      "  -a, --at=TREEOBJ    Read from an RFC 11 snapshot (dirref)\n"
      "  -h, --help          Display this message\n";

static int cmd_kvs_ls (int argc, char **argv);
static int cmd_kvs_dir (int argc, char **argv);

const struct builtin kvs_ls_cmd
    = {"ls", "List directories", ls_usage, cmd_kvs_ls};
const struct builtin kvs_dir_cmd = {"dir",
                                    "Print the keys and values of a "
                                    "directory",
                                    dir_usage, cmd_kvs_dir};

static flux_future_t *lookup (flux_t *h, const char *ns, const char *at,
                              int flags, const char *key)
{
    flux_future_t *f;

    if (at)
        f = flux_kvs_lookupat (h, flags, key, at);
    else
        f = flux_kvs_lookup (h, ns, flags, key);
    if (!f)
        cmd_die ("%s: %s", key, strerror (errno));
    return f;
}

/* dir
 */

struct dir_ctx {
    flux_t *h;
    const char *ns;
    const char *at;
    int maxcol;
    bool recursive;
    bool keys_only;
};

/* Print "KEY = VALUE" (or just VALUE if key is NULL), cut at maxcol
 * columns, at the first newline or at the first unprintable byte, with
 * "..." marking a cut.
 */
static void kv_print (const char *key, int maxcol, const char *value)
{
    bool cut = false;
    char *line, *p;

    if (maxcol > 0 && maxcol <= 3)
        maxcol = 0;
    if (asprintf (&line, "%s%s%s", key ? key : "", key ? " = " : "", value) < 0)
        cmd_die ("out of memory");
    if (maxcol > 0) {
        if (strlen (line) > (size_t)maxcol - 3) {
            line[maxcol - 3] = '\0';
            cut = true;
        }
        if ((p = strchr (line, '\n'))) {
            if (p[1] != '\0')
                cut = true;
            *p = '\0';
        }
        for (p = line; *p; p++) {
            if (!isprint ((unsigned char)*p)) {
                *p = '\0';
                cut = true;
                break;
            }
        }
    }
    printf ("%s%s\n", line, cut ? "..." : "");
    free (line);
}

static void dump_dir (struct dir_ctx *ctx, const flux_kvsdir_t *dir)
{
    flux_kvsitr_t *itr;
    const char *name;

    if (!(itr = flux_kvsitr_create (dir)))
        cmd_die ("out of memory");
    while ((name = flux_kvsitr_next (itr))) {
        char *key = flux_kvsdir_key_at (dir, name);
        flux_future_t *f;

        if (!key)
            cmd_die ("out of memory");
        if (flux_kvsdir_issymlink (dir, name)) {
            const char *linkns, *target;
            f = lookup (ctx->h, ctx->ns, ctx->at, FLUX_KVS_READLINK, key);
            if (flux_kvs_lookup_get_symlink (f, &linkns, &target) < 0)
                cmd_die ("%s: %s", key, strerror (errno));
            if (linkns)
                printf ("%s -> %s::%s\n", key, linkns, target);
            else
                printf ("%s -> %s\n", key, target);
            flux_future_destroy (f);
        }
        else if (flux_kvsdir_isdir (dir, name)) {
            const flux_kvsdir_t *sub;
            if (!ctx->recursive) {
                printf ("%s.\n", key);
                free (key);
                continue;
            }
            f = lookup (ctx->h, ctx->ns, ctx->at, FLUX_KVS_READDIR, key);
            if (flux_kvs_lookup_get_dir (f, &sub) < 0)
                cmd_die ("%s: %s", key, strerror (errno));
            if (flux_kvsdir_get_size (sub) == 0)
                printf ("%s.\n", key);
            else
                dump_dir (ctx, sub);
            flux_future_destroy (f);
        }
        else if (ctx->keys_only)
            printf ("%s\n", key);
        else {
            const char *value;
            f = lookup (ctx->h, ctx->ns, ctx->at, 0, key);
            if (flux_kvs_lookup_get (f, &value) < 0)
                cmd_die ("%s: %s", key, strerror (errno));
            kv_print (key, ctx->maxcol, value ? value : "");
            flux_future_destroy (f);
        }
        free (key);
    }
    flux_kvsitr_destroy (itr);
}

static int cmd_kvs_dir (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'N'},
        {"recursive", no_argument, NULL, 'R'},
        {"directory", no_argument, NULL, 'd'},
        {"width", required_argument, NULL, 'w'},
        {"at", required_argument, NULL, 'a'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct dir_ctx ctx = {0};
    const flux_kvsdir_t *dir;
    const char *key = ".";
    flux_future_t *f;
    int c, cols = -1;

    while ((c = cmd_getopt (argc, argv, "N:Rdw:a:", longopts)) != -1) {
        if (c == 'N')
            ctx.ns = optarg;
        if (c == 'R')
            ctx.recursive = true;
        if (c == 'd')
            ctx.keys_only = true;
        if (c == 'w')
            cols = cmd_parse_long ("--width", optarg, 0, 100000);
        if (c == 'a')
            ctx.at = optarg;
    }
    if (argc - optind > 1)
        cmd_usage_error ("specify zero or one directory");
    if (optind < argc)
        key = argv[optind];
    ctx.maxcol = kvs_window_width (cols);
    ctx.h = cmd_open ();
    f = lookup (ctx.h, ctx.ns, ctx.at, FLUX_KVS_READDIR, key);
    if (flux_kvs_lookup_get_dir (f, &dir) < 0)
        cmd_die ("%s: %s", key, strerror (errno));
    dump_dir (&ctx, dir);
    flux_future_destroy (f);
    flux_close (ctx.h);
    return 0;
}

/* ls
 */

struct ls_ctx {
    flux_t *h;
    const char *ns;
    bool recursive, directory, classify;
    int width;
};

/* A growable, sortable list of strings. */
struct names {
    char **v;
    size_t n, cap;
};

static void names_add (struct names *l, char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc (l->v, cap * sizeof (char *));
        if (!v)
            cmd_die ("out of memory");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
}

static int cmp_str (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

static void names_free (struct names *l)
{
    for (size_t i = 0; i < l->n; i++)
        free (l->v[i]);
    free (l->v);
}

/* Print names in columns of the longest name + 4 that fit width (0: no
 * limit; 1: one per line), ls(1) style.
 */
static void print_columns (char **v, size_t n, int width)
{
    size_t maxlen = 0;
    int col = 0, colw, last = 0;

    for (size_t i = 0; i < n; i++) {
        if (strlen (v[i]) > maxlen)
            maxlen = strlen (v[i]);
    }
    colw = maxlen + 4;
    for (size_t i = 0; i < n; i++) {
        if (width != 0 && col + colw > width && col > 0) {
            printf ("\n");
            col = 0;
        }
        else if (last > 0)
            printf ("%*s", colw - last, "");
        printf ("%s", v[i]);
        last = strlen (v[i]);
        col += colw;
    }
    if (col > 0)
        printf ("\n");
}

static void list_dir (struct ls_ctx *ctx, const char *key, bool label,
                      bool vspace)
{
    const flux_kvsdir_t *dir;
    struct names names = {0};
    flux_kvsitr_t *itr;
    flux_future_t *f;
    const char *name;

    f = lookup (ctx->h, ctx->ns, NULL, FLUX_KVS_READDIR, key);
    if (flux_kvs_lookup_get_dir (f, &dir) < 0)
        cmd_die ("%s: %s", key, strerror (errno));
    if (label)
        printf ("%s%s:\n", vspace ? "\n" : "", key);
    if (!(itr = flux_kvsitr_create (dir)))
        cmd_die ("out of memory");
    while ((name = flux_kvsitr_next (itr))) {
        char *s;
        const char *suffix = "";
        if (ctx->classify && flux_kvsdir_isdir (dir, name))
            suffix = ".";
        else if (ctx->classify && flux_kvsdir_issymlink (dir, name))
            suffix = "@";
        if (asprintf (&s, "%s%s", name, suffix) < 0)
            cmd_die ("out of memory");
        names_add (&names, s);
    }
    print_columns (names.v, names.n, ctx->width);
    names_free (&names);
    if (ctx->recursive) {
        flux_kvsitr_rewind (itr);
        while ((name = flux_kvsitr_next (itr))) {
            char *sub;
            if (!flux_kvsdir_isdir (dir, name))
                continue;
            if (!(sub = flux_kvsdir_key_at (dir, name)))
                cmd_die ("out of memory");
            list_dir (ctx, sub, true, true);
            free (sub);
        }
    }
    flux_kvsitr_destroy (itr);
    flux_future_destroy (f);
}

/* Sort KEY into dirs (to list their content) or singles (to print as a
 * name).  Returns -1 after printing an error for a bad KEY.
 */
static int categorize (struct ls_ctx *ctx, const char *key, struct names *dirs,
                       struct names *singles)
{
    bool want_dir = false;
    flux_future_t *f;
    const char *s;
    json_t *o;
    char *nkey;
    size_t len;

    if (!(nkey = malloc (strlen (key) + 2)))
        cmd_die ("out of memory");
    strcpy (nkey, key);
    while ((len = strlen (nkey)) > 1 && nkey[len - 1] == '.') {
        nkey[len - 1] = '\0';
        want_dir = true;
    }
    f = lookup (ctx->h, ctx->ns, NULL, FLUX_KVS_TREEOBJ, nkey);
    if (flux_kvs_lookup_get_treeobj (f, &s) < 0) {
        fprintf (stderr, "%s: %s: %s\n", cmd_prog (), nkey, strerror (errno));
        goto error;
    }
    if (!(o = treeobj_decode (s)))
        cmd_die ("%s: malformed RFC 11 object", nkey);
    if (treeobj_is_dir (o) || treeobj_is_dirref (o)) {
        if (ctx->directory) {
            if (ctx->classify)
                strcat (nkey, ".");
            names_add (singles, nkey);
        }
        else
            names_add (dirs, nkey);
    }
    else if (want_dir) {
        fprintf (stderr, "%s: %s: %s\n", cmd_prog (), nkey, strerror (ENOTDIR));
        json_decref (o);
        goto error;
    }
    else if (treeobj_is_symlink (o) && !ctx->classify && !ctx->directory) {
        /* follow the link: list a directory's content, else the name */
        flux_future_t *f2 = lookup (ctx->h, ctx->ns, NULL, 0, nkey);
        if (flux_kvs_lookup_get (f2, NULL) == 0 || errno == ENOENT)
            names_add (singles, nkey); /* a value, or a dangling link */
        else if (errno == EISDIR)
            names_add (dirs, nkey);
        else
            cmd_die ("%s: %s", nkey, strerror (errno));
        flux_future_destroy (f2);
    }
    else {
        if (treeobj_is_symlink (o) && ctx->classify)
            strcat (nkey, "@");
        names_add (singles, nkey);
    }
    json_decref (o);
    flux_future_destroy (f);
    return 0;
error:
    free (nkey);
    flux_future_destroy (f);
    return -1;
}

static int cmd_kvs_ls (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'N'},
        {"recursive", no_argument, NULL, 'R'},
        {"directory", no_argument, NULL, 'd'},
        {"classify", no_argument, NULL, 'F'},
        {"width", required_argument, NULL, 'w'},
        {"one-column", no_argument, NULL, '1'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct names dirs = {0}, singles = {0};
    struct ls_ctx ctx = {0};
    bool label = false, vspace = false, one = false;
    int c, cols = -1, rc = 0;

    while ((c = cmd_getopt (argc, argv, "N:RdFw:1", longopts)) != -1) {
        if (c == 'N')
            ctx.ns = optarg;
        if (c == 'R')
            ctx.recursive = true;
        if (c == 'd')
            ctx.directory = true;
        if (c == 'F')
            ctx.classify = true;
        if (c == 'w')
            cols = cmd_parse_long ("--width", optarg, 0, 100000);
        if (c == '1')
            one = true;
    }
    ctx.width = one ? 1 : kvs_window_width (cols);
    ctx.h = cmd_open ();
    if (optind == argc && categorize (&ctx, ".", &dirs, &singles) < 0)
        rc = 1;
    for (int i = optind; i < argc; i++) {
        if (categorize (&ctx, argv[i], &dirs, &singles) < 0)
            rc = 1;
    }
    if (singles.n > 1) /* qsort's array may not be NULL, even empty */
        qsort (singles.v, singles.n, sizeof (char *), cmp_str);
    if (dirs.n > 1)
        qsort (dirs.v, dirs.n, sizeof (char *), cmp_str);
    if (singles.n > 0) {
        print_columns (singles.v, singles.n, ctx.width);
        label = vspace = true;
    }
    if (ctx.recursive || dirs.n > 1)
        label = true;
    for (size_t i = 0; i < dirs.n; i++) {
        list_dir (&ctx, dirs.v[i], label, vspace);
        vspace = true;
    }
    names_free (&singles);
    names_free (&dirs);
    flux_close (ctx.h);
    return rc;
}
