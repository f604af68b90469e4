/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Tests for ping_target: `flux ping` target parsing. */
#include <errno.h>
#include <string.h>

#include "ping_target.h"
#include "tap.h"

static int lookups;

/* Hosts "node0".."node3" are ranks 0..3. */
static int lookup (const char *host, uint32_t *rank, void *arg)
{
    lookups++;
    if (!strncmp (host, "node", 4) && host[4] >= '0' && host[4] <= '3'
        && host[5] == '\0') {
        *rank = host[4] - '0';
        return 0;
    }
    return -1;
}

struct good {
    const char *target;
    const char *rankopt;
    const char *topic;
    const char *label;
    enum ping_dest dest;
    uint32_t rank;
};

static const struct good good[] = {
    {"kvs", NULL, "kvs.ping", "", PING_DEST_ANY, 0},
    {"0", NULL, "broker.ping", "0", PING_DEST_RANK, 0},
    {"15", NULL, "broker.ping", "15", PING_DEST_RANK, 15},
    {"any", NULL, "broker.ping", "any", PING_DEST_ANY, 0},
    {"upstream", NULL, "broker.ping", "upstream", PING_DEST_UPSTREAM, 0},
    {"all", NULL, "broker.ping", "all", PING_DEST_ALL, 0},
    {"3!kvs", NULL, "kvs.ping", "3", PING_DEST_RANK, 3},
    {"any!kvs", NULL, "kvs.ping", "any", PING_DEST_ANY, 0},
    {"upstream!kvs", NULL, "kvs.ping", "upstream", PING_DEST_UPSTREAM, 0},
    {"all!job-manager", NULL, "job-manager.ping", "all", PING_DEST_ALL, 0},
    {"node2", NULL, "broker.ping", "node2", PING_DEST_RANK, 2},
    {"node1!kvs", NULL, "kvs.ping", "node1", PING_DEST_RANK, 1},
    {"node9", NULL, "node9.ping", "", PING_DEST_ANY, 0},
    {"0!a!b", NULL, "a!b.ping", "0", PING_DEST_RANK, 0},
    {"4294967293", NULL, "broker.ping", "4294967293", PING_DEST_RANK,
     4294967293u},
    {"kvs", "5", "kvs.ping", "5", PING_DEST_RANK, 5},
    {"kvs", "upstream", "kvs.ping", "upstream", PING_DEST_UPSTREAM, 0},
    {"kvs", "node3", "kvs.ping", "node3", PING_DEST_RANK, 3},
    {"7", "1", "7.ping", "1", PING_DEST_RANK, 1},
    {"01", NULL, "01.ping", "", PING_DEST_ANY, 0},
};

static void test_good (void)
{
    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++) {
        const struct good *g = &good[i];
        struct ping_target t;
        flux_error_t error;

        if (ping_target_parse (g->target, g->rankopt, lookup, NULL, &t, &error)
            < 0) {
            fail ("%s --rank=%s: %s", g->target, g->rankopt ? g->rankopt : "-",
                  error.text);
            continue;
        }
        ok (!strcmp (t.topic, g->topic) && !strcmp (t.label, g->label)
                && t.dest == g->dest
                && (t.dest != PING_DEST_RANK || t.rank == g->rank),
            "%s --rank=%s: topic %s label '%s' dest %d rank %u", g->target,
            g->rankopt ? g->rankopt : "-", t.topic, t.label, (int)t.dest,
            t.rank);
        ping_target_clear (&t);
    }
}

struct bad {
    const char *target;
    const char *rankopt;
};

static const struct bad bad[] = {
    {"", NULL},
    {"!kvs", NULL},
    {"3!", NULL},
    {"nohost!kvs", NULL},
    {"-1!kvs", NULL},
    {"4294967294!kvs", NULL},
    {"99999999999999999999!kvs", NULL},
    {"kvs", "nohost"},
    {"kvs", ""},
    {"", "0"},
    {"1x!kvs", NULL},
};

static void test_bad (void)
{
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        struct ping_target t;
        flux_error_t error = {.text = ""};

        errno = 0;
        ok (ping_target_parse (bad[i].target, bad[i].rankopt, lookup, NULL, &t,
                               &error)
                    < 0
                && errno == EINVAL && strlen (error.text) > 0,
            "'%s' --rank=%s: EINVAL (%s)", bad[i].target,
            bad[i].rankopt ? bad[i].rankopt : "-", error.text);
    }
    struct ping_target t;
    errno = 0;
    ok (ping_target_parse (NULL, NULL, NULL, NULL, &t, NULL) < 0
            && errno == EINVAL,
        "NULL target: EINVAL (NULL error is fine)");
    ok (ping_target_parse ("x", NULL, NULL, NULL, NULL, NULL) < 0
            && errno == EINVAL,
        "NULL result: EINVAL");
}

static void test_no_lookup (void)
{
    struct ping_target t;

    ok (ping_target_parse ("node2", NULL, NULL, NULL, &t, NULL) == 0
            && !strcmp (t.topic, "node2.ping") && t.dest == PING_DEST_ANY,
        "without lookup a host name is a service");
    ping_target_clear (&t);
    ok (ping_target_parse ("node2!kvs", NULL, NULL, NULL, &t, NULL) < 0,
        "without lookup a host name cannot be a rank");
    lookups = 0;
    ok (ping_target_parse ("12!kvs", NULL, lookup, NULL, &t, NULL) == 0
            && lookups == 0,
        "a numeric rank needs no lookup");
    ping_target_clear (&t);
    ping_target_clear (NULL);
    pass ("ping_target_clear (NULL) is a no-op");
}

static void test_nodeid (void)
{
    struct ping_target t;

    ping_target_parse ("7", NULL, NULL, NULL, &t, NULL);
    cmp_ok (ping_target_nodeid (&t), "==", 7, "rank 7: nodeid 7");
    ping_target_clear (&t);
    ping_target_parse ("kvs", NULL, NULL, NULL, &t, NULL);
    ok (ping_target_nodeid (&t) == FLUX_NODEID_ANY, "service: nodeid ANY");
    ping_target_clear (&t);
    ping_target_parse ("upstream", NULL, NULL, NULL, &t, NULL);
    ok (ping_target_nodeid (&t) == FLUX_NODEID_UPSTREAM,
        "upstream: nodeid UPSTREAM");
    ping_target_clear (&t);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_good ();
    test_bad ();
    test_no_lookup ();
    test_nodeid ();
    done_testing ();
    return 0;
}
