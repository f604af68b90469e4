/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_ATTR_H
#define BROKER_ATTR_H

/* The broker's attribute registry and its services (PROTOCOLS.md 3):
 * attr.get (all), attr.list (all), attr.set (owner), attr.rm (owner).
 *
 * Attributes are strings.  Flags:
 *   ATTR_IMMUTABLE  never changes once set (clients cache it)
 *   ATTR_RUNTIME    may be changed by attr.set while the broker runs
 * Attributes may be set before the broker starts (broker -S name=value)
 * unless registered ATTR_READONLY (set by the broker only).
 * Lookups are O(1) average (hash table).
 */
#include <stdbool.h>

#include "libflux/flux.h"

enum {
    ATTR_IMMUTABLE = 1, /* on the wire, bit 1 of flags */
    ATTR_RUNTIME = 2,
    ATTR_READONLY = 4, /* not settable by users, even at startup */
};

struct attr;

struct attr *attr_create (void);
void attr_destroy (struct attr *a);

/* Add or replace (broker-internal: ignores permissions). */
int attr_add (struct attr *a, const char *name, const char *value, int flags);
/* Look up; NULL with ENOENT if absent or unset. */
const char *attr_get (struct attr *a, const char *name, int *flags);
/* Set from a user (broker command line or attr.set).  startup = true
 * before the broker runs.  Errors: ENOENT unknown (only when the name is
 * not registered and !startup: unknown names are accepted at startup),
 * EPERM immutable/readonly, EINVAL not runtime-updatable.
 */
int attr_set_user (struct attr *a, const char *name, const char *value,
                   bool startup, bool force);
int attr_remove (struct attr *a, const char *name);

/* Call hook(name, value, arg) before a user sets the attribute at runtime
 * (attr.set); a hook returning -1 (errno set, e.g. EINVAL for a bad
 * value) refuses the change.  The attribute must exist.  The hook also
 * runs once now on the current value, so a value given at startup takes
 * effect; if that call fails, so does attr_set_hook(). */
typedef int (*attr_hook_f) (const char *name, const char *value, void *arg);
int attr_set_hook (struct attr *a, const char *name, attr_hook_f hook,
                   void *arg);

/* Register attr.* message handlers on h. */
int attr_register_services (struct attr *a, flux_t *h);
void attr_unregister_services (struct attr *a);

#endif /* !BROKER_ATTR_H */
