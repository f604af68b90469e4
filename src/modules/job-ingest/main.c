/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the job-ingest broker module (every rank): job-ingest.submit
 * (PROTOCOLS.md 5.1) handed to the engine in ingest.c.
 *
 * Arguments: batch-max=N    jobs per KVS commit and job-manager.submit
 *                           (default INGEST_BATCH_MAX_DEFAULT);
 *            batch-delay=MS collect a batch for MS milliseconds after its
 *                           first job (default 0: until the loop turn
 *                           that received it ends);
 *            kvs-wait=FSD   how long jobs whose KVS commit the kvs refused
 *                           (unloading, or not loaded) wait for it to come
 *                           back before they fail (default 30s; 0 or inf:
 *                           for ever; rank 0 only).
 * On unload, new requests get ENOSYS and the batches already started are
 * carried through (for at most DRAIN_TIMEOUT_MS) before the module
 * exits, so an accepted job is not left half submitted.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "ingest.h"
#include "jobreq.h"
#include "libflux/flux.h"
#include "libflux/stats.h"
#include "libutil/fsd.h"

#define DRAIN_TIMEOUT_MS 10000

static void submit_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    ingest_submit (arg, msg);
}

/* job-ingest.stats-get: the engine's counters and the message counters. */
static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    flux_stats_respond (h, msg, ingest_stats (arg));
}

/* kvs.online: refused commits go again (rank 0). */
static void kvs_online_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    ingest_kvs_online (arg);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "job-ingest.submit", submit_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-ingest.stats-get", stats_cb, FLUX_ROLE_ALL},
    {FLUX_MSGTYPE_EVENT, "kvs.online", kvs_online_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

static int parse_args (flux_t *h, int argc, char **argv, int *batch_max,
                       int *delay, double *kvs_wait, size_t *max_jobspec)
{
    int i;

    for (i = 0; i < argc; i++) {
        if (!strncmp (argv[i], "max-jobspec-size=", 17)) {
            char *end;
            unsigned long long n;
            errno = 0;
            n = strtoull (argv[i] + 17, &end, 10);
            if (errno || *end != '\0' || end == argv[i] + 17 || n < 1
                || n > (1ULL << 30) || argv[i][17] == '-')
                goto inval;
            *max_jobspec = (size_t)n;
            continue;
        }
        if (!strncmp (argv[i], "kvs-wait=", 9)) {
            if (fsd_parse_duration (argv[i] + 9, kvs_wait) < 0)
                goto inval;
            if (*kvs_wait == INFINITY)
                *kvs_wait = 0;
            continue;
        }
        if (!strncmp (argv[i], "batch-delay=", 12)) {
            char *end;
            long n = strtol (argv[i] + 12, &end, 10);
            if (*end != '\0' || end == argv[i] + 12 || n < 0 || n > 1000)
                goto inval;
            *delay = (int)n;
            continue;
        }
        if (!strncmp (argv[i], "batch-max=", 10)) {
            char *end;
            long n = strtol (argv[i] + 10, &end, 10);
            if (*end != '\0' || end == argv[i] + 10 || n < 1 || n > 100000)
                goto inval;
            *batch_max = (int)n;
        }
        else
            goto inval;
    }
    return 0;
inval:
    flux_log (h, LOG_ERR, "invalid argument: %s", argv[i]);
    errno = EINVAL;
    return -1;
}

static int get_owner (flux_t *h, uint32_t *owner)
{
    const char *s = flux_attr_get (h, "security.owner");
    char *end;
    unsigned long v;

    if (!s)
        return -1;
    errno = 0;
    v = strtoul (s, &end, 10);
    if (errno != 0 || *end != '\0' || end == s || v > UINT32_MAX) {
        errno = EINVAL;
        return -1;
    }
    *owner = (uint32_t)v;
    return 0;
}

static bool drained (void *arg)
{
    return ingest_busy (arg) == 0;
}

/* Run the reactor until the started batches are answered or time is up. */
static void drain (flux_t *h, ingest_t *ing)
{
    ingest_shutdown (ing);
    (void)flux_reactor_run_until (flux_get_reactor (h), drained, ing,
                                  DRAIN_TIMEOUT_MS / 1000.);
}

int mod_main (flux_t *h, int argc, char **argv)
{
    int batch_max = INGEST_BATCH_MAX_DEFAULT, delay = 0;
    size_t max_jobspec = JOBREQ_JOBSPEC_MAX_DEFAULT;
    double kvs_wait = INGEST_KVS_WAIT_DEFAULT;
    uint32_t rank, owner;
    ingest_t *ing;
    flux_msg_handler_t **handlers = NULL;
    int rc = -1;

    if (parse_args (h, argc, argv, &batch_max, &delay, &kvs_wait, &max_jobspec)
            < 0
        || flux_get_rank (h, &rank) < 0 || get_owner (h, &owner) < 0)
        return -1;
    if (!(ing = ingest_create (h, rank, owner, batch_max)))
        return -1;
    ingest_set_batch_delay (ing, delay);
    ingest_set_max_jobspec (ing, max_jobspec);
    ingest_set_kvs_wait (ing, kvs_wait);
    if (flux_msg_handler_addvec (h, htab, ing, &handlers) < 0
        || (rank == 0 && flux_event_subscribe (h, "kvs.online") < 0))
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    drain (h, ing);
    rc = 0;
done:
    flux_msg_handler_delvec (handlers);
    ingest_destroy (ing);
    return rc;
}
