/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef IMP_CONF_H
#define IMP_CONF_H
/* flux-imp's configuration: *.json, *.yaml, *.yml files in one
 * directory, merged, with the keys of PROTOCOLS-exec.md section 5.5
 * (doc/guide/imp.md has the table).  Unknown keys are errors. */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "imperr.h"

#define IMP_CONF_FILE_MAX (1024 * 1024)

struct imp_run {
    char *name;
    char *path;
    char **users;   /* NULL-terminated */
    char **environ; /* globs, NULL-terminated */
};

struct imp_conf {
    char **exec_users;  /* NULL-terminated */
    char **exec_shells; /* NULL-terminated */
    bool allow_unprivileged_exec;
    int max_ttl;
    bool allow_munge;
    bool allow_none;
    char *munge_socket; /* NULL: libmunge's default */
    struct imp_run *run;
    size_t nrun;
};

/* Parse one file's text (len bytes) into a JSON object: JSON when yaml
 * is false, else YAML (one document, a mapping; plain scalars true/false
 * are booleans, decimal integers are integers, the rest strings; no
 * anchors or aliases).  name is for messages. */
json_t *imp_conf_parse_text (const char *text, size_t len, bool yaml,
                             const char *name, struct imp_err *e);

/* Merge src into dst: tables merged recursively, any other key set in
 * both is an error. */
int imp_conf_merge (json_t *dst, json_t *src, const char *name,
                    struct imp_err *e);

/* Check the merged object and fill c (defaults where a key is unset). */
int imp_conf_from_json (json_t *o, struct imp_conf *c, struct imp_err *e);

/* Load every *.json, *.yaml, *.yml file matching pattern (a glob, e.g.
 * DIR/\*), in name order.  When secure, each file and its directory must
 * be owned by root and not writable by group or other; otherwise by
 * root or owner_ok, and not writable by other.  Symlinks are refused. */
int imp_conf_load (const char *pattern, bool secure, uid_t owner_ok,
                   struct imp_conf *c, struct imp_err *e);

void imp_conf_clear (struct imp_conf *c);

const struct imp_run *imp_conf_run (const struct imp_conf *c, const char *name);

bool imp_strv_has (char *const *v, const char *s);

#endif /* !IMP_CONF_H */
