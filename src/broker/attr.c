/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* attr.c - broker attributes: a string hash table and attr.* services. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "attr.h"

struct entry {
    struct entry *next;
    char *name;
    char *value; /* NULL: registered but unset */
    int flags;
    attr_hook_f hook;
    void *hook_arg;
};

struct attr {
    struct entry **buckets;
    size_t nbuckets, count;
    flux_msg_handler_t **handlers;
};

static size_t hash (const char *s)
{
    size_t h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

struct attr *attr_create (void)
{
    struct attr *a;

    if (!(a = calloc (1, sizeof (*a))))
        return NULL;
    a->nbuckets = 128;
    if (!(a->buckets = calloc (a->nbuckets, sizeof (*a->buckets)))) {
        free (a);
        return NULL;
    }
    return a;
}

void attr_destroy (struct attr *a)
{
    if (a) {
        int saved_errno = errno;
        size_t i;
        attr_unregister_services (a);
        for (i = 0; i < a->nbuckets; i++) {
            struct entry *e;
            while ((e = a->buckets[i])) {
                a->buckets[i] = e->next;
                free (e->name);
                free (e->value);
                free (e);
            }
        }
        free (a->buckets);
        free (a);
        errno = saved_errno;
    }
}

static struct entry *lookup (struct attr *a, const char *name)
{
    struct entry *e;
    for (e = a->buckets[hash (name) % a->nbuckets]; e; e = e->next)
        if (!strcmp (e->name, name))
            return e;
    return NULL;
}

static int store (struct entry *e, const char *value)
{
    char *v = NULL;
    if (value && !(v = strdup (value)))
        return -1;
    free (e->value);
    e->value = v;
    return 0;
}

int attr_add (struct attr *a, const char *name, const char *value, int flags)
{
    struct entry *e;
    size_t b;

    if (!a || !name || !*name) {
        errno = EINVAL;
        return -1;
    }
    if ((e = lookup (a, name))) {
        e->flags = flags;
        return store (e, value);
    }
    if (!(e = calloc (1, sizeof (*e))) || !(e->name = strdup (name))
        || store (e, value) < 0) {
        if (e)
            free (e->name);
        free (e);
        return -1;
    }
    e->flags = flags;
    b = hash (name) % a->nbuckets;
    e->next = a->buckets[b];
    a->buckets[b] = e;
    a->count++;
    return 0;
}

const char *attr_get (struct attr *a, const char *name, int *flags)
{
    struct entry *e = lookup (a, name);

    if (!e || !e->value) {
        errno = ENOENT;
        return NULL;
    }
    if (flags)
        *flags = e->flags;
    return e->value;
}

int attr_set_user (struct attr *a, const char *name, const char *value,
                   bool startup, bool force)
{
    struct entry *e = lookup (a, name);

    if (!e) {
        if (!startup) {
            errno = ENOENT;
            return -1;
        }
        return attr_add (a, name, value, 0);
    }
    if ((e->flags & ATTR_READONLY)
        || (!startup && (e->flags & ATTR_IMMUTABLE))) {
        errno = EPERM;
        return -1;
    }
    if (!startup && !(e->flags & ATTR_RUNTIME) && !force) {
        errno = EINVAL;
        return -1;
    }
    if (e->hook && e->hook (e->name, value, e->hook_arg) < 0)
        return -1;
    return store (e, value);
}

int attr_set_hook (struct attr *a, const char *name, attr_hook_f hook,
                   void *arg)
{
    struct entry *e = lookup (a, name);

    if (!e) {
        errno = ENOENT;
        return -1;
    }
    if (hook && hook (e->name, e->value, arg) < 0)
        return -1;
    e->hook = hook;
    e->hook_arg = arg;
    return 0;
}

int attr_remove (struct attr *a, const char *name)
{
    struct entry **pp, *e;

    for (pp = &a->buckets[hash (name) % a->nbuckets]; (e = *pp);
         pp = &e->next) {
        if (!strcmp (e->name, name)) {
            if (e->flags & (ATTR_IMMUTABLE | ATTR_READONLY)) {
                errno = EPERM;
                return -1;
            }
            *pp = e->next;
            free (e->name);
            free (e->value);
            free (e);
            a->count--;
            return 0;
        }
    }
    errno = ENOENT;
    return -1;
}

static void get_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
    struct attr *a = arg;
    const char *name, *value;
    int flags = 0;

    if (flux_request_unpack (msg, NULL, "{s:s}", "name", &name) < 0) {
        flux_respond_error (h, msg, EPROTO, "attr.get: expected {name:s}");
        return;
    }
    if (!(value = attr_get (a, name, &flags))) {
        flux_respond_error (h, msg, ENOENT, NULL);
        return;
    }
    flux_respond_pack (h, msg, "{s:s s:i}", "value", value, "flags",
                       flags & ATTR_IMMUTABLE);
}

static void set_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
    struct attr *a = arg;
    const char *name, *value;
    int force = 0;

    if (flux_request_unpack (msg, NULL, "{s:s s:s s?b}", "name", &name, "value",
                             &value, "force", &force)
        < 0) {
        flux_respond_error (h, msg, EPROTO,
                            "attr.set: expected {name:s value:s force?:b}");
        return;
    }
    if (attr_set_user (a, name, value, false, force) < 0) {
        struct entry *e = lookup (a, name);
        const char *why = errno == ENOENT  ? "unknown attribute"
                          : errno == EPERM ? "attribute is immutable"
                          : e && (e->flags & ATTR_RUNTIME)
                              ? "invalid value"
                              : "attribute cannot be changed at runtime";
        flux_respond_error (h, msg, errno, why);
        return;
    }
    flux_respond (h, msg, NULL);
}

static void rm_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                   void *arg)
{
    struct attr *a = arg;
    const char *name;

    if (flux_request_unpack (msg, NULL, "{s:s}", "name", &name) < 0) {
        flux_respond_error (h, msg, EPROTO, "attr.rm: expected {name:s}");
        return;
    }
    if (attr_remove (a, name) < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond (h, msg, NULL);
}

static void list_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct attr *a = arg;
    json_t *names;
    size_t i;

    if (!(names = json_array ()))
        goto nomem;
    for (i = 0; i < a->nbuckets; i++) {
        struct entry *e;
        for (e = a->buckets[i]; e; e = e->next) {
            if (e->value
                && json_array_append_new (names, json_string (e->name)) < 0)
                goto nomem;
        }
    }
    flux_respond_pack (h, msg, "{s:o}", "names", names);
    return;
nomem:
    json_decref (names);
    flux_respond_error (h, msg, ENOMEM, NULL);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "attr.get", get_cb, FLUX_ROLE_ALL},
    {FLUX_MSGTYPE_REQUEST, "attr.list", list_cb, FLUX_ROLE_ALL},
    {FLUX_MSGTYPE_REQUEST, "attr.set", set_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "attr.rm", rm_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

int attr_register_services (struct attr *a, flux_t *h)
{
    return flux_msg_handler_addvec (h, htab, a, &a->handlers);
}

void attr_unregister_services (struct attr *a)
{
    if (a) {
        flux_msg_handler_delvec (a->handlers);
        a->handlers = NULL;
    }
}
