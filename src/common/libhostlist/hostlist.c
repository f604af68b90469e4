/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* hostlist.c - ordered host name lists and their RFC 29 string form.
 *
 * A hostlist is an array of runs.  A run is prefix + number + suffix for
 * the numbers lo..hi counting up, printed padded to 'width' digits.  Every
 * name splits one way only (at its last digit group), widths are
 * normalized (0 unless some number in the run really gets a leading zero),
 * and push() extends the last run whenever the new names continue it, so
 * the runs of a given name sequence, and hence its encoding, are unique.
 *
 * Sort, uniq and delete work on "spans": runs cut where padding stops
 * (node[08-10] prints 08,09 padded but 10 as is), so that within a span
 * key (prefix, suffix, numeric, width) equal numbers mean equal names.
 * They build the result in a scratch list and swap it in at the end, so
 * a failure changes nothing.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

#define MAX_NUM (UINT_MAX - 1)
#define NUMBUF (HOSTLIST_MAX_WIDTH + 12) /* one formatted number + NUL */

struct run {
    char *prefix; /* one allocation: prefix, NUL, suffix, NUL */
    char *suffix;
    size_t plen;
    size_t slen;
    unsigned int lo;
    unsigned int hi;
    unsigned int width; /* pad numbers to this many digits; 0 = none */
    bool numeric;       /* if false the name is 'prefix'; lo = hi = 0 */
};

struct hostlist {
    struct run *runs;
    size_t nruns;
    size_t maxruns;
    size_t count;

    int pos; /* cursor: on host 'pos', or in the gap before it */
    bool on;
    bool cached; /* if true, run 'crun' starts at host index 'cbase' */
    size_t crun;
    size_t cbase;
    char *buf; /* name returned by the cursor functions */
    size_t bufsize;

    /* while decode_into() runs: what is left of HOSTLIST_MAX_DECODE */
    bool decoding;
    size_t budget;
};

/* Names as (pointer, length) pieces, for parsing and for sort/delete.
 */
struct span {
    const char *prefix;
    size_t plen;
    const char *suffix;
    size_t slen;
    bool numeric;
    unsigned int lo;
    unsigned int hi;
    unsigned int width;
};

/* Numbers and characters
 */

static bool is_digit (char c)
{
    return c >= '0' && c <= '9';
}

static bool valid_char (char c)
{
    unsigned char u = c;
    return u > 0x20 && u < 0x7f && c != ',' && c != '[' && c != ']';
}

static unsigned int natlen (unsigned int n)
{
    unsigned int len = 1;
    while (n >= 10) {
        n /= 10;
        len++;
    }
    return len;
}

/* Number of characters 'n' prints as when padded to 'width'.
 */
static unsigned int printed_len (unsigned int n, unsigned int width)
{
    unsigned int len = natlen (n);
    return width > len ? width : len;
}

static int fmt_num (char *buf, unsigned int n, unsigned int width)
{
    return snprintf (buf, NUMBUF, "%0*u", (int)width, n);
}

/* Parse 'len' digits at 's' (len >= 1).  -1 if too wide or too large.
 */
static int parse_number (const char *s, size_t len, unsigned int *np)
{
    unsigned long long n = 0;

    if (len == 0 || len > HOSTLIST_MAX_WIDTH)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (!is_digit (s[i]))
            return -1;
        n = n * 10 + (s[i] - '0');
        if (n > MAX_NUM)
            return -1;
    }
    *np = n;
    return 0;
}

/* Split host name s[0..len) (valid characters, len >= 1) at its last
 * digit group.
 */
static void parse_host (const char *s, size_t len, struct span *h)
{
    size_t end = len;
    size_t start;
    unsigned int n;

    memset (h, 0, sizeof (*h));
    while (end > 0 && !is_digit (s[end - 1]))
        end--;
    start = end;
    while (start > 0 && is_digit (s[start - 1]))
        start--;
    if (end == 0 || parse_number (s + start, end - start, &n) < 0) {
        h->prefix = s;
        h->plen = len;
        h->suffix = "";
        return;
    }
    h->prefix = s;
    h->plen = start;
    h->suffix = s + end;
    h->slen = len - end;
    h->numeric = true;
    h->lo = h->hi = n;
    if (s[start] == '0' && end - start > 1)
        h->width = end - start;
}

static bool valid_hostname (const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (!valid_char (*s))
            return false;
    return true;
}

/* Runs
 */

static size_t run_count (const struct run *r)
{
    return (size_t)(r->hi - r->lo) + 1;
}

static struct span run_span (const struct run *r)
{
    struct span sp = {
        .prefix = r->prefix,
        .plen = r->plen,
        .suffix = r->suffix,
        .slen = r->slen,
        .numeric = r->numeric,
        .lo = r->lo,
        .hi = r->hi,
        .width = r->width,
    };
    return sp;
}

static void free_runs (struct run *runs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free (runs[i].prefix);
    free (runs);
}

