/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* taskmap.c - RFC 34 task maps: a growable array of map blocks with
 * merging on append, codecs (JSON, raw, PMI) and lookups by arithmetic
 * over the blocks.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskmap.h"

struct block {
    int nodeid;
    int nnodes;
    int ppn;
    int repeat;
};

struct taskmap {
    struct block *blocks;
    int count;
    int alloc;
    int ntasks; /* total */
    int nnodes; /* highest nodeid + 1 */
};

struct taskmap *taskmap_create (void)
{
    return calloc (1, sizeof (struct taskmap));
}

void taskmap_destroy (struct taskmap *map)
{
    if (map) {
        int saved_errno = errno;
        free (map->blocks);
        free (map);
        errno = saved_errno;
    }
}

static long long block_tasks (const struct block *b)
{
    return (long long)b->nnodes * b->ppn * b->repeat;
}

/* Add a block as given (repeat included), merging it into the last one
 * when the result means the same task order.
 */
static int push_block (struct taskmap *map, struct block nb)
{
    struct block *last = map->count ? &map->blocks[map->count - 1] : NULL;
    long long total = (long long)map->ntasks + block_tasks (&nb);

    if (total > INT_MAX || (long long)nb.nodeid + nb.nnodes > INT_MAX) {
        errno = EOVERFLOW;
        return -1;
    }
    if (last && last->repeat == 1 && nb.repeat == 1) {
        /* the same node again: more tasks per node */
        if (last->nnodes == 1 && nb.nnodes == 1 && last->nodeid == nb.nodeid) {
            last->ppn += nb.ppn;
            goto done;
        }
        /* the next nodes with the same ppn: a longer block */
        if (last->ppn == nb.ppn && last->nodeid + last->nnodes == nb.nodeid) {
            last->nnodes += nb.nnodes;
            goto done;
        }
    }
    if (map->count == map->alloc) {
        int n = map->alloc ? map->alloc * 2 : 8;
        struct block *p = realloc (map->blocks, n * sizeof (*p));
        if (!p)
            return -1;
        map->blocks = p;
        map->alloc = n;
    }
    map->blocks[map->count++] = nb;
done:
    map->ntasks = (int)total;
    if (nb.nodeid + nb.nnodes > map->nnodes)
        map->nnodes = nb.nodeid + nb.nnodes;
    /* two equal blocks in a row are one repeated block */
    if (map->count >= 2) {
        struct block *a = &map->blocks[map->count - 2];
        struct block *b = &map->blocks[map->count - 1];
        if (a->nodeid == b->nodeid && a->nnodes == b->nnodes && a->ppn == b->ppn
            && (long long)a->repeat + b->repeat <= INT_MAX) {
            a->repeat += b->repeat;
            map->count--;
        }
    }
    return 0;
}

int taskmap_append (struct taskmap *map, int nodeid, int nnodes, int ppn)
{
    if (!map || nodeid < 0 || nnodes < 1 || ppn < 1) {
        errno = EINVAL;
        return -1;
    }
    return push_block (map, (struct block){nodeid, nnodes, ppn, 1});
}

static int check_counts (const int *counts, int nnodes)
{
    if (!counts || nnodes < 0)
        return -1;
    for (int i = 0; i < nnodes; i++) {
        if (counts[i] < 0)
            return -1;
    }
    return 0;
}

struct taskmap *taskmap_block (const int *counts, int nnodes)
{
    struct taskmap *map;

    if (check_counts (counts, nnodes) < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(map = taskmap_create ()))
        return NULL;
    for (int i = 0; i < nnodes; i++) {
        if (counts[i] > 0 && taskmap_append (map, i, 1, counts[i]) < 0) {
            taskmap_destroy (map);
            return NULL;
        }
    }
    return map;
}

struct taskmap *taskmap_cyclic (const int *counts, int nnodes, int stride)
{
    struct taskmap *map;
    int *left = NULL;
    int remaining = 1;

