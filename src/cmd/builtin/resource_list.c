/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* resource_list.c - `flux resource list` and `flux resource status`, and
 * the --format strings they take: literal text and {field} or
 * {field:[<>^]width} items (a subset of Python's format spec, as in
 * flux-core's commands). */
#define _GNU_SOURCE 1
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"
#include "libidset/idset.h"
#include "resource_cmd.h"

/* ---- --format ---- */

struct item {
    char *text;  /* literal text, or NULL for a field */
    char *field; /* field name */
    char align;  /* '<', '>' or '^' */
    int width;
};

struct res_format {
    struct item *items;
    int count;
};

static void add_item (struct res_format *f, struct item it)
{
    struct item *v = realloc (f->items, (f->count + 1) * sizeof (*v));
    if (!v)
        cmd_die ("out of memory");
    f->items = v;
    f->items[f->count++] = it;
}

static void parse_field (struct res_format *f, const char *p, size_t len,
                         const char *const fields[])
{
    struct item it = {.align = '<'};
    const char *colon = memchr (p, ':', len);
    size_t nlen = colon ? (size_t)(colon - p) : len;
    int i;

    if (!(it.field = strndup (p, nlen)))
        cmd_die ("out of memory");
    for (i = 0; fields[i]; i++)
        if (!strcmp (fields[i], it.field))
            break;
    if (!fields[i])
        cmd_usage_error ("unknown format field '%s'", it.field);
    if (colon) {
        const char *s = colon + 1, *end = p + len;
        if (s < end && strchr ("<>^", *s))
            it.align = *s++;
        while (s < end && isdigit ((unsigned char)*s) && it.width < 1000)
            it.width = it.width * 10 + (*s++ - '0');
        if (s != end)
            cmd_usage_error ("bad format spec in '{%.*s}'", (int)len, p);
    }
    add_item (f, it);
}

struct res_format *res_format_parse (const char *fmt,
                                     const char *const fields[])
{
    struct res_format *f = calloc (1, sizeof (*f));
    const char *p = fmt;

    if (!f)
        cmd_die ("out of memory");
    while (*p) {
        const char *open = strchr (p, '{'), *close;
        if (open != p) {
            size_t n = open ? (size_t)(open - p) : strlen (p);
            struct item it = {.text = strndup (p, n)};
            if (!it.text)
                cmd_die ("out of memory");
            add_item (f, it);
            p += n;
            continue;
        }
        if (!(close = strchr (open, '}')) || close == open + 1)
            cmd_usage_error ("unbalanced or empty '{}' in the format");
        parse_field (f, open + 1, (size_t)(close - open - 1), fields);
        p = close + 1;
    }
    return f;
}

void res_format_destroy (struct res_format *f)
{
    if (f) {
        for (int i = 0; i < f->count; i++) {
            free (f->items[i].text);
            free (f->items[i].field);
        }
        free (f->items);
        free (f);
    }
}

static void put (FILE *fp, const struct item *it, const char *v)
{
    int len = (int)strlen (v), pad = it->width > len ? it->width - len : 0;

    if (it->align == '>')
        fprintf (fp, "%*s%s", pad, "", v);
    else if (it->align == '^')
        fprintf (fp, "%*s%s%*s", pad / 2, "", v, pad - pad / 2, "");
    else
        fprintf (fp, "%s%*s", v, pad, "");
}

/* Trailing blanks are dropped so that a left-aligned last column does not
 * pad the line. */
static void print_line (struct res_format *f, res_field_f get, void *arg)
{
    char *buf = NULL;
    size_t size = 0, n;
    FILE *mem = open_memstream (&buf, &size);

    if (!mem)
        cmd_die ("out of memory");
    for (int i = 0; i < f->count; i++) {
        const struct item *it = &f->items[i];
        if (it->text)
            fputs (it->text, mem);
        else
            put (mem, it, get (it->field, arg));
    }
    if (fclose (mem) != 0 || !buf)
        cmd_die ("out of memory");
    n = strlen (buf);
    while (n > 0 && buf[n - 1] == ' ')
        buf[--n] = '\0';
    printf ("%s\n", buf);
    free (buf);
}

static const char *header_cb (const char *field, void *arg)
{
    static char name[64];
    size_t i;

    for (i = 0; field[i] && i < sizeof (name) - 1; i++)
        name[i] = (char)toupper ((unsigned char)field[i]);
    name[i] = '\0';
    return name;
}

void res_format_header (struct res_format *f)
{
    print_line (f, header_cb, NULL);
}

void res_format_row (struct res_format *f, res_field_f get, void *arg)
{
    print_line (f, get, arg);
}

/* ---- a row: one state and its resources ---- */

struct row {
    const char *state;
    struct rlist *rl;
    char buf[4][32];
    char *nodelist, *ranks;
};

static const char *row_cb (const char *field, void *arg)
{
    struct row *r = arg;

    if (!strcmp (field, "state"))
        return r->state;
    if (!strcmp (field, "nnodes")) {
        snprintf (r->buf[0], sizeof (r->buf[0]), "%d", rlist_nnodes (r->rl));
        return r->buf[0];
    }
    if (!strcmp (field, "ncores")) {
        snprintf (r->buf[1], sizeof (r->buf[1]), "%d",
                  rlist_count_cores (r->rl));
        return r->buf[1];
    }
    if (!strcmp (field, "ngpus")) {
        snprintf (r->buf[2], sizeof (r->buf[2]), "%d",
                  rlist_count_gpus (r->rl));
        return r->buf[2];
    }
    if (!strcmp (field, "nodelist")) {
        if (!r->nodelist && !(r->nodelist = rlist_nodelist (r->rl)))
            cmd_die ("out of memory");
        return r->nodelist;
    }
    if (!strcmp (field, "ranks")) {
        if (!r->ranks && !(r->ranks = rlist_ranks (r->rl)))
            cmd_die ("out of memory");
        return r->ranks;
    }
    return "";
}

static void print_row (struct res_format *f, const char *state,
                       struct rlist *rl)
{
    struct row r = {.state = state, .rl = rl};

    res_format_row (f, row_cb, &r);
    free (r.nodelist);
    free (r.ranks);
}

struct opts {
    const char *states;
    const char *format;
    bool no_header;
};

static void parse_opts (int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        {"states", required_argument, NULL, 's'},
        {"format", required_argument, NULL, 'o'},
        {"no-header", no_argument, NULL, 'n'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = cmd_getopt (argc, argv, "s:o:n", longopts)) != -1) {
        if (c == 's')
            o->states = optarg;
        else if (c == 'o')
            o->format = optarg;
        else if (c == 'n')
            o->no_header = true;
    }
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
}

