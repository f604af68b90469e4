/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobs_list.c - parse a job-list.list response {"jobs":[{...},...]} into
 * flat records without building a jansson object per job (see
 * jobs_format.h).  Strings are unescaped in place in the (copied) text;
 * objects and arrays (annotations, dependencies) are the only values
 * handed to jansson.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/utf8.h"

#include "jobs_format.h"

struct parser {
    char *p;
    char *end;
    struct jobs_list *list;
    size_t size; /* fields allocated */
};

static void skip_ws (struct parser *ps)
{
    while (ps->p < ps->end
           && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\t'
               || *ps->p == '\r'))
        ps->p++;
}

static int expect (struct parser *ps, char c)
{
    skip_ws (ps);
    if (ps->p >= ps->end || *ps->p != c)
        return -1;
    ps->p++;
    return 0;
}

static int read_hex4 (const char *s, unsigned *cp)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexdigit ((unsigned char)s[i]);
        if (h < 0)
            return -1;
        v = v << 4 | h;
    }
    *cp = v;
    return 0;
}

/* A string, unescaped in place and NUL-terminated; returns its start. */
static const char *parse_string (struct parser *ps)
{
    char *start, *out;

    if (expect (ps, '"') < 0)
        return NULL;
    start = out = ps->p;
    /* fast path: no escape before the closing quote */
    {
        char *q = memchr (start, '"', ps->end - start);
        if (q && !memchr (start, '\\', q - start)) {
            *q = '\0';
            ps->p = q + 1;
            return start;
        }
    }
    while (ps->p < ps->end && *ps->p != '"') {
        char c = *ps->p++;
        if (c != '\\') {
            *out++ = c;
            continue;
        }
        if (ps->p >= ps->end)
            return NULL;
        c = *ps->p++;
        switch (c) {
            case 'n':
                *out++ = '\n';
                break;
            case 't':
                *out++ = '\t';
                break;
            case 'r':
                *out++ = '\r';
                break;
            case 'b':
                *out++ = '\b';
                break;
            case 'f':
                *out++ = '\f';
                break;
            case 'u': {
                unsigned cp, lo;
                if (ps->end - ps->p < 4 || read_hex4 (ps->p, &cp) < 0)
                    return NULL;
                ps->p += 4;
                if (cp >= 0xd800 && cp < 0xdc00 && ps->end - ps->p >= 6
                    && ps->p[0] == '\\' && ps->p[1] == 'u'
                    && read_hex4 (ps->p + 2, &lo) == 0 && lo >= 0xdc00
                    && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    ps->p += 6;
                }
                /* the escape took >= 6 bytes, UTF-8 needs <= 4 */
                out += utf8_encode (out, cp);
                break;
            }
            default: /* \" \\ \/ */
                *out++ = c;
                break;
        }
    }
    if (ps->p >= ps->end)
        return NULL;
    *out = '\0'; /* at or before the closing quote */
    ps->p++;
    return start;
}

/* Skip a nested object or array; the span is [start, ps->p). */
static int skip_nested (struct parser *ps)
{
    int depth = 0;

    while (ps->p < ps->end) {
        char c = *ps->p++;
        if (c == '"') {
            while (ps->p < ps->end && *ps->p != '"') {
                if (*ps->p == '\\')
                    ps->p++;
                ps->p++;
            }
            ps->p++;
        }
        else if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            if (--depth == 0)
                return 0;
        }
    }
    return -1;
}

/* A JSON number with a fraction.  Fast path (Clinger): with at most 15
 * significant digits and no exponent, mantissa / 10^k is exact over
 * exact operands, correctly rounded like strtod; else strtod.
 */
