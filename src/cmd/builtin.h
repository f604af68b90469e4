/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_BUILTIN_H
#define FLUX_CMD_BUILTIN_H

#include <stdbool.h>

/* The table of `flux` subcommands compiled into the flux binary.
 *
 * Each subcommand lives in src/cmd/builtin/<name>.c and exports
 *   int cmd_<name> (int argc, char **argv)
 * (argv[0] is the subcommand name, as for main()) and a struct builtin
 * naming it, with a one-line summary for `flux help` and the usage text
 * that `flux <name> --help` prints.  A subcommand returns the process
 * exit status; it may also exit directly through the cmdutil.h helpers.
 *
 * Commands grouping sub-subcommands (`flux event pub`) describe each of
 * those with a struct builtin too and run them with cmd_run_group().
 */

struct builtin {
    const char *name;
    const char *summary;
    const char *usage;
    int (*main) (int argc, char **argv);
    bool internal; /* run by flux itself, not listed by `flux help` */
};

extern const struct builtin builtin_getattr;
extern const struct builtin builtin_content;
extern const struct builtin builtin_config;
extern const struct builtin builtin_setattr;
extern const struct builtin builtin_lsattr;
extern const struct builtin builtin_ping;
extern const struct builtin builtin_dmesg;
extern const struct builtin builtin_logger;
extern const struct builtin builtin_event;
extern const struct builtin builtin_module;
extern const struct builtin builtin_overlay;
extern const struct builtin builtin_uptime;
extern const struct builtin builtin_shutdown;
extern const struct builtin builtin_start;
extern const struct builtin builtin_kvs;
extern const struct builtin builtin_dump;
extern const struct builtin builtin_restore;
extern const struct builtin builtin_resource;
extern const struct builtin builtin_jobs;
/* members of the `flux job` group (builtin/job_info.c) */
extern const struct builtin builtin_job_eventlog;
extern const struct builtin builtin_job_wait_event;
extern const struct builtin builtin_job_info;
extern const struct builtin builtin_job_status;

extern const struct builtin builtin_cancel;
extern const struct builtin builtin_update;
extern const struct builtin builtin_queue;
/* members of the `flux job` group (builtin/job_control.c) */
extern const struct builtin builtin_job_urgency;
extern const struct builtin builtin_job_raise;
extern const struct builtin builtin_job_cancel;
extern const struct builtin builtin_job_kill;
extern const struct builtin builtin_job_wait;
extern const struct builtin builtin_job_last;
extern const struct builtin builtin_job_purge;
extern const struct builtin builtin_job_stats;
extern const struct builtin builtin_submit;
/* the `flux job` group (builtin/job.c lists its members) and its members
 * builtin/job_submit.c, builtin/job_id.c */
extern const struct builtin builtin_job;
extern const struct builtin builtin_job_submit;
extern const struct builtin builtin_job_taskmap;
extern const struct builtin builtin_job_id;
extern const struct builtin builtin_exec;
extern const struct builtin builtin_imp_helper;

int cmd_getattr (int argc, char **argv);
int cmd_content (int argc, char **argv);
int cmd_setattr (int argc, char **argv);
int cmd_lsattr (int argc, char **argv);
int cmd_ping (int argc, char **argv);
int cmd_dmesg (int argc, char **argv);
int cmd_logger (int argc, char **argv);
int cmd_event (int argc, char **argv);
int cmd_config (int argc, char **argv);
int cmd_module (int argc, char **argv);
int cmd_overlay (int argc, char **argv);
int cmd_uptime (int argc, char **argv);
int cmd_imp_exec_helper (int argc, char **argv);
int cmd_shutdown (int argc, char **argv);
int cmd_start (int argc, char **argv);
int cmd_kvs (int argc, char **argv);
int cmd_dump (int argc, char **argv);
int cmd_restore (int argc, char **argv);
int cmd_submit (int argc, char **argv);
int cmd_job (int argc, char **argv);
int cmd_resource (int argc, char **argv);
int cmd_jobs (int argc, char **argv);
int cmd_cancel (int argc, char **argv);
int cmd_update (int argc, char **argv);
int cmd_queue (int argc, char **argv);
int cmd_exec (int argc, char **argv);
extern const struct builtin builtin_sproc;
int cmd_sproc (int argc, char **argv);

/* member of the `flux job` group (builtin/job_attach.c) */
extern const struct builtin builtin_job_attach;
/* builtin/run.c */
extern const struct builtin builtin_run;
int cmd_run (int argc, char **argv);

extern const struct builtin builtin_batch;
extern const struct builtin builtin_alloc;
extern const struct builtin builtin_broker;
extern const struct builtin builtin_uri;
extern const struct builtin builtin_proxy;
int cmd_batch (int argc, char **argv);
int cmd_alloc (int argc, char **argv);
int cmd_broker (int argc, char **argv);
int cmd_uri (int argc, char **argv);
int cmd_proxy (int argc, char **argv);
extern const struct builtin builtin_pstree;
int cmd_pstree (int argc, char **argv);
extern const struct builtin builtin_relay;
int cmd_relay (int argc, char **argv);

#endif /* !FLUX_CMD_BUILTIN_H */
