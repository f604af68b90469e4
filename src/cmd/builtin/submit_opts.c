/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* submit_opts.c - the options of flux submit and flux run, and the
 * jobspec v1 built from them (RFC 25, as flux-core builds it); see
 * submit_opts.h.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "libjob/job.h"
#include "libeventlog/eventlog.h"
#include "libjob/jobspec.h"
#include "libutil/fsd.h"
#include "libutil/rlimits.h"

#include "cmdutil.h"
#include "job_attach.h"
#include "submit_attrs.h"
#include "submit_opts.h"

extern char **environ;

enum {
    OPT_URGENCY = 256,
    OPT_DEPENDENCY,
    OPT_ENV,
    OPT_ENV_REMOVE,
    OPT_CWD,
    OPT_JOB_NAME,
    OPT_CC,
    OPT_BCC,
    OPT_FLAGS,
    OPT_WAIT,
    OPT_WATCH,
    OPT_QUIET,
    OPT_DRY_RUN,
    OPT_OUTPUT,
    OPT_ERROR,
    OPT_INPUT,
    OPT_WAIT_EVENT,
    OPT_WRAP,
    OPT_BROKER_OPTS,
    OPT_BG,
    OPT_RLIMIT,
    OPT_TASKMAP,
    OPT_TASKS_PER_NODE,
    OPT_SIGNAL,
    OPT_BEGIN_TIME,
    OPT_ENV_FILE,
    OPT_ADD_FILE,
};

static double parse_time_limit (const char *s)
{
    double d;
    char *end;

    d = strtod (s, &end);
    if (end != s && *end == '\0' && d >= 0)
        return d * 60; /* a plain number is minutes, as in flux-core */
    if (fsd_parse_duration (s, &d) < 0)
        cmd_usage_error ("--time-limit=%s: expected minutes or a duration", s);
    return d;
}

