/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* heartbeat.h - the heartbeat.pulse publisher (PROTOCOLS.md section 3).
 *
 * On rank 0 it publishes the event heartbeat.pulse, with no payload,
 * once when started and then every period seconds (default 2).  What
 * waits for time to pass in an instance (flux-core's flux_sync(), flux
 * top) subscribes to it.  The period comes, as in flux-core, from the
 * module argument period=FSD, else from the config key heartbeat.period
 * (an FSD string), else the default; a config change applies at once.
 */
#ifndef HEARTBEAT_H
#define HEARTBEAT_H

#include <jansson.h>

#include "libflux/flux.h"

#define HEARTBEAT_DEFAULT_PERIOD 2.0
#define HEARTBEAT_MIN_PERIOD 0.01

typedef struct heartbeat heartbeat_t;

/* Parse an FSD period: finite and >= HEARTBEAT_MIN_PERIOD.
 * Returns 0, or -1 with errno EINVAL and text in error. */
int heartbeat_parse_period (const char *s, double *period, flux_error_t *error);

/* Parse the module arguments (only period=FSD).  *period is left alone
 * when absent; *given says whether it was there.  -1/EINVAL with text. */
int heartbeat_parse_args (int argc, char **argv, double *period, bool *given,
                          flux_error_t *error);

/* Read heartbeat.period from a config object: 0 with *period set, 0 with
 * *period untouched when absent, -1/EINVAL with text when malformed. */
int heartbeat_parse_config (json_t *conf, double *period, flux_error_t *error);

/* Create a publisher on h (not yet started).  NULL/errno on failure. */
heartbeat_t *heartbeat_create (flux_t *h, double period);

/* Change the period; a running timer is restarted with it. */
void heartbeat_set_period (heartbeat_t *hb, double period);
double heartbeat_get_period (heartbeat_t *hb);

/* Publish a pulse now, then every period.  -1/errno on failure. */
int heartbeat_start (heartbeat_t *hb);

/* Number of pulses published so far. */
unsigned long heartbeat_count (heartbeat_t *hb);

/* Stop and free.  NULL-safe, preserves errno. */
void heartbeat_destroy (heartbeat_t *hb);

#endif /* !HEARTBEAT_H */