static double parse_real (const char *s, const char *end)
{
    static const double pow10[]
        = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
           1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    const char *p = s;
    uint64_t m = 0;
    int digits = 0, frac = -1;
    bool neg = false;

    if (*p == '-')
        neg = true, p++;
    for (; p < end; p++) {
        if (*p >= '0' && *p <= '9') {
            m = m * 10 + (*p - '0');
            if (m > 0)
                digits++;
            if (frac >= 0)
                frac++;
        }
        else if (*p == '.' && frac < 0)
            frac = 0;
        else
            return strtod (s, NULL); /* exponent */
    }
    if (digits > 15 || frac < 0 || frac > 15)
        return strtod (s, NULL);
    return (neg ? -1. : 1.) * ((double)m / pow10[frac]);
}

static int parse_value (struct parser *ps, struct jobs_field *f)
{
    char *start;

    skip_ws (ps);
    if (ps->p >= ps->end)
        return -1;
    start = ps->p;
    switch (*ps->p) {
        case '"':
            f->type = JF_STR;
            return (f->s = parse_string (ps)) ? 0 : -1;
        case '{':
        case '[':
            if (skip_nested (ps) < 0)
                return -1;
            f->type = JF_JSON;
            if (!(f->json = json_loadb (start, ps->p - start, 0, NULL)))
                return -1;
            return 0;
        case 't':
        case 'f':
        case 'n':
            if (ps->end - ps->p >= 4 && !strncmp (ps->p, "true", 4)) {
                f->type = JF_BOOL;
                f->i = 1;
                ps->p += 4;
            }
            else if (ps->end - ps->p >= 5 && !strncmp (ps->p, "false", 5)) {
                f->type = JF_BOOL;
                f->i = 0;
                ps->p += 5;
            }
            else if (ps->end - ps->p >= 4 && !strncmp (ps->p, "null", 4)) {
                f->type = JF_NULL;
                ps->p += 4;
            }
            else
                return -1;
            return 0;
        default: {
            char *e = ps->p;
            bool real = false, neg = false;
            long long v = 0;
            if (*e == '-')
                neg = true, e++;
            if (e >= ps->end || *e < '0' || *e > '9')
                return -1;
            for (; e < ps->end && *e >= '0' && *e <= '9'; e++)
                v = v * 10 + (*e - '0');
            if (e < ps->end && (*e == '.' || *e == 'e' || *e == 'E')) {
                real = true;
                for (; e < ps->end
                       && ((*e >= '0' && *e <= '9') || *e == '.' || *e == 'e'
                           || *e == 'E' || *e == '+' || *e == '-');
                     e++)
                    ;
            }
            if (real) {
                f->type = JF_REAL;
                f->d = parse_real (ps->p, e);
            }
            else {
                f->type = JF_INT;
                f->i = neg ? -v : v;
            }
            ps->p = e;
            return 0;
        }
    }
}

static struct jobs_field *new_field (struct parser *ps)
{
    struct jobs_list *l = ps->list;

    if (l->nfields == ps->size) {
        size_t size = ps->size ? ps->size * 2 : 1024;
        struct jobs_field *p = realloc (l->fields, size * sizeof (*p));
        if (!p)
            return NULL;
        l->fields = p;
        ps->size = size;
    }
    memset (&l->fields[l->nfields], 0, sizeof (l->fields[0]));
    return &l->fields[l->nfields++];
}

static int parse_job (struct parser *ps)
{
    struct jobs_list *l = ps->list;
    size_t first = l->nfields;

    if (expect (ps, '{') < 0)
        return -1;
    skip_ws (ps);
    if (ps->p < ps->end && *ps->p == '}')
        ps->p++;
    else {
        do {
            struct jobs_field *f;
            const char *key = parse_string (ps);
            if (!key || expect (ps, ':') < 0 || !(f = new_field (ps)))
                return -1;
            f->key = key;
            if (parse_value (ps, f) < 0)
                return -1;
            skip_ws (ps);
        } while (ps->p < ps->end && *ps->p++ == ',');
        if (ps->p[-1] != '}')
            return -1;
    }
    /* records point into fields, which may move: store offsets for now */
    if (l->njobs % 256 == 0) {
        struct jobs_rec *p = realloc (l->jobs, (l->njobs + 256) * sizeof (*p));
        if (!p)
            return -1;
        l->jobs = p;
    }
    l->jobs[l->njobs].first = first;
    l->jobs[l->njobs].n = l->nfields - first;
    l->njobs++;
    return 0;
}

