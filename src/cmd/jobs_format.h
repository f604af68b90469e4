/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobs_format.h - the output formats of `flux jobs`.
 *
 * A format is text with Python-style fields, as flux-core's flux jobs
 * takes them:  {FIELD[!CONV][:SPEC]}, "{{" and "}}" for braces.
 *   FIELD  id, id.f58, id.f58plain, id.dec, id.hex, id.dothex, id.kvs,
 *          userid, username, urgency, priority, state, state_single,
 *          status, status_abbrev, result, result_abbrev, name, cwd,
 *          queue, project, bank, ntasks, ncores, nnodes, ranks, nodelist,
 *          duration, expiration, t_remaining, t_submit, t_depend, t_run,
 *          t_cleanup, t_inactive, runtime, success, waitstatus,
 *          returncode, exception.{occurred,severity,type,note},
 *          annotations, annotations.KEY..., sched[.KEY...], user[.KEY...],
 *          dependencies, contextual_info, contextual_time,
 *          inactive_reason, instance.stats, instance.stats.total,
 *          instance.utilization, instance.gpu_utilization,
 *          instance.progress, instance.resources.STATE.{ncores,ngpus}
 *          (STATE all, up, down, allocated, free)
 *   CONV   F (seconds as an RFC 23 duration), H (h:mm:ss), D (ISO 8601
 *          date), d (a date formatted with strftime: {t_run!d:%H:%M}, a
 *          width after "::"), P (a fraction as a percentage), s, r
 *   SPEC   [[fill]align][width][.precision][type][h][+]: align < > ^,
 *          type s d f g e; h shows "-" for an empty value ("", 0s, 0.0,
 *          0:00:00, the epoch); + marks a truncated string with "+"
 * A field preceded by "?:" is left out (with the text before it) when
 * it is empty for every job listed.
 *
 * Jobs are the JSON objects job-list returns (RFC 43 attributes).
 */
#ifndef FLUX_CMD_JOBS_FORMAT_H
#define FLUX_CMD_JOBS_FORMAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "libflux/flux.h"
#include "libutil/textbuf.h"

struct jobs_format;

/* Output goes to a text buffer (libutil/textbuf.h; the caller frees it).
 * Out of memory, the output is short. */
void jobs_out_append (struct textbuf *o, const char *s, size_t len);

/* Parse fmt.  NULL with EINVAL and a one-line error such as
 * "Unknown format field: foo" or "format: unmatched '{'", or ENOMEM.
 */
struct jobs_format *jobs_format_create (const char *fmt, flux_error_t *error);
void jobs_format_destroy (struct jobs_format *f);

/* True if a field is instance.*: the caller then fills l->instance for
 * the running sub-instances listed. */
bool jobs_format_wants_instance (const struct jobs_format *f);

/* The job-list attributes the fields need (new reference). */
json_t *jobs_format_attrs (const struct jobs_format *f);

/* A job-list response {"jobs":[{...},...]} parsed into flat records.
 * Parsing 1000 jobs this way is several times cheaper than building
 * jansson objects; only nested values (annotations, dependencies) are
 * jansson objects.
 */
enum jobs_ftype { JF_NULL, JF_BOOL, JF_INT, JF_REAL, JF_STR, JF_JSON };
struct jobs_field {
    const char *key;
    enum jobs_ftype type;
    long long i;   /* JF_INT, JF_BOOL */
    double d;      /* JF_REAL */
    const char *s; /* JF_STR */
    json_t *json;  /* JF_JSON */
};
struct jobs_rec {
    size_t first, n; /* fields[first .. first+n) */
};
struct jobs_list {
    /* per job, NULL or what instance.* fields read (the caller fills it,
     * see jobs_format_wants_instance()): {stats:s, total:i,
     * utilization:f, gpu_utilization:f, progress:f, resources:{STATE:
     * {ncores:i, ngpus:i}}}; jobs_list_destroy() frees it */
    json_t **instance;
    char *text;
    struct jobs_field *fields;
    size_t nfields;
    struct jobs_rec *jobs;
    size_t njobs;
};
struct jobref {
    const struct jobs_list *l;
    size_t j;
};

/* Parse len bytes of text (copied).  NULL with EPROTO or ENOMEM. */
struct jobs_list *jobs_list_parse (const char *text, size_t len);
void jobs_list_destroy (struct jobs_list *l);
/* The field key of job j, or NULL. */
const struct jobs_field *jobs_get (const struct jobs_list *l, size_t j,
                                   const char *key);
/* Job j as a jansson object (new reference). */
json_t *jobs_list_job_json (const struct jobs_list *l, size_t j);

/* Format every job and the header, leaving out "?:" fields empty for
 * all jobs; lines end in "\n".  now is the current time (runtime of
 * running jobs).  -1 ENOMEM.
 */
int jobs_format_run (struct jobs_format *f, const struct jobs_list *l,
                     double now, int header, struct textbuf *out);

/* A job as flux jobs --json prints it (flux-core's JobInfo.to_dict):
 * state and result as names, username, runtime, status, returncode,
 * exception as an object, unset values left out.  New reference.
 */
json_t *jobs_format_json (const struct jobs_list *l, size_t j, double now);

/* Helpers, exported for the tests: RFC 23 duration as flux jobs prints
 * it ("0s", "1.500s", "12.5s", "2.5m"...), and h:mm:ss.
 */
void jobs_fsd (double secs, char *buf, size_t size);
void jobs_hms (double secs, char *buf, size_t size);

#endif /* !FLUX_CMD_JOBS_FORMAT_H */
