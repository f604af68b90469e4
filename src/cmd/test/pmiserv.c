/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Tests for pmiserv: the PMI-1 server glue of `flux start` (line
 * assembly, KVS, barrier), driven line by line and, end to end, by the
 * libpmi simple client in threads over socketpairs.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libpmi/keyval.h"
#include "libpmi/simple_client.h"

#include "pmiserv.h"
#include "tap.h"

#define MAXRANKS 4

/* Replies captured per rank (the last one and a count). */
struct capture {
    char last[MAXRANKS][PMI_SIMPLE_LINE_MAX + 1];
    int count[MAXRANKS];
    int fail_errno; /* make send fail with this errno if non-zero */
    int abort_rank, abort_code;
    char abort_msg[256];
    int fds[MAXRANKS]; /* end to end: where replies go */
};

static int send_cb (int rank, const char *line, void *arg)
{
    struct capture *c = arg;

    if (c->fail_errno) {
        errno = c->fail_errno;
        return -1;
    }
    snprintf (c->last[rank], sizeof (c->last[rank]), "%s", line);
    c->count[rank]++;
    if (c->fds[rank] > 0 && write (c->fds[rank], line, strlen (line)) < 0)
        return -1;
    return 0;
}

static void abort_cb (int rank, int code, const char *msg, void *arg)
{
    struct capture *c = arg;

    c->abort_rank = rank;
    c->abort_code = code;
    snprintf (c->abort_msg, sizeof (c->abort_msg), "%s", msg);
}

static int feed (struct pmiserv *ps, int rank, const char *s)
{
    return pmiserv_recv (ps, rank, s, strlen (s));
}

/* The value of key in the last reply to rank, or NULL. */
static const char *reply_get (struct capture *c, int rank, const char *key)
{
    static char value[PMI_SIMPLE_LINE_MAX];
    struct keyval *kv = keyval_parse (c->last[rank]);
    const char *v;

    if (!kv || keyval_get_str (kv, key, &v) < 0) {
        keyval_destroy (kv);
        return NULL;
    }
    snprintf (value, sizeof (value), "%s", v);
    keyval_destroy (kv);
    return value;
}

static bool reply_is (struct capture *c, int rank, const char *cmd,
                      const char *rc)
{
    const char *v = reply_get (c, rank, "cmd");

    if (!v || strcmp (v, cmd) != 0)
        return false;
    v = reply_get (c, rank, "rc");
    return v && !strcmp (v, rc);
}

static void test_create (void)
{
    struct capture c = {0};
    struct pmiserv *ps;

    errno = 0;
    ok (pmiserv_create (0, "k", send_cb, NULL, &c, 0) == NULL
            && errno == EINVAL,
        "size 0: EINVAL");
    ok (pmiserv_create (1, "k", NULL, NULL, &c, 0) == NULL && errno == EINVAL,
        "no send callback: EINVAL");
    ok (pmiserv_create (1, NULL, send_cb, NULL, &c, 0) == NULL
            && errno == EINVAL,
        "no kvsname: EINVAL");
    ok (pmiserv_create (1, "k", send_cb, NULL, &c, 0x100) == NULL
            && errno == EINVAL,
        "unknown flag: EINVAL");
    ok (pmiserv_create (1, "bad name", send_cb, NULL, &c, 0) == NULL
            && errno == EINVAL,
        "kvsname with a blank: EINVAL");
    ok ((ps = pmiserv_create (1, "k", send_cb, NULL, &c, 0)) != NULL,
        "size 1 without abort callback");
    errno = 42;
    pmiserv_destroy (ps);
    pmiserv_destroy (NULL);
    cmp_ok (errno, "==", 42, "destroy preserves errno and accepts NULL");
}

