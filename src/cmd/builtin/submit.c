/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* submit.c - `flux submit [OPTIONS] COMMAND [ARGS...]`: build a jobspec
 * v1 from the options (RFC 25, as flux-core's flux submit does), sign it
 * and submit it through job-ingest.submit (libjob flux_job_submit), once,
 * or once per id of --cc/--bcc with up to MAX_INFLIGHT submissions in
 * flight.  IDs print in f58, in submission order.  --wait watches each
 * job's eventlog (kvs-watch, WATCH|WATCH_APPEND) until its clean event
 * and exits with the highest exit code among the jobs.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libeventlog/eventlog.h"
#include "libidset/idset.h"
#include "libjob/job.h"
#include "libjob/jobspec.h"
#include "libkvs/kvs.h"
#include "libutil/fsd.h"

#include "cmdutil.h"
#include "submit_attrs.h"

#define MAX_INFLIGHT 512

extern char **environ;

static const char usage[]
    = "Usage: flux submit [OPTIONS] COMMAND [ARGS...]\n"
      "Submit a job that runs COMMAND and print its id.\n"
      "  -n, --ntasks=N           Number of tasks (default 1)\n"
      "  -N, --nodes=N            Number of nodes to spread the tasks on\n"
      "  -c, --cores-per-task=N   Cores per task (default 1)\n"
      "  -g, --gpus-per-task=N    GPUs per task (default 0)\n"
      "  -x, --exclusive          Allocate whole nodes (needs -N)\n"
      "  -t, --time-limit=MIN|FSD Time limit: minutes, or a duration such\n"
      "                           as 30s, 2h\n"
      "      --urgency=N          Urgency 0-31 (default 16), or hold (0),\n"
      "                           default (16), expedite (31)\n"
      "      --dependency=URI     Add a dependency, e.g. afterok:ID "
      "(repeatable)\n"
      "  -S, --setattr=KEY[=VAL]  Set attributes.KEY (system. if no prefix)\n"
      "                           to VAL, JSON if it parses (repeatable)\n"
      "  -o, --setopt=OPT[=VAL]   Set the shell option OPT (repeatable)\n"
      "      --env=RULE           Environment rule: VAR=VAL, -PATTERN, "
      "PATTERN\n"
      "                           (repeatable; default: the whole "
      "environment)\n"
      "      --env-remove=PATTERN Same as --env=-PATTERN\n"
      "      --cwd=DIR            Working directory (default: the current)\n"
      "      --job-name=NAME      Name the job (default: the command)\n"
      "      --cc=IDSET           Submit one job per id, {cc} in ARGS "
      "replaced\n"
      "      --bcc=IDSET          Like --cc without the substitution\n"
      "      --flags=LIST         Comma list of waitable, debug, novalidate\n"
      "      --wait               Wait for the jobs to finish, exit with the\n"
      "                           highest job exit code\n"
      "      --quiet              Do not print job ids\n"
      "      --dry-run            Print the jobspec instead of submitting\n"
      "  -h, --help               Display this message\n";

const struct builtin builtin_submit = {
    .name = "submit",
    .summary = "Submit a job",
    .usage = usage,
    .main = cmd_submit,
};

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
    OPT_QUIET,
    OPT_DRY_RUN,
};

struct opts {
    int ntasks, nnodes, cores, gpus, exclusive;
    double duration;
    int urgency, flags;
    char **env, **setattr, **setopt, **deps;
    int nenv, nsetattr, nsetopt, ndeps;
    const char *cwd, *job_name;
    struct idset *cc;
    bool subst_cc, wait, quiet, dry_run;
};

/* One job of the run */
struct job {
    struct run *run;
    int index;
    unsigned int cc;
    bool done, ok;
    flux_jobid_t id;
    eventlog_parser_t *parser;
    int status; /* wait status of the finish event, -1 if none */
};

