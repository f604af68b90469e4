/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* hwcores.c - the cores of a node and their CPUs, without hwloc. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/utf8.h"

#include "hwcores.h"

struct coreset {
    uint32_t *w; /* least significant word first; NULL: no such core */
    int n;
};

struct hwcores {
    int ncores;
    int nwords; /* 32-bit words of the core that needs the most */
    struct coreset *cs;
};

static void coresets_free (struct coreset *cs, int n)
{
    for (int i = 0; i < n; i++)
        free (cs[i].w);
    free (cs);
}

void hwcores_destroy (struct hwcores *hc)
{
    if (hc) {
        int saved_errno = errno;
        coresets_free (hc->cs, hc->ncores);
        free (hc);
        errno = saved_errno;
    }
}

struct hwcores *hwcores_create (int ncores)
{
    struct hwcores *hc;

    if (ncores < 0 || ncores > HWCORES_MAX_CPUS) {
        errno = EINVAL;
        return NULL;
    }
    if (!(hc = calloc (1, sizeof (*hc)))
        || (ncores > 0 && !(hc->cs = calloc (ncores, sizeof (hc->cs[0]))))) {
        free (hc);
        errno = ENOMEM;
        return NULL;
    }
    hc->ncores = ncores;
    return hc;
}

int hwcores_count (const struct hwcores *hc)
{
    return hc ? hc->ncores : 0;
}

size_t hwcores_setsize (const struct hwcores *hc)
{
    return CPU_ALLOC_SIZE (hc && hc->nwords > 0 ? hc->nwords * 32 : 1);
}

static const struct coreset *core (const struct hwcores *hc, int i)
{
    if (!hc || i < 0 || i >= hc->ncores || !hc->cs[i].w) {
        errno = EINVAL;
        return NULL;
    }
    return &hc->cs[i];
}

int hwcores_add (const struct hwcores *hc, int i, cpu_set_t *set)
{
    size_t size = hwcores_setsize (hc);
    const struct coreset *c;

    if (!(c = core (hc, i)))
        return -1;
    for (int w = 0; w < c->n; w++) {
        uint32_t word = c->w[w];
        for (int b = 0; word; b++, word >>= 1) {
            if (word & 1)
                CPU_SET_S ((size_t)w * 32 + b, size, set);
        }
    }
    return 0;
}

int hwcores_format (const struct hwcores *hc, int i, char *buf, size_t size)
{
    const struct coreset *c;
    size_t len = 0;

    if (!(c = core (hc, i)))
        return -1;
    for (int w = c->n - 1; w >= 0; w--) {
        /* past the end: only counted (a pointer beyond buf is not made) */
        int n = snprintf (len < size ? buf + len : NULL,
                          len < size ? size - len : 0, "%s0x%08x",
                          w < c->n - 1 ? "," : "", c->w[w]);
        len += (size_t)n;
    }
    if (len >= size) {
        errno = EOVERFLOW;
        return -1;
    }
    return (int)len;
}

/* hwloc's bitmap text in [s, end): "0x00000003", "0x00000001,0x0000ff00"
 * (words of 32 bits, most significant first; an empty word is 0:
 * "0x00000003,,0x0" is CPUs 64 and 65).  An infinite set
 * ("0xf...f,...") is refused: a core has a finite number of CPUs.
 * *words is allocated (least significant first), *n its length.
 */
static int parse_bitmap (const char *s, const char *end, uint32_t **words,
                         int *n)
{
    int count = 1;
    uint32_t *w;

    for (const char *p = s; p < end; p++) {
        if (*p == ',')
            count++;
    }
    if (count > HWCORES_MAX_CPUS / 32 || !(w = calloc (count, sizeof (*w))))
        return -1;
    if (s == end)
        goto inval;
    for (int i = count - 1; i >= 0; i--) {
        uint64_t v = 0;
        int digits = 0;
        bool prefix = false;
        if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
            s += 2;
            prefix = true;
        }
        for (; s < end && *s != ','; s++, digits++) {
            int h = hexdigit ((unsigned char)*s);
            if (h < 0 || digits >= 8)
                goto inval;
            v = (v << 4) | (uint64_t)h;
        }
        if (digits == 0 && prefix) /* an empty word (",,") is 0 */
            goto inval;
        w[i] = (uint32_t)v;
        if (s < end)
            s++; /* the comma */
    }
    *words = w;
    *n = count;
    return 0;