int submit_parse_flags (const char *s)
{
    char *cpy = strdup (s), *tok, *save = NULL;
    int flags = 0;

    for (tok = strtok_r (cpy, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        if (!strcmp (tok, "waitable"))
            flags |= FLUX_JOB_WAITABLE;
        else if (!strcmp (tok, "debug"))
            flags |= FLUX_JOB_DEBUG;
        else if (!strcmp (tok, "novalidate"))
            flags |= FLUX_JOB_NOVALIDATE;
        else
            cmd_usage_error ("--flags: unknown flag '%s'", tok);
    }
    free (cpy);
    return flags;
}

/* --begin-time: +FSD (from now), @SECONDS (since the epoch), a local
 * YYYY-MM-DD[ T]HH:MM[:SS], or HH:MM[:SS] (the next such time).  As
 * seconds since the epoch. */
static double parse_begin_time (const char *s)
{
    static const char *const formats[] = {
        "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M",    "%H:%M:%S",          "%H:%M",
    };
    time_t now = time (NULL);
    double d;
    char *end;

    if (*s == '+') {
        if (fsd_parse_duration (s + 1, &d) < 0)
            cmd_usage_error ("--begin-time=%s: '%s' is not a duration", s,
                             s + 1);
        return eventlog_now () + d;
    }
    if (*s == '@') {
        d = strtod (s + 1, &end);
        if (end == s + 1 || *end || !isfinite (d) || d < 0)
            cmd_usage_error ("--begin-time=%s: expected @SECONDS", s);
        return d;
    }
    for (size_t i = 0; i < sizeof (formats) / sizeof (formats[0]); i++) {
        struct tm tm;
        const char *rest;
        bool clock = formats[i][1] == 'H'; /* a time of day only */
        time_t t;

        localtime_r (&now, &tm);
        tm.tm_sec = 0;
        if (!(rest = strptime (s, formats[i], &tm)) || *rest)
            continue;
        tm.tm_isdst = -1;
        if ((t = mktime (&tm)) == (time_t)-1)
            break;
        if (clock && t < now) { /* passed today: tomorrow */
            tm.tm_mday++;
            tm.tm_isdst = -1;
            t = mktime (&tm);
        }
        return (double)t;
    }
    cmd_usage_error ("--begin-time=%s: expected +DURATION, @SECONDS, "
                     "YYYY-MM-DD HH:MM[:SS] or HH:MM[:SS]",
                     s);
}

static const char *optname (const struct option *longopts, int c)
{
    for (int i = 0; longopts[i].name; i++)
        if (longopts[i].val == c)
            return longopts[i].name;
    return "?";
}

void submit_opts_parse (int argc, char **argv, enum submit_mode mode,
                        struct submit_opts *o)
{
    static const struct option longopts[] = {
        {"ntasks", required_argument, NULL, 'n'},
        {"nodes", required_argument, NULL, 'N'},
        {"cores-per-task", required_argument, NULL, 'c'},
        {"gpus-per-task", required_argument, NULL, 'g'},
        {"exclusive", no_argument, NULL, 'x'},
        {"time-limit", required_argument, NULL, 't'},
        {"setattr", required_argument, NULL, 'S'},
        {"setopt", required_argument, NULL, 'o'},
        {"urgency", required_argument, NULL, OPT_URGENCY},
        {"dependency", required_argument, NULL, OPT_DEPENDENCY},
        {"env", required_argument, NULL, OPT_ENV},
        {"env-remove", required_argument, NULL, OPT_ENV_REMOVE},
        {"env-file", required_argument, NULL, OPT_ENV_FILE},
        {"add-file", required_argument, NULL, OPT_ADD_FILE},
        {"cwd", required_argument, NULL, OPT_CWD},
        {"job-name", required_argument, NULL, OPT_JOB_NAME},
        {"cc", required_argument, NULL, OPT_CC},
        {"bcc", required_argument, NULL, OPT_BCC},
        {"flags", required_argument, NULL, OPT_FLAGS},
        {"wait", no_argument, NULL, OPT_WAIT},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        {"watch", no_argument, NULL, OPT_WATCH},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {"error", required_argument, NULL, OPT_ERROR},
        {"input", required_argument, NULL, OPT_INPUT},
        {"label-io", no_argument, NULL, 'l'},
        {"verbose", no_argument, NULL, 'v'},
        {"wait-event", required_argument, NULL, OPT_WAIT_EVENT},
        {"wrap", no_argument, NULL, OPT_WRAP},
        {"broker-opts", required_argument, NULL, OPT_BROKER_OPTS},
        {"bg", no_argument, NULL, OPT_BG},
        {"rlimit", required_argument, NULL, OPT_RLIMIT},
        {"taskmap", required_argument, NULL, OPT_TASKMAP},
        {"tasks-per-node", required_argument, NULL, OPT_TASKS_PER_NODE},
        {"signal", required_argument, NULL, OPT_SIGNAL},
        {"unbuffered", no_argument, NULL, 'u'},
        {"begin-time", required_argument, NULL, OPT_BEGIN_TIME},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool run = mode == SUBMIT_MODE_RUN;
    bool batch = mode == SUBMIT_MODE_BATCH, alloc = mode == SUBMIT_MODE_ALLOC;
    int c;

    o->mode = mode;
    o->cores = 1;
    o->urgency = FLUX_JOB_URGENCY_DEFAULT;
    if (!(o->env = calloc (argc, sizeof (char *)))
        || !(o->setattr = calloc (argc, sizeof (char *)))
        || !(o->setopt = calloc (argc, sizeof (char *)))
        || !(o->deps = calloc (argc, sizeof (char *)))
        || !(o->rlimit = calloc (argc, sizeof (char *)))
        || !(o->files = calloc (argc, sizeof (char *)))
        || !(o->broker_opts = calloc (argc, sizeof (char *))))
        cmd_die ("out of memory");
    while ((c = cmd_getopt (argc, argv,
                            run || alloc ? "n:N:c:g:xt:S:o:luv"
                                         : "n:N:c:g:xt:S:o:lu",
                            longopts))
           != -1) {
        switch (c) {
            case 'n':
                o->ntasks = cmd_parse_long ("--ntasks", optarg, 1, INT32_MAX);
                break;
            case 'N':
                o->nnodes = cmd_parse_long ("--nodes", optarg, 1, INT32_MAX);
                break;
            case 'c':
                o->cores
                    = cmd_parse_long ("--cores-per-task", optarg, 1, INT32_MAX);
                break;
            case 'g':
                o->gpus
                    = cmd_parse_long ("--gpus-per-task", optarg, 0, INT32_MAX);
                break;
            case 'x':
                o->exclusive = 1;
                break;
            case 't':
                o->duration = parse_time_limit (optarg);
                break;
            case 'S':
                o->setattr[o->nsetattr++] = optarg;
                break;
            case 'o':
                o->setopt[o->nsetopt++] = optarg;
                break;
            case OPT_URGENCY:
                o->urgency = cmd_parse_urgency ("--urgency", optarg);
                break;
            case OPT_DEPENDENCY:
                o->deps[o->ndeps++] = optarg;
                break;
            case OPT_ENV:
            case OPT_ENV_REMOVE:
            case OPT_ENV_FILE:
                if (asprintf (&o->env[o->nenv++], "%s%s",
                              c == OPT_ENV_REMOVE ? "-"
                              : c == OPT_ENV_FILE ? "^"
                                                  : "",
                              optarg)
                    < 0)
                    cmd_die ("out of memory");
                break;
            case OPT_CWD:
                o->cwd = optarg;
                break;
            case OPT_JOB_NAME:
                o->job_name = optarg;
                break;
            case OPT_CC:
            case OPT_BCC:
                idset_destroy (o->cc);
                if (!(o->cc = idset_decode (optarg)) || idset_empty (o->cc))
                    cmd_usage_error ("--%s=%s: not a valid, non-empty idset",
                                     c == OPT_CC ? "cc" : "bcc", optarg);
                o->subst_cc = c == OPT_CC;
                break;
            case OPT_FLAGS:
                o->flags = submit_parse_flags (optarg);
                break;
            case OPT_WAIT:
                o->wait = true;
                break;
            case OPT_QUIET:
                o->quiet = true;
                break;
            case OPT_DRY_RUN:
                o->dry_run = true;
                break;
            case OPT_WATCH:
                o->watch = true;
                break;
            case OPT_OUTPUT:
                o->output = optarg;
                break;
            case OPT_ERROR:
                o->error = optarg;
                break;
            case OPT_INPUT:
                /* flux run --input=IDSET: the task ranks stdin goes to */
                if (run && attach_check_stdin_ranks (optarg) == 0)
                    o->stdin_ranks = optarg;
                else
                    o->input = optarg;
                break;
            case 'l':
                o->label_io = true;
                break;
            case 'u':
                o->unbuffered = true;
                break;
            case 'v':
                o->verbose++;
                break;
            case OPT_WAIT_EVENT:
                o->wait_event = optarg;
                break;
            case OPT_WRAP:
                o->wrap = true;
                break;
            case OPT_BROKER_OPTS:
                o->broker_opts[o->nbroker_opts++] = optarg;
                break;
            case OPT_BG:
                o->bg = true;
                break;
            case OPT_RLIMIT:
                o->rlimit[o->nrlimit++] = optarg;
                break;
            case OPT_ADD_FILE:
                o->files[o->nfiles++] = optarg;
                break;
            case OPT_TASKMAP:
                o->taskmap = optarg;
                break;
            case OPT_BEGIN_TIME:
                o->begin_time = parse_begin_time (optarg);
                break;
            case OPT_SIGNAL:
                o->signal = optarg;
                break;
            case OPT_TASKS_PER_NODE:
                o->tasks_per_node
                    = cmd_parse_long ("--tasks-per-node", optarg, 1, INT32_MAX);
                break;
        }
        if ((c == OPT_WRAP && !batch) || (c == OPT_BG && !alloc)
            || (c == OPT_BROKER_OPTS && !batch && !alloc))
            cmd_usage_error ("--%s is not an option of this command",
                             optname (longopts, c));
        if ((batch || alloc)
            && (c == OPT_CC || c == OPT_BCC || c == OPT_WAIT || c == OPT_WATCH
                || c == OPT_QUIET || c == OPT_WAIT_EVENT))
            cmd_usage_error ("--%s is not an option of this command",
                             optname (longopts, c));
        if (run
            && (c == OPT_CC || c == OPT_BCC || c == OPT_WAIT || c == OPT_WATCH
                || c == OPT_QUIET))
            cmd_usage_error ("--%s is an option of flux submit, not flux run",
                             optname (longopts, c));
        if (!run && !alloc && c == 'v')
            cmd_usage_error ("--%s is an option of flux run, not flux submit",
                             optname (longopts, c));
    }
    if (optind >= argc && !batch && !alloc)
        cmd_usage_error ("missing COMMAND");
    if (o->exclusive && o->nnodes == 0)
        cmd_usage_error ("--exclusive requires --nodes");
    if (o->tasks_per_node > 0) {
        if (o->ntasks > 0)
            cmd_usage_error ("give --ntasks or --tasks-per-node, not both");
        if (o->nnodes == 0)
            cmd_usage_error ("--tasks-per-node requires --nodes");
        if ((long long)o->nnodes * o->tasks_per_node > INT32_MAX)
            cmd_usage_error ("--nodes=%d x --tasks-per-node=%d is too many "
                             "tasks",
                             o->nnodes, o->tasks_per_node);
        o->ntasks = o->nnodes * o->tasks_per_node;
    }
    if (o->taskmap) {
        size_t n = strcspn (o->taskmap, ":");
        if (!(n == 5 && !strncmp (o->taskmap, "block", 5))
            && !(n == 6 && !strncmp (o->taskmap, "cyclic", 6))
            && !(n == 6 && !strncmp (o->taskmap, "manual", 6)))
            cmd_usage_error ("--taskmap=%s: the scheme must be block, cyclic "
                             "or manual",
                             o->taskmap);
    }
    if (o->nnodes > 0 && o->ntasks > 0 && o->nnodes > o->ntasks)
        cmd_usage_error ("--nodes=%d is more than --ntasks=%d", o->nnodes,
                         o->ntasks);
}

/* Not sent by default, as by flux-core's CLI: these stay the node's (the
 * system's business more than the job's). */
static bool rlimit_by_default (const char *name)
{
    static const char *const node[]
        = {"memlock", "msgqueue", "nice", "rtprio", "rttime", "sigpending"};
    for (size_t i = 0; i < sizeof (node) / sizeof (node[0]); i++)
        if (!strcmp (node[i], name))
            return false;
    return true;
}

/* This process's soft limit of rlimit_names[i]: -1 for unlimited, as the shell
 * reads it. */
static json_int_t soft_limit (size_t i)
{
    struct rlimit rl;

    if (getrlimit (rlimit_names[i].resource, &rl) < 0)
        cmd_die ("getrlimit %s: %s", rlimit_names[i].name, strerror (errno));
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)INT64_MAX)
        return -1;
    return (json_int_t)rl.rlim_cur;
}

