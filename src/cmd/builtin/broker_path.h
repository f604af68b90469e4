/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_BROKER_PATH_H
#define FLUX_CMD_BROKER_PATH_H

/* The flux-broker to run (start.c): $FLUX_BROKER_PATH, else the one next
 * to this flux binary or in the build tree, else the installed one.
 * Static storage. */
const char *start_broker_path (void);

#endif /* !FLUX_CMD_BROKER_PATH_H */