struct run {
    flux_t *h;
    const struct opts *o;
    json_t *base;
    char *base_text; /* base encoded, once */
    bool subst;      /* --cc and a command word holds {cc} */
    struct job *jobs;
    int njobs;
    int next;    /* next to submit */
    int printed; /* ids printed so far, in order */
    int inflight;
    int errors;
    int max_exit;
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

static int parse_flags (const char *s)
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

static void parse_opts (int argc, char **argv, struct opts *o)
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
        {"cwd", required_argument, NULL, OPT_CWD},
        {"job-name", required_argument, NULL, OPT_JOB_NAME},
        {"cc", required_argument, NULL, OPT_CC},
        {"bcc", required_argument, NULL, OPT_BCC},
        {"flags", required_argument, NULL, OPT_FLAGS},
        {"wait", no_argument, NULL, OPT_WAIT},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    int c;

    o->cores = 1;
    o->urgency = FLUX_JOB_URGENCY_DEFAULT;
    if (!(o->env = calloc (argc, sizeof (char *)))
        || !(o->setattr = calloc (argc, sizeof (char *)))
        || !(o->setopt = calloc (argc, sizeof (char *)))
        || !(o->deps = calloc (argc, sizeof (char *))))
        cmd_die ("out of memory");
    while ((c = cmd_getopt (argc, argv, "n:N:c:g:xt:S:o:", longopts)) != -1) {
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
                if (asprintf (&o->env[o->nenv++], "%s%s",
                              c == OPT_ENV_REMOVE ? "-" : "", optarg)
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
                o->flags = parse_flags (optarg);
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
        }
    }
    if (optind >= argc)
        cmd_usage_error ("missing COMMAND");
    if (o->exclusive && o->nnodes == 0)
        cmd_usage_error ("--exclusive requires --nodes");
    if (o->nnodes > 0 && o->ntasks > 0 && o->nnodes > o->ntasks)
        cmd_usage_error ("--nodes=%d is more than --ntasks=%d", o->nnodes,
                         o->ntasks);
}

static void opts_free (struct opts *o)
{
    for (int i = 0; i < o->nenv; i++)
        free (o->env[i]);
    free (o->env);
    free (o->setattr);
    free (o->setopt);
    free (o->deps);
    idset_destroy (o->cc);
}

