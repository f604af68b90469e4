/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_PMI_H
#define FLUX_SHELL_PMI_H

/* Process management interfaces served to the tasks, behind one small
 * table so that a second one (PMIx for Open MPI) can be added beside
 * PMI-1 without touching the rest of the shell.
 *
 * Option `pmi` (string "simple,pmix" or array of names, default
 * "simple"; "off" or "none" disables) picks which servers run; each
 * prepares a task before it is spawned (fds, environment) and is told
 * once it runs.
 */
#include "libflux/handle.h"

#include "env.h"

struct shell;
struct task;

struct shell_pmi_server {
    const char *name; /* option name, e.g. "simple" */
    void *(*create) (struct shell *shell, flux_error_t *error);
    void (*destroy) (void *impl);
    /* before spawn: set env vars, t->pmi_fd */
    int (*task_setup) (void *impl, struct task *t, struct env *env,
                       flux_error_t *error);
    /* after a successful spawn */
    void (*task_started) (void *impl, struct task *t);
};

/* The PMI-1 simple-wire server (pmi_simple.c). */
extern const struct shell_pmi_server shell_pmi_simple;

struct shell_pmi;

/* Create the servers the options ask for.  NULL with errno and text. */
struct shell_pmi *shell_pmi_create (struct shell *shell, flux_error_t *error);
void shell_pmi_destroy (struct shell_pmi *pmi);
int shell_pmi_task_setup (struct shell_pmi *pmi, struct task *t,
                          struct env *env, flux_error_t *error);
void shell_pmi_task_started (struct shell_pmi *pmi, struct task *t);

#endif /* !FLUX_SHELL_PMI_H */
