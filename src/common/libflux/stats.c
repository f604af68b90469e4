/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* stats.c - stats-get answers with the message counters (stats.h). */
#include <errno.h>

#include "response.h"
#include "stats.h"

static json_t *counters (int request, int response, int event, int control)
{
    return json_pack ("{s:i s:i s:i s:i}", "request", request, "response",
                      response, "event", event, "control", control);
}

void flux_stats_respond (flux_t *h, const flux_msg_t *msg, json_t *o)
{
    struct flux_msgcounters mc;

    flux_get_msgcounters (h, &mc);
    if (!o
        || json_object_set_new (o, "tx",
                                counters (mc.request_tx, mc.response_tx,
                                          mc.event_tx, mc.control_tx))
               < 0
        || json_object_set_new (o, "rx",
                                counters (mc.request_rx, mc.response_rx,
                                          mc.event_rx, mc.control_rx))
               < 0)
        (void)flux_respond_error (h, msg, ENOMEM, NULL);
    else
        (void)flux_respond_pack (h, msg, "O", o);
    json_decref (o);
}
