/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for upmi: the simple method over PMI_FD and over PMI_PORT
 * (hydra's initack handshake, served here by a thread), the choice of a
 * method, FLUX_PMI_CLIENT_METHODS, the refusal of a lone start under a
 * parallel launch, pmix without a server, and bad environments.
 */
#include "config.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libpmi/keyval.h"
#include "libpmi/simple_server.h"
#include "libpmi/upmi.h"
#include "tap.h"

/* ---- a one-client PMI-1 server on a socket ---- */

struct srv {
    int listen_fd;
    int fd;
    int rank, size;
    const char *handshake; /* what to answer to initack (NULL: normal) */
    struct pmi_simple_server *engine;
    char kvs[8][2][128];
    int nkvs;
    bool saw_initack;
    char initack_id[16];
};

static int s_put (void *arg, const char *kvsname, const char *key,
                  const char *val)
{
    struct srv *s = arg;
    if (s->nkvs == 8) {
        errno = ENOMEM;
        return -1;
    }
    snprintf (s->kvs[s->nkvs][0], 128, "%s", key);
    snprintf (s->kvs[s->nkvs][1], 128, "%s", val);
    s->nkvs++;
    return 0;
}

static struct srv *the_srv;

static int s_get (void *arg, void *client, const char *kvsname, const char *key)
{
    struct srv *s = arg;
    for (int i = 0; i < s->nkvs; i++) {
        if (!strcmp (s->kvs[i][0], key))
            return pmi_simple_server_kvs_get_complete (s->engine, client,
                                                       s->kvs[i][1]);
    }
    return pmi_simple_server_kvs_get_complete (s->engine, client, NULL);
}

static int s_barrier (void *arg)
{
    struct srv *s = arg;
    return pmi_simple_server_barrier_complete (s->engine, 0);
}

static int s_send (void *client, const char *buf)
{
    struct srv *s = the_srv;
    size_t len = strlen (buf);
    return write (s->fd, buf, len) == (ssize_t)len ? 0 : -1;
}

static const struct pmi_simple_ops srv_ops = {
    .kvs_put = s_put,
    .kvs_get = s_get,
    .barrier_enter = s_barrier,
    .response_send = s_send,
};

static int getline_fd (int fd, char *buf, size_t len)
{
    size_t n = 0;
    char c;
    while (n + 1 < len) {
        if (read (fd, &c, 1) != 1)
            return -1;
        if (c == '\n')
            break;
        buf[n++] = c;
    }
    buf[n] = '\0';
    return 0;
}

static void *srv_thread (void *arg)
{
    struct srv *s = arg;
    char line[PMI_SIMPLE_LINE_MAX];
    char reply[256];
    const char *id;
    struct keyval *kv;

    if ((s->fd = accept (s->listen_fd, NULL, NULL)) < 0)
        return NULL;
    if (getline_fd (s->fd, line, sizeof (line)) == 0
        && (kv = keyval_parse (line))) {
        const char *cmd;
        if (keyval_get_str (kv, "cmd", &cmd) == 0 && !strcmp (cmd, "initack")
            && keyval_get_str (kv, "pmiid", &id) == 0) {
            s->saw_initack = true;
            snprintf (s->initack_id, sizeof (s->initack_id), "%s", id);
        }
        keyval_destroy (kv);
    }
    if (s->handshake)
        snprintf (reply, sizeof (reply), "%s", s->handshake);
    else
        snprintf (reply, sizeof (reply),
                  "cmd=initack\ncmd=set size=%d\ncmd=set rank=%d\n"
                  "cmd=set debug=0\n",
                  s->size, s->rank);
    if (write (s->fd, reply, strlen (reply)) < 0)
        return NULL;
    while (getline_fd (s->fd, line, sizeof (line)) == 0) {
        if (pmi_simple_server_request (s->engine, line, s, s->rank) != 0)
            break;
    }
    close (s->fd);
    return NULL;
}

static int srv_start (struct srv *s, pthread_t *t)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    socklen_t len = sizeof (sin);
    char port[64];

    the_srv = s;
    sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    if ((s->listen_fd = socket (AF_INET, SOCK_STREAM, 0)) < 0
        || bind (s->listen_fd, (struct sockaddr *)&sin, sizeof (sin)) < 0
        || listen (s->listen_fd, 1) < 0
        || getsockname (s->listen_fd, (struct sockaddr *)&sin, &len) < 0)
        return -1;
    if (!(s->engine
          = pmi_simple_server_create (&srv_ops, 0, s->size, 1, "kvs0", 0, s)))
        return -1;
    snprintf (port, sizeof (port), "127.0.0.1:%d", ntohs (sin.sin_port));
    setenv ("PMI_PORT", port, 1);
    return pthread_create (t, NULL, srv_thread, s);
}

