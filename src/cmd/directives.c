/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* directives.c - RFC 36 submission directives (directives.h). */
#define _GNU_SOURCE 1
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "directives.h"

struct line {
    const char *s;
    size_t len;
};

struct buf {
    char *s;
    size_t len, size;
};

struct parser {
    struct line *lines;
    size_t nlines, pos; /* pos: index of the current line */
    const char *prefix; /* the first directive's, within its line */
    size_t prefix_len;
    struct directives *d;
    flux_error_t *error;
};

static int buf_put (struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->size) {
        size_t size = (b->len + n + 1) * 2;
        char *p = realloc (b->s, size);
        if (!p)
            return -1;
        b->s = p;
        b->size = size;
    }
    memcpy (b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

static int fail (struct parser *p, size_t lineno, const char *why)
{
    errno = EINVAL;
    return errprintf (p->error, "line %zu: %s", lineno, why);
}

/* Length of the sentinel's prefix if line l is a directive, else -1;
 * *textp is set to the text after "flux:". */
static ssize_t sentinel (const struct line *l, const char **textp)
{
    size_t i = 0;

    while (i < l->len && !isalnum ((unsigned char)l->s[i]) && l->s[i] != '_')
        i++;
    if (l->len - i >= 5
        && (!strncmp (l->s + i, "flux:", 5)
            || !strncmp (l->s + i, "FLUX:", 5))) {
        *textp = l->s + i + 5;
        return (ssize_t)i;
    }
    return -1;
}

static bool blank (const struct line *l)
{
    for (size_t i = 0; i < l->len; i++)
        if (!isspace ((unsigned char)l->s[i]))
            return false;
    return true;
}

static int add_word (struct parser *p, struct buf *w, size_t lineno)
{
    struct directives *d = p->d;
    char **argv = realloc (d->argv, (d->argc + 2) * sizeof (char *));
    int *line;

    if (!argv)
        return -1;
    d->argv = argv;
    if (!(line = realloc (d->line, (d->argc + 1) * sizeof (int))))
        return -1;
    d->line = line;
    d->argv[d->argc] = w->s ? w->s : strdup ("");
    if (!d->argv[d->argc])
        return -1;
    d->line[d->argc++] = (int)lineno;
    d->argv[d->argc] = NULL;
    memset (w, 0, sizeof (*w));
    return 0;
}

/* The text of the directive on line index i (same sentinel), or NULL. */
static const char *directive_text (struct parser *p, size_t i, size_t *lenp)
{
    const char *text;
    ssize_t n;

    if (i >= p->nlines || (n = sentinel (&p->lines[i], &text)) < 0
        || (size_t)n != p->prefix_len
        || strncmp (p->lines[i].s, p->prefix, p->prefix_len) != 0)
        return NULL;
    *lenp = p->lines[i].len - (size_t)(text - p->lines[i].s);
    return text;
}

/* Indentation common to the non-blank lines of a multiline literal. */
static size_t common_indent (struct line *ls, size_t n)
{
    size_t min = (size_t)-1;

    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        struct line l = ls[i];
        if (blank (&l))
            continue;
        while (k < l.len && (l.s[k] == ' ' || l.s[k] == '\t'))
            k++;
        if (k < min)
            min = k;
    }
    return min == (size_t)-1 ? 0 : min;
}

/* A '''/""" literal opened at the end of the current line: the lines
 * after it up to the one ending with the closing quotes. */
static int multiline (struct parser *p, const char *q, struct buf *w)
{
    size_t start = p->pos, n = 0, len, indent;
    struct line *body = NULL;
    const char *t;
    int rc = -1;

    for (;;) {
        struct line *tmp;
        p->pos++;
        if (!(t = directive_text (p, p->pos, &len))) {
            free (body);
            return fail (p, start + 1, "unterminated multiline quote");
        }
        while (len > 0 && isspace ((unsigned char)t[len - 1]))
            len--;
        if (!(tmp = realloc (body, (n + 1) * sizeof (*body))))
            goto done;
        body = tmp;
        if (len >= 3 && !strncmp (t + len - 3, q, 3)) {
            body[n].s = t;
            body[n].len = len - 3;
            if (!blank (&body[n]))
                n++;
            break;
        }
        if (memmem (t, len, q, 3)) {
            free (body);
            return fail (p, p->pos + 1,
                         "closing triple quotes must end the line");
        }
        body[n].s = t;
        body[n++].len = len;
    }
    indent = common_indent (body, n);
    for (size_t i = 0; i < n; i++) {
        size_t k = body[i].len < indent ? body[i].len : indent;
        if (buf_put (w, body[i].s + k, body[i].len - k) < 0
            || buf_put (w, "\n", 1) < 0)
            goto done;
    }
    if (!w->s && buf_put (w, "", 0) < 0)
        goto done;
    rc = 0;
done:
    if (rc < 0 && errno != EINVAL)
        errprintf (p->error, "out of memory");
    free (body);
    return rc;
}

