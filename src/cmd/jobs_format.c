/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobs_format.c - parse flux jobs output formats and format jobs (see
 * jobs_format.h).  Field values are computed as flux-core's JobInfo
 * does; the formatting follows Python's format() for the spec subset
 * flux jobs formats use.
 */
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "jobs_format.h"
#include "jobs_format_priv.h"
#include "libjob/job.h"

void jobs_out_append (struct textbuf *o, const char *s, size_t len)
{
    (void)textbuf_append (o, s, len);
}

static void out_str (struct textbuf *o, const char *s)
{
    jobs_out_append (o, s, strlen (s));
}

static const struct fieldinfo fields[] = {
    {"id", "JOBID", F_ID, NULL, ""},
    {"id.dec", "JOBID", F_ID, "dec", ""},
    {"id.hex", "JOBID", F_ID, "hex", ""},
    {"id.f58", "JOBID", F_ID, "f58", ""},
    {"id.f58plain", "JOBID", F_ID, "f58plain", ""},
    {"id.kvs", "JOBID", F_ID, "kvs", ""},
    {"id.dothex", "JOBID", F_ID, "dothex", ""},
    {"userid", "UID", F_INT, "userid", "userid"},
    {"username", "USER", F_USERNAME, NULL, "userid"},
    {"urgency", "URG", F_INT, "urgency", "urgency"},
    {"priority", "PRI", F_INT, "priority", "priority"},
    {"state", "STATE", F_STATE, NULL, "state"},
    {"state_single", "S", F_STATE_SINGLE, NULL, "state"},
    {"status", "STATUS", F_STATUS, NULL, "state result"},
    {"status_abbrev", "ST", F_STATUS_ABBREV, NULL, "state result"},
    {"result", "RESULT", F_RESULT, NULL, "result"},
    {"result_abbrev", "RS", F_RESULT_ABBREV, NULL, "result"},
    {"name", "NAME", F_STR, "name", "name"},
    {"cwd", "CWD", F_STR, "cwd", "cwd"},
    {"queue", "QUEUE", F_STR, "queue", "queue"},
    {"project", "PROJECT", F_STR, "project", "project"},
    {"bank", "BANK", F_STR, "bank", "bank"},
    {"ntasks", "NTASKS", F_INT, "ntasks", "ntasks"},
    {"ncores", "NCORES", F_INT, "ncores", "ncores"},
    {"nnodes", "NNODES", F_INT, "nnodes", "nnodes"},
    {"ranks", "RANKS", F_STR, "ranks", "ranks"},
    {"nodelist", "NODELIST", F_STR, "nodelist", "nodelist"},
    {"duration", "DURATION", F_REAL0, "duration", "duration"},
    {"expiration", "EXPIRATION", F_REAL0, "expiration",
     "expiration state result"},
    {"t_remaining", "T_REMAINING", F_T_REMAINING, NULL,
     "expiration state result"},
    {"t_submit", "T_SUBMIT", F_REAL0, "t_submit", "t_submit"},
    {"t_depend", "T_DEPEND", F_REAL0, "t_depend", "t_depend"},
    {"t_run", "T_RUN", F_REAL0, "t_run", "t_run"},
    {"t_cleanup", "T_CLEANUP", F_REAL0, "t_cleanup", "t_cleanup"},
    {"t_inactive", "T_INACTIVE", F_REAL0, "t_inactive", "t_inactive"},
    {"runtime", "RUNTIME", F_RUNTIME, NULL, "t_run t_cleanup"},
    {"success", "SUCCESS", F_BOOL, "success", "success"},
    {"waitstatus", "WSTATUS", F_INT, "waitstatus", "waitstatus"},
    {"returncode", "RC", F_RETURNCODE, NULL, "waitstatus result"},
    {"exception.occurred", "EXCEPTION-OCCURRED", F_BOOL, "exception_occurred",
     "exception_occurred"},
    {"exception.severity", "EXCEPTION-SEVERITY", F_INT, "exception_severity",
     "exception_severity"},
    {"exception.type", "EXCEPTION-TYPE", F_STR, "exception_type",
     "exception_type"},
    {"exception.note", "EXCEPTION-NOTE", F_STR, "exception_note",
     "exception_note"},
    {"annotations", "ANNOTATIONS", F_ANNOTATION, NULL, "annotations"},
    {"dependencies", "DEPENDENCIES", F_DEPENDENCIES, NULL, "dependencies"},
    {"contextual_info", "INFO", F_CONTEXTUAL_INFO, NULL,
     "state dependencies annotations nodelist priority urgency"},
    {"contextual_time", "TIME", F_CONTEXTUAL_TIME, NULL,
     "state t_run t_cleanup duration"},
    {"inactive_reason", "INACTIVE-REASON", F_INACTIVE_REASON, NULL,
     "state result waitstatus exception_occurred exception_severity "
     "exception_type exception_note"},
    {"sched", "SCHED", F_ANNOTATION, "sched", "annotations"},
    {"user", "USER", F_ANNOTATION, "user", "annotations"},
    /* flux-core's names; jobs.c asks each running sub-instance */
    {"instance.stats", "STATS", F_INSTANCE, "stats", "state annotations"},
    {"instance.stats.total", "NJOBS", F_INSTANCE, "total", "state annotations"},
    {"instance.utilization", "CORE%", F_INSTANCE, "utilization",
     "state annotations"},
    {"instance.gpu_utilization", "GPU%", F_INSTANCE, "gpu_utilization",
     "state annotations"},
    {"instance.progress", "PROG", F_INSTANCE, "progress", "state annotations"},
    {NULL, NULL, 0, NULL, NULL},
};

