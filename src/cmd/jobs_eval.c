/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobs_eval.c - the value of each flux jobs field for a job, as
 * flux-core's JobInfo computes it, and the --json form of a job.
 */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "jobs_format.h"
#include "jobs_format_priv.h"
#include "libjob/job.h"

void jobs_val_clear (struct val *v)
{
    free (v->dyn);
    memset (v, 0, sizeof (*v));
}

static void set_str (struct val *v, const char *s)
{
    v->t = V_STR;
    v->s = s ? s : "";
}

static void set_buf (struct val *v, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void set_buf (struct val *v, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (v->buf, sizeof (v->buf), fmt, ap);
    va_end (ap);
    v->t = V_STR;
    v->s = v->buf;
}

static void set_dyn (struct val *v, char *s)
{
    v->dyn = s;
    set_str (v, s);
}

static void set_int (struct val *v, long long i)
{
    v->t = V_INT;
    v->i = i;
}

static void set_real (struct val *v, double d)
{
    v->t = V_REAL;
    v->d = d;
}

const char *jobs_val_str (const struct val *v, char *buf, size_t size)
{
    switch (v->t) {
        case V_EMPTY:
            return "";
        case V_STR:
            return v->s;
        case V_INT:
            snprintf (buf, size, "%lld", v->i);
            return buf;
        case V_BOOL:
            return v->i ? "True" : "False";
        case V_REAL: {
            /* the shortest repr, as Python's str() of a float */
            int p;
            for (p = 1; p < 17; p++) {
                snprintf (buf, size, "%.*g", p, v->d);
                if (strtod (buf, NULL) == v->d)
                    break;
            }
            if (!strpbrk (buf, ".en"))
                strncat (buf, ".0", size - strlen (buf) - 1);
            return buf;
        }
    }
    return "";
}

typedef struct jobref job_t;

static const struct jobs_field *fld (const job_t *job, const char *key)
{
    return jobs_get (job->l, job->j, key);
}

static bool get_int (const job_t *job, const char *key, long long *i)
{
    const struct jobs_field *f = fld (job, key);
    if (!f || f->type != JF_INT)
        return false;
    *i = f->i;
    return true;
}

static double get_real (const job_t *job, const char *key)
{
    const struct jobs_field *f = fld (job, key);
    if (f && f->type == JF_REAL)
        return f->d;
    if (f && f->type == JF_INT)
        return f->i;
    return 0.;
}

static const char *get_str (const job_t *job, const char *key)
{
    const struct jobs_field *f = fld (job, key);
    return f && f->type == JF_STR ? f->s : NULL;
}

static json_t *get_json (const job_t *job, const char *key)
{
    const struct jobs_field *f = fld (job, key);
    return f && f->type == JF_JSON ? f->json : NULL;
}

static bool is_true (const job_t *job, const char *key)
{
    const struct jobs_field *f = fld (job, key);
    return f && f->type == JF_BOOL && f->i;
}

static json_t *field_json (const struct jobs_field *f)
{
    switch (f->type) {
        case JF_BOOL:
            return json_boolean (f->i);
        case JF_INT:
            return json_integer (f->i);
        case JF_REAL:
            return json_real (f->d);
        case JF_STR:
            return json_string (f->s);
        case JF_JSON:
            return json_incref (f->json);
        default:
            return json_null ();
    }
}

static int state_of (const job_t *job)
{
    long long s = 0;
    get_int (job, "state", &s);
    return (int)s;
}

static bool result_of (const job_t *job, int *result)
{
    long long r;
    if (!get_int (job, "result", &r))
        return false;
    *result = (int)r;
    return true;
}

/* Cached: flux jobs lists many jobs of few users. */
static const char *username (uint32_t uid)
{
    static struct {
        uint32_t uid;
        char name[64];
    } cache[16];
    static int n;
    struct passwd *pw;

    for (int i = 0; i < n; i++)
        if (cache[i].uid == uid)
            return cache[i].name;
    if (n == 16)
        n = 0;
    cache[n].uid = uid;
    if ((pw = getpwuid (uid)))
        snprintf (cache[n].name, sizeof (cache[n].name), "%s", pw->pw_name);
    else
        snprintf (cache[n].name, sizeof (cache[n].name), "%u", uid);
    return cache[n++].name;
}

static double runtime (const job_t *job, double now)
{
    double t_run = get_real (job, "t_run"),
           t_cleanup = get_real (job, "t_cleanup");
    if (t_cleanup > 0. && t_run > 0.)
        return t_cleanup - t_run;
    if (t_run > 0.)
        return now - t_run;
    return 0.;
}

static void status (const job_t *job, int abbrev, struct val *v)
{
    int state = state_of (job), result;

    if (state & (FLUX_JOB_STATE_PENDING | FLUX_JOB_STATE_RUNNING))
        set_str (v, flux_job_statetostr (state, abbrev));
    else if (result_of (job, &result))
        set_str (v, flux_job_resulttostr (result, abbrev));
    else
        set_str (v, "");
}

static bool returncode (const job_t *job, long long *rc)
{
    long long ws;
    int result;

    if (!get_int (job, "waitstatus", &ws)) {
        if (!result_of (job, &result))
            return false;
        if (result == FLUX_JOB_RESULT_CANCELED)
            *rc = -128;
        else if (result == FLUX_JOB_RESULT_FAILED)
            *rc = 1;
        else
            return false;
        return true;
    }
    if (WIFSIGNALED ((int)ws))
        *rc = -WTERMSIG ((int)ws);
    else if (WIFEXITED ((int)ws))
        *rc = WEXITSTATUS ((int)ws);
    else
        return false;
    return true;
}

/* annotations at a dotted path ("sched.reason_pending"), or NULL */
/* the value at a dotted path under o, or NULL */
static json_t *json_at_path (json_t *o, const char *path)
{
    char buf[256], *save = NULL, *tok;

    snprintf (buf, sizeof (buf), "%s", path ? path : "");
    for (tok = strtok_r (buf, ".", &save); tok && o;
         tok = strtok_r (NULL, ".", &save))
        o = json_object_get (o, tok);
    return o;
}

static json_t *annotation (const job_t *job, const char *path)
{
    return json_at_path (get_json (job, "annotations"), path);
}

/* the sub-instance counts of job at a dotted path, or NULL */
static json_t *instance_value (const job_t *job, const char *path)
{
    return json_at_path (job->l->instance ? job->l->instance[job->j] : NULL,
                         path);
}

static void json_value (json_t *o, struct val *v)
{
    if (!o || json_is_null (o))
        v->t = V_EMPTY;
    else if (json_is_string (o))
        set_str (v, json_string_value (o));
    else if (json_is_integer (o))
        set_int (v, json_integer_value (o));
    else if (json_is_real (o))
        set_real (v, json_real_value (o));
    else if (json_is_boolean (o)) {
        v->t = V_BOOL;
        v->i = json_is_true (o);
    }
    else if (json_is_object (o) && json_object_size (o) == 0)
        v->t = V_EMPTY;
    else
        set_dyn (v, json_dumps (o, JSON_COMPACT | JSON_ENCODE_ANY));
}

/* DependencyList: begin-time=T shown as begin@HH:MM (with the date if
 * not today), joined by commas.
 */
static char *dependencies (const job_t *job)
{
    json_t *a = get_json (job, "dependencies"), *d;
    struct textbuf o = {0};
    size_t i;

    jobs_out_append (&o, "", 0);
    json_array_foreach (a, i, d)
    {
        const char *s = json_string_value (d);
        char buf[64];
        if (!s)
            continue;
        if (i > 0)
            jobs_out_append (&o, ",", 1);
        if (!strncmp (s, "begin-time=", 11)) {
            time_t t = (time_t)strtod (s + 11, NULL), now = time (NULL);
            struct tm tm, today;
            localtime_r (&t, &tm);
            localtime_r (&now, &today);
            strftime (
                buf, sizeof (buf),
                tm.tm_yday == today.tm_yday && tm.tm_year == today.tm_year
                    ? (tm.tm_sec ? "begin@%H:%M:%S" : "begin@%H:%M")
                    : (tm.tm_sec ? "begin@%b%d-%H:%M:%S" : "begin@%b%d-%H:%M"),
                &tm);
            s = buf;
        }
        jobs_out_append (&o, s, strlen (s));
    }
    return o.data;
}

static void contextual_info (const job_t *job, double now, struct val *v)
{
    int state = state_of (job);
    json_t *est;
    long long urgency = -1, priority = -1;
    char fsd[32];

    if (state == FLUX_JOB_STATE_PRIORITY)
        set_str (v, "priority-wait");
    else if (state == FLUX_JOB_STATE_DEPEND) {
        char *deps = dependencies (job);
        set_buf (v, "depends:%s", deps ? deps : "");
        free (deps);
    }
    else if (state == FLUX_JOB_STATE_SCHED) {
        get_int (job, "urgency", &urgency);
        get_int (job, "priority", &priority);
        if ((est = annotation (job, "sched.t_estimate"))
            && json_is_number (est)) {
            double eta = json_number_value (est) - now;
            if (eta < 0)
                set_str (v, "eta:now");
            else {
                jobs_fsd (eta, fsd, sizeof (fsd));
                set_buf (v, "eta:%s", fsd);
            }
        }
        else if (urgency == 0)
            set_str (v, "held");
        else if (priority == 0)
            set_str (v, "priority-hold");
        else
            set_str (v, "");
    }
    else
        set_str (v, get_str (job, "nodelist"));
}

static void inactive_reason (const job_t *job, struct val *v)
{
    int result;
    long long rc = 0, sev = -1;
    const char *type = get_str (job, "exception_type");
    const char *note = get_str (job, "exception_note");
    bool occurred = is_true (job, "exception_occurred");

    get_int (job, "exception_severity", &sev);
    if (state_of (job) != FLUX_JOB_STATE_INACTIVE
        || !result_of (job, &result)) {
        set_str (v, "");
        return;
    }
    (void)returncode (job, &rc);
    if (result == FLUX_JOB_RESULT_CANCELED) {
        if (occurred && type && !strcmp (type, "cancel") && note && *note)
            set_buf (v, "Canceled: %s", note);
        else
            set_str (v, "Canceled");
    }
    else if (result == FLUX_JOB_RESULT_FAILED) {
        if (occurred && type && strcmp (type, "exec") != 0 && sev == 0)
            set_buf (v, "Exception: type=%s%s%s", type,
                     note && *note ? " note=" : "", note && *note ? note : "");
        else if (rc > 128) {
            const char *desc = strsignal (rc - 128);
            if (desc)
                set_buf (v, "%s", desc);
            else
                set_buf (v, "Signaled %lld", rc - 128);
        }
        else if (rc == 126)
            set_str (v, "Command invoked cannot execute");
        else if (rc == 127)
            set_str (v, "command not found");
        else if (rc == 128)
            set_str (v, "Invalid argument to exit");
        else
            set_buf (v, "Exit %lld", rc);
    }
    else if (result == FLUX_JOB_RESULT_TIMEOUT)
        set_str (v, "Timeout");
    else
        set_buf (v, "Exit %lld", rc);
}

void jobs_eval (const struct field *fl, const job_t *job, double now,
                struct val *v)
{
    const struct fieldinfo *fi = fl->info;
    long long i;
    int r;

    memset (v, 0, sizeof (*v));
    if (!fi) { /* annotations.* / sched.* / user.* */
        json_value (annotation (job, fl->path), v);
        return;
    }
    switch (fi->kind) {
        case F_ID:
            if (!get_int (job, "id", &i))
                break;
            /* {id} is flux-core's JobID, an int whose str() is F58:
             * format() gives F58 with no spec (and with !s or :h, which
             * take str()), and a decimal number with any other spec. */
            if (!fi->key && !fl->nospec && !fl->hyphen && fl->conv != 's'
                && fl->conv != 'r') {
                set_int (v, i);
                break;
            }
            if (flux_job_id_encode ((flux_jobid_t)i, fi->key ? fi->key : "f58",
                                    v->buf, sizeof (v->buf))
                == 0)
                set_str (v, v->buf);
            break;
        case F_INT:
            if (get_int (job, fi->key, &i))
                set_int (v, i);
            break;
        case F_STR:
            if (get_str (job, fi->key))
                set_str (v, get_str (job, fi->key));
            break;
        case F_REAL0:
            set_real (v, get_real (job, fi->key));
            break;
        case F_BOOL:
            if (fld (job, fi->key) && fld (job, fi->key)->type == JF_BOOL) {
                v->t = V_BOOL;
                v->i = is_true (job, fi->key);
            }
            break;
        case F_USERNAME:
            if (get_int (job, "userid", &i))
                set_str (v, username ((uint32_t)i));
            break;
        case F_STATE:
        case F_STATE_SINGLE:
            set_str (v, flux_job_statetostr (state_of (job),
                                             fi->kind == F_STATE_SINGLE));
            break;
        case F_STATUS:
        case F_STATUS_ABBREV:
            status (job, fi->kind == F_STATUS_ABBREV, v);
            break;
        case F_RESULT:
        case F_RESULT_ABBREV:
            if (result_of (job, &r))
                set_str (v,
                         flux_job_resulttostr (r, fi->kind == F_RESULT_ABBREV));
            break;
        case F_T_REMAINING: {
            double left = get_real (job, "expiration") - now;
            set_real (v, state_of (job) == FLUX_JOB_STATE_RUN && left > 0.
                             ? left
                             : 0.);
            break;
        }
        case F_RUNTIME:
            set_real (v, runtime (job, now));
            break;
        case F_RETURNCODE:
            if (returncode (job, &i))
                set_int (v, i);
            break;
        case F_ANNOTATION:
            json_value (annotation (job, fl->path), v); /* NULL: whole */
            break;
        case F_DEPENDENCIES:
            set_dyn (v, dependencies (job));
            break;
        case F_CONTEXTUAL_INFO:
            contextual_info (job, now, v);
            break;
        case F_CONTEXTUAL_TIME:
            if (state_of (job) & FLUX_JOB_STATE_PENDING)
                set_real (v, get_real (job, "duration"));
            else
                set_real (v, runtime (job, now));
            break;
        case F_INACTIVE_REASON:
            inactive_reason (job, v);
            break;
        case F_INSTANCE:
            json_value (instance_value (job, fl->path), v);
            break;
    }
}

/* flux-core's JobInfo.to_dict(): unset and empty values left out. */
json_t *jobs_format_json (const struct jobs_list *l, size_t j, double now)
{
    static const char *copy[]
        = {"id",      "name",         "cwd",     "queue",      "project",
           "bank",    "ntasks",       "ncores",  "nnodes",     "priority",
           "ranks",   "nodelist",     "success", "waitstatus", "userid",
           "urgency", "dependencies", NULL};
    static const char *times[]
        = {"t_submit",   "t_depend", "t_run",      "t_cleanup",
           "t_inactive", "duration", "expiration", NULL};
    job_t jr = {l, j}, *job = &jr;
    const struct jobs_field *f;
    json_t *o = json_object (), *v, *exc;
    int state = state_of (job), result;
    long long rc, uid;
    double rt, left;

    if (!o)
        return NULL;
    for (int i = 0; copy[i]; i++)
        if ((f = fld (job, copy[i])))
            json_object_set_new (o, copy[i], field_json (f));
    for (int i = 0; times[i]; i++) {
        double t = get_real (job, times[i]);
        if (t > 0. || (!strcmp (times[i], "duration") && fld (job, times[i])))
            json_object_set_new (o, times[i], json_real (t));
    }
    if (get_int (job, "userid", &uid))
        json_object_set_new (o, "username",
                             json_string (username ((uint32_t)uid)));
    if (fld (job, "state")) {
        json_object_set_new (o, "state",
                             json_string (flux_job_statetostr (state, 0)));
        if (state & (FLUX_JOB_STATE_PENDING | FLUX_JOB_STATE_RUNNING))
            json_object_set_new (o, "status",
                                 json_string (flux_job_statetostr (state, 0)));
    }
    if (result_of (job, &result)) {
        json_object_set_new (o, "result",
                             json_string (flux_job_resulttostr (result, 0)));
        json_object_set_new (o, "status",
                             json_string (flux_job_resulttostr (result, 0)));
    }
    if ((rt = runtime (job, now)) > 0.)
        json_object_set_new (o, "runtime", json_real (rt));
    left = get_real (job, "expiration") - now;
    if (state == FLUX_JOB_STATE_RUN && left > 0.)
        json_object_set_new (o, "t_remaining", json_real (left));
    if (returncode (job, &rc))
        json_object_set_new (o, "returncode", json_integer (rc));
    v = get_json (job, "annotations");
    json_object_set_new (o, "annotations",
                         v ? json_incref (v) : json_object ());
    if (is_true (job, "exception_occurred")) {
        exc = json_pack ("{s:b}", "occurred", 1);
        if ((f = fld (job, "exception_severity")))
            json_object_set_new (exc, "severity", field_json (f));
        if ((f = fld (job, "exception_type")))
            json_object_set_new (exc, "type", field_json (f));
        if ((f = fld (job, "exception_note")))
            json_object_set_new (exc, "note", field_json (f));
    }
    else
        exc = json_pack ("{s:b}", "occurred", 0);
    json_object_set_new (o, "exception", exc);
    return o;
}
