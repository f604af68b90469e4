/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvsretry.c - KVS commits sent again while the kvs is away (kvsretry.h).
 *
 * The future handed out (outer) is a plain flux_future_create() one; the
 * retry state hangs off it (aux), so destroying it cancels everything.
 * inner is the commit in flight, or between tries a future never
 * fulfilled whose then() timeout is the delay (no timer handle to close).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "libkvs/kvs_private.h"
#include "libutil/monotime.h"

#include "kvsretry.h"

#define AUX_NAME "shell::kvsretry"
#define FIRST_DELAY 0.01
#define MAX_DELAY 1.0

struct retry {
    flux_t *h;
    flux_future_t *outer;
    flux_future_t *inner;
    bool sleeping; /* inner is the delay, not a commit */
    flux_kvs_txn_t *txn;
    int flags;
    double deadline;
    double delay;
};

static unsigned long retries;

unsigned long kvsretry_count (void)
{
    return retries;
}

static void retry_destroy (void *arg)
{
    struct retry *r = arg;

    if (r) {
        int saved_errno = errno;
        flux_future_destroy (r->inner);
        flux_kvs_txn_destroy (r->txn);
        free (r);
        errno = saved_errno;
    }
}

static bool retryable (int errnum)
{
    return errnum == ENOSYS || errnum == ENOTSUP;
}

static void commit_cb (flux_future_t *f, void *arg);
static void delay_cb (flux_future_t *f, void *arg);

/* Send the commit; on failure to send, outer gets the error. */
static void send_commit (struct retry *r)
{
    flux_future_destroy (r->inner);
    r->sleeping = false;
    if (!(r->inner = flux_kvs_commit (r->h, NULL, r->flags, r->txn))
        || flux_future_then (r->inner, -1., commit_cb, r) < 0) {
        flux_future_fulfill_error (r->outer, errno, NULL);
        flux_future_destroy (r->inner);
        r->inner = NULL;
    }
}

/* The result of the commit in inner: final, or wait and send again.
 * True if it is final (outer is fulfilled). */
static bool commit_result (struct retry *r)
{
    int errnum;

    if (flux_future_get (r->inner, NULL) == 0) {
        flux_future_fulfill (r->outer, NULL, NULL);
        return true;
    }
    errnum = errno;
    if (!retryable (errnum) || monotime () + r->delay > r->deadline) {
        flux_future_fulfill_error (r->outer, errnum,
                                   flux_future_error_string (r->inner));
        return true;
    }
    return false;
}

static void next_delay (struct retry *r)
{
    r->delay *= 2;
    if (r->delay > MAX_DELAY)
        r->delay = MAX_DELAY;
    retries++;
}

static void commit_cb (flux_future_t *f, void *arg)
{
    struct retry *r = arg;
    double delay = r->delay;

    if (commit_result (r)) {
        flux_future_destroy (r->inner);
        r->inner = NULL;
        return;
    }
    next_delay (r);
    flux_future_destroy (r->inner);
    r->sleeping = true;
    /* never fulfilled: the timeout (ETIMEDOUT) is the delay */
    if (!(r->inner = flux_future_create (NULL, NULL))) {
        flux_future_fulfill_error (r->outer, errno, NULL);
        return;
    }
    flux_future_set_flux (r->inner, r->h);
    if (flux_future_then (r->inner, delay, delay_cb, r) < 0) {
        flux_future_fulfill_error (r->outer, errno, NULL);
        flux_future_destroy (r->inner);
        r->inner = NULL;
    }
}

static void delay_cb (flux_future_t *f, void *arg)
{
    send_commit (arg);
}

flux_future_t *kvsretry_commit (flux_t *h, int flags, flux_kvs_txn_t *txn)
{
    flux_future_t *outer;
    struct retry *r;

    if (!h || !txn) {
        errno = EINVAL;
        return NULL;
    }
    if (!(outer = flux_future_create (NULL, NULL)))
        return NULL;
    if (!(r = calloc (1, sizeof (*r))) || !(r->txn = flux_kvs_txn_create ())
        || kvs_txn__append (r->txn, txn) < 0
        || flux_future_aux_set (outer, AUX_NAME, r, retry_destroy) < 0) {
        retry_destroy (r);
        flux_future_destroy (outer);
        return NULL;
    }
    flux_future_set_flux (outer, h);
    r->h = h;
    r->outer = outer;
    r->flags = flags;
    r->delay = FIRST_DELAY;
    r->deadline = monotime () + KVSRETRY_SECONDS;
    if (!(r->inner = flux_kvs_commit (h, NULL, flags, r->txn))
        || flux_future_then (r->inner, -1., commit_cb, r) < 0) {
        flux_future_destroy (outer); /* and r, with inner */
        return NULL;
    }
    return outer;
}

static void sleep_for (double seconds)
{
    struct timespec ts = {.tv_sec = (time_t)seconds,
                          .tv_nsec = (long)((seconds - (time_t)seconds) * 1e9)};
    while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
        ;
}

int kvsretry_wait (flux_future_t *f)
{
    struct retry *r = f ? flux_future_aux_get (f, AUX_NAME) : NULL;

    if (!r) {
        errno = EINVAL;
        return -1;
    }
    while (!flux_future_is_ready (f)) {
        if (!r->inner) /* failed to send: outer holds the error */
            break;
        if (r->sleeping) {
            /* the delay is taken here: send at once */
            send_commit (r);
            continue;
        }
        if (commit_result (r)) {
            flux_future_destroy (r->inner);
            r->inner = NULL;
            break;
        }
        sleep_for (r->delay);
        next_delay (r);
        send_commit (r);
    }
    return 0;
}