/* Annotation fields: annotations.X.Y, sched.X, user.X (any key). */
static int annotation_field (const char *name, struct field *fl)
{
    static const char *heads[] = {"annotations.sched.t_estimate",
                                  "T_ESTIMATE",
                                  "annotations.sched.reason_pending",
                                  "REASON",
                                  "annotations.sched.resource_summary",
                                  "RESOURCES",
                                  "sched.t_estimate",
                                  "T_ESTIMATE",
                                  "sched.reason_pending",
                                  "REASON",
                                  "sched.resource_summary",
                                  "RESOURCES",
                                  NULL};
    const char *path;
    char *p;

    if (!strncmp (name, "annotations.", 12))
        path = name + 12;
    else if (!strncmp (name, "sched.", 6) || !strncmp (name, "user.", 5))
        path = name;
    else
        return -1;
    if (!*path || !(fl->path = strdup (path))
        || !(fl->heading_buf
             = strdup (!strncmp (name, "annotations.", 12) ? name + 12 : name)))
        return -1;
    for (p = fl->heading_buf; *p; p++)
        *p = (*p >= 'a' && *p <= 'z') ? *p - 32 : *p;
    for (int i = 0; heads[i]; i += 2)
        if (!strcmp (heads[i], name))
            strcpy (fl->heading_buf, heads[i + 1]);
    fl->info = NULL;
    fl->heading = fl->heading_buf;
    return 0;
}

/* instance.resources.STATE.{ncores,ngpus} */
static int instance_resources_field (const char *name, struct field *fl)
{
    static const struct fieldinfo info
        = {"instance.resources", NULL, F_INSTANCE, NULL, "state annotations"};
    static const char *states[]
        = {"all", "up", "down", "allocated", "free", NULL};
    const char *rest = name + strlen ("instance.resources.");
    size_t n;

    if (strncmp (name, "instance.resources.", 19) != 0)
        return -1;
    for (int i = 0; states[i]; i++) {
        n = strlen (states[i]);
        if (!strncmp (rest, states[i], n) && rest[n] == '.'
            && (!strcmp (rest + n + 1, "ncores")
                || !strcmp (rest + n + 1, "ngpus"))) {
            if (!(fl->path = malloc (strlen (rest) + 11)))
                return -1;
            sprintf (fl->path, "resources.%s", rest);
            if (!(fl->heading_buf = strdup (rest + n + 1)))
                return -1;
            for (char *p = fl->heading_buf; *p; p++)
                *p = (*p >= 'a' && *p <= 'z') ? *p - 32 : *p;
            fl->info = &info;
            fl->heading = fl->heading_buf;
            return 0;
        }
    }
    return -1;
}

