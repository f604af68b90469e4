/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the heartbeat broker module (rank 0): publishes heartbeat.pulse
 * every period (heartbeat.h).
 *
 * Arguments: period=FSD (default 2s), which wins over the config key
 * heartbeat.period.  Without the argument the module follows the config
 * with a streaming config.get, so `flux config reload` changes the period.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "heartbeat.h"
#include "libflux/flux.h"

struct ctx {
    flux_t *h;
    heartbeat_t *hb;
    bool from_args;
};

static void config_cb (flux_future_t *f, void *arg)
{
    struct ctx *ctx = arg;
    json_t *conf;
    flux_error_t error;
    double period = HEARTBEAT_DEFAULT_PERIOD;

    if (flux_rpc_get_unpack (f, "o", &conf) < 0) {
        if (errno != ENOSYS && errno != ENODATA)
            flux_log (ctx->h, LOG_ERR, "config.get: %s",
                      future_strerror (f, errno));
        return; /* the future is destroyed with the module */
    }
    if (heartbeat_parse_config (conf, &period, &error) < 0)
        flux_log (ctx->h, LOG_ERR, "config: %s; keeping period %gs", error.text,
                  heartbeat_get_period (ctx->hb));
    else if (!ctx->from_args)
        heartbeat_set_period (ctx->hb, period);
    flux_future_reset (f);
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct ctx ctx = {.h = h};
    double period = HEARTBEAT_DEFAULT_PERIOD;
    flux_future_t *f = NULL;
    flux_error_t error;
    int rc = -1;

    if (heartbeat_parse_args (argc, argv, &period, &ctx.from_args, &error)
        < 0) {
        flux_log (h, LOG_ERR, "%s", error.text);
        return -1;
    }
    if (!(ctx.hb = heartbeat_create (h, period)))
        return -1;
    if (!(f = flux_rpc (h, "config.get", NULL, FLUX_NODEID_ANY,
                        FLUX_RPC_STREAMING))
        || flux_future_then (f, -1., config_cb, &ctx) < 0)
        goto done;
    if (heartbeat_start (ctx.hb) < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done:
    flux_future_destroy (f);
    heartbeat_destroy (ctx.hb);
    return rc;
}