/* Apply one --rlimit rule to val[] (set[] says which are sent): -PATTERN
 * drops the limits whose names match the glob, PATTERN sends their
 * current values, NAME=VALUE sends VALUE (a number, or unlimited,
 * infinity, inf). */
static void rlimit_rule (const char *rule, json_int_t *val, bool *set)
{
    const char *eq = strchr (rule, '=');
    bool found = false;

    if (*rule == '-') {
        for (size_t i = 0; i < RLIMIT_NAMES_COUNT; i++)
            if (fnmatch (rule + 1, rlimit_names[i].name, 0) == 0)
                set[i] = false;
        return;
    }
    if (!eq) {
        for (size_t i = 0; i < RLIMIT_NAMES_COUNT; i++) {
            if (fnmatch (rule, rlimit_names[i].name, 0) == 0) {
                val[i] = soft_limit (i);
                set[i] = found = true;
            }
        }
        if (!found)
            cmd_usage_error ("--rlimit=%s: no limit matches '%s'", rule, rule);
        return;
    }
    int i = rlimit_lookup (rule, (size_t)(eq - rule));
    const char *v = eq + 1;
    char *end;
    long long n = -1;

    if (i < 0)
        cmd_usage_error ("--rlimit=%s: unknown limit '%.*s'", rule,
                         (int)(eq - rule), rule);
    if (strcmp (v, "unlimited") && strcmp (v, "infinity")
        && strcmp (v, "inf")) {
        errno = 0;
        n = strtoll (v, &end, 10);
        if (errno || end == v || *end || n < 0)
            cmd_usage_error ("--rlimit=%s: the value must be a number or "
                             "unlimited",
                             rule);
    }
    val[i] = n;
    set[i] = true;
}