/* Widths and precisions above this are refused: {id:>99999999999} would
 * otherwise write gigabytes (or overflow the int). */
#define FIELD_WIDTH_MAX 1000

/* Read the decimal number at *s (advancing it) into *v; -1 (with error
 * set) if it is above FIELD_WIDTH_MAX. */
static int spec_number (const char **s, int *v, const char *what,
                        const char *name, flux_error_t *error)
{
    const char *start = *s;

    *v = 0;
    while (**s >= '0' && **s <= '9') {
        if (*v <= FIELD_WIDTH_MAX)
            *v = *v * 10 + (**s - '0');
        (*s)++;
    }
    if (*v > FIELD_WIDTH_MAX)
        return errprintf (error, "%s: %s %.*s is above %d", name, what,
                          (int)(*s - start), start, FIELD_WIDTH_MAX);
    return 0;
}

static int parse_spec (const char *spec, struct field *fl, const char *name,
                       flux_error_t *error)
{
    const char *s = spec;
    static const char *aligns = "<>^=";

    fl->fill = ' ';
    fl->precision = -1;
    if (s[0] && s[1] && strchr (aligns, s[1])) {
        fl->fill = s[0];
        fl->align = s[1];
        s += 2;
    }
    else if (s[0] && strchr (aligns, s[0]))
        fl->align = *s++;
    while (*s == '-' || *s == ' ' || *s == '#')
        s++; /* sign and alternate form: no effect on what we print */
    if (*s == '0' && fl->align == 0) {
        fl->fill = '0';
        fl->align = '=';
        s++;
    }
    if (spec_number (&s, &fl->width, "field width", name, error) < 0)
        return -1;
    if (*s == ',')
        s++;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9'))
            goto invalid;
        if (spec_number (&s, &fl->precision, "precision", name, error) < 0)
            return -1;
    }
    for (; *s; s++) {
        if (*s == 'h')
            fl->hyphen = true;
        else if (*s == '+')
            fl->plus = true;
        else if (strchr ("sdfFgGeE", *s) && !fl->type)
            fl->type = *s;
        else
            goto invalid;
    }
    return 0;
invalid:
    return errprintf (error, "Invalid format specifier '%s' for %s", spec,
                      name);
}

static int parse_field (char *text, struct field *fl, flux_error_t *error)
{
    char *name = text, *conv = NULL, *spec = NULL, *p;

    if ((p = strpbrk (text, "!:"))) {
        if (*p == '!') {
            *p = '\0';
            conv = p + 1;
            if ((p = strchr (conv, ':'))) {
                *p = '\0';
                spec = p + 1;
            }
        }
        else {
            *p = '\0';
            spec = p + 1;
        }
    }
    if (conv) {
        if (strlen (conv) != 1 || !strchr ("FHDdsrP", conv[0]))
            return errprintf (error, "Unknown conversion specifier '%s'", conv);
        fl->conv = conv[0];
    }
    for (int i = 0; fields[i].name; i++) {
        if (!strcmp (fields[i].name, name)) {
            fl->info = &fields[i];
            fl->heading = fields[i].heading;
            if ((fields[i].kind == F_ANNOTATION || fields[i].kind == F_INSTANCE)
                && fields[i].key && !(fl->path = strdup (fields[i].key)))
                return errprintf (error, "out of memory");
            break;
        }
    }
    if (!fl->info && !strncmp (name, "instance.resources.", 19)) {
        if (instance_resources_field (name, fl) < 0)
            return errprintf (error, "Unknown format field: %s", name);
    }
    else if (!fl->info && annotation_field (name, fl) < 0)
        return errprintf (error, "Unknown format field: %s", name);
    if (spec && fl->conv == 'd') {
        /* {t!d:STRFTIME[::SPEC]} */
        char *sep = strstr (spec, "::");
        if (sep) {
            *sep = '\0';
            sep += 2;
        }
        if (!(fl->strftime = strdup (spec)))
            return errprintf (error, "out of memory");
        spec = sep;
    }
    if (spec && parse_spec (spec, fl, name, error) < 0)
        return -1;
    if (!spec)
        fl->fill = ' ', fl->precision = -1;
    fl->nospec = !spec || !*spec;
    return 0;
}