static void test_lines (void)
{
    struct capture c = {0};
    struct pmiserv *ps = pmiserv_create (2, "kvs0", send_cb, abort_cb, &c, 0);
    char big[PMI_SIMPLE_LINE_MAX + 2];

    if (!ps)
        BAIL_OUT ("pmiserv_create: %s", strerror (errno));
    ok (feed (ps, 0, "cmd=init pmi_version=1 pmi_subversion=1\n") == 0
            && reply_is (&c, 0, "response_to_init", "0"),
        "init");
    ok (feed (ps, 0, "cmd=get_my_kvsname\n") == 0
            && !strcmp (reply_get (&c, 0, "kvsname"), "kvs0"),
        "kvsname");
    ok (feed (ps, 0, "cmd=get_universe_size\n") == 0
            && !strcmp (reply_get (&c, 0, "size"), "2"),
        "universe size 2");
    ok (feed (ps, 0, "cmd=get_appnum\n") == 0
            && !strcmp (reply_get (&c, 0, "appnum"), "0"),
        "appnum 0");
    ok (feed (ps, 0, "cmd=put kvsname=kvs0 key=a value=x=1\n") == 0
            && reply_is (&c, 0, "put_result", "0"),
        "put a");
    ok (feed (ps, 1, "cmd=put kvsname=kvs0 key=a value=2\n") == 0
            && !reply_is (&c, 1, "put_result", "0"),
        "a second put of the same key fails");
    is (pmiserv_kvs_lookup (ps, "a"), "x=1", "the first value is kept");
    cmp_ok (pmiserv_kvs_count (ps), "==", 1, "one key stored");
    ok (pmiserv_kvs_lookup (ps, "b") == NULL, "lookup of a missing key");

    /* barrier: answered only once both ranks are in */
    int n0 = c.count[0];
    ok (feed (ps, 0, "cmd=barrier_in\n") == 0 && c.count[0] == n0,
        "rank 0 waits in the barrier");
    ok (feed (ps, 1, "cmd=barrier_in\n") == 0
            && reply_is (&c, 0, "barrier_out", "0")
            && reply_is (&c, 1, "barrier_out", "0"),
        "rank 1 enters: both are released");

    /* a line in pieces, and two lines at once */
    int n1 = c.count[1];
    ok (feed (ps, 1, "cmd=get kvsname=kv") == 0 && c.count[1] == n1,
        "a partial line waits");
    ok (feed (ps, 1, "s0 key=a\n") == 0 && c.count[1] == n1 + 1
            && !strcmp (reply_get (&c, 1, "value"), "x=1"),
        "its end completes the get");
    ok (feed (ps, 1, "cmd=get kvsname=kvs0 key=nope\ncmd=get_appnum\n") == 0
            && c.count[1] == n1 + 3,
        "two lines in one buffer: two replies");
    ok (feed (ps, 1, "cmd=get kvsname=kvs0 key=nope\n") == 0
            && reply_is (&c, 1, "get_result", "-1")
            && !strcmp (reply_get (&c, 1, "msg"), "key_not_found"),
        "missing key: rc=-1 msg=key_not_found");

    errno = 0;
    ok (feed (ps, 2, "cmd=get_appnum\n") < 0 && errno == EINVAL,
        "rank out of range: EINVAL");
    ok (pmiserv_recv (ps, -1, "x", 1) < 0 && errno == EINVAL,
        "negative rank: EINVAL");
    ok (pmiserv_recv (ps, 0, NULL, 1) < 0 && errno == EINVAL,
        "NULL buffer: EINVAL");
    ok (pmiserv_recv (ps, 0, NULL, 0) == 0, "nothing to feed is fine");
    ok (pmiserv_recv (ps, 0, "a\0b\n", 4) < 0 && errno == EPROTO,
        "NUL byte: EPROTO");
    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    errno = 0;
    ok (feed (ps, 0, big) < 0 && errno == EPROTO,
        "a line over PMI_SIMPLE_LINE_MAX: EPROTO");
    errno = 0;
    ok (feed (ps, 1, "hello\n") < 0 && errno == EPROTO,
        "a line that is no PMI request: EPROTO");

    c.fail_errno = EPIPE;
    errno = 0;
    ok (feed (ps, 1, "cmd=get_appnum\n") < 0 && errno == EPIPE,
        "a failing send is reported with its errno");
    c.fail_errno = 0;

    ok (feed (ps, 1, "cmd=finalize\n") == 1
            && reply_is (&c, 1, "finalize_ack", "0"),
        "finalize returns 1");
    errno = 0;
    ok (feed (ps, 1, "cmd=get_appnum\n") < 0 && errno == EPIPE,
        "after finalize: EPIPE");
    ok (feed (ps, 0, "cmd=abort exitcode=3 error_msg=it went wrong\n") == 1
            && c.abort_rank == 0 && c.abort_code == 3
            && !strcmp (c.abort_msg, "it went wrong"),
        "abort reaches the callback with code and message");
    pmiserv_destroy (ps);
}

