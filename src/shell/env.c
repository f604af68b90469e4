/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* env.c - task environments (a few dozen variables: linear lookups). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

struct env {
    char **v; /* NULL-terminated */
    int n, alloc;
};

struct env *env_create (void)
{
    struct env *e = calloc (1, sizeof (*e));
    if (e && !(e->v = calloc (1, sizeof (char *)))) {
        free (e);
        return NULL;
    }
    return e;
}

void env_destroy (struct env *e)
{
    if (e) {
        int saved_errno = errno;
        for (int i = 0; i < e->n; i++)
            free (e->v[i]);
        free (e->v);
        free (e);
        errno = saved_errno;
    }
}

static int find (const struct env *e, const char *name)
{
    size_t len = strlen (name);
    for (int i = 0; i < e->n; i++) {
        if (!strncmp (e->v[i], name, len) && e->v[i][len] == '=')
            return i;
    }
    return -1;
}

/* Append s (a name not in e yet). */
static int append (struct env *e, char *s)
{
    if (e->n + 1 >= e->alloc) {
        int n = e->alloc ? e->alloc * 2 : 32;
        char **p = realloc (e->v, n * sizeof (char *));
        if (!p) {
            free (s);
            return -1;
        }
        e->v = p;
        e->alloc = n;
    }
    e->v[e->n++] = s;
    e->v[e->n] = NULL;
    return 0;
}

static int put (struct env *e, char *s, const char *name)
{
    int i = find (e, name);

    if (i >= 0) {
        free (e->v[i]);
        e->v[i] = s;
        return 0;
    }
    return append (e, s);
}

/* "name=value", without printf's machinery (a job's environment is
 * dozens of variables, built for every shell). */
static char *entry (const char *name, const char *value)
{
    size_t n = strlen (name), v = strlen (value);
    char *s = malloc (n + v + 2);

    if (s) {
        memcpy (s, name, n);
        s[n] = '=';
        memcpy (s + n + 1, value, v + 1);
    }
    return s;
}

int env_set (struct env *e, const char *name, const char *value)
{
    char *s;

    if (!e || !name || !*name || strchr (name, '=') || !value) {
        errno = EINVAL;
        return -1;
    }
    if (!(s = entry (name, value)))
        return -1;
    return put (e, s, name);
}

int env_setf (struct env *e, const char *name, const char *fmt, ...)
{
    va_list ap;
    char *val;
    int rc;

    va_start (ap, fmt);
    rc = vasprintf (&val, fmt, ap);
    va_end (ap);
    if (rc < 0)
        return -1;
    rc = env_set (e, name, val);
    free (val);
    return rc;
}

void env_unset (struct env *e, const char *name)
{
    int i = find (e, name);
    if (i >= 0) {
        free (e->v[i]);
        memmove (&e->v[i], &e->v[i + 1], (e->n - i) * sizeof (char *));
        e->n--;
    }
}

const char *env_get (const struct env *e, const char *name)
{
    int i = find (e, name);
    return i >= 0 ? e->v[i] + strlen (name) + 1 : NULL;
}

int env_load_json (struct env *e, const json_t *o)
{
    const char *name;
    json_t *val;
    bool empty = e->n == 0; /* then no name is looked for: JSON keys are
                               unique (linear, not quadratic) */

    json_object_foreach ((json_t *)o, name, val)
    {
        char *s;
        if (!json_is_string (val) || !*name || strchr (name, '='))
            continue;
        if (!empty) {
            if (env_set (e, name, json_string_value (val)) < 0)
                return -1;
            continue;
        }
        if (!(s = entry (name, json_string_value (val))) || append (e, s) < 0)
            return -1;
    }
    return 0;
}

struct env *env_copy (const struct env *e)
{
    struct env *c = env_create ();

    /* e's names are unique: each entry is appended as it is */
    for (int i = 0; c && i < e->n; i++) {
        char *s = strdup (e->v[i]);
        if (!s || append (c, s) < 0) { /* append frees s on failure */
            env_destroy (c);
            return NULL;
        }
    }
    return c;
}

char **env_vector (struct env *e)
{
    return e->v;
}