void jobs_format_destroy (struct jobs_format *f)
{
    if (f) {
        int saved_errno = errno;
        for (int i = 0; i < f->n; i++) {
            free (f->fields[i].prefix);
            free (f->fields[i].path);
            free (f->fields[i].strftime);
            free (f->fields[i].heading_buf);
        }
        free (f->fields);
        free (f->suffix);
        free (f);
        errno = saved_errno;
    }
}

static struct field *add_field (struct jobs_format *f)
{
    struct field *p = realloc (f->fields, (f->n + 1) * sizeof (*p));
    if (!p)
        return NULL;
    f->fields = p;
    memset (&p[f->n], 0, sizeof (*p));
    return &p[f->n++];
}

struct jobs_format *jobs_format_create (const char *fmt, flux_error_t *error)
{
    struct jobs_format *f;
    struct textbuf lit = {0};
    const char *s = fmt;

    if (!(f = calloc (1, sizeof (*f))))
        return NULL;
    jobs_out_append (&lit, "", 0);
    while (*s) {
        if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
            jobs_out_append (&lit, s, 1);
            s += 2;
        }
        else if (*s == '}') {
            errprintf (error, "format: single '}' encountered");
            goto inval;
        }
        else if (*s == '{') {
            const char *end = strchr (s, '}');
            struct field *fl;
            char *text;
            if (!end) {
                errprintf (error, "format: unmatched '{'");
                goto inval;
            }
            if (!(fl = add_field (f)) || !(text = strndup (s + 1, end - s - 1)))
                goto nomem;
            if (lit.len >= 2 && !strcmp (lit.data + lit.len - 2, "?:")) {
                fl->optional = true;
                lit.len -= 2;
                lit.data[lit.len] = '\0';
            }
            fl->prefix = lit.data;
            lit = (struct textbuf){0};
            jobs_out_append (&lit, "", 0);
            if (parse_field (text, fl, error) < 0) {
                free (text);
                goto inval;
            }
            free (text);
            s = end + 1;
        }
        else
            jobs_out_append (&lit, s++, 1);
    }
    f->suffix = lit.data;
    return f;
inval:
    free (lit.data);
    jobs_format_destroy (f);
    errno = EINVAL;
    return NULL;
nomem:
    free (lit.data);
    jobs_format_destroy (f);
    errno = ENOMEM;
    return NULL;
}

bool jobs_format_wants_instance (const struct jobs_format *f)
{
    for (int i = 0; i < f->n; i++) {
        if (f->fields[i].info && f->fields[i].info->kind == F_INSTANCE)
            return true;
    }
    return false;
}

json_t *jobs_format_attrs (const struct jobs_format *f)
{
    json_t *a = json_array ();
    char buf[256];

    for (int i = 0; a && i < f->n; i++) {
        const char *attrs
            = f->fields[i].info ? f->fields[i].info->attrs : "annotations";
        char *save = NULL, *tok;
        snprintf (buf, sizeof (buf), "%s", attrs);
        for (tok = strtok_r (buf, " ", &save); tok;
             tok = strtok_r (NULL, " ", &save)) {
            size_t k;
            json_t *v;
            bool have = false;
            json_array_foreach (
                a, k, v) if (!strcmp (json_string_value (v), tok)) have
                = true;
            if (!have)
                json_array_append_new (a, json_string (tok));
        }
    }
    return a;
}

