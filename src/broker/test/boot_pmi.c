/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for the business-card exchange (boot_pmi.h) against the
 * PMI-1 simple server engine, in process, with up to 16,384 ranks and
 * generated host names: every rank finds its parent's and children's
 * cards, rank 0 builds the hostlist, no value passes the server's limit,
 * and the reads of a rank other than 0 do not grow with the instance.
 *
 * Each rank is a upmi over "test" ops that hand wire lines to the engine
 * (pmi_simple_server_request) and keep its reply.  The driver runs the
 * phases rank by rank; a barrier is entered by every rank before any
 * reply is expected, as the engine answers them all at the last entry.
 */
#include "config.h"
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/boot_pmi.h"
#include "common/libhostlist/hostlist.h"
#include "common/libpmi/keyval.h"
#include "common/libpmi/simple_server.h"
#include "common/libpmi/upmi.h"
#include "tap.h"

#define KVSNAME "bootx"

struct trank {
    int rank;
    char reply[PMI_SIMPLE_LINE_MAX + 1];
    bool replied;
    int gets; /* PMI gets this rank sent */
};

static struct pmi_simple_server *server;
static json_t *kvs;
static size_t max_val; /* longest value put */

static int kvs_put (void *arg, const char *kvsname, const char *key,
                    const char *val)
{
    if (json_object_get (kvs, key)) {
        errno = EEXIST;
        return -1;
    }
    if (strlen (val) > max_val)
        max_val = strlen (val);
    return json_object_set_new (kvs, key, json_string (val));
}

static int kvs_get (void *arg, void *client, const char *kvsname,
                    const char *key)
{
    json_t *o = json_object_get (kvs, key);
    return pmi_simple_server_kvs_get_complete (
        server, client, o ? json_string_value (o) : NULL);
}

static int barrier_enter (void *arg)
{
    return pmi_simple_server_barrier_complete (server, 0);
}

static int response_send (void *client, const char *buf)
{
    struct trank *t = client;
    snprintf (t->reply, sizeof (t->reply), "%s", buf);
    t->replied = true;
    return 0;
}

static const struct pmi_simple_ops server_ops = {
    .kvs_put = kvs_put,
    .kvs_get = kvs_get,
    .barrier_enter = barrier_enter,
    .response_send = response_send,
};

/* Send one request; the reply must be there at once. */
static int request (struct trank *t, const char *line, const char *cmd,
                    struct keyval **kvp, flux_error_t *error)
{
    struct keyval *kv;
    const char *c;
    int rc;

    t->replied = false;
    if (pmi_simple_server_request (server, line, t, t->rank) < 0 || !t->replied
        || !(kv = keyval_parse (t->reply))) {
        errno = EPROTO;
        return errprintf (error, "no reply to %s", line);
    }
    if (keyval_get_str (kv, "cmd", &c) < 0 || strcmp (c, cmd)
        || (keyval_get_int (kv, "rc", &rc) == 0 && rc != 0)) {
        errprintf (error, "%s: %s", line, t->reply);
        keyval_destroy (kv);
        errno = ENOENT;
        return -1;
    }
    *kvp = kv;
    return 0;
}

static int t_put (void *impl, const char *key, const char *val,
                  flux_error_t *error)
{
    struct trank *t = impl;
    struct keyval *kv;
    char line[PMI_SIMPLE_LINE_MAX];

    snprintf (line, sizeof (line), "cmd=put kvsname=%s key=%s.%d value=%s\n",
              KVSNAME, key, t->rank, val);
    if (request (t, line, "put_result", &kv, error) < 0)
        return -1;
    keyval_destroy (kv);
    return 0;
}

/* Enter only: the driver checks the replies once all ranks entered. */
static int t_barrier (void *impl, flux_error_t *error)
{
    struct trank *t = impl;

    t->replied = false;
    if (pmi_simple_server_request (server, "cmd=barrier_in\n", t, t->rank) < 0)
        return errprintf (error, "barrier_in refused");
    return 0;
}

static int t_get (void *impl, const char *key, int rank, char *buf, size_t len,
                  flux_error_t *error)
{
    struct trank *t = impl;
    struct keyval *kv;
    const char *v;
    char line[PMI_SIMPLE_LINE_MAX];
    int rc = 0;

    t->gets++;
    snprintf (line, sizeof (line), "cmd=get kvsname=%s key=%s.%d\n", KVSNAME,
              key, rank);
    if (request (t, line, "get_result", &kv, error) < 0)
        return -1;
    if (keyval_get_str (kv, "value", &v) < 0
        || snprintf (buf, len, "%s", v) >= (int)len) {
        errno = EOVERFLOW;
        rc = errprintf (error, "get %s: too long", key);
    }
    keyval_destroy (kv);
    return rc;
}

static const struct upmi_ops test_ops = {
    .put = t_put,
    .barrier = t_barrier,
    .get = t_get,
};

/* Every rank enters; then every rank must have its barrier_out. */
static bool barrier_all (struct upmi **u, struct trank *t, int n)
{
    flux_error_t error;
    int r;

    for (r = 0; r < n; r++) {
        if (upmi_barrier (u[r], &error) < 0)
            return false;
    }
    for (r = 0; r < n; r++) {
        if (!t[r].replied || !strstr (t[r].reply, "cmd=barrier_out"))
            return false;
    }
    return true;
}

