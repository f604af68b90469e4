/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* nsmon.c - per-namespace root, owner and key index of watchers.
 *
 * The index maps a normalized key to a struct keyent holding the list of
 * links watching it; a keyent lives exactly as long as its list is not
 * empty.  FULL links sit on their own list.  Every link is also on the
 * "all" list (for namespace removal and stats) and, while the namespace
 * does not exist yet, on the wait list.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/message.h"
#include "libkvs/kvs_util.h"
#include "nsmon.h"
#include "strhash.h"

struct keyent {
    struct list_node links;
    char *key; /* the index key, for deleting the entry */
};

struct nsmon {
    char *name;
    strhash_t *bykey; /* key -> struct keyent */
    struct list_node full;
    struct list_node all;
    struct list_node waiting;
    int count;
    int nwaiting;
    int rootseq;
    char *rootref;
    uint32_t owner;
    unsigned int gen;
};

static void keyent_destroy (void *arg)
{
    struct keyent *k = arg;
    if (k) {
        int saved_errno = errno;
        free (k->key);
        free (k);
        errno = saved_errno;
    }
}

nsmon_t *nsmon_create (const char *name)
{
    nsmon_t *ns;

    if (!name) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ns = calloc (1, sizeof (*ns))))
        return NULL;
    if (!(ns->name = strdup (name))
        || !(ns->bykey = strhash_create (keyent_destroy))) {
        nsmon_destroy (ns);
        return NULL;
    }
    list_init (&ns->full);
    list_init (&ns->all);
    list_init (&ns->waiting);
    ns->rootseq = -1;
    ns->owner = FLUX_USERID_UNKNOWN;
    return ns;
}

void nsmon_destroy (nsmon_t *ns)
{
    if (ns) {
        int saved_errno = errno;
        struct list_node *pos, *tmp;
        if (ns->bykey) {
            list_for_each_safe (pos, tmp, &ns->all)
            {
                nsmon_remove (ns, list_entry (pos, struct nsmon_link, allnode));
            }
        }
        strhash_destroy (ns->bykey);
        free (ns->rootref);
        free (ns->name);
        free (ns);
        errno = saved_errno;
    }
}

const char *nsmon_name (nsmon_t *ns)
{
    return ns ? ns->name : NULL;
}

int nsmon_add (nsmon_t *ns, struct nsmon_link *link, const char *key, bool full,
               void *arg)
{
    struct keyent *k = NULL;

    if (!ns || !link || !key) {
        errno = EINVAL;
        return -1;
    }
    /* A zeroed link (calloc) is not attached either. */
    if (link->allnode.next && list_attached (&link->allnode)) {
        errno = EINVAL;
        return -1;
    }
    list_init (&link->keynode);
    list_init (&link->allnode);
    list_init (&link->waitnode);
    if (full)
        list_add_tail (&ns->full, &link->keynode);
    else {
        if (!(k = strhash_lookup (ns->bykey, key))) {
            if (!(k = calloc (1, sizeof (*k))))
                return -1;
            list_init (&k->links);
            if (!(k->key = strdup (key))
                || strhash_insert (ns->bykey, key, k) < 0) {
                keyent_destroy (k);
                return -1;
            }
        }
        list_add_tail (&k->links, &link->keynode);
    }
    link->kent = k;
    link->arg = arg;
    list_add_tail (&ns->all, &link->allnode);
    ns->count++;
    return 0;
}

void nsmon_remove (nsmon_t *ns, struct nsmon_link *link)
{
    if (!ns || !link || !link->allnode.next || !list_attached (&link->allnode))
        return;
    if (list_attached (&link->waitnode)) {
        list_del (&link->waitnode);
        ns->nwaiting--;
    }
    list_del (&link->keynode);
    list_del (&link->allnode);
    if (link->kent && list_empty (&link->kent->links))
        (void)strhash_delete (ns->bykey, link->kent->key);
    link->kent = NULL;
    ns->count--;
}

int nsmon_count (nsmon_t *ns)
{
    return ns ? ns->count : 0;
}

int nsmon_key_count (nsmon_t *ns)
{
    return ns ? (int)strhash_count (ns->bykey) : 0;
}

void nsmon_wait_create (nsmon_t *ns, struct nsmon_link *link)
{
    if (!ns || !link || !link->allnode.next || !list_attached (&link->allnode)
        || list_attached (&link->waitnode))
        return;
    list_add_tail (&ns->waiting, &link->waitnode);
    ns->nwaiting++;
}