static int reserve_runs (struct hostlist *hl, size_t n)
{
    if (hl->nruns + n > hl->maxruns) {
        size_t max = hl->maxruns ? hl->maxruns : 8;
        struct run *runs;
        while (max < hl->nruns + n)
            max *= 2;
        if (!(runs = realloc (hl->runs, max * sizeof (*runs))))
            return -1;
        hl->runs = runs;
        hl->maxruns = max;
    }
    return 0;
}

static bool same_affixes (const struct run *r, const struct span *sp)
{
    return r->plen == sp->plen && r->slen == sp->slen
           && !memcmp (r->prefix, sp->prefix, sp->plen)
           && !memcmp (r->suffix, sp->suffix, sp->slen);
}

/* True if the names of 'sp' continue run 'r'.  r->hi + 1 cannot wrap.
 */
static bool continues (const struct run *r, const struct span *sp)
{
    return r->numeric && sp->numeric && r->hi + 1 == sp->lo
           && printed_len (sp->lo, r->width) == printed_len (sp->lo, sp->width)
           && same_affixes (r, sp);
}

/* What a name formatted or stored on its own costs, besides its bytes:
 * about a struct run and an allocation. */
#define ITEM_COST 64

/* Charge a decode in progress for work on a name of len bytes: ERANGE
 * once HOSTLIST_MAX_DECODE is spent.  Free when not decoding.
 */
static int charge (struct hostlist *hl, size_t len)
{
    if (!hl->decoding)
        return 0;
    if (len + ITEM_COST > hl->budget) {
        errno = ERANGE;
        return -1;
    }
    hl->budget -= len + ITEM_COST;
    return 0;
}

static int check_room (const struct hostlist *hl, size_t n)
{
    if (n > (size_t)INT_MAX - hl->count) {
        errno = ERANGE;
        return -1;
    }
    return 0;
}

/* Append the names of 'sp' to 'hl', extending the last run if possible.
 */
static int push (struct hostlist *hl, const struct span *sp)
{
    size_t n = (size_t)(sp->hi - sp->lo) + 1;
    struct run *r;

    if (check_room (hl, n) < 0)
        return -1;
    if (hl->nruns > 0 && continues (&hl->runs[hl->nruns - 1], sp)) {
        hl->runs[hl->nruns - 1].hi = sp->hi;
        hl->count += n;
        return 0;
    }
    if (reserve_runs (hl, 1) < 0)
        return -1;
    r = &hl->runs[hl->nruns];
    if (!(r->prefix = malloc (sp->plen + sp->slen + 2)))
        return -1;
    memcpy (r->prefix, sp->prefix, sp->plen);
    r->prefix[sp->plen] = '\0';
    r->suffix = r->prefix + sp->plen + 1;
    memcpy (r->suffix, sp->suffix, sp->slen);
    r->suffix[sp->slen] = '\0';
    r->plen = sp->plen;
    r->slen = sp->slen;
    r->numeric = sp->numeric;
    r->lo = sp->lo;
    r->hi = sp->hi;
    r->width = sp->numeric && sp->width > natlen (sp->lo) ? sp->width : 0;
    hl->nruns++;
    hl->count += n;
    return 0;
}

/* Move all runs of 'src' to the end of 'hl', leaving 'src' empty.
 */
static int splice (struct hostlist *hl, struct hostlist *src)
{
    if (check_room (hl, src->count) < 0 || reserve_runs (hl, src->nruns) < 0)
        return -1;
    for (size_t i = 0; i < src->nruns; i++) {
        struct run *r = &src->runs[i];
        struct span sp = run_span (r);
        if (hl->nruns > 0 && continues (&hl->runs[hl->nruns - 1], &sp)) {
            hl->runs[hl->nruns - 1].hi = r->hi;
            free (r->prefix);
        }
        else
            hl->runs[hl->nruns++] = *r;
    }
    hl->count += src->count;
    src->nruns = 0;
    src->count = 0;
    return 0;
}

/* Decode
 */

struct elem {
    unsigned int lo;
    unsigned int hi;
};

struct idlist {
    struct elem *elems;
    size_t n;
    unsigned int width;
    uint64_t count;
};

/* Parse one idlist element "N" or "N-M" in s[0..len).
 */
static int parse_elem (const char *s, size_t len, struct elem *e,
                       unsigned int *width)
{
    const char *dash = memchr (s, '-', len);
    size_t n1 = dash ? (size_t)(dash - s) : len;

    if (parse_number (s, n1, &e->lo) < 0)
        return -1;
    e->hi = e->lo;
    if (dash
        && (parse_number (dash + 1, len - n1 - 1, &e->hi) < 0 || e->hi < e->lo))
        return -1;
    if (width)
        *width = s[0] == '0' && n1 > 1 ? n1 : 0;
    return 0;
}

/* Parse the idlist s[0..len), the text between '[' and ']'.
 */