/* ---- list ---- */

int cmd_resource_list (int argc, char **argv)
{
    static const char *const fields[]
        = {"state", "nnodes", "ncores", "ngpus", "nodelist", "ranks", NULL};
    static const char *const states[] = {"free", "allocated", "down", NULL};
    struct opts o = {
        .states = "free,allocated,down",
        .format = "{state:>10} {nnodes:>6} {ncores:>8} {ngpus:>8} {nodelist}",
    };
    struct res_format *f;
    struct res_sets sets;
    json_t *ss;
    flux_t *h;

    parse_opts (argc, argv, &o);
    res_check_states (o.states, states);
    f = res_format_parse (o.format, fields);
    h = cmd_open ();
    ss = res_sched_status (h);
    res_sets_get (ss, &sets);
    if (!o.no_header)
        res_format_header (f);
    {
        struct rlist *v[] = {sets.free, sets.allocated, sets.down};
        for (int i = 0; states[i]; i++)
            if (res_state_in (o.states, states[i]))
                print_row (f, states[i], v[i]);
    }
    res_sets_free (&sets);
    json_decref (ss);
    res_format_destroy (f);
    flux_close (h);
    return 0;
}

/* ---- status ---- */

/* The ranks of the drain object's keys, as one idset string. */
static char *drained_ranks (json_t *drain)
{
    struct idset *all = idset_create (0, 0);
    const char *key;
    json_t *v;
    char *s;

    if (!all)
        cmd_die ("out of memory");
    json_object_foreach (drain, key, v)
    {
        struct idset *ids = idset_decode (key);
        if (!ids || idset_add (all, ids) < 0)
            cmd_die ("resource.status: bad drain idset '%s'", key);
        idset_destroy (ids);
    }
    if (!(s = idset_encode (all, IDSET_FLAG_RANGE)))
        cmd_die ("out of memory");
    idset_destroy (all);
    return s;
}

/* avail: online, not excluded, not drained. */
static char *avail_ranks (const char *online, const char *exclude,
                          const char *drained)
{
    struct idset *a = idset_decode (online), *x = idset_decode (exclude);
    struct idset *d = idset_decode (drained);
    char *s;

    if (!a || !x || !d || idset_subtract (a, x) < 0 || idset_subtract (a, d) < 0
        || !(s = idset_encode (a, IDSET_FLAG_RANGE)))
        cmd_die ("resource.status: bad idsets");
    idset_destroy (a);
    idset_destroy (x);
    idset_destroy (d);
    return s;
}

int cmd_resource_status (int argc, char **argv)
{
    static const char *const fields[]
        = {"state", "nnodes", "ranks", "nodelist", NULL};
    static const char *const states[]
        = {"avail", "online", "offline", "drained", "excluded", NULL};
    struct opts o = {
        .states = NULL,
        .format = "{state:>10} {nnodes:>6} {ranks:<15} {nodelist}",
    };
    const char *online, *offline, *exclude;
    const char *ranks[5];
    char *drained, *avail;
    struct res_format *f;
    struct rlist *all;
    json_t *st, *R, *drain;
    flux_t *h;

    parse_opts (argc, argv, &o);
    if (o.states)
        res_check_states (o.states, states);
    f = res_format_parse (o.format, fields);
    h = cmd_open ();
    st = res_rpc (h, "resource.status", NULL);
    if (json_unpack (st, "{s:o s:o s:s s:s s:s}", "R", &R, "drain", &drain,
                     "online", &online, "offline", &offline, "exclude",
                     &exclude)
        < 0)
        cmd_die ("resource.status: unexpected response");
    all = res_rlist (R, "R");
    drained = drained_ranks (drain);
    avail = avail_ranks (online, exclude, drained);
    ranks[0] = avail;
    ranks[1] = online;
    ranks[2] = offline;
    ranks[3] = drained;
    ranks[4] = exclude;
    if (!o.no_header)
        res_format_header (f);
    for (int i = 0; states[i]; i++) {
        struct rlist *sub;
        if (o.states ? !res_state_in (o.states, states[i])
                     : (i == 0 || !*ranks[i]))
            continue; /* default: the non-empty states, avail left out */
        sub = res_subset (all, ranks[i]);
        print_row (f, states[i], sub);
        rlist_destroy (sub);
    }
    free (avail);
    free (drained);
    rlist_destroy (all);
    json_decref (st);
    res_format_destroy (f);
    flux_close (h);
    return 0;
}
