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

/* Register attr.* message handlers on h. */
int attr_register_services (struct attr *a, flux_t *h);
void attr_unregister_services (struct attr *a);

#endif /* !BROKER_ATTR_H */