static json_t *build_jobspec (int argc, char **argv, const struct opts *o)
{
    flux_error_t error;
    char cwd[4096];
    json_t *js, *sys, *env;

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

/* The jobspec text of job j (the base with {cc} substituted).  Only
 * the command differs from job to job: it alone is copied. */
static char *job_jobspec (struct run *run, struct job *j)
{
    json_t *task, *cmd, *copy;
    char *s;

    if (!run->subst) {
        if (!(s = strdup (run->base_text)))
            cmd_die ("out of memory");
        return s;
    }
    task = json_array_get (json_object_get (run->base, "tasks"), 0);
    cmd = json_incref (json_object_get (task, "command"));
    if (!(copy = json_copy (cmd)) || json_object_set_new (task, "command", copy)
        || submit_subst_cc (run->base, j->cc) < 0
        || !(s = json_dumps (run->base, JSON_COMPACT)))
        cmd_die ("out of memory");
    if (json_object_set_new (task, "command", cmd) < 0)
        cmd_die ("out of memory");
    return s;
}

static void print_ready (struct run *run)
{
    char buf[64];

    while (run->printed < run->njobs && run->jobs[run->printed].done) {
        struct job *j = &run->jobs[run->printed++];
        if (j->ok && !run->o->quiet
            && flux_job_id_encode (j->id, NULL, buf, sizeof (buf)) == 0)
            printf ("%s\n", buf);
    }
    fflush (stdout);
}

static int exit_code (int status)
{
    if (status < 0)
        return 1; /* no finish event: the job never ran to completion */
    if (WIFSIGNALED (status))
        return 128 + WTERMSIG (status);
    return WEXITSTATUS (status);
}

static void watch_cb (flux_future_t *f, void *arg)
{
    struct job *j = arg;
    struct run *run = j->run;
    const void *data;
    size_t len;
    json_t *entry;

    if (flux_kvs_lookup_get_raw (f, &data, &len) < 0) {
        if (errno != ENODATA) {
            cmd_warn ("watching job eventlog: %s", future_strerror (f, errno));
            run->errors++;
        }
        flux_future_destroy (f);
        return;
    }
    if (eventlog_parser_feed (j->parser, data, len) < 0)
        cmd_die ("out of memory");
    while ((entry = eventlog_parser_next (j->parser))) {
        const char *name;
        json_t *context;
        if (eventlog_entry_parse (entry, NULL, &name, &context) == 0) {
            if (!strcmp (name, "finish"))
                (void)json_unpack (context, "{s:i}", "status", &j->status);
            else if (!strcmp (name, "clean")) {
                int code = exit_code (j->status);
                if (code > run->max_exit)
                    run->max_exit = code;
                if (flux_kvs_lookup_cancel (f) < 0)
                    cmd_die ("cancel: %s", strerror (errno));
            }
        }
        json_decref (entry);
    }
    flux_future_reset (f);
}

static void watch_job (struct run *run, struct job *j)
{
    char key[80];
    flux_future_t *f;

    j->status = -1;
    if (flux_job_kvs_key (key, sizeof (key), j->id, "eventlog") < 0
        || !(j->parser = eventlog_parser_create ())
        || !(f = flux_kvs_lookup (run->h, KVS_PRIMARY_NAMESPACE,
                                  FLUX_KVS_WATCH | FLUX_KVS_WATCH_APPEND, key))
        || flux_future_then (f, -1, watch_cb, j) < 0)
        cmd_die ("watching %s: %s", key, strerror (errno));
}

static void submit_more (struct run *run);

static void submit_cb (flux_future_t *f, void *arg)
{
    struct job *j = arg;
    struct run *run = j->run;

    if (flux_job_submit_get_id (f, &j->id) < 0) {
        cmd_warn ("%s", future_strerror (f, errno));
        run->errors++;
    }
    else
        j->ok = true;
    flux_future_destroy (f);
    j->done = true;
    run->inflight--;
    print_ready (run);
    if (j->ok && run->o->wait)
        watch_job (run, j);
    submit_more (run);
}

static void submit_more (struct run *run)
{
    while (run->inflight < MAX_INFLIGHT && run->next < run->njobs
           && run->errors == 0) {
        struct job *j = &run->jobs[run->next++];
        char *s = job_jobspec (run, j);
        flux_future_t *f;

        if (!(f = flux_job_submit (run->h, s, run->o->urgency, run->o->flags))
            || flux_future_then (f, -1, submit_cb, j) < 0)
            cmd_die ("submit: %s", strerror (errno));
        free (s);
        run->inflight++;
    }
}

static void dry_run (struct run *run)
{
    for (int i = 0; i < run->njobs; i++) {
        char *s = job_jobspec (run, &run->jobs[i]);
        printf ("%s\n", s);
        free (s);
    }
}

int cmd_submit (int argc, char **argv)
{
    struct opts o = {0};
    struct run run = {.o = &o};
    int rc;

    setlocale (LC_CTYPE, "");
    parse_opts (argc, argv, &o);
    run.base = build_jobspec (argc - optind, argv + optind, &o);
    if (!(run.base_text = json_dumps (run.base, JSON_COMPACT)))
        cmd_die ("out of memory");
    run.subst = o.subst_cc && submit_has_cc (run.base);
    run.njobs = o.cc ? (int)idset_count (o.cc) : 1;
    if (!(run.jobs = calloc (run.njobs, sizeof (run.jobs[0]))))
        cmd_die ("out of memory");
    for (int i = 0; i < run.njobs; i++) {
        run.jobs[i].run = &run;
        run.jobs[i].index = i;
        run.jobs[i].cc = o.cc ? (i == 0 ? idset_first (o.cc)
                                        : idset_next (o.cc, run.jobs[i - 1].cc))
                              : 0;
    }
    if (o.dry_run)
        dry_run (&run);
    else {
        run.h = cmd_open ();
        submit_more (&run);
        if (flux_reactor_run (flux_get_reactor (run.h), 0) < 0)
            cmd_die ("reactor: %s", strerror (errno));
    }
    rc = run.errors ? 1 : o.wait ? run.max_exit : 0;
    for (int i = 0; i < run.njobs; i++)
        eventlog_parser_destroy (run.jobs[i].parser);
    free (run.jobs);
    json_decref (run.base);
    free (run.base_text);
    opts_free (&o);
    flux_close (run.h);
    return rc;
}
