/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs_dir.c - flux_kvsdir_t: a looked-up RFC 11 dir with its key, and an
 * iterator over its entry names in sorted order.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kvs_dir.h"
#include "kvs_private.h"
#include "kvs_util.h"
#include "treeobj.h"

struct flux_kvsdir {
    int refcount;
    flux_t *h;
    char *rootref;
    char *key; /* normalized */
    json_t *dir;
};

struct flux_kvsitr {
    flux_kvsdir_t *dir;
    const char **names;
    size_t count;
    size_t next;
};

flux_kvsdir_t *kvsdir__create (flux_t *h, const char *rootref, const char *key,
                               json_t *dir)
{
    flux_kvsdir_t *d;

    if (!key || !treeobj_is_dir (dir)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(d = calloc (1, sizeof (*d))))
        return NULL;
    d->refcount = 1;
    d->h = h;
    if (!(d->key = kvs_util_normalize_key (key, NULL))
        || (rootref && !(d->rootref = strdup (rootref)))) {
        flux_kvsdir_destroy (d);
        errno = ENOMEM;
        return NULL;
    }
    d->dir = json_incref (dir);
    return d;
}

flux_kvsdir_t *flux_kvsdir_create (flux_t *h, const char *rootref,
                                   const char *key, const char *json_str)
{
    flux_kvsdir_t *d;
    json_t *dir;

    if (!json_str || !key) {
        errno = EINVAL;
        return NULL;
    }
    if (!(dir = treeobj_decode (json_str)))
        return NULL;
    d = kvsdir__create (h, rootref, key, dir);
    json_decref (dir);
    return d;
}

void flux_kvsdir_incref (flux_kvsdir_t *dir)
{
    if (dir)
        dir->refcount++;
}

void flux_kvsdir_destroy (flux_kvsdir_t *dir)
{
    if (dir && --dir->refcount == 0) {
        int saved_errno = errno;
        json_decref (dir->dir);
        free (dir->rootref);
        free (dir->key);
        free (dir);
        errno = saved_errno;
    }
}

flux_kvsdir_t *flux_kvsdir_copy (const flux_kvsdir_t *dir)
{
    flux_kvsdir_t *cpy;
    json_t *o;

    if (!dir) {
        errno = EINVAL;
        return NULL;
    }
    if (!(o = treeobj_deep_copy (dir->dir)))
        return NULL;
    cpy = kvsdir__create (dir->h, dir->rootref, dir->key, o);
    json_decref (o);
    return cpy;
}

int flux_kvsdir_get_size (const flux_kvsdir_t *dir)
{
    if (!dir) {
        errno = EINVAL;
        return -1;
    }
    return treeobj_get_count (dir->dir);
}

static json_t *entry (const flux_kvsdir_t *dir, const char *name)
{
    return dir && name ? treeobj_get_entry (dir->dir, name) : NULL;
}

bool flux_kvsdir_exists (const flux_kvsdir_t *dir, const char *name)
{
    return entry (dir, name) != NULL;
}

bool flux_kvsdir_isdir (const flux_kvsdir_t *dir, const char *name)
{
    json_t *o = entry (dir, name);

    return o && (treeobj_is_dir (o) || treeobj_is_dirref (o));
}

bool flux_kvsdir_issymlink (const flux_kvsdir_t *dir, const char *name)
{
    return treeobj_is_symlink (entry (dir, name));
}

const char *flux_kvsdir_key (const flux_kvsdir_t *dir)
{
    return dir ? dir->key : NULL;
}

char *flux_kvsdir_key_at (const flux_kvsdir_t *dir, const char *name)
{
    char *s;

    if (!dir || !name || !*name) {
        errno = EINVAL;
        return NULL;
    }
    if (!strcmp (dir->key, "."))
        return strdup (name);
    if (asprintf (&s, "%s.%s", dir->key, name) < 0)
        return NULL;
    return s;
}

flux_t *flux_kvsdir_handle (const flux_kvsdir_t *dir)
{
    return dir ? dir->h : NULL;
}

const char *flux_kvsdir_rootref (const flux_kvsdir_t *dir)
{
    return dir ? dir->rootref : NULL;
}

static int cmp_names (const void *a, const void *b)
{
    return strcmp (*(const char **)a, *(const char **)b);
}

flux_kvsitr_t *flux_kvsitr_create (const flux_kvsdir_t *dir)
{
    flux_kvsitr_t *itr;
    json_t *data;
    const char *name;
    json_t *o;

    if (!dir || !(data = treeobj_get_data (dir->dir))) {
        errno = EINVAL;
        return NULL;
    }
    if (!(itr = calloc (1, sizeof (*itr))))
        return NULL;
    if (!(itr->names = calloc (json_object_size (data) + 1, sizeof (char *)))) {
        free (itr);
        return NULL;
    }
    json_object_foreach (data, name, o)
    {
        itr->names[itr->count++] = name;
    }
    qsort (itr->names, itr->count, sizeof (char *), cmp_names);
    itr->dir = (flux_kvsdir_t *)dir;
    flux_kvsdir_incref (itr->dir);
    return itr;
}

void flux_kvsitr_destroy (flux_kvsitr_t *itr)
{
    if (itr) {
        int saved_errno = errno;
        flux_kvsdir_destroy (itr->dir);
        free (itr->names);
        free (itr);
        errno = saved_errno;
    }
}

const char *flux_kvsitr_next (flux_kvsitr_t *itr)
{
    if (!itr || itr->next >= itr->count)
        return NULL;
    return itr->names[itr->next++];
}

void flux_kvsitr_rewind (flux_kvsitr_t *itr)
{
    if (itr)
        itr->next = 0;
}
