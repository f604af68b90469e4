/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* idset.c - sets of unsigned int ids and their RFC 22 string form.
 *
 * A set is a treap of disjoint, non-adjacent ranges keyed by lo.  Because
 * the ranges are disjoint, lo and hi are both in tree order, so a split
 * can cut the tree on either bound.  Range set/clear are "split out every
 * range the operation touches, replace them, merge back".
 *
 * Nodes are never malloc'd in the middle of a change: each public call
 * first reserves the nodes it can possibly need in s->spare, so once the
 * tree is being rearranged nothing can fail and a failed call changes
 * nothing.  Nodes a change frees go back to s->spare, which is emptied
 * before the call returns.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idset.h"

struct node {
    unsigned int lo;
    unsigned int hi;
    unsigned int prio; /* heap order: parent prio >= child prio */
    struct node *left;
    struct node *right;
};

struct idset {
    struct node *root;
    size_t count;    /* ids in the set */
    size_t nranges;  /* nodes in the tree */
    size_t universe; /* see idset.h */
    int flags;
    uint32_t rng;       /* xorshift32 state for priorities */
    struct node *spare; /* reserved nodes, chained through 'right' */
};

#define MAX_ID (UINT_MAX - 1)
#define CREATE_FLAGS (IDSET_FLAG_AUTOGROW)
#define ENCODE_FLAGS (IDSET_FLAG_BRACKETS | IDSET_FLAG_RANGE)

/* Node pool
 */

static uint32_t next_prio (struct idset *s)
{
    uint32_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return s->rng = x;
}

static void release_spare (struct idset *s)
{
    while (s->spare) {
        struct node *n = s->spare;
        s->spare = n->right;
        free (n);
    }
}

/* Make sure at least 'n' nodes are in the pool.  On failure the pool is
 * emptied and -1 returned with errno = ENOMEM.
 */
static int reserve (struct idset *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct node *node;
        if (!(node = malloc (sizeof (*node)))) {
            release_spare (s);
            errno = ENOMEM;
            return -1;
        }
        node->right = s->spare;
        s->spare = node;
    }
    return 0;
}

/* Take a reserved node for [lo,hi] and account for it.
 */
static struct node *node_take (struct idset *s, unsigned int lo,
                               unsigned int hi)
{
    struct node *n = s->spare;
    s->spare = n->right;
    n->lo = lo;
    n->hi = hi;
    n->prio = next_prio (s);
    n->left = n->right = NULL;
    s->count += (size_t)(hi - lo) + 1;
    s->nranges++;
    return n;
}

/* Give every node of subtree 't' back to the pool and unaccount it.
 */
static void release_tree (struct idset *s, struct node *t)
{
    while (t) {
        struct node *right = t->right;
        release_tree (s, t->left);
        s->count -= (size_t)(t->hi - t->lo) + 1;
        s->nranges--;
        t->right = s->spare;
        s->spare = t;
        t = right;
    }
}

static void free_tree (struct node *t)
{
    while (t) {
        struct node *right = t->right;
        free_tree (t->left);
        free (t);
        t = right;
    }
}

/* Treap primitives
 */

/* Every key in 'a' is below every key in 'b'.
 */
static struct node *merge (struct node *a, struct node *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (a->prio >= b->prio) {
        a->right = merge (a->right, b);
        return a;
    }
    b->left = merge (a, b->left);
    return b;
}

/* 'l' gets the ranges with hi < key, 'r' the rest.
 */
static void split_hi_lt (struct node *t, unsigned int key, struct node **l,
                         struct node **r)
{
    if (!t) {
        *l = *r = NULL;
    }
    else if (t->hi < key) {
        split_hi_lt (t->right, key, &t->right, r);
        *l = t;
    }
    else {
        split_hi_lt (t->left, key, l, &t->left);
        *r = t;
    }
}

/* 'l' gets the ranges with lo <= key, 'r' the rest.
 */