/* Python's repr() of a float: the shortest digits that read back the
 * same, fixed notation for exponents -4..15, else exponent notation.
 */
static void pyrepr (double d, char *buf, size_t size)
{
    char tmp[64];
    int p, exp;

    if (!isfinite (d)) {
        snprintf (buf, size, "%s", isnan (d) ? "nan" : d > 0 ? "inf" : "-inf");
        return;
    }
    for (p = 1; p < 17; p++) {
        snprintf (tmp, sizeof (tmp), "%.*e", p - 1, d);
        if (strtod (tmp, NULL) == d)
            break;
    }
    snprintf (tmp, sizeof (tmp), "%.*e", p - 1, d);
    exp = atoi (strchr (tmp, 'e') + 1);
    if (exp >= -4 && exp < 16) {
        int ndec = p - 1 - exp > 0 ? p - 1 - exp : 0;
        snprintf (buf, size, "%.*f%s", ndec, d, ndec == 0 ? ".0" : "");
    }
    else
        snprintf (buf, size, "%s", tmp);
}

void jobs_fsd (double secs, char *buf, size_t size)
{
    if (secs < 1e-3)
        snprintf (buf, size, "0s");
    else if (secs < 10.)
        snprintf (buf, size, "%.03fs", secs);
    else if (secs < 60.)
        snprintf (buf, size, "%.4gs", secs);
    else if (secs < 3600.)
        snprintf (buf, size, "%.4gm", secs / 60.);
    else if (secs < 86400.)
        snprintf (buf, size, "%.4gh", secs / 3600.);
    else
        snprintf (buf, size, "%.4gd", secs / 86400.);
}

/* x rounded to the nearest integer, halves to even (as Python's round),
 * without libm: the flux command does not link it (one shared library
 * less to map at every start). */
static long long round_half_even (double x)
{
    long long i = (long long)x; /* toward zero */
    double frac = x - (double)i;

    if (frac > 0.5 || (frac == 0.5 && (i & 1)))
        i++;
    else if (frac < -0.5 || (frac == -0.5 && (i & 1)))
        i--;
    return i;
}

/* As Python's str(timedelta(seconds=round(secs))) (round half to
 * even), nonzero under a second rounded up to one.
 */
void jobs_hms (double secs, char *buf, size_t size)
{
    long long s, days;

    if (secs > 0. && secs < 1.)
        secs = 1.;
    s = round_half_even (secs);
    days = s / 86400;
    s %= 86400;
    if (days > 0)
        snprintf (buf, size, "%lld day%s, %lld:%02lld:%02lld", days,
                  days == 1 ? "" : "s", s / 3600, (s / 60) % 60, s % 60);
    else
        snprintf (buf, size, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60,
                  s % 60);
}

/* Characters (UTF-8 code points) in the first len bytes of s. */
static size_t u8len (const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            n++;
    return n;
}

/* Bytes of the first n characters of s. */
static size_t u8prefix (const char *s, size_t len, size_t n)
{
    size_t i = 0;
    while (i < len && n > 0) {
        i++;
        while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
            i++;
        n--;
    }
    return i;
}

static void fill (struct textbuf *o, char c, size_t n)
{
    char buf[64];
    memset (buf, c, sizeof (buf));
    while (n > 0) {
        size_t k = n > sizeof (buf) ? sizeof (buf) : n;
        jobs_out_append (o, buf, k);
        n -= k;
    }
}

/* Pad s to the field width. */
static void pad (struct textbuf *o, const struct field *fl, const char *s,
                 size_t len, char defalign)
{
    size_t chars = u8len (s, len), n;
    char align = fl->align ? fl->align : defalign;

    if ((size_t)fl->width <= chars) {
        jobs_out_append (o, s, len);
        return;
    }
    n = fl->width - chars;
    if (align == '<')
        jobs_out_append (o, s, len), fill (o, fl->fill, n);
    else if (align == '^')
        fill (o, fl->fill, n / 2), jobs_out_append (o, s, len),
            fill (o, fl->fill, n - n / 2);
    else
        fill (o, fl->fill, n), jobs_out_append (o, s, len);
}

