/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* brokerbench - measurements inside a running instance (run it as the
 * initial program of flux start).
 *
 *   brokerbench ping RANK COUNT   serial broker.ping round trips to RANK:
 *                                 prints the mean round trip in µs
 *   brokerbench events COUNT      publish COUNT events on rank 0 while a
 *                                 subscriber on the last rank (the deepest
 *                                 leaf) counts them: prints events/s
 *                                 delivered through the whole tree
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libflux/flux.h"
#include "libutil/monotime.h"

static void die (const char *what)
{
    fprintf (stderr, "brokerbench: %s: %s\n", what, strerror (errno));
    exit (1);
}

static int bench_ping (flux_t *h, uint32_t rank, int count)
{
    double t0 = monotime ();
    int i;

    for (i = 0; i < count; i++) {
        flux_future_t *f = flux_rpc (h, "broker.ping", "{}", rank, 0);
        if (!f || flux_rpc_get (f, NULL) < 0)
            die ("broker.ping");
        flux_future_destroy (f);
    }
    printf ("ping rank %u: %.1f us mean round trip over %d\n", rank,
            (monotime () - t0) / count * 1e6, count);
    return 0;
}

static int received, expected, disorder;
static uint32_t last_seq;

/* Our events arrive numbered 0, 1, 2... (none lost, none reordered) with
 * rising sequence numbers; other publishers' events (modules) may take
 * sequence numbers in between. */
static void event_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    uint32_t seq = 0;
    int i = -1;

    (void)flux_msg_get_seq (msg, &seq);
    if (flux_event_unpack (msg, NULL, "{s:i}", "i", &i) < 0 || i != received
        || (received > 0 && seq <= last_seq))
        disorder++;
    last_seq = seq;
    if (++received == expected)
        flux_reactor_stop (flux_get_reactor (h));
}

static int bench_events (flux_t *h, int count)
{
    uint32_t size;
    const char *uri;
    flux_future_t *f;
    flux_t *leaf;
    flux_msg_handler_t *mh;
    struct flux_match match = FLUX_MATCH_EVENT;
    double t0;
    int i;

    if (flux_get_size (h, &size) < 0)
        die ("size");
    if (!(f = flux_rpc_pack (h, "attr.get", size - 1, 0, "{s:s}", "name",
                             "local-uri"))
        || flux_rpc_get_unpack (f, "{s:s}", "value", &uri) < 0)
        die ("local-uri of the last rank");
    if (!(leaf = flux_open (uri, 0)))
        die (uri);
    flux_future_destroy (f);
    match.topic_glob = "bench.*";
    if (!(mh = flux_msg_handler_create (leaf, match, event_cb, NULL))
        || flux_event_subscribe (leaf, "bench.") < 0)
        die ("subscribe");
    flux_msg_handler_start (mh);
    expected = count;
    t0 = monotime ();
    for (i = 0; i < count; i++) {
        flux_msg_t *ev = flux_event_pack ("bench.ev", "{s:i}", "i", i);
        if (!ev || flux_send (h, ev, 0) < 0)
            die ("publish");
        flux_msg_destroy (ev);
    }
    flux_reactor_run (flux_get_reactor (leaf), 0);
    printf ("events: %d delivered to rank %u (through every level) at %.0f/s"
            ", %s\n",
            received, size - 1, received / (monotime () - t0),
            disorder ? "OUT OF ORDER" : "in order");
    flux_msg_handler_destroy (mh);
    flux_close (leaf);
    return disorder ? -1 : 0;
}

int main (int argc, char **argv)
{
    flux_t *h;

    if (argc < 3 || (strcmp (argv[1], "ping") && strcmp (argv[1], "events"))
        || (!strcmp (argv[1], "ping") && argc < 4)) {
        fprintf (stderr, "Usage: brokerbench ping RANK COUNT\n"
                         "       brokerbench events COUNT\n");
        return 1;
    }
    if (!(h = flux_open (NULL, 0)))
        die ("flux_open");
    if (!strcmp (argv[1], "ping"))
        bench_ping (h, strtoul (argv[2], NULL, 10), atoi (argv[3]));
    else if (bench_events (h, atoi (argv[2])) < 0)
        return 1;
    flux_close (h);
    return 0;
}