/* The rlimit shell option: this process's soft limits (those sent by
 * default), then the --rlimit rules in order, each a comma-separated list.
 * NULL when nothing is left to send. */
static json_t *rlimit_option (const struct submit_opts *o)
{
    json_int_t val[RLIMIT_NAMES_COUNT];
    bool set[RLIMIT_NAMES_COUNT];
    json_t *obj;

    for (size_t i = 0; i < RLIMIT_NAMES_COUNT; i++) {
        set[i] = rlimit_by_default (rlimit_names[i].name);
        val[i] = set[i] ? soft_limit (i) : 0;
    }
    for (int k = 0; k < o->nrlimit; k++) {
        char *cpy = strdup (o->rlimit[k]), *tok, *save = NULL;
        if (!cpy)
            cmd_die ("out of memory");
        for (tok = strtok_r (cpy, ",", &save); tok;
             tok = strtok_r (NULL, ",", &save))
            rlimit_rule (tok, val, set);
        free (cpy);
    }
    if (!(obj = json_object ()))
        cmd_die ("out of memory");
    for (size_t i = 0; i < RLIMIT_NAMES_COUNT; i++)
        if (set[i]
            && json_object_set_new (obj, rlimit_names[i].name,
                                    json_integer (val[i]))
                   < 0)
            cmd_die ("out of memory");
    if (json_object_size (obj) == 0) {
        json_decref (obj);
        return NULL;
    }
    return obj;
}