/* base-26 letters: distinct names with no number for a range to fold */
static void letters_name (char *buf, size_t len, int r)
{
    char s[16];
    int i = 0;

    do {
        s[i++] = 'a' + r % 26;
        r /= 26;
    } while (r > 0 && i < 15);
    s[i] = '\0';
    snprintf (buf, len, "h%s-x", s);
}

enum names { NUMBERED, LETTERS, SAME };

static void exchange (int n, int fanout, enum names mode)
{
    struct trank *t = calloc (n, sizeof (*t));
    struct upmi **u = calloc (n, sizeof (*u));
    char (*names)[32] = calloc (n, sizeof (*names));
    struct bootx_card card;
    flux_error_t error;
    char uri[64], key[64];
    char *hl = NULL, *s;
    struct hostlist *dec;
    int r, bad, maxgets, nfetch;

    if (!t || !u || !names)
        BAIL_OUT ("out of memory");
    kvs = json_object ();
    max_val = 0;
    if (!(server
          = pmi_simple_server_create (&server_ops, 0, n, n, KVSNAME, 0, NULL)))
        BAIL_OUT ("pmi_simple_server_create failed");
    for (r = 0; r < n; r++) {
        t[r].rank = r;
        if (mode == LETTERS)
            letters_name (names[r], sizeof (names[r]), r);
        else if (mode == SAME)
            snprintf (names[r], sizeof (names[r]), "vm");
        else
            snprintf (names[r], sizeof (names[r]), "node%d", r);
        if (!(u[r] = upmi_create_ops ("test", &test_ops, &t[r], r, n)))
            BAIL_OUT ("upmi_create_ops failed");
    }

    bad = 0;
    for (r = 0; r < n; r++) {
        snprintf (uri, sizeof (uri), "tcp://10.0.%d.%d:8050", r / 256, r % 256);
        snprintf (key, sizeof (key), "pubkey-of-%d", r);
        if (bootx_put_card (u[r], r % 2 ? NULL : uri, key, names[r], &error)
            < 0) {
            diag ("rank %d: %s", r, error.text);
            bad++;
        }
    }
    ok (bad == 0, "%d ranks: each puts its card", n);
    ok (barrier_all (u, t, n), "%d ranks: barrier", n);

    /* each rank reads its parent's card and its children's */
    bad = 0;
    for (r = 0; r < n; r++) {
        int p = r > 0 ? (r - 1) / fanout : -1;
        if (p >= 0) {
            snprintf (uri, sizeof (uri), "tcp://10.0.%d.%d:8050", p / 256,
                      p % 256);
            if (bootx_get_card (u[r], p, &card, &error) < 0
                || strcmp (card.uri, p % 2 ? "-" : uri)
                || strcmp (card.host, names[p])) {
                diag ("rank %d parent %d: %s", r, p, error.text);
                bad++;
            }
        }
        for (int c = fanout * r + 1; c <= fanout * r + fanout && c < n; c++) {
            snprintf (key, sizeof (key), "pubkey-of-%d", c);
            if (bootx_get_card (u[r], c, &card, &error) < 0
                || strcmp (card.pubkey, key)) {
                diag ("rank %d child %d: %s", r, c, error.text);
                bad++;
            }
        }
    }
    ok (bad == 0, "%d ranks: parent and children cards are right", n);

    ok ((hl = bootx_hostlist_publish (u[0], &error)) != NULL,
        "%d ranks: rank 0 builds and publishes the hostlist", n);
    if (!hl)
        diag ("%s", error.text);
    dec = hl ? hostlist_decode (hl) : NULL;
    ok (dec && hostlist_count (dec) == n,
        "%d ranks: the hostlist has %d hosts (%zu bytes)", n, n,
        hl ? strlen (hl) : 0);
    bad = 0;
    for (r = 0; dec && r < n; r++) {
        const char *h = hostlist_nth (dec, r);
        if (!h || strcmp (h, names[r]))
            bad++;
    }
    ok (dec && bad == 0, "%d ranks: host r of the hostlist is rank r's", n);
    hostlist_destroy (dec);
    ok (max_val < PMI_SIMPLE_VALLEN_MAX,
        "%d ranks: no value reached the server's limit (longest %zu)", n,
        max_val);
    ok (barrier_all (u, t, n), "%d ranks: second barrier", n);

    bad = 0;
    nfetch = 0;
    maxgets = 0;
    for (r = 1; r < n; r++) {
        int before = t[r].gets;
        if (!(s = bootx_hostlist_fetch (u[r], BOOTX_HOSTLIST_CHUNKS_MAX,
                                        &error))) {
            diag ("rank %d: %s", r, error.text);
            bad++;
            continue;
        }
        if (*s) {
            nfetch++;
            if (strcmp (s, hl))
                bad++;
        }
        free (s);
        if (t[r].gets - before > maxgets)
            maxgets = t[r].gets - before;
    }
    ok (bad == 0, "%d ranks: the others read the hostlist or \"\"", n);
    if (strlen (hl) > BOOTX_HOSTLIST_CHUNKS_MAX * (PMI_SIMPLE_VALLEN_MAX - 1))
        ok (nfetch == 0, "%d ranks: a hostlist of %zu bytes stays on rank 0", n,
            strlen (hl));
    else
        ok (nfetch == n - 1, "%d ranks: every rank has the hostlist", n);
    ok (maxgets <= 1 + BOOTX_HOSTLIST_CHUNKS_MAX,
        "%d ranks: a rank other than 0 reads at most %d values for it (%d)", n,
        1 + BOOTX_HOSTLIST_CHUNKS_MAX, maxgets);
    maxgets = 0;
    for (r = 1; r < n; r++) {
        if (t[r].gets > maxgets)
            maxgets = t[r].gets;
    }
    ok (maxgets <= 1 + fanout + 1 + BOOTX_HOSTLIST_CHUNKS_MAX,
        "%d ranks: ranks > 0 read at most %d values in all (%d)", n,
        2 + fanout + BOOTX_HOSTLIST_CHUNKS_MAX, maxgets);
    ok (t[0].gets <= n + fanout,
        "%d ranks: rank 0 reads each card once (%d gets)", n, t[0].gets);

    free (hl);
    for (r = 0; r < n; r++)
        upmi_destroy (u[r]);
    pmi_simple_server_destroy (server);
    json_decref (kvs);
    free (names);
    free (u);
    free (t);
}

