/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* ns.c - the namespace table (see ns.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "ns.h"

struct nstab {
    struct dict *d;
};

struct kvs_ns *kvs_ns_incref (struct kvs_ns *ns)
{
    if (ns)
        ns->refcount++;
    return ns;
}

void kvs_ns_decref (struct kvs_ns *ns)
{
    if (ns && --ns->refcount == 0) {
        int saved_errno = errno;
        free (ns->name);
        free (ns);
        errno = saved_errno;
    }
}

static void release (void *arg)
{
    struct kvs_ns *ns = arg;
    ns->removed = true;
    kvs_ns_decref (ns);
}

struct nstab *nstab_create (void)
{
    struct nstab *t = calloc (1, sizeof (*t));

    if (!t || !(t->d = dict_create (release))) {
        free (t);
        return NULL;
    }
    return t;
}

void nstab_destroy (struct nstab *t)
{
    if (t) {
        int saved_errno = errno;
        dict_destroy (t->d);
        free (t);
        errno = saved_errno;
    }
}

struct kvs_ns *nstab_add (struct nstab *t, const char *name, uint32_t owner,
                          int flags, const char *rootref, int rootseq)
{
    struct kvs_ns *ns;

    if (!t || !name || !*name || !rootref
        || strlen (rootref) >= sizeof (ns->rootref)) {
        errno = EINVAL;
        return NULL;
    }
    if (dict_lookup (t->d, name)) {
        errno = EEXIST;
        return NULL;
    }
    if (!(ns = calloc (1, sizeof (*ns))))
        return NULL;
    if (!(ns->name = strdup (name))) {
        free (ns);
        return NULL;
    }
    ns->owner = owner;
    ns->flags = flags;
    strcpy (ns->rootref, rootref);
    ns->rootseq = rootseq;
    ns->held_seq = -1;
    ns->refcount = 1;
    list_init (&ns->waiters);
    list_init (&ns->queue);
    list_init (&ns->batches);
    list_init (&ns->settle_link);
    if (dict_insert (t->d, ns->name, ns) < 0) {
        kvs_ns_decref (ns);
        return NULL;
    }
    return ns;
}

struct kvs_ns *nstab_lookup (struct nstab *t, const char *name)
{
    return t && name ? dict_lookup (t->d, name) : NULL;
}

void nstab_remove (struct nstab *t, struct kvs_ns *ns)
{
    if (t && ns && dict_lookup (t->d, ns->name) == ns)
        (void)dict_delete (t->d, ns->name);
}

int nstab_count (struct nstab *t)
{
    return t ? (int)dict_count (t->d) : 0;
}

struct foreach_arg {
    int (*cb) (struct kvs_ns *ns, void *arg);
    void *arg;
};

static int foreach_cb (const char *key, void *val, void *arg)
{
    struct foreach_arg *fa = arg;
    return fa->cb (val, fa->arg);
}

int nstab_foreach (struct nstab *t, int (*cb) (struct kvs_ns *ns, void *arg),
                   void *arg)
{
    struct foreach_arg fa = {cb, arg};
    return t ? dict_foreach (t->d, foreach_cb, &fa) : 0;
}

bool kvs_ns_set_root (struct kvs_ns *ns, const char *rootref, int rootseq)
{
    if (!ns || !rootref || strlen (rootref) >= sizeof (ns->rootref))
        return false;
    strcpy (ns->rootref, rootref);
    ns->rootseq = rootseq;
    return true;
}

bool kvs_ns_advance (struct kvs_ns *ns, const char *rootref, int rootseq)
{
    return ns && rootseq > ns->rootseq
           && kvs_ns_set_root (ns, rootref, rootseq);
}