void submit_opts_free (struct submit_opts *o)
{
    for (int i = 0; i < o->nenv; i++)
        free (o->env[i]);
    free (o->env);
    free (o->setattr);
    free (o->setopt);
    free (o->deps);
    free (o->rlimit);
    free (o->files);
    free (o->broker_opts);
    idset_destroy (o->cc);
}

/* shell option NAME = {type:"file", path} when path is set */
static int std_stream (json_t *js, const char *name, const char *path)
{
    char key[128];

    if (!path)
        return 0;
    snprintf (key, sizeof (key), "shell.options.%s", name);
    return submit_setattr_json (
        js, key, json_pack ("{s:s s:s}", "type", "file", "path", path), NULL);
}

/* shell option signal = {signum, timeleft} from [SIG][@TIME] (defaults
 * SIGUSR1, 60 s, as flux-core) */
static json_t *signal_option (const char *arg)
{
    const char *at = strchr (arg, '@');
    char sig[64];
    int signum = SIGUSR1;
    double timeleft = 60.;
    json_t *o;

    if (!at)
        at = arg + strlen (arg);
    if (at > arg) {
        if ((size_t)(at - arg) >= sizeof (sig))
            cmd_usage_error ("--signal=%s: invalid signal", arg);
        memcpy (sig, arg, at - arg);
        sig[at - arg] = '\0';
        if ((signum = cmd_parse_signal (sig)) < 0)
            cmd_usage_error ("--signal=%s: invalid signal '%s'", arg, sig);
    }
    if (*at == '@' && fsd_parse_duration (at + 1, &timeleft) < 0)
        cmd_usage_error ("--signal=%s: '%s' is not a duration", arg, at + 1);
    if (!(o = json_pack ("{s:i s:f}", "signum", signum, "timeleft", timeleft)))
        cmd_die ("out of memory");
    return o;
}

/* shell option taskmap = {scheme, value} from SCHEME[:VALUE] */
static int taskmap_option (json_t *js, const char *arg, flux_error_t *error)
{
    const char *colon = strchr (arg, ':');
    json_t *tm;

    if (colon)
        tm = json_pack ("{s:s% s:s}", "scheme", arg, (size_t)(colon - arg),
                        "value", colon + 1);
    else
        tm = json_pack ("{s:s}", "scheme", arg);
    if (!tm)
        return errprintf (error, "--taskmap=%s: not valid UTF-8", arg);
    return submit_setattr_json (js, "shell.options.taskmap", tm, error);
}