static void test_disconnect (void)
{
    struct capture c = {0};
    struct pmiserv *ps = pmiserv_create (2, "k", send_cb, NULL, &c, 0);

    ok (feed (ps, 0, "cmd=barrier_in\n") == 0 && c.count[0] == 0,
        "rank 0 enters the barrier");
    pmiserv_disconnect (ps, 0);
    errno = 0;
    ok (feed (ps, 0, "cmd=get_appnum\n") < 0 && errno == EPIPE,
        "disconnected rank: EPIPE");
    ok (feed (ps, 1, "cmd=barrier_in\n") == 0 && c.count[0] == 0
            && c.count[1] == 0,
        "the barrier no longer counts the disconnected rank");
    pmiserv_disconnect (ps, 7);
    pmiserv_disconnect (NULL, 0);
    pass ("disconnect of an unknown rank or NULL server is a no-op");
    pmiserv_destroy (ps);
}

/* End to end: a simple client per rank in its own thread. */
struct client_arg {
    int fd;
    int rank;
    int size;
    int rc;
    char got[64];
};

static void *client_thread (void *arg)
{
    struct client_arg *a = arg;
    char fd[16], rank[16], size[16], kvs[64], key[16], val[16];
    struct pmi_simple_client *pmi;

    snprintf (fd, sizeof (fd), "%d", a->fd);
    snprintf (rank, sizeof (rank), "%d", a->rank);
    snprintf (size, sizeof (size), "%d", a->size);
    snprintf (key, sizeof (key), "key%d", a->rank);
    snprintf (val, sizeof (val), "val%d", a->rank);
    a->rc = -1;
    if (!(pmi = pmi_simple_client_create_fd (fd, rank, size, "0")))
        return NULL;
    if (pmi_simple_client_init (pmi) == 0
        && pmi_simple_client_kvs_get_my_name (pmi, kvs, sizeof (kvs)) == 0
        && pmi_simple_client_kvs_put (pmi, kvs, key, val) == 0
        && pmi_simple_client_barrier (pmi) == 0) {
        snprintf (key, sizeof (key), "key%d", (a->rank + 1) % a->size);
        if (pmi_simple_client_kvs_get (pmi, kvs, key, a->got, sizeof (a->got))
                == 0
            && pmi_simple_client_finalize (pmi) == 0)
            a->rc = 0;
    }
    pmi_simple_client_destroy (pmi);
    return NULL;
}

static void test_end_to_end (void)
{
    struct capture c = {0};
    struct client_arg args[MAXRANKS];
    pthread_t t[MAXRANKS];
    int sv[MAXRANKS][2];
    struct pmiserv *ps = pmiserv_create (MAXRANKS, "e2e", send_cb, NULL, &c, 0);
    int done = 0;

    for (int i = 0; i < MAXRANKS; i++) {
        if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv[i]) < 0)
            BAIL_OUT ("socketpair: %s", strerror (errno));
        c.fds[i] = sv[i][0];
        args[i]
            = (struct client_arg){.fd = sv[i][1], .rank = i, .size = MAXRANKS};
        pthread_create (&t[i], NULL, client_thread, &args[i]);
    }
    /* serve all ranks until each finalized (or hung up) */
    while (done < MAXRANKS) {
        for (int i = 0; i < MAXRANKS; i++) {
            char buf[256];
            ssize_t n;
            if (c.fds[i] < 0)
                continue;
            n = recv (sv[i][0], buf, sizeof (buf), MSG_DONTWAIT);
            if (n < 0 && errno == EAGAIN)
                continue;
            if (n <= 0 || pmiserv_recv (ps, i, buf, n) != 0) {
                pmiserv_disconnect (ps, i);
                c.fds[i] = -1;
                done++;
            }
        }
        usleep (100);
    }
    for (int i = 0; i < MAXRANKS; i++) {
        char want[16];
        pthread_join (t[i], NULL);
        snprintf (want, sizeof (want), "val%d", (i + 1) % MAXRANKS);
        ok (args[i].rc == 0 && !strcmp (args[i].got, want),
            "client rank %d: init, put, barrier, get %s, finalize", i, want);
        close (sv[i][0]);
    }
    cmp_ok (pmiserv_kvs_count (ps), "==", MAXRANKS, "one key per rank");
    pmiserv_destroy (ps);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_create ();
    test_lines ();
    test_disconnect ();
    test_end_to_end ();
    done_testing ();
    return 0;
}
