/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for the heartbeat publisher, over loop:// (events sent on a
 * loop handle come back to its own handlers). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "heartbeat.h"
#include "tap.h"

static void test_parse (void)
{
    flux_error_t error;
    double d = -1;
    bool given = true;
    char *args1[] = {"period=0.5s"};
    char *args2[] = {"period=1ms"};
    char *args3[] = {"nonsense=1"};
    char *args4[] = {"period=inf"};
    json_t *conf;

    ok (heartbeat_parse_period ("3s", &d, &error) == 0 && d == 3., "period 3s");
    ok (heartbeat_parse_period ("1.5m", &d, &error) == 0 && d == 90.,
        "period 1.5m");
    errno = 0;
    ok (heartbeat_parse_period ("x", &d, &error) < 0 && errno == EINVAL
            && d == 90.,
        "period x fails with EINVAL, value untouched");
    diag ("%s", error.text);
    ok (heartbeat_parse_period ("0", &d, &error) < 0 && errno == EINVAL,
        "period 0 fails with EINVAL");

    d = HEARTBEAT_DEFAULT_PERIOD;
    ok (heartbeat_parse_args (0, NULL, &d, &given, &error) == 0 && !given
            && d == HEARTBEAT_DEFAULT_PERIOD,
        "no args: default kept, not given");
    ok (heartbeat_parse_args (1, args1, &d, &given, &error) == 0 && given
            && d == 0.5,
        "period=0.5s");
    ok (heartbeat_parse_args (1, args2, &d, &given, &error) < 0
            && errno == EINVAL && d == 0.5,
        "period=1ms is below the minimum: EINVAL");
    ok (heartbeat_parse_args (1, args3, &d, &given, &error) < 0
            && errno == EINVAL && strstr (error.text, "nonsense"),
        "unknown argument: EINVAL naming it");
    ok (heartbeat_parse_args (1, args4, &d, &given, &error) < 0
            && errno == EINVAL,
        "period=inf: EINVAL");

    d = 7;
    conf = json_pack ("{s:{s:s}}", "heartbeat", "period", "250ms");
    ok (heartbeat_parse_config (conf, &d, &error) == 0 && d == 0.25,
        "config heartbeat.period 250ms");
    json_decref (conf);
    conf = json_pack ("{s:{}}", "heartbeat");
    ok (heartbeat_parse_config (conf, &d, &error) == 0 && d == 0.25,
        "config without period: untouched");
    json_decref (conf);
    ok (heartbeat_parse_config (NULL, &d, &error) == 0 && d == 0.25,
        "no config: untouched");
    conf = json_pack ("{s:{s:i}}", "heartbeat", "period", 2);
    ok (heartbeat_parse_config (conf, &d, &error) < 0 && errno == EINVAL,
        "config period as an integer: EINVAL");
    json_decref (conf);
    conf = json_pack ("{s:s}", "heartbeat", "x");
    ok (heartbeat_parse_config (conf, &d, &error) < 0 && errno == EINVAL,
        "config heartbeat not a table: EINVAL");
    json_decref (conf);
}

struct seen {
    int count;
    int with_payload;
    int stop_at;
};

static void pulse_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct seen *s = arg;

    if (flux_msg_has_payload (msg))
        s->with_payload++;
    if (++s->count == s->stop_at)
        flux_reactor_stop (flux_get_reactor (h));
}

static void test_pulse (void)
{
    flux_t *h = flux_open ("loop://", 0);
    struct seen s = {.stop_at = 3};
    struct flux_match m = FLUX_MATCH_EVENT;
    flux_msg_handler_t *mh;
    heartbeat_t *hb;

    if (!h)
        BAIL_OUT ("loop:// open failed");
    m.topic_glob = "heartbeat.pulse";
    mh = flux_msg_handler_create (h, m, pulse_cb, &s);
    flux_msg_handler_start (mh);
    errno = 0;
    ok (heartbeat_create (h, 0.) == NULL && errno == EINVAL,
        "create with period 0 fails with EINVAL");
    ok ((hb = heartbeat_create (h, 0.05)) != NULL, "created, period 50ms");
    ok (heartbeat_count (hb) == 0, "nothing published before start");
    ok (heartbeat_start (hb) == 0 && heartbeat_count (hb) == 1,
        "start publishes one pulse at once");
    ok (flux_reactor_run (flux_get_reactor (h), 0) == 0 && s.count == 3,
        "three pulses received");
    ok (s.with_payload == 0, "pulses have no payload");
    heartbeat_set_period (hb, 0.02);
    ok (heartbeat_get_period (hb) == 0.02, "period changed to 20ms");
    heartbeat_set_period (hb, 0.);
    ok (heartbeat_get_period (hb) == 0.02, "period 0 is ignored");
    s.stop_at = 6;
    ok (flux_reactor_run (flux_get_reactor (h), 0) == 0 && s.count == 6,
        "pulses continue at the new period");
    ok (heartbeat_count (hb) >= 6, "count says what was published");
    heartbeat_destroy (hb);
    heartbeat_destroy (NULL);
    flux_msg_handler_destroy (mh);
    flux_close (h);
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    test_parse ();
    test_pulse ();
    done_testing ();
}
