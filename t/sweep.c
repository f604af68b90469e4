/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* sweep - test helper: send every request topic read from stdin (one per
 * line) a set of bad payloads, as a client's mistakes would, and report
 * which went unanswered.
 *
 * Usage: sweep [-r RANK] [-u USERID] [-R ROLEMASK] [-t SECONDS] [-i ID]
 *              <topics
 *   -r      the rank to send to (default: any, i.e. this broker first)
 *   -u, -R  credentials to claim (as the instance owner may), e.g. a
 *           guest: -u 4242 -R 2
 *   -t      how long the requests of one topic may take (default 2)
 *   -i      the id of an existing job: also send payloads that name it
 *           (and the primary namespace) with nonsense around
 *
 * The payloads: none, bytes that are not JSON, truncated JSON, JSON that
 * is not an object, objects whose usual keys have the wrong types or
 * absurd values, a deep nesting, a large string.  The requests of a topic
 * go out at once.  Prints "unanswered TOPIC #N" for each request with no
 * answer in time (some requests wait by design, e.g. a watch of a key
 * that exists), then "sent S answered A unanswered U".  Exit 0 if the
 * connection to the broker held throughout and the broker still answers
 * a ping at the end, else 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libflux/flux.h"
#include "libutil/strsubst.h"

/* Payloads naming a real job ("%ID" is replaced) and real keys, with
 * nonsense around them: they get past the first checks of a handler. */
static const char *deep[] = {
    "{\"id\":%ID}",
    "{\"id\":%ID,\"attrs\":7,\"keys\":\"x\",\"flags\":99,\"urgency\":-1,"
    "\"type\":[],\"severity\":9,\"note\":1,\"signum\":999,\"state\":\"x\"}",
    "{\"id\":%ID,\"keys\":[\"eventlog\",\"R\",\"jobspec\",\"J\",\"nope\",\"\"],"
    "\"flags\":3,\"attrs\":[\"nope\",7]}",
    "{\"id\":%ID,\"path\":\"../../x\",\"flags\":7,\"key\":\"R\"}",
    "{\"id\":%ID,\"memo\":{\"x\":{\"y\":[1,2]}},\"updates\":{\"a.b..c\":1,"
    "\"attributes.system.duration\":-5}}",
    "{\"key\":\".\",\"namespace\":\"primary\",\"flags\":0}",
    "{\"key\":\"a..b\",\"namespace\":\"primary\",\"flags\":4095}",
    "{\"key\":\"\",\"namespace\":\"primary\",\"flags\":0,\"rootref\":\"x\"}",
    "{\"namespace\":\"primary\",\"name\":\"primary\",\"owner\":-2,"
    "\"rootref\":\"sha1-0000000000000000000000000000000000000000\",\"flags\":"
    "0}",
    "{\"ops\":[{\"key\":\"sweep.a\",\"flags\":0,\"dirent\":{\"ver\":1,"
    "\"type\":\"val\",\"data\":\"@@@\"}}],\"flags\":0,\"names\":[\"x\"],"
    "\"namespace\":\"primary\"}",
    "{\"ops\":[{\"key\":\"\",\"flags\":0,\"dirent\":null}],\"flags\":0,"
    "\"names\":[\"x\"]}",
    "{\"jobs\":[[%ID,1e20],[%ID,-1],[%ID]],\"id\":%ID,\"R\":{\"version\":1,"
    "\"execution\":{\"R_lite\":[]}},\"final\":true,\"ranks\":\"0\"}",
};

#define DEPTH 3000
#define BIGSTR (256 * 1024)

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char *nested (void)
{
    char *s = malloc (2 * DEPTH + 1);
    if (!s)
        return NULL;
    memset (s, '[', DEPTH);
    memset (s + DEPTH, ']', DEPTH);
    s[2 * DEPTH] = '\0';
    return s;
}

static char *bigstring (void)
{
    char *s = malloc (BIGSTR + 32);
    if (!s)
        return NULL;
    strcpy (s, "{\"key\":\"");
    memset (s + 8, 'x', BIGSTR);
    strcpy (s + 8 + BIGSTR, "\"}");
    return s;
}