static void srv_stop (struct srv *s, pthread_t t)
{
    pthread_join (t, NULL);
    close (s->listen_fd);
    pmi_simple_server_destroy (s->engine);
}

static void clear_env (void)
{
    static const char *names[] = {"PMI_FD",
                                  "PMI_RANK",
                                  "PMI_SIZE",
                                  "PMI_PORT",
                                  "PMI_ID",
                                  "PMI_SPAWNED",
                                  "PMIX_NAMESPACE",
                                  "PMIX_RANK",
                                  "SLURM_STEP_NUM_TASKS",
                                  "OMPI_COMM_WORLD_SIZE",
                                  "FLUX_PMI_CLIENT_METHODS",
                                  "FLUX_PMI_DEBUG",
                                  NULL};
    for (int i = 0; names[i]; i++)
        unsetenv (names[i]);
}

static void test_port (void)
{
    struct srv s = {.rank = 3, .size = 4};
    pthread_t t;
    struct upmi *u;
    flux_error_t error;
    char buf[128];

    clear_env ();
    if (srv_start (&s, &t) < 0)
        BAIL_OUT ("cannot start the PMI_PORT server");
    setenv ("PMI_ID", "3", 1);
    u = upmi_create ("simple", &error);
    ok (u != NULL, "PMI_PORT: simple connects");
    if (!u)
        diag ("%s", error.text);
    ok (s.saw_initack && !strcmp (s.initack_id, "3"),
        "PMI_PORT: the client sent cmd=initack pmiid=3");
    ok (u && upmi_rank (u) == 3 && upmi_size (u) == 4,
        "PMI_PORT: rank 3 of 4 from the server's cmd=set lines");
    ok (u && !strcmp (upmi_method (u), "simple"), "the method is simple");
    ok (u && upmi_nnodes (u) == 0,
        "simple gives no node count of its own (PMI_process_mapping does)");
    ok (upmi_nnodes (NULL) == 0, "upmi_nnodes (NULL) is 0");
    ok (u && upmi_vallen_max (u) == PMI_SIMPLE_VALLEN_MAX,
        "vallen_max comes from get_maxes");
    ok (u && upmi_put (u, "k", "v3", &error) == 0, "put");
    ok (u && upmi_barrier (u, &error) == 0, "barrier");
    ok (u && upmi_get (u, "k", 3, buf, sizeof (buf), &error) == 0
            && !strcmp (buf, "v3"),
        "get of the key just put (stored as k.3)");
    ok (s.nkvs == 1 && !strcmp (s.kvs[0][0], "k.3"),
        "the wire key carries the rank");
    ok (u && upmi_get (u, "k", 2, buf, sizeof (buf), &error) < 0
            && errno == ENOENT,
        "get of a missing key: ENOENT (%s)", error.text);
    ok (u && upmi_get (u, "k", 4, buf, sizeof (buf), &error) < 0
            && errno == EINVAL,
        "get for a rank out of range: EINVAL");
    upmi_destroy (u);
    srv_stop (&s, t);

    /* a server that answers the handshake wrongly */
    struct srv bad = {.rank = 0, .size = 2, .handshake = "cmd=bogus\n"};
    if (srv_start (&bad, &t) < 0)
        BAIL_OUT ("cannot start the PMI_PORT server");
    setenv ("PMI_ID", "0", 1);
    ok (upmi_create ("simple", &error) == NULL
            && strstr (error.text, "initack handshake"),
        "a bad initack reply fails: %s", error.text);
    srv_stop (&bad, t);

    struct srv bad2 = {.rank = 0,
                       .size = 2,
                       .handshake = "cmd=initack\ncmd=set size=2\n"
                                    "cmd=set rank=5\ncmd=set debug=0\n"};
    if (srv_start (&bad2, &t) < 0)
        BAIL_OUT ("cannot start the PMI_PORT server");
    ok (upmi_create ("simple", &error) == NULL
            && strstr (error.text, "rank=5 size=2"),
        "a rank outside the size fails: %s", error.text);
    srv_stop (&bad2, t);

    setenv ("PMI_PORT", "nocolon", 1);
    ok (upmi_create ("simple", &error) == NULL
            && strstr (error.text, "malformed"),
        "PMI_PORT without a port: %s", error.text);
    setenv ("PMI_PORT", "127.0.0.1:1", 1);
    setenv ("PMI_ID", "x", 1);
    ok (upmi_create ("simple", &error) == NULL
            && strstr (error.text, "malformed"),
        "a PMI_ID that is not a number: %s", error.text);
    setenv ("PMI_ID", "0", 1);
    ok (upmi_create ("simple", &error) == NULL
            && strstr (error.text, "connect"),
        "nobody listening: %s", error.text);
    clear_env ();
}

