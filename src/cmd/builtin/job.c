/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job.c - `flux job COMMAND`: the group dispatcher and its table.
 *
 * To add `flux job NAME`:
 *   1. define in some builtin/job_*.c
 *        const struct builtin builtin_job_NAME = {.name = "NAME",
 *            .summary = ..., .usage = ..., .main = ...};
 *      main gets argv[0] = "NAME"; the cmdutil.h helpers print messages
 *      as "flux-job: ..." and answer --help with the usage;
 *   2. declare it in src/cmd/builtin.h next to the other builtin_job_*;
 *   3. add &builtin_job_NAME to members[] below (sorted by name);
 *   4. add the source file to flux_SOURCES in src/cmd/Makefile.am and
 *      describe NAME in doc/man1/flux-job.1.
 */
#include "cmdutil.h"

static const char usage[] = "Usage: flux job COMMAND [OPTIONS] [ARGS...]\n"
                            "Job utilities.\n";

const struct builtin builtin_job = {
    .name = "job",
    .summary = "Job utilities (submit, id, info, urgency, ...)",
    .usage = usage,
    .main = cmd_job,
};

static const struct builtin *const members[] = {
    &builtin_job_attach,     /* job_attach.c */
    &builtin_job_cancel,     /* job_control.c */
    &builtin_job_eventlog,   /* job_info.c */
    &builtin_job_id,         /* job_id.c */
    &builtin_job_info,       /* job_info.c */
    &builtin_job_kill,       /* job_control.c */
    &builtin_job_last,       /* job_admin.c */
    &builtin_job_purge,      /* job_admin.c */
    &builtin_job_raise,      /* job_control.c */
    &builtin_job_stats,      /* job_admin.c */
    &builtin_job_status,     /* job_info.c */
    &builtin_job_submit,     /* job_submit.c */
    &builtin_job_taskmap,    /* job_taskmap.c */
    &builtin_job_urgency,    /* job_control.c */
    &builtin_job_wait,       /* job_control.c */
    &builtin_job_wait_event, /* job_info.c */
    NULL,
};

int cmd_job (int argc, char **argv)
{
    return cmd_run_group (&builtin_job, members, argc, argv);
}