static void split_lo_le (struct node *t, unsigned int key, struct node **l,
                         struct node **r)
{
    if (!t) {
        *l = *r = NULL;
    }
    else if (t->lo <= key) {
        split_lo_le (t->right, key, &t->right, r);
        *l = t;
    }
    else {
        split_lo_le (t->left, key, l, &t->left);
        *r = t;
    }
}

static const struct node *leftmost (const struct node *t)
{
    while (t && t->left)
        t = t->left;
    return t;
}

static const struct node *rightmost (const struct node *t)
{
    while (t && t->right)
        t = t->right;
    return t;
}

/* The first range with hi >= x, or NULL.
 */
static const struct node *find_hi_ge (const struct node *t, unsigned int x)
{
    const struct node *best = NULL;
    while (t) {
        if (t->hi >= x) {
            best = t;
            t = t->left;
        }
        else
            t = t->right;
    }
    return best;
}

/* The last range with lo <= x, or NULL.
 */
static const struct node *find_lo_le (const struct node *t, unsigned int x)
{
    const struct node *best = NULL;
    while (t) {
        if (t->lo <= x) {
            best = t;
            t = t->right;
        }
        else
            t = t->left;
    }
    return best;
}

/* The range following 'n' in set 's'.  hi + 1 cannot wrap: hi <= MAX_ID.
 */
static const struct node *range_after (const struct idset *s,
                                       const struct node *n)
{
    return find_hi_ge (s->root, n->hi + 1);
}

/* Range operations.  Callers reserve one pool node per call first.
 */

static void do_set (struct idset *s, unsigned int lo, unsigned int hi)
{
    struct node *l, *m, *r;

    /* m: ranges overlapping or touching [lo,hi] */
    split_hi_lt (s->root, lo > 0 ? lo - 1 : 0, &l, &m);
    split_lo_le (m, hi + 1, &m, &r);
    if (m) {
        unsigned int mlo = leftmost (m)->lo;
        unsigned int mhi = rightmost (m)->hi;
        if (mlo < lo)
            lo = mlo;
        if (mhi > hi)
            hi = mhi;
        release_tree (s, m);
    }
    s->root = merge (merge (l, node_take (s, lo, hi)), r);
    if (s->universe < (size_t)hi + 1)
        s->universe = (size_t)hi + 1;
}

/* Releasing the overlapped ranges returns at least one node to the pool
 * before at most two are taken, so one reserved node is enough.
 */
static void do_clear (struct idset *s, unsigned int lo, unsigned int hi)
{
    struct node *l, *m, *r;
    struct node *lpiece = NULL;
    struct node *rpiece = NULL;
    unsigned int mlo, mhi;

    /* m: ranges overlapping [lo,hi] */
    split_hi_lt (s->root, lo, &l, &m);
    split_lo_le (m, hi, &m, &r);
    if (!m) {
        s->root = merge (l, r);
        return;
    }
    mlo = leftmost (m)->lo;
    mhi = rightmost (m)->hi;
    release_tree (s, m);
    if (mlo < lo)
        lpiece = node_take (s, mlo, lo - 1);
    if (mhi > hi)
        rpiece = node_take (s, hi + 1, mhi);
    s->root = merge (merge (merge (l, lpiece), rpiece), r);
}

/* Create, destroy, copy
 */

struct idset *idset_create (size_t size, int flags)
{
    struct idset *s;

    if ((flags & ~CREATE_FLAGS)) {
        errno = EINVAL;
        return NULL;
    }
#if SIZE_MAX > UINT_MAX
    if (size > UINT_MAX) {
        errno = EINVAL;
        return NULL;
    }
#endif
    if (!(s = calloc (1, sizeof (*s))))
        return NULL;
    s->universe = size;
    s->flags = flags;
    s->rng = 2463534242u;
    return s;
}

void idset_destroy (struct idset *idset)
{
    if (idset) {
        int saved_errno = errno;
        free_tree (idset->root);
        release_spare (idset);
        free (idset);
        errno = saved_errno;
    }
}

static struct node *clone_tree (const struct node *t, bool *failed)
{
    struct node *n;