static void test_fd (void)
{
    struct upmi *u;
    flux_error_t error;

    clear_env ();
    setenv ("PMI_FD", "999", 1);
    setenv ("PMI_RANK", "0", 1);
    setenv ("PMI_SIZE", "2", 1);
    ok (upmi_create ("simple", &error) == NULL
            && strstr (error.text, "malformed"),
        "PMI_FD that is not open: %s", error.text);
    setenv ("FLUX_PMI_CLIENT_METHODS", "simple single", 1);
    u = upmi_create (NULL, &error);
    ok (u && !strcmp (upmi_method (u), "single"),
        "FLUX_PMI_CLIENT_METHODS naming single: obeyed despite PMI_FD");
    upmi_destroy (u);
    clear_env ();
}

static void test_choice (void)
{
    struct upmi *u;
    flux_error_t error;

    clear_env ();
    u = upmi_create (NULL, &error);
    ok (u && !strcmp (upmi_method (u), "single") && upmi_rank (u) == 0
            && upmi_size (u) == 1,
        "no launcher: the default list ends in single, rank 0 of 1");
    ok (u && upmi_put (u, "k", "v", &error) == 0
            && upmi_barrier (u, &error) == 0,
        "single: put and barrier are no-ops");
    upmi_destroy (u);

    ok (upmi_create ("pmix", &error) == NULL
            && strstr (error.text, "no PMIX_NAMESPACE"),
        "pmix is not tried without PMIX_NAMESPACE: %s", error.text);
    setenv ("PMIX_NAMESPACE", "ns0", 1);
    setenv ("FLUX_PMI_PMIX_LIBRARY", "/nonexistent/libpmix.so.2", 1);
    ok (upmi_create ("pmix", &error) == NULL
            && strstr (error.text, "/nonexistent/libpmix.so.2"),
        "pmix: a library that cannot be opened is named: %s", error.text);
    unsetenv ("FLUX_PMI_PMIX_LIBRARY");
    unsetenv ("PMIX_NAMESPACE");
    ok (upmi_create ("nosuch", &error) == NULL, "an unknown method fails: %s",
        error.text);

    static const char *launches[][2] = {
        {"SLURM_STEP_NUM_TASKS", "4"},
        {"OMPI_COMM_WORLD_SIZE", "2"},
        {"PMIX_RANK", "0"},
        {"PMI_SIZE", "8"},
    };
    for (size_t i = 0; i < sizeof (launches) / sizeof (launches[0]); i++) {
        char want[64];
        clear_env ();
        setenv (launches[i][0], launches[i][1], 1);
        snprintf (want, sizeof (want), "parallel launch (%s=%s)",
                  launches[i][0], launches[i][1]);
        ok (upmi_create (NULL, &error) == NULL && strstr (error.text, want),
            "%s=%s: refused: %s", launches[i][0], launches[i][1], error.text);
        u = upmi_create ("single", &error);
        ok (u != NULL, "%s=%s: an explicit single is obeyed", launches[i][0],
            launches[i][1]);
        upmi_destroy (u);
    }
    clear_env ();
    setenv ("SLURM_STEP_NUM_TASKS", "1", 1);
    setenv ("OMPI_COMM_WORLD_SIZE", "1", 1);
    u = upmi_create (NULL, &error);
    ok (u != NULL, "one task (SLURM_STEP_NUM_TASKS=1) is no parallel launch");
    upmi_destroy (u);
    clear_env ();
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_port ();
    test_fd ();
    test_choice ();
    done_testing ();
    return 0;
}