static int parse_idlist (const char *s, size_t len, struct idlist *il)
{
    size_t n = 1;
    size_t i = 0;

    for (size_t j = 0; j < len; j++)
        if (s[j] == ',')
            n++;
    if (!(il->elems = calloc (n, sizeof (il->elems[0]))))
        return -1;
    while (il->n < n) {
        const char *comma = memchr (s + i, ',', len - i);
        size_t elen = comma ? (size_t)(comma - (s + i)) : len - i;
        struct elem *e = &il->elems[il->n];
        if (parse_elem (s + i, elen, e, il->n == 0 ? &il->width : NULL) < 0)
            goto inval;
        il->count += (uint64_t)(e->hi - e->lo) + 1;
        if (il->count > HOSTLIST_MAX_EXPAND) {
            errno = ERANGE;
            return -1;
        }
        il->n++;
        i += elen + 1;
    }
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

/* Append prefix + (each id of 'il') + suffix.  The run fast path applies
 * when the id is sure to be the names' last digit group.  Work that the
 * text does not pay for byte by byte is charged (see hostlist.h): each
 * name formatted on its own, and in a product of idlists ('product'),
 * where this runs once per combination, each element pushed.
 */
static int push_idlist (struct hostlist *hl, const char *prefix, size_t plen,
                        const char *suffix, size_t slen,
                        const struct idlist *il, bool product)
{
    bool fast = (plen == 0 || !is_digit (prefix[plen - 1]));
    char *name;

    for (size_t i = 0; i < slen; i++)
        if (is_digit (suffix[i]))
            fast = false;
    if (fast) {
        for (size_t i = 0; i < il->n; i++) {
            struct span sp = {
                prefix,          plen,     suffix, slen, true, il->elems[i].lo,
                il->elems[i].hi, il->width};
            if ((product && charge (hl, plen + slen) < 0) || push (hl, &sp) < 0)
                return -1;
        }
        return 0;
    }
    if (!(name = malloc (plen + NUMBUF + slen)))
        return -1;
    memcpy (name, prefix, plen);
    for (size_t i = 0; i < il->n; i++) {
        for (unsigned int v = il->elems[i].lo;; v++) {
            struct span sp;
            int n = fmt_num (name + plen, v, il->width);
            if (charge (hl, plen + n + slen) < 0) {
                free (name);
                return -1;
            }
            memcpy (name + plen + n, suffix, slen);
            parse_host (name, plen + n + slen, &sp);
            if (push (hl, &sp) < 0) {
                free (name);
                return -1;
            }
            if (v == il->elems[i].hi)
                break;
        }
    }
    free (name);
    return 0;
}

struct expr {
    const char **lit; /* k + 1 literals around k idlists */
    size_t *litlen;
    struct idlist *lists;
    size_t k;
};

static void expr_free (struct expr *x)
{
    if (x->lists)
        for (size_t i = 0; i < x->k; i++)
            free (x->lists[i].elems);
    free (x->lists);
    free (x->lit);
    free (x->litlen);
}

/* Split expression e[0..len) (brackets known balanced, not nested) into
 * literals and parsed idlists.
 */
static int expr_parse (const char *e, size_t len, struct expr *x)
{
    size_t i = 0;

    for (size_t j = 0; j < len; j++)
        if (e[j] == '[')
            x->k++;
    if (!(x->lit = calloc (x->k + 1, sizeof (x->lit[0])))
        || !(x->litlen = calloc (x->k + 1, sizeof (x->litlen[0])))
        || !(x->lists = calloc (x->k ? x->k : 1, sizeof (x->lists[0]))))
        return -1;
    for (size_t n = 0; n <= x->k; n++) {
        x->lit[n] = e + i;
        while (i < len && e[i] != '[') {
            if (!valid_char (e[i])) {
                errno = EINVAL;
                return -1;
            }
            i++;
        }
        x->litlen[n] = (e + i) - x->lit[n];
        if (n < x->k) {
            const char *close = memchr (e + i, ']', len - i);
            if (parse_idlist (e + i + 1, close - (e + i + 1), &x->lists[n]) < 0)
                return -1;
            i = (close - e) + 1;
        }
    }
    return 0;
}

/* Build in 'buf' the prefix for the last idlist: the literals with the
 * current values 'val' of the idlists before it.  Returns its length.
 */
static size_t expr_prefix (const struct expr *x, const unsigned int *val,
                           char *buf)
{
    size_t len = 0;

    for (size_t n = 0; n + 1 < x->k; n++) {
        memcpy (buf + len, x->lit[n], x->litlen[n]);
        len += x->litlen[n];
        len += fmt_num (buf + len, val[n], x->lists[n].width);
    }
    memcpy (buf + len, x->lit[x->k - 1], x->litlen[x->k - 1]);
    return len + x->litlen[x->k - 1];
}

/* Step the odometer of the idlists before the last one.
 * Returns false when it wraps around (all combinations done).
 */
static bool expr_advance (const struct expr *x, size_t *idx, unsigned int *val)
{
    for (size_t n = x->k - 1; n-- > 0;) {
        const struct idlist *il = &x->lists[n];
        if (val[n] < il->elems[idx[n]].hi) {
            val[n]++;
            return true;
        }
        if (++idx[n] < il->n) {
            val[n] = il->elems[idx[n]].lo;
            return true;
        }
        idx[n] = 0;
        val[n] = il->elems[0].lo;
    }
    return false;
}

static int expr_expand (struct hostlist *hl, const struct expr *x)
{
    uint64_t total = 1;
    size_t buflen = 1;
    size_t *idx = NULL;
    unsigned int *val = NULL;
    char *buf = NULL;
    int rc = -1;

    for (size_t n = 0; n < x->k; n++) {
        total *= x->lists[n].count; // each count <= HOSTLIST_MAX_EXPAND
        if (total > HOSTLIST_MAX_EXPAND) {
            errno = ERANGE;
            return -1;
        }
        buflen += x->litlen[n] + NUMBUF;
    }
    if (!(idx = calloc (x->k, sizeof (*idx)))
        || !(val = calloc (x->k, sizeof (*val))) || !(buf = malloc (buflen)))
        goto done;
    for (size_t n = 0; n < x->k; n++)
        val[n] = x->lists[n].elems[0].lo;
    do {
        size_t plen = expr_prefix (x, val, buf);
        if (push_idlist (hl, buf, plen, x->lit[x->k], x->litlen[x->k],
                         &x->lists[x->k - 1], x->k > 1)
            < 0)
            goto done;
    } while (expr_advance (x, idx, val));
    rc = 0;
done:
    free (idx);
    free (val);
    free (buf);
    return rc;
}

/* Append the hosts of expression e[0..len) (len >= 1).
 */
static int push_expr (struct hostlist *hl, const char *e, size_t len)
{
    struct expr x = {0};
    int rc = -1;

    if (!memchr (e, '[', len)) {
        struct span sp;
        for (size_t i = 0; i < len; i++)
            if (!valid_char (e[i])) {
                errno = EINVAL;
                return -1;
            }
        parse_host (e, len, &sp);
        return push (hl, &sp);
    }
    if (expr_parse (e, len, &x) == 0 && expr_expand (hl, &x) == 0)
        rc = 0;
    expr_free (&x);
    return rc;
}

/* Split 's' at commas outside brackets, checking the brackets.
 */
static int decode_into (struct hostlist *hl, const char *s)
{
    int rc = -1;

    hl->decoding = true;
    hl->budget = HOSTLIST_MAX_DECODE;
    while (*s) {
        const char *start = s;
        bool open = false;
        for (; *s && (open || *s != ','); s++) {
            if ((*s == '[' && open) || (*s == ']' && !open)) {
                errno = EINVAL;
                goto done;
            }
            if (*s == '[' || *s == ']')
                open = !open;
        }
        if (open) {
            errno = EINVAL;
            goto done;
        }
        if (s > start && push_expr (hl, start, s - start) < 0)
            goto done;
        if (*s == ',')
            s++;
    }
    rc = 0;
done:
    hl->decoding = false;
    return rc;
}

/* Create, destroy, copy, append
 */

struct hostlist *hostlist_create (void)
{
    return calloc (1, sizeof (struct hostlist));
}

void hostlist_destroy (struct hostlist *hl)
{
    if (hl) {
        int saved_errno = errno;
        free_runs (hl->runs, hl->nruns);
        free (hl->buf);
        free (hl);
        errno = saved_errno;
    }
}

struct hostlist *hostlist_copy (const struct hostlist *hl)
{
    struct hostlist *cpy;

    if (!hl) {
        errno = EINVAL;
        return NULL;
    }
    if (!(cpy = hostlist_create ()))
        return NULL;
    for (size_t i = 0; i < hl->nruns; i++) {
        struct span sp = run_span (&hl->runs[i]);
        if (push (cpy, &sp) < 0) {
            hostlist_destroy (cpy);
            return NULL;
        }
    }
    return cpy;
}

struct hostlist *hostlist_decode (const char *s)
{
    struct hostlist *hl;

    if (!s) {
        errno = EINVAL;
        return NULL;
    }
    if (!(hl = hostlist_create ()))
        return NULL;
    if (decode_into (hl, s) < 0) {
        hostlist_destroy (hl);
        return NULL;
    }
    return hl;
}

int hostlist_append (struct hostlist *hl, const char *hosts)
{
    struct hostlist *tmp;
    int n;

    if (!hl || !hosts) {
        errno = EINVAL;
        return -1;
    }
    if (!(tmp = hostlist_decode (hosts)))
        return -1;
    n = tmp->count;
    if (splice (hl, tmp) < 0)
        n = -1;
    hostlist_destroy (tmp);
    return n;
}

int hostlist_append_list (struct hostlist *hl1, const struct hostlist *hl2)
{
    struct hostlist *tmp;
    int n;

    if (!hl1 || !hl2) {
        errno = EINVAL;
        return -1;
    }
    if (!(tmp = hostlist_copy (hl2)))
        return -1;
    n = tmp->count;
    if (splice (hl1, tmp) < 0)
        n = -1;
    hostlist_destroy (tmp);
    return n;
}

int hostlist_count (const struct hostlist *hl)
{
    return hl ? (int)hl->count : 0;
}

/* Encode
 */

struct strbuf {
    char *data;
    size_t len;
    size_t size;
};

static int sb_append (struct strbuf *sb, const char *s, size_t n)
{
    if (sb->len + n + 1 > sb->size) {
        size_t size = sb->size ? sb->size : 64;
        char *data;
        while (size < sb->len + n + 1)
            size *= 2;
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

static int sb_num (struct strbuf *sb, unsigned int n, unsigned int width)
{
    char tmp[NUMBUF];
    int len = fmt_num (tmp, n, width);
    return sb_append (sb, tmp, len);
}

/* Encode runs[first..last) (same affixes) as bracketed idlists, numbers
 * printed with the first run's width, at most HOSTLIST_MAX_EXPAND hosts
 * per bracket so that each expression decodes again; a run may be cut
 * between two expressions.
 */
static int encode_group (struct strbuf *sb, const struct run *runs,
                         size_t first, size_t last)
{
    const struct run *r0 = &runs[first];
    size_t i = first;
    unsigned int lo = r0->lo; /* the next id of runs[i] to print */
    bool more = false;

    for (; i < last; more = true) {
        size_t j = i, hosts = 0, nelems = 0;
        unsigned int l = lo;
        bool brackets;

        /* how far this expression goes */
        while (j < last && hosts < HOSTLIST_MAX_EXPAND) {
            size_t avail = (size_t)(runs[j].hi - l) + 1;
            size_t room = HOSTLIST_MAX_EXPAND - hosts;
            nelems++;
            if (avail > room) {
                hosts += room;
                break;
            }
            hosts += avail;
            if (++j < last)
                l = runs[j].lo;
        }
        brackets = nelems > 1 || hosts > 1;
        if (more && sb_append (sb, ",", 1) < 0)
            return -1;
        if (sb_append (sb, r0->prefix, r0->plen) < 0
            || (brackets && sb_append (sb, "[", 1) < 0))
            return -1;
        for (size_t n = 0; n < nelems; n++) {
            size_t avail = (size_t)(runs[i].hi - lo) + 1;
            unsigned int hi
                = avail > hosts ? lo + (unsigned int)(hosts - 1) : runs[i].hi;
            if ((n > 0 && sb_append (sb, ",", 1) < 0)
                || sb_num (sb, lo, r0->width) < 0)
                return -1;
            if (hi > lo
                && (sb_append (sb, "-", 1) < 0
                    || sb_num (sb, hi, r0->width) < 0))
                return -1;
            hosts -= (size_t)(hi - lo) + 1;
            if (hi == runs[i].hi) {
                if (++i < last)
                    lo = runs[i].lo;
            }
            else
                lo = hi + 1;
        }
        if ((brackets && sb_append (sb, "]", 1) < 0)
            || sb_append (sb, r0->suffix, r0->slen) < 0)
            return -1;
    }
    return 0;
}

char *hostlist_encode (const struct hostlist *hl)
{
    struct strbuf sb = {0};
    size_t i = 0;

    if (!hl) {
        errno = EINVAL;
        return NULL;
    }
    if (sb_append (&sb, "", 0) < 0)
        return NULL;
    while (i < hl->nruns) {
        const struct run *r = &hl->runs[i];
        size_t j = i + 1;

        if (i > 0 && sb_append (&sb, ",", 1) < 0)
            goto nomem;
        if (!r->numeric) {
            if (sb_append (&sb, r->prefix, r->plen) < 0)
                goto nomem;
            i++;
            continue;
        }
        /* group the following runs that print alike under r's width */
        while (j < hl->nruns) {
            struct span sp = run_span (&hl->runs[j]);
            if (!sp.numeric || !same_affixes (r, &sp)
                || printed_len (sp.lo, sp.width)
                       != printed_len (sp.lo, r->width))
                break;
            j++;
        }
        if (encode_group (&sb, hl->runs, i, j) < 0)
            goto nomem;
        i = j;
    }
    return sb.data;
nomem:
    free (sb.data);
    errno = ENOMEM;
    return NULL;
}

/* Cursor
 */

/* Find the run holding host 'idx' (< count) and its offset in the run.
 * Starts from the cached position when that is not past 'idx'.
 */
static void locate (struct hostlist *hl, size_t idx, size_t *runp,
                    unsigned int *offp)
{
    size_t last = run_count (&hl->runs[hl->nruns - 1]);
    size_t run = 0;
    size_t base = 0;

    if (idx >= hl->count - last) {
        run = hl->nruns - 1;
        base = hl->count - last;
    }
    else if (hl->cached && hl->cbase <= idx) {
        run = hl->crun;
        base = hl->cbase;
    }
    while (base + run_count (&hl->runs[run]) <= idx)
        base += run_count (&hl->runs[run++]);
    hl->cached = true;
    hl->crun = run;
    hl->cbase = base;
    *runp = run;
    *offp = idx - base;
}

/* Format host 'idx' into hl->buf and put the cursor on it.
 */
static const char *cursor_set (struct hostlist *hl, size_t idx)
{
    const struct run *r;
    size_t run, need;
    unsigned int off;
    char *p;

    locate (hl, idx, &run, &off);
    r = &hl->runs[run];
    need = r->plen + NUMBUF + r->slen;
    if (need > hl->bufsize) {
        char *buf = realloc (hl->buf, need);
        if (!buf)
            return NULL;
        hl->buf = buf;
        hl->bufsize = need;
    }
    p = hl->buf;
    memcpy (p, r->prefix, r->plen + 1);
    if (r->numeric) {
        p += r->plen;
        p += fmt_num (p, r->lo + off, r->width);
        memcpy (p, r->suffix, r->slen + 1);
    }
    hl->pos = idx;
    hl->on = true;
    return hl->buf;
}

static const char *enoent (void)
{
    errno = ENOENT;
    return NULL;
}

const char *hostlist_first (struct hostlist *hl)
{
    if (!hl) {
        errno = EINVAL;
        return NULL;
    }
    if (hl->count == 0) {
        hl->pos = 0;
        hl->on = false;
        return enoent ();
    }
    return cursor_set (hl, 0);
}

const char *hostlist_last (struct hostlist *hl)
{
    if (!hl) {
        errno = EINVAL;
        return NULL;
    }
    if (hl->count == 0) {
        hl->pos = 0;
        hl->on = false;
        return enoent ();
    }
    return cursor_set (hl, hl->count - 1);
}

const char *hostlist_next (struct hostlist *hl)
{
    size_t idx;

    if (!hl) {
        errno = EINVAL;
        return NULL;
    }
    idx = hl->on ? (size_t)hl->pos + 1 : (size_t)hl->pos;
    if (idx >= hl->count) {
        hl->pos = hl->count;
        hl->on = false;
        return enoent ();
    }
    return cursor_set (hl, idx);
}

const char *hostlist_current (struct hostlist *hl)
{
    if (!hl) {
        errno = EINVAL;
        return NULL;
    }
    if (!hl->on)
        return enoent ();
    return cursor_set (hl, hl->pos);
}

const char *hostlist_nth (struct hostlist *hl, int n)
{
    if (!hl || n < 0) {
        errno = EINVAL;
        return NULL;
    }
    if ((size_t)n >= hl->count)
        return enoent ();
    return cursor_set (hl, n);
}

/* True if host 'h' (from parse_host) is in run 'r'; if so, its offset.
 */
static bool run_has (const struct run *r, const struct span *h,
                     unsigned int *off)
{
    if (r->numeric != h->numeric || !same_affixes (r, h))
        return false;
    if (r->numeric) {
        if (h->lo < r->lo || h->lo > r->hi
            || printed_len (h->lo, r->width) != printed_len (h->lo, h->width))
            return false;
        *off = h->lo - r->lo;
    }
    else
        *off = 0;
    return true;
}

int hostlist_find (struct hostlist *hl, const char *hostname)
{
    struct span h;
    size_t base = 0;

    if (!hl || !valid_hostname (hostname)) {
        errno = EINVAL;
        return -1;
    }
    parse_host (hostname, strlen (hostname), &h);
    for (size_t i = 0; i < hl->nruns; i++) {
        unsigned int off;
        if (run_has (&hl->runs[i], &h, &off)) {
            hl->cached = true;
            hl->crun = i;
            hl->cbase = base;
            hl->pos = base + off;
            hl->on = true;
            return hl->pos;
        }
        base += run_count (&hl->runs[i]);
    }
    errno = ENOENT;
    return -1;
}

/* Spans: sort, uniq, delete
 */

/* Cut run 'r' into at most two spans of one width class each:
 * the padded numbers, then those that are wide enough not to need padding.
 */
static size_t split_run (const struct run *r, struct span out[2])
{
    uint64_t unpadded = 1; // first number that prints without padding

    out[0] = run_span (r);
    if (!r->numeric || r->width == 0)
        return 1;
    for (unsigned int i = 1; i < r->width && unpadded <= UINT_MAX; i++)
        unpadded *= 10;
    if (r->lo >= unpadded) { // not reached: widths are normalized
        out[0].width = 0;
        return 1;
    }
    if (r->hi < unpadded)
        return 1;
    out[0].hi = unpadded - 1;
    out[1] = run_span (r);
    out[1].lo = unpadded;
    out[1].width = 0;
    return 2;
}

static int cmp_str (const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp (a, b, alen < blen ? alen : blen);
    if (c == 0 && alen != blen)
        c = alen < blen ? -1 : 1;
    return c;
}

static int cmp_key (const struct span *a, const struct span *b)
{
    int c;

    if ((c = cmp_str (a->prefix, a->plen, b->prefix, b->plen))
        || (c = cmp_str (a->suffix, a->slen, b->suffix, b->slen)))
        return c;
    if (a->numeric != b->numeric)
        return a->numeric ? 1 : -1;
    if (a->width != b->width)
        return a->width < b->width ? -1 : 1;
    return 0;
}

static int cmp_span (const void *va, const void *vb)
{
    const struct span *a = va;
    const struct span *b = vb;
    int c = cmp_key (a, b);

    if (c == 0 && a->lo != b->lo)
        c = a->lo < b->lo ? -1 : 1;
    if (c == 0 && a->hi != b->hi)
        c = a->hi < b->hi ? -1 : 1;
    return c;
}

static int cmp_uint (const void *va, const void *vb)
{
    unsigned int a = *(const unsigned int *)va;
    unsigned int b = *(const unsigned int *)vb;
    return a < b ? -1 : a > b;
}

/* All spans of 'hl', sorted.  Returns the array (caller frees) or NULL.
 */
static struct span *sorted_spans (const struct hostlist *hl, size_t *np)
{
    struct span *sp;
    size_t n = 0;

    if (!(sp = malloc ((2 * hl->nruns + 1) * sizeof (*sp))))
        return NULL;
    for (size_t i = 0; i < hl->nruns; i++)
        n += split_run (&hl->runs[i], sp + n);
    qsort (sp, n, sizeof (*sp), cmp_span);
    *np = n;
    return sp;
}

/* Push numbers lo..hi of key 'k', each 'mult' times (once if mult == 1).
 */
static int push_mult (struct hostlist *out, const struct span *k,
                      unsigned int lo, unsigned int hi, size_t mult)
{
    struct span sp = *k;

    if (mult == 1) {
        sp.lo = lo;
        sp.hi = hi;
        return push (out, &sp);
    }
    for (unsigned int v = lo;; v++) {
        sp.lo = sp.hi = v;
        for (size_t i = 0; i < mult; i++)
            if (push (out, &sp) < 0)
                return -1;
        if (v == hi)
            break;
    }
    return 0;
}

/* Push the sorted multiset of numbers covered by the n spans 'g' (one key,
 * sorted by lo): a sweep over span starts and ends tracking multiplicity.
 */
static int sweep (struct hostlist *out, const struct span *g, size_t n,
                  unsigned int *ends, bool uniq)
{
    size_t i = 0, j = 0, mult = 0;
    uint64_t cur = g[0].lo;

    for (size_t k = 0; k < n; k++)
        ends[k] = g[k].hi;
    qsort (ends, n, sizeof (ends[0]), cmp_uint);
    while (j < n) {
        uint64_t next = UINT64_MAX;
        while (i < n && g[i].lo == cur) {
            mult++;
            i++;
        }
        while (j < n && (uint64_t)ends[j] + 1 == cur) {
            mult--;
            j++;
        }
        if (i < n)
            next = g[i].lo;
        if (j < n && (uint64_t)ends[j] + 1 < next)
            next = (uint64_t)ends[j] + 1;
        if (next == UINT64_MAX)
            break;
        if (mult > 0
            && push_mult (out, &g[0], cur, next - 1, uniq ? 1 : mult) < 0)
            return -1;
        cur = next;
    }
    return 0;
}

/* Replace the runs of 'hl' by those of 'tmp'; reset the cursor.
 */
static void take_runs (struct hostlist *hl, struct hostlist *tmp)
{
    free_runs (hl->runs, hl->nruns);
    hl->runs = tmp->runs;
    hl->nruns = tmp->nruns;
    hl->maxruns = tmp->maxruns;
    hl->count = tmp->count;
    hl->cached = false;
    tmp->runs = NULL;
    tmp->nruns = tmp->maxruns = tmp->count = 0;
}

static int sort_uniq (struct hostlist *hl, bool uniq)
{
    struct hostlist tmp = {0};
    struct span *sp;
    unsigned int *ends = NULL;
    size_t n, g = 0;

    if (!hl) {
        errno = EINVAL;
        return -1;
    }
    if (!(sp = sorted_spans (hl, &n))
        || !(ends = malloc ((n + 1) * sizeof (*ends))))
        goto error;
    while (g < n) {
        size_t e = g + 1;
        while (e < n && cmp_key (&sp[g], &sp[e]) == 0)
            e++;
        if (!sp[g].numeric) {
            if (push_mult (&tmp, &sp[g], 0, 0, uniq ? 1 : e - g) < 0)
                goto error;
        }
        else if (sweep (&tmp, sp + g, e - g, ends, uniq) < 0)
            goto error;
        g = e;
    }
    take_runs (hl, &tmp);
    hl->pos = 0;
    hl->on = false;
    free (sp);
    free (ends);
    return 0;
error:
    free_runs (tmp.runs, tmp.nruns);
    free (sp);
    free (ends);
    errno = ENOMEM;
    return -1;
}

int hostlist_sort (struct hostlist *hl)
{
    return sort_uniq (hl, false);
}

int hostlist_uniq (struct hostlist *hl)
{
    return sort_uniq (hl, true);
}

/* Sorted spans of 'hl' with overlapping or adjacent spans of one key
 * merged, so that within a key they are disjoint and ascending.
 */
static struct span *disjoint_spans (const struct hostlist *hl, size_t *np)
{
    struct span *sp;
    size_t n, m = 0;

    if (!(sp = sorted_spans (hl, &n)))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && cmp_key (&sp[m - 1], &sp[i]) == 0
            && (uint64_t)sp[m - 1].hi + 1 >= sp[i].lo) {
            if (sp[i].hi > sp[m - 1].hi)
                sp[m - 1].hi = sp[i].hi;
        }
        else
            sp[m++] = sp[i];
    }
    *np = m;
    return sp;
}

/* Index of the first of the n spans 'd' that is not below 'p':
 * a smaller key, or the same key ending before p->lo.
 */
static size_t lower_bound (const struct span *d, size_t n, const struct span *p)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_key (&d[mid], p);
        if (c < 0 || (c == 0 && d[mid].hi < p->lo))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct delete_ctx {
    struct hostlist *out;
    const struct span *del; /* names to delete, from disjoint_spans() */
    size_t ndel;
    size_t cursor;    /* the cursor position in the old list */
    size_t before;    /* deleted hosts before the cursor */
    bool cursor_gone; /* the host the cursor was on got deleted */
};

static void note_deleted (struct delete_ctx *ctx, size_t first, size_t last)
{
    if (last < ctx->cursor)
        ctx->before += last - first + 1;
    else if (first < ctx->cursor)
        ctx->before += ctx->cursor - first;
    if (first <= ctx->cursor && ctx->cursor <= last)
        ctx->cursor_gone = true;
}

/* Copy span 'p' (whose first host has index 'base' in the old list) to
 * ctx->out, leaving out the names to delete.
 */
static int delete_span (struct delete_ctx *ctx, const struct span *p,
                        size_t base)
{
    size_t k = lower_bound (ctx->del, ctx->ndel, p);
    struct span keep = *p;
    uint64_t cur = p->lo;

    for (; k < ctx->ndel && cmp_key (&ctx->del[k], p) == 0
           && ctx->del[k].lo <= p->hi;
         k++) {
        unsigned int a = ctx->del[k].lo > p->lo ? ctx->del[k].lo : p->lo;
        unsigned int b = ctx->del[k].hi < p->hi ? ctx->del[k].hi : p->hi;
        if (cur < a) {
            keep.lo = cur;
            keep.hi = a - 1;
            if (push (ctx->out, &keep) < 0)
                return -1;
        }
        note_deleted (ctx, base + (a - p->lo), base + (b - p->lo));
        cur = (uint64_t)b + 1;
    }
    if (cur <= p->hi) {
        keep.lo = cur;
        keep.hi = p->hi;
        if (push (ctx->out, &keep) < 0)
            return -1;
    }
    return 0;
}

int hostlist_delete (struct hostlist *hl, const char *hosts)
{
    struct hostlist tmp = {0};
    struct delete_ctx ctx = {.out = &tmp};
    struct hostlist *d;
    struct span *del = NULL;
    size_t base = 0;
    int n;

    if (!hl || !hosts) {
        errno = EINVAL;
        return -1;
    }
    if (!(d = hostlist_decode (hosts)))
        return -1;
    if (!(del = disjoint_spans (d, &ctx.ndel)))
        goto error;
    ctx.del = del;
    ctx.cursor = hl->pos;
    for (size_t i = 0; i < hl->nruns; i++) {
        struct span p[2];
        size_t np = split_run (&hl->runs[i], p);
        for (size_t j = 0; j < np; j++) {
            size_t pbase = base + (p[j].lo - hl->runs[i].lo);
            if (delete_span (&ctx, &p[j], pbase) < 0)
                goto error;
        }
        base += run_count (&hl->runs[i]);
    }
    n = hl->count - tmp.count;
    take_runs (hl, &tmp);
    hl->pos -= ctx.before;
    if (ctx.cursor_gone)
        hl->on = false;
    free (del);
    hostlist_destroy (d);
    return n;
error:
    free_runs (tmp.runs, tmp.nruns);
    free (del);
    hostlist_destroy (d);
    return -1;
}
