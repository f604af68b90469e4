/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* submit_attrs.h - the parts of a jobspec that `flux submit` options set
 * beyond the resources: environment rules, --setattr, --dependency
 * (RFC 26 URI form), and the {cc} substitution of --cc.  Kept apart from
 * submit.c so that other job-launching commands can share them.
 * Errors return -1 with a one-line reason in error.
 */
#ifndef FLUX_CMD_SUBMIT_ATTRS_H
#define FLUX_CMD_SUBMIT_ATTRS_H

#include <jansson.h>
#include <stdbool.h>

#include "libflux/flux.h"

/* The environment of the job: the whole of envp, then each rule in turn:
 *   NAME=VALUE  set NAME; in VALUE $NAME and ${NAME} are replaced by the
 *               variable's value in the environment built so far, else
 *               in envp (an error if in neither), $$ by $
 *   -PATTERN    remove the variables matching the glob PATTERN
 *   PATTERN     copy the matching variables from envp (after a removal)
 *   ^FILE       the rules of FILE, one per line (blank lines and lines
 *               starting with # skipped)
 * as flux-core's --env, --env-remove and --env-file.
 * Returns a new object, or NULL with error set.
 */
json_t *submit_env_create (char **envp, char **rules, int nrules,
                           flux_error_t *error);

/* Set attributes.KEY to VAL in jobspec, where KEY is "system.a.b",
 * "user.x", ".system.x", or "a.b" (meaning system.a.b).  VAL is parsed as
 * JSON if it parses, else taken as a string; NULL means 1.  Intermediate
 * objects are created; a non-object in the way is an error.
 */
int submit_setattr (json_t *jobspec, const char *key, const char *val,
                    flux_error_t *error);

/* Set attributes.system.PATH.KEY (PATH like "shell.options") the same way. */
int submit_setattr_under (json_t *jobspec, const char *path, const char *key,
                          const char *val, flux_error_t *error);

/* Set attributes.system.PATH (dotted, objects created on the way) to
 * value, which is stolen (NULL: an error, "not valid UTF-8").  Used for
 * the shell options of --output, --error, --input, whose values are not
 * to be parsed as JSON.
 */
int submit_setattr_json (json_t *jobspec, const char *path, json_t *value,
                         flux_error_t *error);

/* Parse "scheme:value[?k=v[&k=v...]]" (RFC 26; ';' also separates) into
 * {scheme:s, value:s, k:s...} and append it to
 * attributes.system.dependencies.
 */
int submit_add_dependency (json_t *jobspec, const char *uri,
                           flux_error_t *error);

/* Replace every "{cc}" in the task command words with id. */
int submit_subst_cc (json_t *jobspec, unsigned int id);

/* True if a word of the command holds {cc} (submit_subst_cc has work). */
bool submit_has_cc (json_t *jobspec);

/* The file entry of attributes.system.files (RFC 37's form that flux
 * batch uses) for len bytes of data: {data, mode, encoding}, "utf-8"
 * text, or "base64" for what is not UTF-8 or holds a NUL.  NULL if out of
 * memory. */
json_t *submit_file_entry (const char *data, size_t len, int mode);

/* --add-file=[NAME=]ARG (as flux-core's): attributes.system.files.NAME
 * = {data, mode, encoding} (RFC 37's form that flux batch uses), which the
 * job shell writes to FLUX_JOB_TMPDIR/NAME.  Without NAME, ARG is a file
 * and NAME its base name; with NAME, ARG is the data if it holds a
 * newline, else a file.  A file keeps its permission bits (data gets
 * 0600); text that is not UTF-8 goes in base64.  script and conf.json
 * are reserved.  -1 with error.
 */
int submit_add_file (json_t *jobspec, const char *spec, flux_error_t *error);

#endif /* !FLUX_CMD_SUBMIT_ATTRS_H */