static void errors (void)
{
    struct trank t0 = {.rank = 0};
    struct upmi *u;
    struct bootx_card card;
    flux_error_t error;

    kvs = json_object ();
    if (!(server
          = pmi_simple_server_create (&server_ops, 0, 2, 2, KVSNAME, 0, NULL)))
        BAIL_OUT ("pmi_simple_server_create failed");
    if (!(u = upmi_create_ops ("test", &test_ops, &t0, 0, 2)))
        BAIL_OUT ("upmi_create_ops failed");
    ok (bootx_put_card (u, "ipc://a;b", "k", "h", &error) < 0,
        "a uri with ';' is refused");
    json_object_set_new (kvs, "flux.card.1", json_string ("no-separators"));
    ok (bootx_get_card (u, 1, &card, &error) < 0 && errno == EPROTO
            && strstr (error.text, "malformed card of rank 1"),
        "a malformed card is EPROTO: %s", error.text);
    ok (bootx_get_card (u, 0, &card, &error) < 0, "a missing card fails: %s",
        error.text);
    json_object_set_new (kvs, "flux.hostlist.0", json_string ("x2"));
    ok (bootx_hostlist_fetch (u, BOOTX_HOSTLIST_CHUNKS_MAX, &error) == NULL
            && errno == EPROTO,
        "a malformed chunk count is EPROTO: %s", error.text);
    upmi_destroy (u);
    pmi_simple_server_destroy (server);
    json_decref (kvs);
}

/* PMI_process_mapping -> nodes, for the choice of tcp over ipc */
static void mapping (void)
{
    char addr[64];
    const char *bad[] = {"",
                         "(vector)",
                         "(vector,(0,0,1))",
                         "(vector,(0,2,1)",
                         "(vector,(-1,2,1))",
                         "(vector,(0,2))",
                         "(vector,(0,2,1))x",
                         "0-3",
                         NULL};

    ok (bootx_mapping_nnodes ("(vector,(0,1,4))") == 1,
        "mapping: one node of 4 tasks");
    ok (bootx_mapping_nnodes ("(vector,(0,4,2))") == 4,
        "mapping: 4 nodes, 2 tasks each");
    ok (bootx_mapping_nnodes ("(vector,(0,2,1),(0,2,1))") == 2,
        "mapping: a cyclic map of 2 nodes");
    ok (bootx_mapping_nnodes ("(vector,(0,1,3),(1,2,1),(5,1,2))") == 6,
        "mapping: irregular blocks, the highest node counts");
    for (int i = 0; bad[i]; i++) {
        errno = 0;
        ok (bootx_mapping_nnodes (bad[i]) < 0 && errno == EINVAL,
            "mapping: '%s' is refused with EINVAL", bad[i]);
    }
    ok (bootx_mapping_nnodes (NULL) < 0 && errno == EINVAL,
        "mapping: NULL is refused");
    if (bootx_tcp_address (addr, sizeof (addr)) == 0)
        ok (strchr (addr, '.') && strcmp (addr, "127.0.0.1") != 0,
            "tcp address: %s, not loopback", addr);
    else
        ok (errno == ENOENT, "tcp address: no interface up here (ENOENT)");
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    exchange (4, 2, NUMBERED);
    exchange (1024, 2, SAME); /* flux start -s 1024 on one host */
    exchange (4096, 2, SAME); /* 12 KiB: the others read 12 chunks */
    exchange (16384, 2, NUMBERED);
    exchange (16384, 2, LETTERS); /* 16,384 names that do not fold */
    exchange (3000, 8, LETTERS);
    errors ();
    mapping ();
    done_testing ();
    return 0;
}