/* Split the directive text s[0..len) of the current line into words. */
static int split (struct parser *p, const char *s, size_t len)
{
    size_t lineno = p->pos + 1, i = 0;
    struct buf w = {0};
    bool inword = false;

    while (i <= len) {
        char c = i < len ? s[i] : '\0';
        if (c == '\0' || isspace ((unsigned char)c)) {
            if (inword && add_word (p, &w, lineno) < 0)
                goto nomem;
            inword = false;
            if (c == '\0')
                break;
            i++;
        }
        else if (c == '#' && !inword)
            break;
        else if ((c == '\'' || c == '"') && i + 2 < len + 0 && s[i + 1] == c
                 && s[i + 2] == c) {
            char q[4] = {c, c, c, '\0'};
            const char *end;
            inword = true;
            i += 3;
            if (i == len || blank (&(struct line){s + i, len - i})) {
                if (multiline (p, q, &w) < 0) {
                    free (w.s);
                    return -1;
                }
                if (add_word (p, &w, lineno) < 0)
                    goto nomem;
                return 0;
            }
            if (!(end = memmem (s + i, len - i, q, 3))) {
                free (w.s);
                return fail (p, lineno, "unterminated triple quotes");
            }
            if (buf_put (&w, s + i, (size_t)(end - (s + i))) < 0)
                goto nomem;
            i = (size_t)(end - s) + 3;
        }
        else if (c == '\'') {
            const char *end = memchr (s + i + 1, '\'', len - i - 1);
            if (!end) {
                free (w.s);
                return fail (p, lineno, "unterminated single quote");
            }
            inword = true;
            if (buf_put (&w, s + i + 1, (size_t)(end - (s + i + 1))) < 0)
                goto nomem;
            i = (size_t)(end - s) + 1;
        }
        else if (c == '"') {
            inword = true;
            for (i++; i < len && s[i] != '"'; i++) {
                if (s[i] == '\\' && i + 1 < len && strchr ("\"\\$`", s[i + 1]))
                    i++;
                if (buf_put (&w, s + i, 1) < 0)
                    goto nomem;
            }
            if (i >= len) {
                free (w.s);
                return fail (p, lineno, "unterminated double quote");
            }
            if (!w.s && buf_put (&w, "", 0) < 0)
                goto nomem;
            i++;
        }
        else if (c == '\\') {
            if (i + 1 >= len) {
                free (w.s);
                return fail (p, lineno, "backslash at the end of the line");
            }
            inword = true;
            if (buf_put (&w, s + i + 1, 1) < 0)
                goto nomem;
            i += 2;
        }
        else {
            inword = true;
            if (buf_put (&w, s + i, 1) < 0)
                goto nomem;
            i++;
        }
    }
    free (w.s);
    return 0;
nomem:
    free (w.s);
    errno = ENOMEM;
    return errprintf (p->error, "out of memory");
}

static struct line *split_lines (const char *text, size_t *np)
{
    size_t n = 0, cap = 64;
    struct line *ls = malloc (cap * sizeof (*ls));
    const char *s = text;

    while (ls && *s) {
        const char *nl = strchr (s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen (s);
        if (n == cap) {
            struct line *tmp = realloc (ls, (cap *= 2) * sizeof (*ls));
            if (!tmp) {
                free (ls);
                return NULL;
            }
            ls = tmp;
        }
        ls[n].s = s;
        ls[n++].len = len > 0 && s[len - 1] == '\r' ? len - 1 : len;
        s += nl ? len + 1 : len;
    }
    *np = n;
    return ls;
}

int directives_parse (const char *text, struct directives *d,
                      flux_error_t *error)
{
    struct parser p = {.d = d, .error = error};
    size_t stopped = 0; /* 1 + index of the line that ended processing */
    const char *t;
    ssize_t n;

    memset (d, 0, sizeof (*d));
    if (!(p.lines = split_lines (text, &p.nlines))) {
        errno = ENOMEM;
        return errprintf (error, "out of memory");
    }
    for (p.pos = 0; p.pos < p.nlines; p.pos++) {
        struct line *l = &p.lines[p.pos];
        n = sentinel (l, &t);
        if (n >= 0 && stopped) {
            fail (&p, p.pos + 1, "");
            errprintf (error,
                       "line %zu: directive after the end of the directives "
                       "(line %zu)",
                       p.pos + 1, stopped);
            goto error;
        }
        if (n >= 0 && p.prefix
            && ((size_t)n != p.prefix_len
                || strncmp (l->s, p.prefix, p.prefix_len) != 0)) {
            fail (&p, p.pos + 1,
                  "directive sentinel differs from the first directive's");
            goto error;
        }
        if (n >= 0) {
            if (!p.prefix) {
                p.prefix = l->s;
                p.prefix_len = (size_t)n;
            }
            if (split (&p, t, l->len - (size_t)(t - l->s)) < 0)
                goto error;
        }
        else if (p.prefix && !stopped && !blank (l)
                 && (l->len < p.prefix_len
                     || strncmp (l->s, p.prefix, p.prefix_len) != 0))
            stopped = p.pos + 1;
    }
    free (p.lines);
    return 0;
error:
    free (p.lines);
    directives_free (d);
    return -1;
}

void directives_free (struct directives *d)
{
    if (d) {
        int saved_errno = errno;
        for (int i = 0; i < d->argc; i++)
            free (d->argv[i]);
        free (d->argv);
        free (d->line);
        memset (d, 0, sizeof (*d));
        errno = saved_errno;
    }
}
