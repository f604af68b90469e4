/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef EXEC_AGENT_HWXML_H
#define EXEC_AGENT_HWXML_H
/* hwxml - this node's hwloc topology as XML, for the job shells (the
 * `topology` of exec-agent.shell-info): loaded by the agent once, so a
 * shell imports it (about 0.1 ms) instead of reading /sys itself (1-5 ms
 * of every job's start-up).  Only what the shell uses is kept: packages,
 * cores and PUs, within the broker's binding (which the shells inherit).
 */

/* The XML (malloc'd, the caller frees it), or NULL with errno. */
char *hwxml_load (void);

#endif /* !EXEC_AGENT_HWXML_H */