/* A string with precision (truncation, "+" marker) and padding. */
static void put_string (struct textbuf *o, const struct field *fl,
                        const char *s, bool plus)
{
    size_t len = strlen (s);
    char tmp[512];

    if (fl->precision >= 0 && u8len (s, len) > (size_t)fl->precision) {
        size_t keep = u8prefix (s, len, fl->precision);
        if (plus && fl->precision > 0 && keep < sizeof (tmp)) {
            keep = u8prefix (s, len, fl->precision - 1);
            memcpy (tmp, s, keep);
            tmp[keep++] = '+';
            pad (o, fl, tmp, keep, '<');
            return;
        }
        len = keep;
    }
    pad (o, fl, s, len, '<');
}

static bool is_basecase (const char *s)
{
    static const char *base[]
        = {"", "0s", "0.0", "0:00:00", "1970-01-01T00:00:00", NULL};
    for (int i = 0; base[i]; i++)
        if (!strcmp (s, base[i]))
            return true;
    return false;
}

static void date (double t, const char *fmt, struct val *v)
{
    time_t sec = (time_t)t;
    struct tm tm;

    jobs_val_clear (v);
    if (t <= 0. || !localtime_r (&sec, &tm)
        || strftime (v->buf, sizeof (v->buf), fmt, &tm) == 0)
        v->buf[0] = '\0';
    v->t = V_STR;
    v->s = v->buf;
}

static bool numeric (const struct val *v, double *d)
{
    if (v->t == V_INT)
        *d = v->i;
    else if (v->t == V_REAL)
        *d = v->d;
    else
        return false;
    return true;
}

static void convert (const struct field *fl, struct val *v)
{
    double d;
    char tmp[128];
    const char *str;

    switch (fl->conv) {
        case 'F':
        case 'H':
            if (!numeric (v, &d)) {
                jobs_val_clear (v);
                v->t = V_STR;
                v->s = "";
                return;
            }
            if (fl->conv == 'F')
                jobs_fsd (d, tmp, sizeof (tmp));
            else
                jobs_hms (d, tmp, sizeof (tmp));
            jobs_val_clear (v);
            snprintf (v->buf, sizeof (v->buf), "%s", tmp);
            v->t = V_STR;
            v->s = v->buf;
            return;
        case 'D':
        case 'd':
            if (!numeric (v, &d))
                d = 0.;
            date (d,
                  fl->conv == 'D' ? "%Y-%m-%dT%H:%M:%S"
                  : fl->strftime  ? fl->strftime
                                  : "%Y-%m-%d %H:%M:%S",
                  v);
            return;
        case 'P': /* 0.5 -> "50%", 0.333 -> "33.3%" */
            if (!numeric (v, &d)) {
                jobs_val_clear (v);
                v->t = V_STR;
                v->s = "";
                return;
            }
            jobs_val_clear (v);
            snprintf (v->buf, sizeof (v->buf), "%.3g%%", d * 100.);
            v->t = V_STR;
            v->s = v->buf;
            return;
        case 's':
        case 'r':
            if (v->t == V_STR || v->t == V_EMPTY)
                return; /* already a string (it may live in v) */
            /* jobs_val_str () writes tmp, or returns a constant */
            str = jobs_val_str (v, tmp, sizeof (tmp));
            if (str != tmp)
                snprintf (tmp, sizeof (tmp), "%s", str);
            jobs_val_clear (v);
            snprintf (v->buf, sizeof (v->buf), "%s", tmp);
            v->t = V_STR;
            v->s = v->buf;
            return;
    }
}

