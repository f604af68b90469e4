/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef EXEC_AGENT_SHELLCMD_H
#define EXEC_AGENT_SHELLCMD_H

/* shellcmd - the command line and environment of a job shell
 * (doc/guide/exec.md "The agent and the shell").  Each result is one
 * allocation (the strings live in the same block): free() it.
 */
#include <stdint.h>

/* { shell, "<decimal id>", NULL }.  NULL with errno. */
char **shellcmd_argv (const char *shell, uint64_t id);

/* The multi-user form: { imp, "exec", shell, "<decimal id>", NULL }, for
 * a job whose user is not the instance owner (PROTOCOLS-exec.md 2.3). */
char **shellcmd_imp_argv (const char *imp, const char *shell, uint64_t id);

/* env (NULL-terminated) without FLUX_URI, FLUX_KVS_NAMESPACE and
 * SHELL_INFO_ENV (a broker started by a job's shell has none anyway), plus
 * FLUX_URI=uri and FLUX_KVS_NAMESPACE=job-<decimal id>.  NULL with errno. */
char **shellcmd_env (char **env, const char *uri, uint64_t id);

/* shellcmd_env() plus SHELL_INFO_ENV=info (shell/killsig.h: the JSON text
 * of the job's shell-info answer).  NULL with errno. */
char **shellcmd_env_info (char **env, const char *uri, uint64_t id,
                          const char *info);

/* shellcmd_env() for the IMP: also FLUX_IMP_EXEC_HELPER="<helper> <decimal
 * id>" (replacing any), the command flux-imp exec runs to read J
 * (helper: e.g. "/usr/bin/flux imp_exec_helper").  NULL with errno. */
char **shellcmd_imp_env (char **env, const char *uri, uint64_t id,
                         const char *helper);

#endif /* !EXEC_AGENT_SHELLCMD_H */