void jobs_list_destroy (struct jobs_list *l)
{
    if (l) {
        int saved_errno = errno;
        for (size_t i = 0; i < l->nfields; i++)
            json_decref (l->fields[i].json);
        for (size_t j = 0; l->instance && j < l->njobs; j++)
            json_decref (l->instance[j]);
        free (l->instance);
        free (l->fields);
        free (l->jobs);
        free (l->text);
        free (l);
        errno = saved_errno;
    }
}

struct jobs_list *jobs_list_parse (const char *text, size_t len)
{
    struct jobs_list *l;
    struct parser ps = {0};
    const char *key;

    if (!(l = calloc (1, sizeof (*l))) || !(l->text = malloc (len + 1))) {
        free (l);
        return NULL;
    }
    memcpy (l->text, text, len);
    l->text[len] = '\0';
    ps.p = l->text;
    ps.end = l->text + len;
    ps.list = l;
    if (expect (&ps, '{') < 0)
        goto proto;
    /* {"jobs":[...], other keys ignored} */
    do {
        if (!(key = parse_string (&ps)) || expect (&ps, ':') < 0)
            goto proto;
        if (!strcmp (key, "jobs")) {
            if (expect (&ps, '[') < 0)
                goto proto;
            skip_ws (&ps);
            if (ps.p < ps.end && *ps.p == ']')
                ps.p++;
            else {
                do {
                    if (parse_job (&ps) < 0)
                        goto proto;
                    skip_ws (&ps);
                } while (ps.p < ps.end && *ps.p++ == ',');
                if (ps.p[-1] != ']')
                    goto proto;
            }
        }
        else {
            struct jobs_field tmp = {0};
            if (parse_value (&ps, &tmp) < 0)
                goto proto;
            json_decref (tmp.json);
        }
        skip_ws (&ps);
    } while (ps.p < ps.end && *ps.p++ == ',');
    if (ps.p[-1] != '}')
        goto proto;
    return l;
proto:
    jobs_list_destroy (l);
    errno = EPROTO;
    return NULL;
}

/* Jobs of one response have their keys in the same order: remember
 * where each key (by the caller's pointer, usually a literal) was last
 * found and look there first.
 */
#define HINTS 64
static const char *hint_key[HINTS];
static size_t hint_pos[HINTS];

const struct jobs_field *jobs_get (const struct jobs_list *l, size_t job,
                                   const char *key)
{
    const struct jobs_rec *r = &l->jobs[job];
    size_t slot = ((uintptr_t)key >> 3) % HINTS;

    if (hint_key[slot] == key && hint_pos[slot] < r->n) {
        const struct jobs_field *f = &l->fields[r->first + hint_pos[slot]];
        if (!strcmp (f->key, key))
            return f;
    }
    for (size_t i = 0; i < r->n; i++) {
        const struct jobs_field *f = &l->fields[r->first + i];
        if (f->key[0] == key[0] && !strcmp (f->key, key)) {
            hint_key[slot] = key;
            hint_pos[slot] = i;
            return f;
        }
    }
    return NULL;
}

json_t *jobs_list_job_json (const struct jobs_list *l, size_t job)
{
    const struct jobs_rec *r = &l->jobs[job];
    json_t *o = json_object ();

    for (size_t i = 0; o && i < r->n; i++) {
        const struct jobs_field *f = &l->fields[r->first + i];
        json_t *v = NULL;
        switch (f->type) {
            case JF_NULL:
                v = json_null ();
                break;
            case JF_BOOL:
                v = json_boolean (f->i);
                break;
            case JF_INT:
                v = json_integer (f->i);
                break;
            case JF_REAL:
                v = json_real (f->d);
                break;
            case JF_STR:
                v = json_string (f->s);
                break;
            case JF_JSON:
                v = json_incref (f->json);
                break;
        }
        json_object_set_new (o, f->key, v);
    }
    return o;
}
