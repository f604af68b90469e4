/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_ENV_H
#define FLUX_SHELL_ENV_H

/* A task environment: NAME=VALUE strings, set/unset by name, turned into
 * the NULL-terminated array execve wants.
 */
#include <jansson.h>

struct env;

struct env *env_create (void);
void env_destroy (struct env *e);
struct env *env_copy (const struct env *e);

/* Load a JSON object of strings (non-strings are skipped). */
int env_load_json (struct env *e, const json_t *o);

int env_set (struct env *e, const char *name, const char *value);
int env_setf (struct env *e, const char *name, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void env_unset (struct env *e, const char *name);
const char *env_get (const struct env *e, const char *name);

/* The NULL-terminated array (borrowed; valid until the next change). */
char **env_vector (struct env *e);

#endif /* !FLUX_SHELL_ENV_H */