static void format_cell (const struct field *fl, const struct jobref *job,
                         double now, struct textbuf *o)
{
    struct val v;
    char tmp[512];
    double d = 0.;

    jobs_eval (fl, job, now, &v);
    convert (fl, &v);
    if (fl->hyphen) {
        const char *s = jobs_val_str (&v, tmp, sizeof (tmp));
        put_string (o, fl, is_basecase (s) ? "-" : s, fl->plus);
        jobs_val_clear (&v);
        return;
    }
    if (v.t == V_EMPTY || v.t == V_STR || v.t == V_BOOL) {
        put_string (o, fl, jobs_val_str (&v, tmp, sizeof (tmp)), fl->plus);
        jobs_val_clear (&v);
        return;
    }
    numeric (&v, &d);
    if (fl->type && strchr ("fFeEgG", fl->type)) {
        char f[8];
        snprintf (f, sizeof (f), "%%.*%c", fl->type);
        snprintf (tmp, sizeof (tmp), f, fl->precision >= 0 ? fl->precision : 6,
                  d);
    }
    else if (v.t == V_INT) {
        /* the common case, without snprintf */
        unsigned long long u
            = v.i < 0 ? -(unsigned long long)v.i : (unsigned long long)v.i;
        char *p = tmp + sizeof (tmp);
        *--p = '\0';
        do
            *--p = '0' + u % 10;
        while ((u /= 10) > 0);
        if (v.i < 0)
            *--p = '-';
        memmove (tmp, p, tmp + sizeof (tmp) - p);
    }
    else if (fl->precision >= 0)
        snprintf (tmp, sizeof (tmp), "%.*g", fl->precision ? fl->precision : 1,
                  d);
    else
        pyrepr (d, tmp, sizeof (tmp));
    pad (o, fl, tmp, strlen (tmp), '>');
    jobs_val_clear (&v);
}

static bool cell_empty (const char *s, size_t len)
{
    static const char *empty[] = {"-", "0", "0.0", "0s", "0:00:00", NULL};
    while (len > 0 && *s == ' ')
        s++, len--;
    while (len > 0 && s[len - 1] == ' ')
        len--;
    if (len == 0)
        return true;
    for (int i = 0; empty[i]; i++)
        if (strlen (empty[i]) == len && !strncmp (s, empty[i], len))
            return true;
    return false;
}

int jobs_format_run (struct jobs_format *f, const struct jobs_list *l,
                     double now, int header, struct textbuf *out)
{
    size_t nj = l->njobs, nf = f->n;
    size_t *start;
    struct textbuf cells = {0};
    bool *drop;

    if (!(start = calloc (nj * nf + 1, sizeof (*start)))
        || !(drop = calloc (nf + 1, sizeof (*drop)))) {
        free (start);
        errno = ENOMEM;
        return -1;
    }
    for (size_t j = 0; j < nj; j++) {
        struct jobref job = {l, j};
        for (size_t k = 0; k < nf; k++) {
            start[j * nf + k] = cells.len;
            format_cell (&f->fields[k], &job, now, &cells);
        }
    }
    start[nj * nf] = cells.len;
    for (size_t k = 0; k < nf; k++) {
        if (!f->fields[k].optional)
            continue;
        drop[k] = true;
        for (size_t j = 0; j < nj && drop[k]; j++) {
            size_t a = start[j * nf + k], b = start[j * nf + k + 1];
            if (!cell_empty (cells.data + a, b - a))
                drop[k] = false;
        }
    }
    if (header) {
        for (size_t k = 0; k < nf; k++) {
            struct field hf = f->fields[k];
            if (drop[k])
                continue;
            out_str (out, hf.prefix);
            hf.plus = false;
            put_string (out, &hf, hf.heading, false);
        }
        out_str (out, f->suffix);
        out_str (out, "\n");
    }
    for (size_t j = 0; j < nj; j++) {
        for (size_t k = 0; k < nf; k++) {
            size_t a = start[j * nf + k], b = start[j * nf + k + 1];
            if (drop[k])
                continue;
            out_str (out, f->fields[k].prefix);
            jobs_out_append (out, cells.data + a, b - a);
        }
        out_str (out, f->suffix);
        out_str (out, "\n");
    }
    free (cells.data);
    free (start);
    free (drop);
    return 0;
}
