/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* submit.c - `flux submit [OPTIONS] COMMAND [ARGS...]`: build a jobspec
 * v1 from the options (RFC 25, as flux-core's flux submit does), sign it
 * and submit it through job-ingest.submit (libjob flux_job_submit), once,
 * or once per id of --cc/--bcc with up to MAX_INFLIGHT submissions in
 * flight.  IDs print in f58, in submission order.  --wait follows each
 * job (the attach engine of job_attach.c, read-only) until its clean
 * event and exits with the highest exit code among the jobs; --watch
 * also prints their output.  The options are parsed by submit_opts.c,
 * shared with flux run.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libidset/idset.h"
#include "libjob/job.h"

#include "cmdutil.h"
#include "job_attach.h"
#include "submit_attrs.h"
#include "submit_opts.h"

#define MAX_INFLIGHT 512

static const char usage[]
    = "Usage: flux submit [OPTIONS] COMMAND [ARGS...]\n"
      "Submit a job that runs COMMAND and print its id.\n" SUBMIT_OPTS_HELP
      "      --cc=IDSET           Submit one job per id, {cc} in ARGS "
      "replaced\n"
      "      --bcc=IDSET          Like --cc without the substitution\n"
      "      --flags=LIST         Comma list of waitable, debug, novalidate\n"
      "      --output=PATH        Write stdout to PATH (a template: "
      "{{id}}...)\n"
      "      --error=PATH         Write stderr to PATH\n"
      "      --input=PATH         Read stdin from PATH\n"
      "  -l, --label-io           Label the lines of --output/--error files\n"
      "                           with their task rank\n"
      "      --wait               Wait for the jobs to finish, exit with the\n"
      "                           highest job exit code\n"
      "      --watch              --wait and print the jobs' output\n"
      "      --wait-event=NAME    Wait until every job has posted event\n"
      "                           NAME (e.g. start), or ended without it\n"
      "      --quiet              Do not print job ids\n"
      "      --dry-run            Print the jobspec instead of submitting\n"
      "  -h, --help               Display this message\n";

const struct builtin builtin_submit = {
    .name = "submit",
    .summary = "Submit a job",
    .usage = usage,
    .main = cmd_submit,
};

/* One job of the run */
struct job {
    struct run *run;
    int index;
    unsigned int cc;
    bool done, ok;
    flux_jobid_t id;
    struct attach *attach; /* --wait, --watch */
};

struct run {
    flux_t *h;
    const struct submit_opts *o;
    json_t *base;
    char *base_text; /* base encoded, once */
    bool subst;      /* --cc and a command word holds {cc} */
    struct job *jobs;
    int njobs;
    int next;    /* next to submit */
    int printed; /* ids printed so far, in order */
    int inflight;
    int errors;
};

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

static void follow_job (struct run *run, struct job *j)
{
    struct attach_opts ao = {
        .read_only = true,
        .no_output = !run->o->watch,
        .submit_rules = true,
        .wait_event = run->o->wait_event,
    };

    if (!(j->attach = attach_create (run->h, j->id, &ao)))
        cmd_die ("attach: %s", strerror (errno));
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
    if (j->ok && (run->o->wait || run->o->watch || run->o->wait_event))
        follow_job (run, j);
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
    struct submit_opts o = {0};
    struct run run = {.o = &o};
    int rc = 0;

    submit_opts_parse (argc, argv, SUBMIT_MODE_SUBMIT, &o);
    run.base = submit_build_jobspec (argc - optind, argv + optind, &o);
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
    for (int i = 0; i < run.njobs; i++) {
        struct attach *a = run.jobs[i].attach;
        if (a) {
            int code;
            if (!attach_finished (a))
                cmd_die ("the watches stopped before the jobs' end");
            if ((code = attach_exit_code (a)) > rc)
                rc = code;
            attach_destroy (a);
        }
    }
    if (run.errors)
        rc = 1;
    free (run.jobs);
    json_decref (run.base);
    free (run.base_text);
    submit_opts_free (&o);
    flux_close (run.h);
    return rc;
}