    if (check_counts (counts, nnodes) < 0 || stride < 1) {
        errno = EINVAL;
        return NULL;
    }
    if (!(map = taskmap_create ()))
        return NULL;
    if (nnodes > 0 && !(left = malloc (nnodes * sizeof (*left))))
        goto error;
    if (nnodes > 0)
        memcpy (left, counts, nnodes * sizeof (*left));
    /* one round per pass; each round takes >= 1 task, and a round costs
     * O(nnodes), so the total is O(nnodes * max(counts) / stride) */
    while (remaining) {
        remaining = 0;
        for (int i = 0; i < nnodes; i++) {
            int n = left[i] < stride ? left[i] : stride;
            if (n == 0)
                continue;
            if (taskmap_append (map, i, 1, n) < 0)
                goto error;
            left[i] -= n;
            remaining += left[i];
        }
    }
    free (left);
    return map;
error:
    free (left);
    taskmap_destroy (map);
    return NULL;
}

static int decode_blocks (struct taskmap *map, const json_t *a,
                          flux_error_t *error)
{
    size_t i;
    json_t *b;

    json_array_foreach (a, i, b)
    {
        struct block nb;
        json_int_t v[4];

        if (!json_is_array (b) || json_array_size (b) != 4) {
            errprintf (error, "map block %zu is not an array of 4 integers", i);
            goto inval;
        }
        for (int k = 0; k < 4; k++) {
            json_t *e = json_array_get (b, k);
            if (!json_is_integer (e)) {
                errprintf (error, "map block %zu is not an array of 4 integers",
                           i);
                goto inval;
            }
            v[k] = json_integer_value (e);
            if (v[k] < (k == 0 ? 0 : 1) || v[k] > INT_MAX) {
                errprintf (error, "map block %zu: element %d out of range", i,
                           k);
                goto inval;
            }
        }
        nb = (struct block){(int)v[0], (int)v[1], (int)v[2], (int)v[3]};
        if (push_block (map, nb) < 0) {
            errprintf (error, "map block %zu: %s", i, strerror (errno));
            return -1;
        }
    }
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

struct taskmap *taskmap_decode_json (const json_t *o, flux_error_t *error)
{
    struct taskmap *map;
    const json_t *a = o;

    if (json_is_object (o)) {
        json_t *version = json_object_get (o, "version");
        if (!json_is_integer (version) || json_integer_value (version) != 1) {
            errprintf (error, "taskmap version must be 1");
            errno = EINVAL;
            return NULL;
        }
        a = json_object_get (o, "map");
    }
    if (!json_is_array (a)) {
        errprintf (error, "taskmap is not an array");
        errno = EINVAL;
        return NULL;
    }
    if (!(map = taskmap_create ()))
        return NULL;
    if (decode_blocks (map, a, error) < 0) {
        taskmap_destroy (map);
        return NULL;
    }
    return map;
}

/* "0-1;2-3": node i holds the ids of the i-th idset; together they must
 * be exactly 0..N-1.  The input bounds N (each id is written out or in a
 * range), so a node_of table of N entries is fine here.
 */
static struct taskmap *decode_raw (const char *s, flux_error_t *error)
{
    struct taskmap *map = NULL;
    struct idset **sets = NULL;
    int *node_of = NULL;
    int nnodes = 1;
    long long total = 0;
    const char *p;

    for (p = s; *p; p++) {
        if (*p == ';')
            nnodes++;
    }
    if (!(sets = calloc (nnodes, sizeof (*sets))))
        return NULL;
    p = s;
    for (int i = 0; i < nnodes; i++) {
        const char *end = strchr (p, ';');
        size_t len = end ? (size_t)(end - p) : strlen (p);
        idset_error_t e;
        if (!(sets[i] = idset_decode_ex (p, len, -1, 0, &e))) {
            errprintf (error, "node %d: %s", i, e.text);
            goto error;
        }
        total += idset_count (sets[i]);
        p += len + 1;
    }
    if (total > INT_MAX || total == 0) {
        errprintf (error, "raw taskmap has %s tasks",
                   total ? "too many" : "no");
        errno = EINVAL;
        goto error;
    }
    if (!(node_of = malloc (total * sizeof (*node_of))))
        goto error;
    for (long long t = 0; t < total; t++)
        node_of[t] = -1;
    for (int i = 0; i < nnodes; i++) {
        unsigned int id = idset_first (sets[i]);
        while (id != IDSET_INVALID_ID) {
            if (id >= total || node_of[id] >= 0) {
                errprintf (error, "raw taskmap: task %u out of sequence", id);
                errno = EINVAL;
                goto error;
            }
            node_of[id] = i;
            id = idset_next (sets[i], id);
        }
    }
    if (!(map = taskmap_create ()))
        goto error;
    for (long long t = 0; t < total;) {
        long long run = 1;
        while (t + run < total && node_of[t + run] == node_of[t])
            run++;
        if (taskmap_append (map, node_of[t], 1, (int)run) < 0)
            goto error;
        t += run;
    }
    goto out;
error:
    taskmap_destroy (map);
    map = NULL;
out:
    for (int i = 0; i < nnodes; i++)
        idset_destroy (sets[i]);
    free (sets);
    free (node_of);
    return map;
}

struct taskmap *taskmap_decode (const char *s, flux_error_t *error)
{
    const char *p = s;
    struct taskmap *map;
    json_error_t jerr;
    json_t *o;

    if (!s) {
        errprintf (error, "no taskmap");
        errno = EINVAL;
        return NULL;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    if (*p != '[' && *p != '{')
        return decode_raw (s, error);
    if (!(o = json_loads (s, 0, &jerr))) {
        errprintf (error, "taskmap: %s", jerr.text);
        errno = EINVAL;
        return NULL;
    }
    map = taskmap_decode_json (o, error);
    json_decref (o);
    return map;
}

json_t *taskmap_encode_json (const struct taskmap *map, int flags)
{
    json_t *a;

    if (!map || (flags != 0 && flags != TASKMAP_ENCODE_WRAPPED)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(a = json_array ()))
        goto nomem;
    for (int i = 0; i < map->count; i++) {
        const struct block *b = &map->blocks[i];
        json_t *o
            = json_pack ("[iiii]", b->nodeid, b->nnodes, b->ppn, b->repeat);
        if (!o || json_array_append_new (a, o) < 0)
            goto nomem;
    }
    if (flags == TASKMAP_ENCODE_WRAPPED) {
        json_t *w = json_pack ("{s:i s:o}", "version", 1, "map", a);
        a = NULL; /* stolen, even on failure */
        if (!w)
            goto nomem;
        return w;
    }
    return a;
nomem:
    json_decref (a);
    errno = ENOMEM;
    return NULL;
}

/* A growable string for the text encoders. */
struct buf {
    char *s;
    size_t len, size;
};

static int buf_printf (struct buf *b, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static int buf_printf (struct buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (;;) {
        va_start (ap, fmt);
        n = vsnprintf (b->s ? b->s + b->len : NULL, b->s ? b->size - b->len : 0,
                       fmt, ap);
        va_end (ap);
        if (n < 0)
            return -1;
        if (b->s && b->len + n < b->size) {
            b->len += n;
            return 0;
        }
        size_t size = b->size ? b->size * 2 : 64;
        while (size <= b->len + n)
            size *= 2;
        char *p = realloc (b->s, size);
        if (!p)
            return -1;
        b->s = p;
        b->size = size;
    }
}

static char *encode_raw (const struct taskmap *map, struct buf *b)
{
    for (int n = 0; n < map->nnodes; n++) {
        struct idset *ids = taskmap_taskids (map, n);
        char *s = ids ? idset_encode (ids, IDSET_FLAG_RANGE) : NULL;
        int rc = s ? buf_printf (b, "%s%s", n ? ";" : "", s) : -1;
        free (s);
        idset_destroy (ids);
        if (rc < 0)
            return NULL;
    }
    return b->s ? b->s : strdup ("");
}

char *taskmap_encode (const struct taskmap *map, int flags)
{
    struct buf b = {0};
    char *s;

    if (!map) {
        errno = EINVAL;
        return NULL;
    }
    switch (flags) {
        case 0:
        case TASKMAP_ENCODE_WRAPPED: {
            json_t *o = taskmap_encode_json (map, flags);
            if (!o)
                return NULL;
            s = json_dumps (o, JSON_COMPACT);
            json_decref (o);
            if (!s)
                errno = ENOMEM;
            return s;
        }
        case TASKMAP_ENCODE_PMI:
            if (buf_printf (&b, "(vector") < 0)
                goto error;
            for (int i = 0; i < map->count; i++) {
                const struct block *bl = &map->blocks[i];
                for (int r = 0; r < bl->repeat; r++) {
                    if (buf_printf (&b, ",(%d,%d,%d)", bl->nodeid, bl->nnodes,
                                    bl->ppn)
                        < 0)
                        goto error;
                }
            }
            if (buf_printf (&b, ")") < 0)
                goto error;
            return b.s;
        case TASKMAP_ENCODE_RAW:
            if (!(s = encode_raw (map, &b)))
                goto error;
            return s;
        default:
            errno = EINVAL;
            return NULL;
    }
error:
    free (b.s);
    errno = ENOMEM;
    return NULL;
}

bool taskmap_unknown (const struct taskmap *map)
{
    return !map || map->count == 0;
}

int taskmap_nnodes (const struct taskmap *map)
{
    return map ? map->nnodes : 0;
}

int taskmap_total_ntasks (const struct taskmap *map)
{
    return map ? map->ntasks : 0;
}

int taskmap_ntasks (const struct taskmap *map, int nodeid)
{
    long long n = 0;

    if (!map || nodeid < 0) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < map->count; i++) {
        const struct block *b = &map->blocks[i];
        if (nodeid >= b->nodeid && nodeid < b->nodeid + b->nnodes)
            n += (long long)b->ppn * b->repeat;
    }
    return (int)n; /* <= ntasks <= INT_MAX */
}

int taskmap_nodeid (const struct taskmap *map, int taskid)
{
    long long start = 0;

    if (!map || taskid < 0) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < map->count; i++) {
        const struct block *b = &map->blocks[i];
        long long n = block_tasks (b);
        if (taskid < start + n) {
            long long off = taskid - start;
            return b->nodeid + (int)((off / b->ppn) % b->nnodes);
        }
        start += n;
    }
    errno = ENOENT;
    return -1;
}

struct idset *taskmap_taskids (const struct taskmap *map, int nodeid)
{
    struct idset *ids;
    long long start = 0;

    if (!map || nodeid < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ids = idset_create (0, IDSET_FLAG_AUTOGROW)))
        return NULL;
    for (int i = 0; i < map->count; i++) {
        const struct block *b = &map->blocks[i];
        if (nodeid >= b->nodeid && nodeid < b->nodeid + b->nnodes) {
            long long round = (long long)b->nnodes * b->ppn;
            long long first = start + (long long)(nodeid - b->nodeid) * b->ppn;
            for (int r = 0; r < b->repeat; r++) {
                long long lo = first + r * round;
                if (idset_range_set (ids, lo, lo + b->ppn - 1) < 0) {
                    idset_destroy (ids);
                    return NULL;
                }
            }
        }
        start += block_tasks (b);
    }
    return ids;
}

bool taskmap_check (const struct taskmap *old, const struct taskmap *map)
{
    if (!old || !map || old->ntasks != map->ntasks
        || old->nnodes != map->nnodes)
        return false;
    for (int n = 0; n < map->nnodes; n++) {
        if (taskmap_ntasks (old, n) != taskmap_ntasks (map, n))
            return false;
    }
    return true;
}