bool nsmon_is_waiting (const struct nsmon_link *link)
{
    return link && link->waitnode.next && list_attached (&link->waitnode);
}

int nsmon_waiting_count (nsmon_t *ns)
{
    return ns ? ns->nwaiting : 0;
}

/* A key as the kvs normalizes it: no empty component, no leading or
 * trailing '.', except the root ".".
 */
static bool key_is_normal (const char *key)
{
    size_t len = strlen (key);

    if (len == 0)
        return false;
    if (len == 1 && key[0] == '.')
        return true;
    if (key[0] == '.' || key[len - 1] == '.' || strstr (key, ".."))
        return false;
    return true;
}

static int wake_key (nsmon_t *ns, const char *key, nsmon_wake_f cb, void *cbarg)
{
    struct keyent *k;
    struct list_node *pos, *tmp;
    int n = 0;

    if (!(k = strhash_lookup (ns->bykey, key)))
        return 0;
    /* cb may detach the link it is given; when the last one goes, the
     * keyent is freed, so never touch k once the list is done.
     */
    list_for_each_safe (pos, tmp, &k->links)
    {
        bool last = (tmp == &k->links);
        cb (list_entry (pos, struct nsmon_link, keynode)->arg, cbarg);
        n++;
        if (last)
            break;
    }
    return n;
}

int nsmon_wake_keys (nsmon_t *ns, const json_t *keys, nsmon_wake_f cb,
                     void *cbarg)
{
    size_t index;
    json_t *value;
    struct list_node *pos, *tmp;
    int n = 0;

    if (!ns || !json_is_array (keys) || !cb) {
        errno = EINVAL;
        return -1;
    }
    json_array_foreach (keys, index, value)
    {
        const char *key = json_string_value (value);
        if (!key)
            continue;
        if (key_is_normal (key))
            n += wake_key (ns, key, cb, cbarg);
        else {
            char *nkey = kvs_util_normalize_key (key, NULL);
            if (nkey)
                n += wake_key (ns, nkey, cb, cbarg);
            free (nkey);
        }
    }
    list_for_each_safe (pos, tmp, &ns->full)
    {
        cb (list_entry (pos, struct nsmon_link, keynode)->arg, cbarg);
        n++;
    }
    return n;
}

void nsmon_wake_waiting (nsmon_t *ns, nsmon_wake_f cb, void *cbarg)
{
    struct list_node *pos, *tmp;

    if (!ns || !cb)
        return;
    list_for_each_safe (pos, tmp, &ns->waiting)
    {
        struct nsmon_link *link = list_entry (pos, struct nsmon_link, waitnode);
        list_del (&link->waitnode);
        ns->nwaiting--;
        cb (link->arg, cbarg);
    }
}

void nsmon_foreach (nsmon_t *ns, nsmon_wake_f cb, void *cbarg)
{
    struct list_node *pos, *tmp;

    if (!ns || !cb)
        return;
    list_for_each_safe (pos, tmp, &ns->all)
    {
        cb (list_entry (pos, struct nsmon_link, allnode)->arg, cbarg);
    }
}

int nsmon_rootseq (nsmon_t *ns)
{
    return ns ? ns->rootseq : -1;
}

const char *nsmon_rootref (nsmon_t *ns)
{
    return ns ? ns->rootref : NULL;
}

int nsmon_update_root (nsmon_t *ns, int seq, const char *ref)
{
    char *cpy;

    if (!ns || !ref || seq < 0) {
        errno = EINVAL;
        return -1;
    }
    if (seq <= ns->rootseq)
        return 0;
    if (!(cpy = strdup (ref)))
        return -1;
    free (ns->rootref);
    ns->rootref = cpy;
    ns->rootseq = seq;
    return 1;
}

uint32_t nsmon_owner (nsmon_t *ns)
{
    return ns ? ns->owner : FLUX_USERID_UNKNOWN;
}

void nsmon_set_owner (nsmon_t *ns, uint32_t owner)
{
    if (ns)
        ns->owner = owner;
}

unsigned int nsmon_gen (nsmon_t *ns)
{
    return ns ? ns->gen : 0;
}

void nsmon_bump_gen (nsmon_t *ns)
{
    if (ns)
        ns->gen++;
}
