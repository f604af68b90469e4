/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* heartbeat.c - publish heartbeat.pulse every period (heartbeat.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "heartbeat.h"
#include "libutil/fsd.h"

struct heartbeat {
    flux_t *h;
    double period;
    uv_timer_t *timer;
    bool started;
    unsigned long count;
};

int heartbeat_parse_period (const char *s, double *period, flux_error_t *error)
{
    double d;

    if (!s || fsd_parse_duration (s, &d) < 0 || !isfinite (d)
        || d < HEARTBEAT_MIN_PERIOD) {
        errno = EINVAL;
        return errprintf (error,
                          "period '%s': expected an FSD duration of at "
                          "least %gs",
                          s ? s : "(null)", HEARTBEAT_MIN_PERIOD);
    }
    *period = d;
    return 0;
}

int heartbeat_parse_args (int argc, char **argv, double *period, bool *given,
                          flux_error_t *error)
{
    double d = *period;
    bool seen = false;

    for (int i = 0; i < argc; i++) {
        if (!strncmp (argv[i], "period=", 7)) {
            if (heartbeat_parse_period (argv[i] + 7, &d, error) < 0)
                return -1;
            seen = true;
        }
        else {
            errno = EINVAL;
            return errprintf (error, "unknown argument '%s'", argv[i]);
        }
    }
    *period = d;
    *given = seen;
    return 0;
}

int heartbeat_parse_config (json_t *conf, double *period, flux_error_t *error)
{
    json_t *tab, *val;

    if (!conf || !(tab = json_object_get (conf, "heartbeat")))
        return 0;
    if (!json_is_object (tab)) {
        errno = EINVAL;
        return errprintf (error, "heartbeat: expected a table");
    }
    if (!(val = json_object_get (tab, "period")))
        return 0;
    if (!json_is_string (val)) {
        errno = EINVAL;
        return errprintf (error, "heartbeat.period: expected an FSD string");
    }
    return heartbeat_parse_period (json_string_value (val), period, error);
}

static void pulse (heartbeat_t *hb)
{
    flux_msg_t *msg;

    if (!(msg = flux_event_encode ("heartbeat.pulse", NULL)))
        return;
    if (flux_send (hb->h, msg, 0) == 0)
        hb->count++;
    flux_msg_destroy (msg);
}

static void timer_cb (uv_timer_t *t)
{
    pulse (t->data);
}

static uint64_t period_ms (double period)
{
    return (uint64_t)(period * 1000. + 0.5);
}

heartbeat_t *heartbeat_create (flux_t *h, double period)
{
    heartbeat_t *hb;
    flux_reactor_t *r;

    if (!h || !(period >= HEARTBEAT_MIN_PERIOD) || !isfinite (period)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(r = flux_get_reactor (h)) || !(hb = calloc (1, sizeof (*hb))))
        return NULL;
    hb->h = h;
    hb->period = period;
    if (!(hb->timer = calloc (1, sizeof (*hb->timer)))) {
        free (hb);
        return NULL;
    }
    uv_timer_init (flux_reactor_uv (r), hb->timer);
    hb->timer->data = hb;
    /* the module's message handlers keep the loop alive, not the pulse */
    uv_unref ((uv_handle_t *)hb->timer);
    return hb;
}

void heartbeat_set_period (heartbeat_t *hb, double period)
{
    if (!hb || !(period >= HEARTBEAT_MIN_PERIOD) || !isfinite (period)
        || period == hb->period)
        return;
    hb->period = period;
    if (hb->started)
        uv_timer_start (hb->timer, timer_cb, period_ms (period),
                        period_ms (period));
}

double heartbeat_get_period (heartbeat_t *hb)
{
    return hb ? hb->period : 0.;
}

int heartbeat_start (heartbeat_t *hb)
{
    if (!hb) {
        errno = EINVAL;
        return -1;
    }
    pulse (hb);
    uv_timer_start (hb->timer, timer_cb, period_ms (hb->period),
                    period_ms (hb->period));
    hb->started = true;
    return 0;
}

unsigned long heartbeat_count (heartbeat_t *hb)
{
    return hb ? hb->count : 0;
}

void heartbeat_destroy (heartbeat_t *hb)
{
    if (hb) {
        int saved_errno = errno;
        uv_timer_stop (hb->timer);
        flux_uv_close_free ((uv_handle_t *)hb->timer);
        free (hb);
        errno = saved_errno;
    }
}