inval:
    free (w);
    errno = EINVAL;
    return -1;
}

/* The value of attribute name (with its leading space: " cpuset=\"")
 * inside the tag [tag, end), or NULL. */
static const char *attr (const char *tag, const char *end, const char *name,
                         const char **vend)
{
    size_t len = strlen (name);
    const char *p = memmem (tag, (size_t)(end - tag), name, len);
    const char *q;

    if (!p || !(q = memchr (p + len, '"', (size_t)(end - p - len))))
        return NULL;
    *vend = q;
    return p + len;
}

/* One pass over the <object> tags: each core's set, in document order,
 * into *csp (*ncp of them). */
static int scan (const char *xml, struct coreset **csp, int *ncp,
                 flux_error_t *error)
{
    const char *p = xml;
    struct coreset *cs = NULL;
    int ncores = 0, cap = 0;

    while ((p = strstr (p, "<object"))) {
        const char *end = strchr (p, '>');
        const char *v, *vend;
        uint32_t *w = NULL;
        int n;
        if (!end) {
            errprintf (error, "topology: unterminated <object> tag");
            goto error;
        }
        if ((v = attr (p, end, " type=\"", &vend)) && vend - v == 4
            && !memcmp (v, "Core", 4)) {
            if (!(v = attr (p, end, " cpuset=\"", &vend))
                || parse_bitmap (v, vend, &w, &n) < 0) {
                errprintf (error, "topology: core %d has no valid cpuset",
                           ncores);
                goto error;
            }
            /* the words past the set's highest CPU are dropped */
            while (n > 1 && w[n - 1] == 0)
                n--;
            if (ncores == cap) {
                int ncap = cap ? 2 * cap : 64;
                struct coreset *c = realloc (cs, ncap * sizeof (*c));
                if (!c) {
                    free (w);
                    errprintf (error, "out of memory");
                    goto error;
                }
                cs = c;
                cap = ncap;
            }
            cs[ncores++] = (struct coreset){w, n};
        }
        p = end;
    }
    *csp = cs;
    *ncp = ncores;
    return 0;
error:
    coresets_free (cs, ncores);
    return -1;
}

struct hwcores *hwcores_parse (const char *xml, flux_error_t *error)
{
    struct hwcores *hc = calloc (1, sizeof (*hc));

    if (!hc || !xml) {
        errprintf (error, "%s", hc ? "no topology" : strerror (errno));
        free (hc);
        return NULL;
    }
    if (scan (xml, &hc->cs, &hc->ncores, error) < 0) {
        free (hc);
        return NULL;
    }
    for (int i = 0; i < hc->ncores; i++) {
        if (hc->cs[i].n > hc->nwords)
            hc->nwords = hc->cs[i].n;
    }
    return hc;
}

int hwcores_set (struct hwcores *hc, int i, const char *bitmap)
{
    uint32_t *w;
    int n;

    if (!hc || i < 0 || i >= hc->ncores || !bitmap
        || parse_bitmap (bitmap, bitmap + strlen (bitmap), &w, &n) < 0) {
        errno = EINVAL;
        return -1;
    }
    while (n > 1 && w[n - 1] == 0)
        n--;
    if (n == 1 && w[0] == 0) { /* a core has a CPU */
        free (w);
        errno = EINVAL;
        return -1;
    }
    free (hc->cs[i].w);
    hc->cs[i] = (struct coreset){w, n};
    if (n > hc->nwords)
        hc->nwords = n;
    return 0;
}
