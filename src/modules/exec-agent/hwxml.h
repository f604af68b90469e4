/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef EXEC_AGENT_HWXML_H
#define EXEC_AGENT_HWXML_H
/* hwxml - this node's cores and their CPUs, for the job shells: loaded by
 * the agent once, with hwloc (packages, cores and PUs, within the
 * broker's binding, which the shells inherit), so that no shell reads
 * /sys itself (1-5 ms of every job's start-up).  Each shell is given the
 * CPUs of its own cores of R only (the `cpus` of exec-agent.shell-info):
 * what it gets grows with its allocation on the node, not with the node.
 */
#include <jansson.h>
#include <stdint.h>

#include "shell/hwcores.h"

/* The XML (malloc'd, the caller frees it), or NULL with errno. */
char *hwxml_load (void);

/* This node's cores (hwcores_destroy() them), or NULL with errno. */
struct hwcores *hwxml_cores (void);

/* The cores of R on rank, each with its CPUs (hwloc's bitmap text):
 * {"CORE": "BITMAP", ...}, a new object.  A core of R this node does not
 * have is left out (the shell warns of it).  NULL with EPROTO if R's
 * R_lite cannot be read, ENOMEM. */
json_t *hwxml_job_cpus (const struct hwcores *hc, json_t *R, uint32_t rank);

#endif /* !EXEC_AGENT_HWXML_H */
