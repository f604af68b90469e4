/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_KVS_CMD_H
#define FLUX_CMD_KVS_CMD_H

/* Shared between the files of `flux kvs` (kvs.c, kvs_ls.c,
 * kvs_namespace.c, kvs_eventlog.c): the members of the group defined
 * outside kvs.c, and the helpers they share.  Every helper exits with a
 * "flux-kvs: ..." message on failure (cmdutil.h conventions).
 */
#include "libkvs/kvs.h"

#include "cmdutil.h"

extern const struct builtin kvs_ls_cmd;
extern const struct builtin kvs_dir_cmd;
extern const struct builtin kvs_namespace_cmd;
extern const struct builtin kvs_eventlog_cmd;

/* Run the member of a nested group (`flux kvs namespace create`):
 * argv[0] is the group name ("namespace"), argv[1] the member.  Messages
 * keep the "flux-kvs" prefix; --help of a member prints its usage.
 */
int kvs_run_subgroup (const struct builtin *group,
                      const struct builtin *const members[], int argc,
                      char **argv);

/* The width for columns and truncated values: cols if >= 0 (0 means
 * unlimited), else the terminal's, else $COLUMNS, else 80.
 */
int kvs_window_width (int cols);

/* Wait for a commit and print what -O (treeobj) / -s (sequence) asked. */
void kvs_commit_finish (flux_future_t *f, bool treeobj_root, bool sequence);

#endif /* !FLUX_CMD_KVS_CMD_H */
