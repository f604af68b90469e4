/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobs_format_priv.h - internals shared by jobs_format.c (parsing and
 * formatting) and jobs_eval.c (field values).
 */
#ifndef FLUX_CMD_JOBS_FORMAT_PRIV_H
#define FLUX_CMD_JOBS_FORMAT_PRIV_H

#include <jansson.h>
#include <stdbool.h>

enum kind {
    F_ID,
    F_INT,
    F_STR,
    F_REAL0, /* a real, 0.0 when absent */
    F_BOOL,
    F_USERNAME,
    F_STATE,
    F_STATE_SINGLE,
    F_STATUS,
    F_STATUS_ABBREV,
    F_RESULT,
    F_RESULT_ABBREV,
    F_T_REMAINING,
    F_RUNTIME,
    F_RETURNCODE,
    F_ANNOTATION,
    F_DEPENDENCIES,
    F_CONTEXTUAL_INFO,
    F_CONTEXTUAL_TIME,
    F_INACTIVE_REASON,
    F_INSTANCE, /* a sub-instance's own counts (jobs_list.instance) */
};

struct fieldinfo {
    const char *name;
    const char *heading;
    int kind;
    const char *key;   /* job-list key, id encoding (NULL: flux-core's JobID,
                          jobs_eval), or annotation path */
    const char *attrs; /* job-list attributes needed, space separated */
};

struct field {
    char *prefix; /* literal text before the field */
    bool optional;
    const struct fieldinfo *info; /* NULL: an annotation path */
    const char *heading;
    char *heading_buf;
    char *path; /* annotation path: "sched.reason_pending" etc */
    char conv;
    char *strftime;
    char fill, align;
    int width, precision; /* precision -1: none */
    char type;
    bool hyphen, plus;
    bool nospec; /* no format spec, or an empty one */
};

struct jobs_format {
    struct field *fields;
    int n;
    char *suffix;
};

enum vtype { V_EMPTY, V_STR, V_INT, V_REAL, V_BOOL };

struct val {
    enum vtype t;
    const char *s;
    long long i;
    double d;
    char buf[128];
    char *dyn; /* malloc'd string s points to, if any */
};

/* The value of a field for a job (before conversion). */
struct jobref;
void jobs_eval (const struct field *fl, const struct jobref *job, double now,
                struct val *v);
void jobs_val_clear (struct val *v);
/* Python-like str() of a value into buf. */
const char *jobs_val_str (const struct val *v, char *buf, size_t size);

#endif /* !FLUX_CMD_JOBS_FORMAT_PRIV_H */
