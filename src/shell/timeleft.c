/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* timeleft.c - the shell option `signal`: a signal to the tasks some time
 * before the job's expiration (timeleft.h).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "libeventlog/eventlog.h"

#include "info.h"
#include "shell.h"
#include "timeleft.h"

struct timeleft {
    struct shell *shell;
    int signum;
    double timeleft;   /* seconds before the expiration */
    double expiration; /* the job's, seconds since the epoch */
    bool sent;
    uv_timer_t timer;
    flux_future_t *watch; /* job-info.eventlog-watch, until sent */
};

static void watch_stop (struct timeleft *t)
{
    flux_future_t *cf;

    if (!t->watch)
        return;
    cf = flux_rpc_pack (t->shell->h, "job-info.eventlog-watch-cancel",
                        FLUX_NODEID_ANY, FLUX_RPC_NORESPONSE, "{s:i}",
                        "matchtag", (int)flux_rpc_get_matchtag (t->watch));
    flux_future_destroy (cf);
    flux_future_destroy (t->watch);
    t->watch = NULL;
}

static void timer_cb (uv_timer_t *timer)
{
    struct timeleft *t = timer->data;

    t->sent = true;
    /* once per job where flux run shows it (the leader's), not per node */
    shell_log (t->shell, t->shell->leader ? LOG_NOTICE : LOG_INFO, "signal",
               "sending %s to the tasks: %.0fs before the time limit",
               sigabbrev_np (t->signum) ? sigabbrev_np (t->signum) : "signal",
               t->timeleft);
    shell_killall (t->shell, t->signum);
    watch_stop (t);
}

/* (Re)arm the timer for the current expiration. */
static void arm (struct timeleft *t)
{
    double delay = t->expiration - t->timeleft - eventlog_now ();
    uint64_t ms = delay > 0. ? (uint64_t)ceil (delay * 1000.) : 0;

    uv_timer_stop (&t->timer);
    (void)uv_timer_start (&t->timer, timer_cb, ms, 0);
}

/* An event of the job's main eventlog: a resource-update with a new
 * expiration moves the signal (0: no limit any more). */
static void watch_cb (flux_future_t *f, void *arg)
{
    struct timeleft *t = arg;
    const char *line, *name;
    json_t *entry = NULL, *context = NULL;
    double expiration;

    if (flux_rpc_get_unpack (f, "{s:s}", "event", &line) < 0) {
        if (errno != ENODATA)
            shell_log (t->shell, LOG_WARNING, "signal",
                       "watching the eventlog: %s", future_strerror (f, errno));
        flux_future_destroy (t->watch);
        t->watch = NULL;
        return;
    }
    if ((entry = eventlog_entry_decode (line))
        && eventlog_entry_parse (entry, NULL, &name, &context) == 0
        && !strcmp (name, "resource-update") && context
        && json_unpack (context, "{s:F}", "expiration", &expiration) == 0
        && !t->sent) {
        t->expiration = expiration;
        if (expiration > 0.)
            arm (t);
        else
            uv_timer_stop (&t->timer);
    }
    json_decref (entry);
    flux_future_reset (f);
}

int timeleft_start (struct shell *shell, struct timeleft **tp,
                    flux_error_t *error)
{
    json_t *o = json_object_get (shell->info->options, "signal");
    struct timeleft *t;
    double expiration = 0.;
    int signum = SIGUSR1;
    double timeleft = 60.;

    *tp = NULL;
    if (!o || json_is_false (o)
        || (json_is_integer (o) && json_integer_value (o) == 0))
        return 0;
    if (json_is_object (o)
        && json_unpack (o, "{s?i s?F}", "signum", &signum, "timeleft",
                        &timeleft)
               < 0)
        return errprintf (error, "shell option signal must be "
                                 "{signum?:integer, timeleft?:number}");
    if (signum < 1 || signum >= NSIG || !(timeleft >= 0.) || timeleft > 1e9)
        return errprintf (error,
                          "shell option signal: signum %d or "
                          "timeleft %g is out of range",
                          signum, timeleft);
    (void)json_unpack (shell->info->R, "{s:{s:F}}", "execution", "expiration",
                       &expiration);
    if (!(expiration > 0.))
        return 0; /* no time limit: nothing to warn of */
    if (!(t = calloc (1, sizeof (*t))))
        return errprintf (error, "out of memory");
    t->shell = shell;
    t->signum = signum;
    t->timeleft = timeleft;
    t->expiration = expiration;
    t->timer.data = t;
    if (uv_timer_init (shell->loop, &t->timer) < 0) {
        free (t);
        return errprintf (error, "signal: cannot create a timer");
    }
    arm (t);
    if (!(t->watch = flux_rpc_pack (
              shell->h, "job-info.eventlog-watch", FLUX_NODEID_ANY,
              FLUX_RPC_STREAMING, "{s:I s:s s:i}", "id", (json_int_t)shell->id,
              "path", "eventlog", "flags", 0))
        || flux_future_then (t->watch, -1., watch_cb, t) < 0) {
        flux_future_destroy (t->watch);
        t->watch = NULL;
        shell_log (shell, LOG_WARNING, "signal",
                   "cannot watch the eventlog: a changed time limit will "
                   "not move the signal");
    }
    *tp = t;
    return 0;
}

static void free_cb (uv_handle_t *h)
{
    free (h->data);
}

void timeleft_destroy (struct timeleft *t)
{
    if (!t)
        return;
    watch_stop (t);
    uv_timer_stop (&t->timer);
    uv_close ((uv_handle_t *)&t->timer, free_cb);
}