    if (!t || *failed)
        return NULL;
    if (!(n = malloc (sizeof (*n)))) {
        *failed = true;
        return NULL;
    }
    *n = *t;
    n->left = clone_tree (t->left, failed);
    n->right = clone_tree (t->right, failed);
    return n;
}

struct idset *idset_copy (const struct idset *idset)
{
    struct idset *cpy;
    bool failed = false;

    if (!idset) {
        errno = EINVAL;
        return NULL;
    }
    if (!(cpy = idset_create (idset->universe, idset->flags)))
        return NULL;
    cpy->root = clone_tree (idset->root, &failed);
    if (failed) {
        idset_destroy (cpy);
        errno = ENOMEM;
        return NULL;
    }
    cpy->count = idset->count;
    cpy->nranges = idset->nranges;
    cpy->rng = idset->rng;
    return cpy;
}

size_t idset_universe_size (const struct idset *idset)
{
    return idset ? idset->universe : 0;
}

/* Encode
 */

struct strbuf {
    char *data;
    size_t len;
    size_t size;
    size_t mark; /* where the list starts: no separator before it */
};

static int sb_append (struct strbuf *sb, const char *s, size_t n)
{
    if (sb->len + n + 1 > sb->size) {
        size_t size = sb->size ? sb->size : 64;
        char *data;
        while (size < sb->len + n + 1) {
            if (size > SIZE_MAX / 2) {
                errno = ENOMEM;
                return -1;
            }
            size *= 2;
        }
        if (!(data = realloc (sb->data, size)))
            return -1;
        sb->data = data;
        sb->size = size;
    }
    memcpy (sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    return 0;
}

static int sb_id (struct strbuf *sb, unsigned int id, char sep)
{
    char tmp[16];
    int n;

    if (sep && sb->len > sb->mark && sb_append (sb, &sep, 1) < 0)
        return -1;
    n = snprintf (tmp, sizeof (tmp), "%u", id);
    return sb_append (sb, tmp, n);
}

static int encode_range (struct strbuf *sb, const struct node *n, int flags)
{
    if ((flags & IDSET_FLAG_RANGE)) {
        if (sb_id (sb, n->lo, ',') < 0)
            return -1;
        if (n->hi > n->lo && sb_id (sb, n->hi, '-') < 0)
            return -1;
        return 0;
    }
    for (unsigned int id = n->lo;; id++) {
        if (sb_id (sb, id, ',') < 0)
            return -1;
        if (id == n->hi)
            break;
    }
    return 0;
}

/* In-order walk.  Recursion depth is the tree height, O(log r) expected.
 */
static int encode_tree (struct strbuf *sb, const struct node *t, int flags)
{
    while (t) {
        if (encode_tree (sb, t->left, flags) < 0
            || encode_range (sb, t, flags) < 0)
            return -1;
        t = t->right;
    }
    return 0;
}

char *idset_encode (const struct idset *idset, int flags)
{
    struct strbuf sb = {0};
    bool brackets;

    if (!idset || (flags & ~ENCODE_FLAGS)) {
        errno = EINVAL;
        return NULL;
    }
    brackets = (flags & IDSET_FLAG_BRACKETS) && idset->count > 1;
    if (sb_append (&sb, brackets ? "[" : "", brackets ? 1 : 0) < 0)
        goto nomem;
    sb.mark = sb.len;
    if (encode_tree (&sb, idset->root, flags) < 0
        || (brackets && sb_append (&sb, "]", 1) < 0))
        goto nomem;
    return sb.data;
nomem:
    free (sb.data);
    errno = ENOMEM;
    return NULL;
}

/* Decode
 */

struct parser {
    const char *s;
    size_t pos;
    size_t end;
    idset_error_t *error;
};

static void verrtext (idset_error_t *error, const char *fmt, va_list ap)
{
    if (error)
        vsnprintf (error->text, sizeof (error->text), fmt, ap);
}

static void errtext (idset_error_t *error, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void errtext (idset_error_t *error, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    verrtext (error, fmt, ap);
    va_end (ap);
}

/* Record a syntax error: fill in the text, set errno = EINVAL, return -1.
 */
static int parse_error (struct parser *p, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static int parse_error (struct parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    verrtext (p->error, fmt, ap);
    va_end (ap);
    errno = EINVAL;
    return -1;
}

static int unexpected (struct parser *p)
{
    unsigned char c = p->s[p->pos];

    if (c > 0x20 && c < 0x7f)
        return parse_error (p, "unexpected character '%c' at position %zu", c,
                            p->pos);
    return parse_error (p, "unexpected character 0x%02x at position %zu", c,
                        p->pos);
}

static bool at_digit (struct parser *p)
{
    return p->pos < p->end && p->s[p->pos] >= '0' && p->s[p->pos] <= '9';
}

static int parse_id (struct parser *p, unsigned int *id)
{
    size_t start = p->pos;
    unsigned long long val = 0;

    if (!at_digit (p)) {
        if (p->pos == p->end)
            return parse_error (p, "expected an id at end of input");
        return unexpected (p);
    }
    if (p->s[p->pos] == '0' && p->pos + 1 < p->end && p->s[p->pos + 1] >= '0'
        && p->s[p->pos + 1] <= '9')
        return parse_error (p, "leading zero in id at position %zu", start);
    while (at_digit (p)) {
        val = val * 10 + (p->s[p->pos++] - '0');
        if (val > MAX_ID)
            return parse_error (p, "id at position %zu exceeds %u", start,
                                MAX_ID);
    }
    *id = val;
    return 0;
}

/* Parse "N" or "N-M" into [lo,hi].
 */
static int parse_element (struct parser *p, unsigned int *lo, unsigned int *hi)
{
    if (parse_id (p, lo) < 0)
        return -1;
    *hi = *lo;
    if (p->pos < p->end && p->s[p->pos] == '-') {
        p->pos++;
        if (parse_id (p, hi) < 0)
            return -1;
        if (*hi <= *lo)
            return parse_error (p, "range %u-%u is not ascending", *lo, *hi);
    }
    return 0;
}

static int parse_list (struct parser *p, struct idset *s)
{
    unsigned int lo, hi;
    bool first = true;
    unsigned int prev_hi = 0;

    if (p->pos == p->end)
        return 0; // empty set
    for (;;) {
        if (parse_element (p, &lo, &hi) < 0)
            return -1;
        if (!first && lo <= prev_hi)
            return parse_error (p,
                                "%u follows %u: ids must be ascending and "
                                "unique",
                                lo, prev_hi);
        if (idset_range_set (s, lo, hi) < 0) {
            errtext (p->error, "out of memory");
            return -1;
        }
        first = false;
        prev_hi = hi;
        if (p->pos == p->end)
            return 0;
        if (p->s[p->pos] != ',')
            return unexpected (p);
        if (++p->pos == p->end)
            return parse_error (p, "trailing comma");
    }
}

struct idset *idset_decode_ex (const char *s, ssize_t len, ssize_t size,
                               int flags, idset_error_t *error)
{
    struct parser p = {.s = s, .error = error};
    struct idset *set;

    if (error)
        error->text[0] = '\0';
    if (!s) {
        parse_error (&p, "input is NULL");
        return NULL;
    }
    if (!(set = idset_create (size < 0 ? 0 : (size_t)size, flags))) {
        errtext (error, "cannot create idset: %s",
                 errno == EINVAL ? "invalid size or flags" : strerror (errno));
        return NULL;
    }
    p.end = len < 0 ? strlen (s) : (size_t)len;
    if (p.end > 0 && s[0] == '[') {
        if (p.end < 2 || s[p.end - 1] != ']') {
            parse_error (&p, "unbalanced bracket");
            goto error;
        }
        p.pos = 1;
        p.end--;
    }
    if (parse_list (&p, set) < 0)
        goto error;
    if (size < 0)
        set->universe = set->root ? (size_t)idset_last (set) + 1 : 0;
    return set;
error:
    idset_destroy (set);
    return NULL;
}

struct idset *idset_decode (const char *s)
{
    return idset_decode_ex (s, -1, 0, 0, NULL);
}

/* Single ids and ranges
 */

static bool valid_range (const struct idset *s, unsigned int *lo,
                         unsigned int *hi)
{
    if (!s || *lo > MAX_ID || *hi > MAX_ID)
        return false;
    if (*lo > *hi) {
        unsigned int tmp = *lo;
        *lo = *hi;
        *hi = tmp;
    }
    return true;
}

int idset_range_set (struct idset *idset, unsigned int lo, unsigned int hi)
{
    if (!valid_range (idset, &lo, &hi)) {
        errno = EINVAL;
        return -1;
    }
    if (reserve (idset, 1) < 0)
        return -1;
    do_set (idset, lo, hi);
    release_spare (idset);
    return 0;
}

int idset_set (struct idset *idset, unsigned int id)
{
    return idset_range_set (idset, id, id);
}

int idset_range_clear (struct idset *idset, unsigned int lo, unsigned int hi)
{
    if (!valid_range (idset, &lo, &hi)) {
        errno = EINVAL;
        return -1;
    }
    if (reserve (idset, 1) < 0)
        return -1;
    do_clear (idset, lo, hi);
    release_spare (idset);
    return 0;
}

int idset_clear (struct idset *idset, unsigned int id)
{
    return idset_range_clear (idset, id, id);
}

bool idset_test (const struct idset *idset, unsigned int id)
{
    const struct node *n;

    if (!idset || id > MAX_ID)
        return false;
    n = idset->root;
    while (n) {
        if (id < n->lo)
            n = n->left;
        else if (id > n->hi)
            n = n->right;
        else
            return true;
    }
    return false;
}

/* Iteration
 */

unsigned int idset_first (const struct idset *idset)
{
    const struct node *n = idset ? leftmost (idset->root) : NULL;
    return n ? n->lo : IDSET_INVALID_ID;
}

unsigned int idset_last (const struct idset *idset)
{
    const struct node *n = idset ? rightmost (idset->root) : NULL;
    return n ? n->hi : IDSET_INVALID_ID;
}

unsigned int idset_next (const struct idset *idset, unsigned int id)
{
    const struct node *n;

    if (!idset || id >= MAX_ID)
        return IDSET_INVALID_ID;
    if (!(n = find_hi_ge (idset->root, id + 1)))
        return IDSET_INVALID_ID;
    return n->lo > id + 1 ? n->lo : id + 1;
}

unsigned int idset_prev (const struct idset *idset, unsigned int id)
{
    const struct node *n;

    if (!idset || id == 0)
        return IDSET_INVALID_ID;
    if (!(n = find_lo_le (idset->root, id - 1)))
        return IDSET_INVALID_ID;
    return n->hi < id - 1 ? n->hi : id - 1;
}

size_t idset_count (const struct idset *idset)
{
    return idset ? idset->count : 0;
}

bool idset_empty (const struct idset *idset)
{
    return !idset || idset->count == 0;
}

/* Set algebra
 */

bool idset_equal (const struct idset *a, const struct idset *b)
{
    const struct node *na, *nb;

    if (!a || !b)
        return false;
    if (a->count != b->count || a->nranges != b->nranges)
        return false;
    na = leftmost (a->root);
    nb = leftmost (b->root);
    while (na && nb) {
        if (na->lo != nb->lo || na->hi != nb->hi)
            return false;
        na = range_after (a, na);
        nb = range_after (b, nb);
    }
    return true;
}

static void add_tree (struct idset *a, const struct node *t)
{
    while (t) {
        add_tree (a, t->left);
        do_set (a, t->lo, t->hi);
        t = t->right;
    }
}

int idset_add (struct idset *a, const struct idset *b)
{
    if (!a) {
        errno = EINVAL;
        return -1;
    }
    if (!b || b == a || !b->root)
        return 0;
    if (reserve (a, b->nranges) < 0)
        return -1;
    add_tree (a, b->root);
    release_spare (a);
    return 0;
}

struct idset *idset_union (const struct idset *a, const struct idset *b)
{
    struct idset *result;

    if (!(result = idset_copy (a)))
        return NULL;
    if (idset_add (result, b) < 0) {
        idset_destroy (result);
        return NULL;
    }
    return result;
}

static void subtract_tree (struct idset *a, const struct node *t)
{
    while (t && a->root) {
        subtract_tree (a, t->left);
        do_clear (a, t->lo, t->hi);
        t = t->right;
    }
}

int idset_subtract (struct idset *a, const struct idset *b)
{
    if (!a) {
        errno = EINVAL;
        return -1;
    }
    if (!b || !b->root)
        return 0;
    if (b == a) {
        free_tree (a->root);
        a->root = NULL;
        a->count = a->nranges = 0;
        return 0;
    }
    if (reserve (a, b->nranges) < 0)
        return -1;
    subtract_tree (a, b->root);
    release_spare (a);
    return 0;
}

struct idset *idset_difference (const struct idset *a, const struct idset *b)
{
    struct idset *result;

    if (!(result = idset_copy (a)))
        return NULL;
    if (idset_subtract (result, b) < 0) {
        idset_destroy (result);
        return NULL;
    }
    return result;
}

struct idset *idset_intersect (const struct idset *a, const struct idset *b)
{
    const struct idset *x, *y;
    struct idset *result;

    if (!a || !b) {
        errno = EINVAL;
        return NULL;
    }
    if (!(result = idset_create (0, 0)))
        return NULL;
    /* Walk the set with fewer ranges, look up its ranges in the other. */
    x = a->nranges <= b->nranges ? a : b;
    y = x == a ? b : a;
    for (const struct node *nx = leftmost (x->root); nx;
         nx = range_after (x, nx)) {
        const struct node *ny = find_hi_ge (y->root, nx->lo);
        while (ny && ny->lo <= nx->hi) {
            unsigned int lo = ny->lo > nx->lo ? ny->lo : nx->lo;
            unsigned int hi = ny->hi < nx->hi ? ny->hi : nx->hi;
            if (idset_range_set (result, lo, hi) < 0) {
                idset_destroy (result);
                return NULL;
            }
            ny = range_after (y, ny);
        }
    }
    return result;
}

bool idset_has_intersection (const struct idset *a, const struct idset *b)
{
    const struct idset *x, *y;

    if (!a || !b)
        return false;
    x = a->nranges <= b->nranges ? a : b;
    y = x == a ? b : a;
    for (const struct node *nx = leftmost (x->root); nx;
         nx = range_after (x, nx)) {
        const struct node *ny = find_hi_ge (y->root, nx->lo);
        if (ny && ny->lo <= nx->hi)
            return true;
    }
    return false;
}

bool idset_is_subset (const struct idset *a, const struct idset *b)
{
    if (!a || !b)
        return false;
    /* b's ranges are disjoint and non-adjacent: each range of a must lie
     * within the one range of b that holds its lo */
    for (const struct node *nx = leftmost (a->root); nx;
         nx = range_after (a, nx)) {
        const struct node *ny = find_hi_ge (b->root, nx->lo);
        if (!ny || ny->lo > nx->lo || ny->hi < nx->hi)
            return false;
    }
    return true;
}

/* Id pool
 */

int idset_alloc (struct idset *idset, unsigned int *id)
{
    const struct node *n;
    unsigned int candidate;

    if (!idset || !id) {
        errno = EINVAL;
        return -1;
    }
    n = leftmost (idset->root);
    candidate = (!n || n->lo > 0) ? 0 : n->hi + 1;
    if (candidate > MAX_ID) {
        errno = ENOSPC;
        return -1;
    }
    if (idset_set (idset, candidate) < 0)
        return -1;
    *id = candidate;
    return 0;
}

int idset_free (struct idset *idset, unsigned int id)
{
    if (!idset || id > MAX_ID) {
        errno = EINVAL;
        return -1;
    }
    if (!idset_test (idset, id)) {
        errno = ENOENT;
        return -1;
    }
    return idset_clear (idset, id);
}