int main (int argc, char **argv)
{
    static const char *fixed[] = {
        NULL,
        "\x01\x02{\xff",
        "{\"id\":",
        "{}",
        "[]",
        "null",
        "-1",
        "\"x\"",
        "{\"id\":\"x\",\"name\":1,\"key\":[],\"namespace\":{},\"flags\":\"y\","
        "\"rank\":{},\"ranks\":7,\"userid\":\"me\",\"topic\":5}",
        "{\"id\":-1,\"flags\":-1,\"name\":\"\",\"key\":\"\",\"namespace\":\"\","
        "\"rank\":-5,\"nodeid\":-1,\"matchtag\":-1,\"userid\":-1}",
        "{\"id\":1e300,\"urgency\":99999999999,\"count\":-1,"
        "\"max_entries\":-1,\"priority\":1e999,\"severity\":-3,\"batch\":0}",
        "{\"jobs\":[{}],\"ops\":[{}],\"names\":[1],\"attrs\":[1],\"keys\":[1],"
        "\"constraint\":{\"and\":[{\"x\":1}]},\"events\":[7],\"R\":[]}",
        "{\"ops\":[{\"key\":\"a\",\"flags\":0,\"dirent\":{\"ver\":1,"
        "\"type\":\"valref\",\"data\":[\"sha1-zz\"]}}],\"flags\":0,"
        "\"names\":[\"x\"],\"rootref\":\"sha1-\",\"namespace\":\"primary\"}",
        "{\"id\":1,\"jobspec\":{\"version\":9},\"R\":{\"version\":1,"
        "\"execution\":{\"R_lite\":[{\"rank\":\"0-99999999\"}]}},"
        "\"type\":99,\"final\":\"no\",\"ranks\":\"0-\",\"idset\":\"5-1\"}",
    };
    int nfixed = sizeof (fixed) / sizeof (fixed[0]);
    struct flux_msg_cred cred = {FLUX_USERID_UNKNOWN, 0};
    double timeout = 2.;
    uint32_t nodeid = FLUX_NODEID_ANY;
    char line[256], *extra[2], *ideep[sizeof (deep) / sizeof (deep[0])];
    int ndeep = 0;
    const char *jobid = NULL;
    long sent = 0, answered = 0, unanswered = 0;
    int c, rc = 0;
    flux_t *h;

    while ((c = getopt (argc, argv, "r:u:R:t:i:")) != -1) {
        if (c == 'i')
            jobid = optarg;
        else if (c == 'r')
            nodeid = strtoul (optarg, NULL, 10);
        else if (c == 'u')
            cred.userid = strtoul (optarg, NULL, 0);
        else if (c == 'R')
            cred.rolemask = strtoul (optarg, NULL, 0);
        else if (c == 't')
            timeout = atof (optarg);
        else {
            fprintf (stderr, "Usage: sweep [-r RANK] [-u USERID] "
                             "[-R ROLEMASK] [-t SECONDS] [-i ID] <topics\n");
            return 1;
        }
    }
    if (!(extra[0] = nested ()) || !(extra[1] = bigstring ())) {
        perror ("malloc");
        return 1;
    }
    for (size_t k = 0; jobid && k < sizeof (deep) / sizeof (deep[0]); k++) {
        if (!(ideep[ndeep++] = strsubst (deep[k], "%ID", jobid))) {
            perror ("malloc");
            return 1;
        }
    }
    if (!(h = flux_open (NULL, 0))) {
        perror ("flux_open");
        return 1;
    }
    while (fgets (line, sizeof (line), stdin)) {
        int n = nfixed + 2 + ndeep;
        flux_future_t *f[n];
        line[strcspn (line, "\n")] = '\0';
        if (line[0] == '\0')
            continue;
        for (int i = 0; i < n; i++) {
            const char *p = i < nfixed       ? fixed[i]
                            : i < nfixed + 2 ? extra[i - nfixed]
                                             : ideep[i - nfixed - 2];
            flux_msg_t *msg;
            if (!(msg = flux_request_encode_raw (line, p, p ? strlen (p) : 0))
                || flux_msg_set_cred (msg, cred) < 0
                || !(f[i] = flux_rpc_message (h, msg, nodeid, 0))) {
                fprintf (stderr, "sweep: %s #%d: send: %s\n", line, i,
                         strerror (errno));
                flux_msg_decref (msg);
                return 1;
            }
            flux_msg_decref (msg);
            sent++;
        }
        double deadline = now () + timeout;
        for (int i = 0; i < n; i++) {
            double left = deadline - now ();
            if (flux_future_wait_for (f[i], left > 0.001 ? left : 0.001) == 0) {
                answered++;
                if (flux_future_get (f[i], NULL) < 0 && errno == ECONNRESET) {
                    fprintf (stderr, "sweep: %s #%d: connection lost\n", line,
                             i);
                    rc = 1;
                }
            }
            else {
                unanswered++;
                printf ("unanswered %s #%d\n", line, i);
            }
            flux_future_destroy (f[i]);
        }
    }
    printf ("sent %ld answered %ld unanswered %ld\n", sent, answered,
            unanswered);
    {
        flux_future_t *f
            = flux_rpc (h, "broker.ping", "{}", FLUX_NODEID_ANY, 0);
        if (!f || flux_future_get (f, NULL) < 0) {
            fprintf (stderr, "sweep: broker.ping after the sweep: %s\n",
                     strerror (errno));
            rc = 1;
        }
        flux_future_destroy (f);
    }
    flux_close (h);
    free (extra[0]);
    free (extra[1]);
    for (int k = 0; k < ndeep; k++)
        free (ideep[k]);
    return rc;
}