json_t *submit_build_jobspec (int argc, char **argv,
                              const struct submit_opts *o)
{
    flux_error_t error;
    char cwd[4096];
    json_t *js, *sys, *env, *rl;

    /* -N without -n: one task per node */
    int ntasks = o->ntasks ? o->ntasks : o->nnodes ? o->nnodes : 1;

    if (!(js
          = jobspec_from_command (argc, argv, ntasks, o->nnodes, o->cores,
                                  o->gpus, o->exclusive, o->duration, &error)))
        cmd_die ("%s", error.text);
    sys = json_object_get (json_object_get (js, "attributes"), "system");
    if (!o->cwd && !getcwd (cwd, sizeof (cwd)))
        cmd_die ("getcwd: %s", strerror (errno));
    if (json_object_set_new (sys, "cwd", json_string (o->cwd ? o->cwd : cwd))
        < 0)
        cmd_die ("--cwd: not valid UTF-8");
    if (!(env = submit_env_create (environ, o->env, o->nenv, &error))
        || json_object_set_new (sys, "environment", env) < 0)
        cmd_die ("%s", error.text);
    if (o->job_name
        && json_object_set_new (sys, "job",
                                json_pack ("{s:s}", "name", o->job_name))
               < 0)
        cmd_die ("--job-name: not valid UTF-8");
    for (int i = 0; i < o->ndeps; i++)
        if (submit_add_dependency (js, o->deps[i], &error) < 0)
            cmd_usage_error ("%s", error.text);
    if (o->begin_time > 0.) {
        char uri[64];
        snprintf (uri, sizeof (uri), "begin-time:%.6f", o->begin_time);
        if (submit_add_dependency (js, uri, &error) < 0)
            cmd_usage_error ("%s", error.text);
    }
    if (std_stream (js, "output.stdout", o->output) < 0
        || std_stream (js, "output.stderr", o->error) < 0
        || std_stream (js, "input.stdin", o->input) < 0)
        cmd_die ("--output/--error/--input: not valid UTF-8");
    /* -u: the tasks' stdout as it comes, committed every 50 ms (flux-core's
     * settings) */
    if (o->unbuffered
        && (submit_setattr_json (js, "shell.options.output.stdout.buffer.type",
                                 json_string ("none"), &error)
                < 0
            || submit_setattr_json (js, "shell.options.output.batch-timeout",
                                    json_real (0.05), &error)
                   < 0))
        cmd_die ("%s", error.text);
    if (o->label_io
        && (submit_setattr_json (js, "shell.options.output.stdout.label",
                                 json_true (), &error)
                < 0
            || submit_setattr_json (js, "shell.options.output.stderr.label",
                                    json_true (), &error)
                   < 0))
        cmd_die ("%s", error.text);
    if ((rl = rlimit_option (o))
        && submit_setattr_json (js, "shell.options.rlimit", rl, &error) < 0)
        cmd_die ("%s", error.text);
    if (o->taskmap && taskmap_option (js, o->taskmap, &error) < 0)
        cmd_die ("%s", error.text);
    for (int i = 0; i < o->nfiles; i++)
        if (submit_add_file (js, o->files[i], &error) < 0)
            cmd_usage_error ("%s", error.text);
    if (o->signal
        && submit_setattr_json (js, "shell.options.signal",
                                signal_option (o->signal), &error)
               < 0)
        cmd_die ("%s", error.text);
    for (int i = 0; i < o->nsetopt; i++) {
        char *cpy = strdup (o->setopt[i]), *eq = strchr (cpy, '=');
        if (eq)
            *eq++ = '\0';
        if (submit_setattr_under (js, "shell.options", cpy, eq, &error) < 0)
            cmd_usage_error ("--setopt=%s: %s", o->setopt[i], error.text);
        free (cpy);
    }
    for (int i = 0; i < o->nsetattr; i++) {
        char *cpy = strdup (o->setattr[i]), *eq = strchr (cpy, '=');
        if (eq)
            *eq++ = '\0';
        if (submit_setattr (js, cpy, eq, &error) < 0)
            cmd_usage_error ("%s", error.text);
        free (cpy);
    }
    return js;
}

int submit_opts_submit_one (json_t *js, const struct submit_opts *o,
                            flux_t **hp, flux_jobid_t *id)
{
    flux_future_t *f;
    char *s;

    if (!(s = json_dumps (js, JSON_COMPACT)))
        cmd_die ("out of memory");
    if (o->dry_run) {
        printf ("%s\n", s);
        free (s);
        return 1;
    }
    *hp = cmd_open ();
    if (!(f = flux_job_submit (*hp, s, o->urgency, o->flags))
        || flux_job_submit_get_id (f, id) < 0)
        cmd_die ("%s", f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
    free (s);
    return 0;
}
