/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* conf.h - the broker's configuration and the config service.
 *
 * The attribute config.path (flux-broker --config-path, or -S) names a
 * file or a directory.  A file is JSON if its name ends in ".json", TOML
 * (flux-core's format, libutil/toml.h) if it ends in ".toml", else YAML
 * (of which JSON is nearly a subset).  A directory's files whose names
 * end in ".json", ".toml", ".yaml" or ".yml" are read in name order, other
 * files are skipped; their objects are merged: tables (objects) with the
 * same name are merged, and a key set in two files is an error naming
 * both.  A file must hold an object (an empty YAML file is an empty
 * one) of at most CONF_MAX_FILE bytes.  Without config.path the
 * configuration is the empty object.  Every broker reads its own.
 *
 * Services (PROTOCOLS.md "config"):
 *   config.get (user)     -> the whole object.  With FLUX_MSGFLAG_STREAMING
 *                            it is sent again after every change, until
 *                            the client disconnects.
 *   config.reload (owner) -> {}: read config.path again; on an error the
 *                            old configuration stays and the error text
 *                            is the answer (EINVAL).
 *   config.load (owner)   the new whole object -> {}.
 */
#ifndef BROKER_CONF_H
#define BROKER_CONF_H

#include <jansson.h>

#include "libflux/flux.h"

#define CONF_MAX_FILE ((size_t)16 << 20)

/* Read path (a file or a directory, above) into a new object, or NULL
 * with errno set and a message naming the file (and line) in error. */
json_t *conf_load (const char *path, flux_error_t *error);

struct broker;

/* Load config.path into b->config (an error is printed and fails);
 * then register the config service. */
int conf_init (struct broker *b);
int conf_register (struct broker *b);
void conf_unregister (struct broker *b);

#endif /* !BROKER_CONF_H */
