/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/simple.c - PMI-1 simple client and server
 *
 * Three parts: the server engine driven line by line with fake clients;
 * the client fed hand-written replies through a socketpair; and real
 * clients, one thread each, against the server run from a poll() loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libpmi/keyval.h"
#include "libpmi/simple_client.h"
#include "libpmi/simple_server.h"
#include "tap.h"

#define MAX_PROCS 8
#define MAX_ENTRIES 64
#define KVSNAME "kvs_42"

/* One end of a client connection as the server side sees it.  Unit
 * tests use it without a descriptor (fd -1): replies are only recorded.
 */
struct peer {
    int fd;
    int rank;
    bool open;
    int nsent;
    int send_errno; /* nonzero: response_send fails with it */
    char last[PMI_SIMPLE_LINE_MAX + 1];
    char rbuf[PMI_SIMPLE_LINE_MAX];
    size_t rlen;
};

struct entry {
    char key[PMI_SIMPLE_KEYLEN_MAX];
    char val[PMI_SIMPLE_VALLEN_MAX];
    bool visible; /* puts become visible at the barrier */
};

struct pending_get {
    void *client;
    char key[PMI_SIMPLE_KEYLEN_MAX];
};

/* The server's owner: an in-memory KVS plus knobs and records. */
struct ctx {
    struct pmi_simple_server *s;
    struct entry entries[MAX_ENTRIES];
    int nentries;
    bool async; /* answer gets and barriers from the loop, not inline */
    struct pending_get gets[MAX_PROCS * 2];
    int ngets;
    bool barrier_pending;
    int barrier_enters;
    int barrier_errno; /* nonzero: barrier_enter fails with it */
    int put_errno;     /* nonzero: kvs_put fails with it */
    int get_errno;     /* nonzero: kvs_get fails with it */
    int aborts;
    int abort_code;
    void *abort_client;
    char abort_msg[PMI_SIMPLE_LINE_MAX];
    int ntrace;
    char trace[8][128];
};

static struct entry *find_entry (struct ctx *ctx, const char *key)
{
    for (int i = 0; i < ctx->nentries; i++)
        if (!strcmp (ctx->entries[i].key, key))
            return &ctx->entries[i];
    return NULL;
}

static int op_kvs_put (void *arg, const char *kvsname, const char *key,
                       const char *val)
{
    struct ctx *ctx = arg;
    struct entry *e;

    if (ctx->put_errno) {
        errno = ctx->put_errno;
        return -1;
    }
    if (find_entry (ctx, key)) {
        errno = EEXIST;
        return -1;
    }
    if (ctx->nentries == MAX_ENTRIES || strcmp (kvsname, KVSNAME) != 0) {
        errno = ENOSPC;
        return -1;
    }
    e = &ctx->entries[ctx->nentries++];
    snprintf (e->key, sizeof (e->key), "%s", key);
    snprintf (e->val, sizeof (e->val), "%s", val);
    e->visible = false;
    return 0;
}

static int answer_get (struct ctx *ctx, void *client, const char *key)
{
    struct entry *e = find_entry (ctx, key);
    const char *val = e && e->visible ? e->val : NULL;

    return pmi_simple_server_kvs_get_complete (ctx->s, client, val);
}

static int op_kvs_get (void *arg, void *client, const char *kvsname,
                       const char *key)
{
    struct ctx *ctx = arg;

    if (ctx->get_errno) {
        errno = ctx->get_errno;
        return -1;
    }
    if (ctx->async) {
        struct pending_get *g = &ctx->gets[ctx->ngets++];
        g->client = client;
        snprintf (g->key, sizeof (g->key), "%s", key);
        return 0;
    }
    return answer_get (ctx, client, key);
}

static int op_barrier_enter (void *arg)
{
    struct ctx *ctx = arg;

    ctx->barrier_enters++;
    if (ctx->barrier_errno) {
        errno = ctx->barrier_errno;
        return -1;
    }
    for (int i = 0; i < ctx->nentries; i++)
        ctx->entries[i].visible = true;
    if (ctx->async) {
        ctx->barrier_pending = true;
        return 0;
    }
    return pmi_simple_server_barrier_complete (ctx->s, 0);
}

static int op_response_send (void *client, const char *buf)
{
    struct peer *p = client;
    size_t len = strlen (buf);

    if (p->send_errno) {
        errno = p->send_errno;
        return -1;
    }
    snprintf (p->last, sizeof (p->last), "%s", buf);
    p->nsent++;
    while (p->fd >= 0 && len > 0) {
        ssize_t n = write (p->fd, buf, len);
        if (n < 0)
            return -1;
        buf += n;
        len -= n;
    }
    return 0;
}

static struct ctx *trace_ctx; /* debug_trace has no arg */

static void op_debug_trace (void *client, const char *line)
{
    struct ctx *ctx = trace_ctx;

    if (ctx && ctx->ntrace < 8)
        snprintf (ctx->trace[ctx->ntrace], sizeof (ctx->trace[0]), "%s", line);
    if (ctx)
        ctx->ntrace++;
}

static void op_abort (void *arg, void *client, int exit_code, const char *msg)
{
    struct ctx *ctx = arg;

    ctx->aborts++;
    ctx->abort_code = exit_code;
    ctx->abort_client = client;
    snprintf (ctx->abort_msg, sizeof (ctx->abort_msg), "%s", msg);
}

static const struct pmi_simple_ops test_ops = {
    .kvs_put = op_kvs_put,
    .kvs_get = op_kvs_get,
    .barrier_enter = op_barrier_enter,
    .response_send = op_response_send,
    .debug_trace = op_debug_trace,
    .abort = op_abort,
};

/* Finish what the async owner deferred. */
static void run_deferred (struct ctx *ctx)
{
    int n = ctx->ngets;

    ctx->ngets = 0;
    for (int i = 0; i < n; i++)
        (void)answer_get (ctx, ctx->gets[i].client, ctx->gets[i].key);
    if (ctx->barrier_pending) {
        ctx->barrier_pending = false;
        (void)pmi_simple_server_barrier_complete (ctx->s, 0);
    }
}

static struct ctx *ctx_create (int local_procs, bool async, int flags)
{
    struct ctx *ctx = calloc (1, sizeof (*ctx));

    if (!ctx)
        BAIL_OUT ("out of memory");
    ctx->async = async;
    ctx->s = pmi_simple_server_create (&test_ops, 0, local_procs, local_procs,
                                       KVSNAME, flags, ctx);
    if (!ctx->s)
        BAIL_OUT ("pmi_simple_server_create: %s", strerror (errno));
    return ctx;
}

static void ctx_destroy (struct ctx *ctx)
{
    pmi_simple_server_destroy (ctx->s);
    free (ctx);
}

static void peer_init (struct peer *p, int rank)
{
    memset (p, 0, sizeof (*p));
    p->fd = -1;
    p->rank = rank;
}

/* Send 'line' from peer p; expect return value 'exp_rc' and the reply
 * 'exp' (NULL: expect no reply at all).
 */
static void expect (struct ctx *ctx, struct peer *p, const char *line,
                    int exp_rc, const char *exp, const char *desc)
{
    int before = p->nsent;
    int rc = pmi_simple_server_request (ctx->s, line, p, p->rank);
    bool good = rc == exp_rc;

    if (exp)
        good = good && p->nsent == before + 1 && !strcmp (p->last, exp);
    else
        good = good && p->nsent == before;
    if (!ok (good, "%s", desc))
        diag ("rc=%d errno=%d sent=%d last=%s", rc, errno, p->nsent - before,
              p->last);
}

static void expect_eproto (struct ctx *ctx, struct peer *p, const char *line,
                           const char *desc)
{
    int before = p->nsent;
    errno = 0;
    int rc = pmi_simple_server_request (ctx->s, line, p, p->rank);
    ok (rc == -1 && errno == EPROTO && p->nsent == before,
        "%s: -1 EPROTO, no reply", desc);
}

static void test_server_create (void)
{
    struct pmi_simple_ops ops = test_ops;
    struct pmi_simple_server *s;
    char longname[PMI_SIMPLE_KVSNAME_MAX + 1];

    memset (longname, 'n', sizeof (longname) - 1);
    longname[sizeof (longname) - 1] = '\0';

#define CREATE_EINVAL(desc, ...)                                       \
    do {                                                               \
        errno = 0;                                                     \
        s = pmi_simple_server_create (__VA_ARGS__);                    \
        ok (s == NULL && errno == EINVAL, "create: %s: EINVAL", desc); \
        pmi_simple_server_destroy (s);                                 \
    } while (0)

    CREATE_EINVAL ("NULL ops", NULL, 0, 1, 1, "k", 0, NULL);
    CREATE_EINVAL ("negative appnum", &ops, -1, 1, 1, "k", 0, NULL);
    CREATE_EINVAL ("universe_size 0", &ops, 0, 0, 1, "k", 0, NULL);
    CREATE_EINVAL ("local_procs 0", &ops, 0, 1, 0, "k", 0, NULL);
    CREATE_EINVAL ("NULL kvsname", &ops, 0, 1, 1, NULL, 0, NULL);
    CREATE_EINVAL ("empty kvsname", &ops, 0, 1, 1, "", 0, NULL);
    CREATE_EINVAL ("kvsname with blank", &ops, 0, 1, 1, "a b", 0, NULL);
    CREATE_EINVAL ("kvsname with '='", &ops, 0, 1, 1, "a=b", 0, NULL);
    CREATE_EINVAL ("kvsname too long", &ops, 0, 1, 1, longname, 0, NULL);
    CREATE_EINVAL ("unknown flag", &ops, 0, 1, 1, "k", 0x100, NULL);
    longname[PMI_SIMPLE_KVSNAME_MAX - 1] = '\0';
    s = pmi_simple_server_create (&ops, 0, 1, 1, longname, 0, NULL);
    ok (s != NULL, "create: kvsname of KVSNAME_MAX-1 chars is accepted");
    pmi_simple_server_destroy (s);

    ops.kvs_put = NULL;
    CREATE_EINVAL ("no kvs_put", &ops, 0, 1, 1, "k", 0, NULL);
    ops = test_ops;
    ops.kvs_get = NULL;
    CREATE_EINVAL ("no kvs_get", &ops, 0, 1, 1, "k", 0, NULL);
    ops = test_ops;
    ops.barrier_enter = NULL;
    CREATE_EINVAL ("no barrier_enter", &ops, 0, 1, 1, "k", 0, NULL);
    ops = test_ops;
    ops.response_send = NULL;
    CREATE_EINVAL ("no response_send", &ops, 0, 1, 1, "k", 0, NULL);
    ops = test_ops;
    ops.debug_trace = NULL;
    CREATE_EINVAL ("TRACE flag without debug_trace", &ops, 0, 1, 1, "k",
                   PMI_SIMPLE_SERVER_TRACE, NULL);
    ops.abort = NULL;
    s = pmi_simple_server_create (&ops, 0, 1, 1, "k", 0, NULL);
    ok (s != NULL, "create: debug_trace and abort are optional");
    errno = 77;
    pmi_simple_server_destroy (s);
    pmi_simple_server_destroy (NULL);
    ok (errno == 77, "destroy preserves errno and accepts NULL");
#undef CREATE_EINVAL
}

static void test_server_basic (void)
{
    struct ctx *ctx = ctx_create (1, false, 0);
    struct peer p;

    peer_init (&p, 0);
    expect (ctx, &p, "cmd=init pmi_version=1 pmi_subversion=1\n", 0,
            "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n",
            "init 1.1");
    expect (ctx, &p, "cmd=get_maxes\n", 0,
            "cmd=maxes rc=0 kvsname_max=64 keylen_max=64 vallen_max=1024\n",
            "get_maxes");
    expect (ctx, &p, "cmd=get_appnum\n", 0, "cmd=appnum rc=0 appnum=0\n",
            "get_appnum");
    expect (ctx, &p, "cmd=get_universe_size\n", 0,
            "cmd=universe_size rc=0 size=1\n", "get_universe_size");
    expect (ctx, &p, "cmd=get_my_kvsname", 0,
            "cmd=my_kvsname rc=0 kvsname=" KVSNAME "\n",
            "get_my_kvsname (no newline on request)");
    expect (ctx, &p, "cmd=put kvsname=" KVSNAME " key=a value=1=2\n", 0,
            "cmd=put_result rc=0\n", "put with '=' in value");
    ok (ctx->nentries == 1 && !strcmp (ctx->entries[0].val, "1=2"),
        "kvs_put op got the value verbatim");
    expect (ctx, &p, "cmd=put value= key=empty kvsname=" KVSNAME "\n", 0,
            "cmd=put_result rc=0\n", "put of empty value, keys reordered");
    expect (ctx, &p, "cmd=get kvsname=" KVSNAME " key=a\n", 0,
            "cmd=get_result rc=-1 msg=key_not_found\n",
            "get before barrier: not yet visible");
    expect (ctx, &p, "cmd=barrier_in\n", 0, "cmd=barrier_out rc=0\n",
            "barrier with one local proc completes at once");
    expect (ctx, &p, "cmd=get kvsname=" KVSNAME " key=a\n", 0,
            "cmd=get_result rc=0 value=1=2\n", "get after barrier");
    expect (ctx, &p, "  cmd=get\tkey=empty   kvsname=" KVSNAME "  \n", 0,
            "cmd=get_result rc=0 value=\n", "get of empty value, blanks");
    expect (ctx, &p, "cmd=get kvsname=" KVSNAME " key=nope\n", 0,
            "cmd=get_result rc=-1 msg=key_not_found\n", "get missing key");
    expect (ctx, &p, "cmd=put kvsname=" KVSNAME " key=a value=again\n", 0,
            "cmd=put_result rc=-1 msg=File_exists\n",
            "owner's put error (EEXIST) becomes rc=-1 with its text");
    expect (ctx, &p, "cmd=get_maxes extra=ignored\n", 0,
            "cmd=maxes rc=0 kvsname_max=64 keylen_max=64 vallen_max=1024\n",
            "extra keys in requests are ignored");
    expect (ctx, &p, "cmd=finalize\n", 1, "cmd=finalize_ack rc=0\n",
            "finalize returns 1");
    ctx_destroy (ctx);
}

static void test_server_init (void)
{
    struct ctx *ctx = ctx_create (1, false, 0);
    struct peer p;

    peer_init (&p, 0);
    expect (ctx, &p, "cmd=init pmi_subversion=0 pmi_version=1\n", 0,
            "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=0\n",
            "init 1.0 is answered with 1.0");
    expect (ctx, &p, "cmd=init pmi_version=2 pmi_subversion=0\n", 0,
            "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n",
            "init 2.0 is offered 1.1");
    expect (ctx, &p, "cmd=init pmi_version=0 pmi_subversion=9\n", 0,
            "cmd=response_to_init rc=-1 msg=unsupported_pmi_version\n",
            "init 0.9 is refused");
    expect (ctx, &p, "cmd=init pmi_version=1\n", 0,
            "cmd=response_to_init rc=10 "
            "msg=missing_or_malformed_pmi_version\n",
            "init without subversion gets an error reply");
    expect (ctx, &p, "cmd=init pmi_version=x pmi_subversion=1\n", 0,
            "cmd=response_to_init rc=10 "
            "msg=missing_or_malformed_pmi_version\n",
            "init with non-numeric version gets an error reply");
    ctx_destroy (ctx);
}

static void test_server_limits (void)
{
    struct ctx *ctx = ctx_create (1, false, 0);
    char line[PMI_SIMPLE_LINE_MAX + 64];
    char key[PMI_SIMPLE_KEYLEN_MAX + 1];
    char val[PMI_SIMPLE_VALLEN_MAX + 1];
    struct peer p;

    peer_init (&p, 0);
    memset (key, 'k', sizeof (key));
    memset (val, 'v', sizeof (val));

    key[PMI_SIMPLE_KEYLEN_MAX - 1] = '\0';
    snprintf (line, sizeof (line), "cmd=put kvsname=%s key=%s value=x\n",
              KVSNAME, key);
    expect (ctx, &p, line, 0, "cmd=put_result rc=0\n",
            "put: key of KEYLEN_MAX-1 chars accepted");
    key[PMI_SIMPLE_KEYLEN_MAX - 1] = 'k';
    key[PMI_SIMPLE_KEYLEN_MAX] = '\0';
    snprintf (line, sizeof (line), "cmd=put kvsname=%s key=%s value=x\n",
              KVSNAME, key);
    expect (ctx, &p, line, 0, "cmd=put_result rc=5 msg=key_too_long\n",
            "put: key of KEYLEN_MAX chars: INVALID_KEY_LENGTH reply");
    snprintf (line, sizeof (line), "cmd=get kvsname=%s key=%s\n", KVSNAME, key);
    expect (ctx, &p, line, 0, "cmd=get_result rc=5 msg=key_too_long\n",
            "get: key of KEYLEN_MAX chars: INVALID_KEY_LENGTH reply");

    val[PMI_SIMPLE_VALLEN_MAX - 1] = '\0';
    snprintf (line, sizeof (line), "cmd=put kvsname=%s key=v1 value=%s\n",
              KVSNAME, val);
    expect (ctx, &p, line, 0, "cmd=put_result rc=0\n",
            "put: value of VALLEN_MAX-1 chars accepted");
    val[PMI_SIMPLE_VALLEN_MAX - 1] = 'v';
    val[PMI_SIMPLE_VALLEN_MAX] = '\0';
    snprintf (line, sizeof (line), "cmd=put kvsname=%s key=v2 value=%s\n",
              KVSNAME, val);
    expect (ctx, &p, line, 0, "cmd=put_result rc=7 msg=value_too_long\n",
            "put: value of VALLEN_MAX chars: INVALID_VAL_LENGTH reply");
    ok (find_entry (ctx, "v2") == NULL, "rejected put never reached owner");

    expect (ctx, &p, "cmd=put kvsname=other key=a value=b\n", 0,
            "cmd=put_result rc=3 msg=invalid_kvsname\n",
            "put: foreign kvsname refused");
    expect (ctx, &p, "cmd=get kvsname=other key=a\n", 0,
            "cmd=get_result rc=3 msg=invalid_kvsname\n",
            "get: foreign kvsname refused");
    expect (ctx, &p, "cmd=put kvsname=" KVSNAME " key=a=b value=c\n", 0,
            "cmd=put_result rc=4 msg=invalid_key\n",
            "put: key containing '=' refused");
    expect (ctx, &p, "cmd=put kvsname=" KVSNAME " key= value=c\n", 0,
            "cmd=put_result rc=4 msg=invalid_key\n", "put: empty key refused");
    expect (ctx, &p, "cmd=put kvsname=" KVSNAME " key=a\n", 0,
            "cmd=put_result rc=9 msg=missing_kvsname_key_or_value\n",
            "put: missing value");
    expect (ctx, &p, "cmd=get key=a\n", 0,
            "cmd=get_result rc=9 msg=missing_kvsname_or_key\n",
            "get: missing kvsname");
    cmp_ok (ctx->nentries, "==", 2, "only the two valid puts were stored");

    ctx->put_errno = ENOSPC;
    expect (ctx, &p, "cmd=put kvsname=" KVSNAME " key=z value=z\n", 0,
            "cmd=put_result rc=-1 msg=No_space_left_on_device\n",
            "owner's put failure is reported");
    ctx->put_errno = 0;
    ctx->get_errno = EIO;
    expect (ctx, &p, "cmd=get kvsname=" KVSNAME " key=z\n", 0,
            "cmd=get_result rc=-1 msg=Input/output_error\n",
            "owner's get failure is reported");
    ctx->get_errno = 0;
    expect (ctx, &p, "cmd=get_maxes\n", 0,
            "cmd=maxes rc=0 kvsname_max=64 keylen_max=64 vallen_max=1024\n",
            "client still served after failed get");
    ctx_destroy (ctx);
}

static void test_server_garbage (void)
{
    struct ctx *ctx = ctx_create (1, false, 0);
    char big[PMI_SIMPLE_LINE_MAX + 2];
    struct peer p;

    peer_init (&p, 0);
    expect_eproto (ctx, &p, "", "empty line");
    expect_eproto (ctx, &p, "\n", "bare newline");
    expect_eproto (ctx, &p, "hello world\n", "words without '='");
    expect_eproto (ctx, &p, "foo=bar\n", "no cmd key");
    expect_eproto (ctx, &p, "cmd=\n", "empty cmd");
    expect_eproto (ctx, &p, "cmd=init\r\n", "CRLF");
    expect_eproto (ctx, &p, "cmd=get\x01 key=a\n", "control character");
    expect_eproto (ctx, &p, "cmd=init cmd=init\n", "repeated key");
    expect_eproto (ctx, &p, "=\n", "empty key");
    expect_eproto (ctx, &p, "\xff\xfe\xfd\n", "binary junk");
    memset (big, 'x', sizeof (big) - 1);
    memcpy (big, "cmd=", 4);
    big[sizeof (big) - 1] = '\0';
    expect_eproto (ctx, &p, big, "line longer than PMI_SIMPLE_LINE_MAX");

    expect (ctx, &p, "cmd=frobnicate a=1\n", 0,
            "cmd=error rc=-1 msg=unsupported_command:frobnicate\n",
            "unknown command gets a helpful error reply");
    expect (ctx, &p, "cmd=publish_name service=s port=p\n", 0,
            "cmd=publish_result rc=-1 msg=name_publishing_is_not_supported\n",
            "publish_name refused per RFC 13 reply format");
    expect (ctx, &p, "cmd=unpublish_name service=s\n", 0,
            "cmd=unpublish_result rc=-1 "
            "msg=name_publishing_is_not_supported\n",
            "unpublish_name refused");
    expect (ctx, &p, "cmd=lookup_name service=s\n", 0,
            "cmd=lookup_result rc=-1 msg=name_publishing_is_not_supported\n",
            "lookup_name refused");
    expect (ctx, &p, "mcmd=frob\n", 0,
            "cmd=error rc=-1 msg=unsupported_command:frob\n",
            "unknown mcmd gets an error reply");
    expect (ctx, &p, "cmd=init pmi_version=1 pmi_subversion=1\n", 0,
            "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n",
            "engine still works after garbage");

    errno = 0;
    ok (pmi_simple_server_request (NULL, "cmd=init", &p, 0) < 0
            && errno == EINVAL,
        "request: NULL server: EINVAL");
    errno = 0;
    ok (pmi_simple_server_request (ctx->s, NULL, &p, 0) < 0 && errno == EINVAL,
        "request: NULL line: EINVAL");
    errno = 0;
    ok (pmi_simple_server_request (ctx->s, "cmd=init", NULL, 0) < 0
            && errno == EINVAL,
        "request: NULL client: EINVAL");
    errno = 0;
    ok (pmi_simple_server_request (ctx->s, "cmd=init", &p, -1) < 0
            && errno == EINVAL,
        "request: negative rank: EINVAL");

    p.send_errno = EPIPE;
    errno = 0;
    ok (pmi_simple_server_request (ctx->s, "cmd=get_maxes", &p, 0) < 0
            && errno == EPIPE,
        "request: failed response_send is passed back");
    ctx_destroy (ctx);
}

static void test_server_async_get (void)
{
    struct ctx *ctx = ctx_create (1, true, 0);
    struct peer p, q;
    char val[PMI_SIMPLE_VALLEN_MAX + 1];

    peer_init (&p, 0);
    peer_init (&q, 1);
    expect (ctx, &p, "cmd=put kvsname=" KVSNAME " key=a value=b\n", 0,
            "cmd=put_result rc=0\n", "put");
    expect (ctx, &p, "cmd=barrier_in\n", 0, NULL,
            "async barrier: no reply yet");
    ok (ctx->barrier_enters == 1, "barrier_enter was called");
    expect_eproto (ctx, &p, "cmd=get_maxes\n",
                   "request while barrier pending breaks lock-step");
    run_deferred (ctx);
    ok (p.nsent == 2 && !strcmp (p.last, "cmd=barrier_out rc=0\n"),
        "barrier_complete answered the client");

    expect (ctx, &p, "cmd=get kvsname=" KVSNAME " key=a\n", 0, NULL,
            "async get: no reply yet");
    expect_eproto (ctx, &p, "cmd=get kvsname=" KVSNAME " key=a\n",
                   "second request while get pending");
    expect (ctx, &q, "cmd=get_maxes\n", 0,
            "cmd=maxes rc=0 kvsname_max=64 keylen_max=64 vallen_max=1024\n",
            "another client is served meanwhile");
    errno = 0;
    ok (pmi_simple_server_kvs_get_complete (ctx->s, &q, "x") < 0
            && errno == ENOENT,
        "get_complete for a client without pending get: ENOENT");
    errno = 0;
    ok (pmi_simple_server_kvs_get_complete (ctx->s, &p, "a b") < 0
            && errno == EINVAL && p.nsent == 2,
        "get_complete with a blank in the value: EINVAL, nothing sent");
    memset (val, 'v', sizeof (val));
    val[PMI_SIMPLE_VALLEN_MAX] = '\0';
    errno = 0;
    ok (pmi_simple_server_kvs_get_complete (ctx->s, &p, val) < 0
            && errno == EINVAL && p.nsent == 2,
        "get_complete with an over-long value: EINVAL, nothing sent");
    errno = 0;
    ok (pmi_simple_server_kvs_get_complete (NULL, &p, "x") < 0
            && errno == EINVAL,
        "get_complete NULL server: EINVAL");
    run_deferred (ctx);
    ok (p.nsent == 3 && !strcmp (p.last, "cmd=get_result rc=0 value=b\n"),
        "deferred get answered (the get stayed pending after EINVAL)");
    errno = 0;
    ok (pmi_simple_server_kvs_get_complete (ctx->s, &p, "x") < 0
            && errno == ENOENT,
        "second get_complete: ENOENT");

    ctx_destroy (ctx);
}

static void test_server_get_gone (void)
{
    struct ctx *ctx = ctx_create (1, true, 0);
    struct peer p;

    peer_init (&p, 0);
    /* a get whose client goes away before the owner answers */
    expect (ctx, &p, "cmd=get kvsname=" KVSNAME " key=a\n", 0, NULL,
            "async get pending");
    pmi_simple_server_disconnect (ctx->s, &p);
    errno = 0;
    ok (pmi_simple_server_kvs_get_complete (ctx->s, &p, "b") < 0
            && errno == ENOENT && p.nsent == 0,
        "after disconnect, get_complete: ENOENT, nothing sent");
    ctx->ngets = 0;
    pmi_simple_server_disconnect (ctx->s, &p); // unknown: ignored
    pmi_simple_server_disconnect (NULL, &p);
    expect (ctx, &p, "cmd=get_appnum\n", 0, "cmd=appnum rc=0 appnum=0\n",
            "client served again after disconnect");

    /* a send failure while completing reports the errno */
    expect (ctx, &p, "cmd=get kvsname=" KVSNAME " key=a\n", 0, NULL,
            "async get pending again");
    p.send_errno = EPIPE;
    errno = 0;
    ok (pmi_simple_server_kvs_get_complete (ctx->s, &p, NULL) < 0
            && errno == EPIPE,
        "get_complete: response_send errno is returned");
    errno = 0;
    ok (pmi_simple_server_kvs_get_complete (ctx->s, &p, NULL) < 0
            && errno == ENOENT,
        "...and the get is no longer pending");
    ctx->ngets = 0;
    ctx_destroy (ctx);
}

static void test_server_barrier (void)
{
    struct ctx *ctx = ctx_create (3, true, 0);
    struct peer p[4];

    for (int i = 0; i < 4; i++)
        peer_init (&p[i], i);
    expect (ctx, &p[0], "cmd=barrier_in\n", 0, NULL, "rank 0 enters");
    expect (ctx, &p[1], "cmd=barrier_in\n", 0, NULL, "rank 1 enters");
    ok (ctx->barrier_enters == 0, "barrier_enter not called for 2 of 3");
    errno = 0;
    ok (pmi_simple_server_barrier_complete (ctx->s, 0) < 0 && errno == EINVAL,
        "barrier_complete before barrier_enter: EINVAL");
    ok (p[0].nsent == 0 && p[1].nsent == 0, "...and nothing was sent");
    expect (ctx, &p[2], "cmd=barrier_in\n", 0, NULL, "rank 2 enters");
    ok (ctx->barrier_enters == 1, "barrier_enter called once all 3 are in");
    expect (ctx, &p[3], "cmd=barrier_in\n", 0,
            "cmd=barrier_out rc=-1 "
            "msg=barrier_has_more_than_local_procs_clients\n",
            "a 4th client is refused while the barrier is full");
    ok (pmi_simple_server_barrier_complete (ctx->s, 0) == 0,
        "barrier_complete succeeds");
    ctx->barrier_pending = false;
    ok (p[0].nsent == 1 && p[1].nsent == 1 && p[2].nsent == 1
            && !strcmp (p[0].last, "cmd=barrier_out rc=0\n")
            && !strcmp (p[2].last, "cmd=barrier_out rc=0\n"),
        "all three waiting clients released with rc=0");
    errno = 0;
    ok (pmi_simple_server_barrier_complete (ctx->s, 0) < 0 && errno == EINVAL,
        "second barrier_complete: EINVAL");

    /* failed barrier, reported by the owner later */
    for (int i = 0; i < 3; i++)
        expect (ctx, &p[i], "cmd=barrier_in\n", 0, NULL, "enter again");
    ok (pmi_simple_server_barrier_complete (ctx->s, 5) == 0,
        "barrier_complete with rc=5");
    ctx->barrier_pending = false;
    ok (!strcmp (p[0].last, "cmd=barrier_out rc=-1 msg=barrier_failed\n")
            && !strcmp (p[1].last, p[0].last) && !strcmp (p[2].last, p[0].last),
        "all released with rc=-1");

    /* barrier_enter itself fails */
    ctx->barrier_errno = ECONNREFUSED;
    for (int i = 0; i < 3; i++)
        expect (ctx, &p[i], "cmd=barrier_in\n", 0,
                i < 2 ? NULL : "cmd=barrier_out rc=-1 msg=Connection_refused\n",
                "enter (barrier_enter will fail)");
    ok (!strcmp (p[0].last, "cmd=barrier_out rc=-1 msg=Connection_refused\n")
            && !strcmp (p[1].last, p[0].last),
        "failed barrier_enter releases everyone with rc=-1");
    ctx_destroy (ctx);
}

static void test_server_barrier_leave (void)
{
    struct ctx *ctx = ctx_create (3, true, 0);
    struct peer p[4];

    for (int i = 0; i < 4; i++)
        peer_init (&p[i], i);
    /* a client leaves the barrier before it fills */
    expect (ctx, &p[0], "cmd=barrier_in\n", 0, NULL, "rank 0 enters");
    expect (ctx, &p[1], "cmd=barrier_in\n", 0, NULL, "rank 1 enters");
    pmi_simple_server_disconnect (ctx->s, &p[1]);
    expect (ctx, &p[2], "cmd=barrier_in\n", 0, NULL, "rank 2 enters");
    ok (ctx->barrier_enters == 0, "disconnected client no longer counted");
    expect (ctx, &p[3], "cmd=barrier_in\n", 0, NULL, "rank 3 enters");
    ok (ctx->barrier_enters == 1, "third live client fills the barrier");

    /* a client leaves after barrier_enter: the others are still released */
    pmi_simple_server_disconnect (ctx->s, &p[0]);
    int n0 = p[0].nsent;
    p[2].send_errno = EPIPE;
    errno = 0;
    ok (pmi_simple_server_barrier_complete (ctx->s, 0) < 0 && errno == EPIPE,
        "barrier_complete reports a failed send");
    ctx->barrier_pending = false;
    p[2].send_errno = 0;
    ok (p[0].nsent == n0 && !strcmp (p[3].last, "cmd=barrier_out rc=0\n"),
        "disconnected client skipped, others still released");
    expect (ctx, &p[2], "cmd=get_appnum\n", 0, "cmd=appnum rc=0 appnum=0\n",
            "barrier is over for the client whose send failed too");
    ctx_destroy (ctx);
}

static void test_server_spawn (void)
{
    struct ctx *ctx = ctx_create (1, false, 0);
    struct peer p;
    const char *seg1[] = {
        "mcmd=spawn\n",
        "nprocs=2\n",
        "execname=/bin/true\n",
        "totspawns=2\n",
        "spawnssofar=1\n",
        "argcnt=1\n",
        "arg1=hello world with blanks\n",
        "preput_num=0\n",
        "info_num=0\n",
        "endcmd\n",
    };
    const char *seg2[] = {
        "mcmd=spawn\n",  "nprocs=1\n",      "execname=/bin/false\n",
        "totspawns=2\n", "spawnssofar=2\n", "argcnt=0\n",
        "info_num=0\n",
    };

    peer_init (&p, 0);
    for (size_t i = 0; i < sizeof (seg1) / sizeof (seg1[0]); i++)
        expect (ctx, &p, seg1[i], 0, NULL, "spawn segment 1 line swallowed");
    for (size_t i = 0; i < sizeof (seg2) / sizeof (seg2[0]); i++)
        expect (ctx, &p, seg2[i], 0, NULL, "spawn segment 2 line swallowed");
    expect (ctx, &p, "endcmd", 0,
            "cmd=spawn_result rc=-1 msg=spawn_is_not_supported\n",
            "final endcmd gets spawn_result rc=-1");
    expect (ctx, &p, "mcmd=spawn\n", 0, NULL, "single-segment spawn");
    expect (ctx, &p, "garbage line\x01\n", 0, NULL,
            "any line is swallowed inside spawn");
    pmi_simple_server_disconnect (ctx->s, &p);
    expect (ctx, &p, "cmd=get_appnum\n", 0, "cmd=appnum rc=0 appnum=0\n",
            "disconnect drops a half-received spawn");
    expect (ctx, &p, "mcmd=spawn\n", 0, NULL, "spawn without totspawns");
    expect (ctx, &p, "endcmd\n", 0,
            "cmd=spawn_result rc=-1 msg=spawn_is_not_supported\n",
            "replied at the first endcmd");
    ctx_destroy (ctx);
}

static void test_server_abort (void)
{
    struct ctx *ctx = ctx_create (1, false, 0);
    struct peer p;

    peer_init (&p, 0);
    expect (ctx, &p, "cmd=abort exitcode=7 error_msg=it all went wrong: x=1\n",
            1, NULL, "abort (flux-core style): returns 1, no reply");
    ok (ctx->aborts == 1 && ctx->abort_code == 7 && ctx->abort_client == &p
            && !strcmp (ctx->abort_msg, "it all went wrong: x=1"),
        "abort op got exit code, client and message with blanks");
    expect (ctx, &p, "cmd=abort isworld=1 exitcode=3 message=MPI says bye\n", 1,
            NULL, "abort (MPICH 4 style)");
    ok (ctx->aborts == 2 && ctx->abort_code == 3
            && !strcmp (ctx->abort_msg, "MPI says bye"),
        "abort op got MPICH's message");
    expect (ctx, &p, "cmd=abort\n", 1, NULL, "abort without arguments");
    ok (ctx->aborts == 3 && ctx->abort_code == 1 && ctx->abort_msg[0] == '\0',
        "defaults: exit code 1, empty message");
    expect_eproto (ctx, &p, "cmd=abort error_msg=a\rb\n",
                   "abort with control character");
    ctx_destroy (ctx);

    struct pmi_simple_ops ops = test_ops;
    ops.abort = NULL;
    struct ctx ctx2 = {0};
    ctx2.s = pmi_simple_server_create (&ops, 0, 1, 1, KVSNAME, 0, &ctx2);
    ok (pmi_simple_server_request (ctx2.s, "cmd=abort exitcode=2", &p, 0) == 1
            && ctx2.aborts == 0,
        "abort without an abort op still returns 1");
    pmi_simple_server_destroy (ctx2.s);
}

static void test_server_trace (void)
{
    struct ctx *ctx = ctx_create (1, false, PMI_SIMPLE_SERVER_TRACE);
    struct peer p;

    trace_ctx = ctx;
    peer_init (&p, 3);
    expect (ctx, &p, "cmd=get_appnum\n", 0, "cmd=appnum rc=0 appnum=0\n",
            "request with tracing on");
    ok (ctx->ntrace == 2, "two trace lines");
    is (ctx->trace[0], "3: C: cmd=get_appnum", "request traced");
    is (ctx->trace[1], "3: S: cmd=appnum rc=0 appnum=0", "reply traced");
    expect_eproto (ctx, &p, "junk", "junk with tracing on");
    is (ctx->trace[2], "3: C: junk", "junk is traced before rejection");
    trace_ctx = NULL;
    ctx_destroy (ctx);
}

/* Client side with hand-written replies.  */

static void srv_send (int fd, const char *s)
{
    size_t len = strlen (s);
    while (len > 0) {
        ssize_t n = write (fd, s, len);
        if (n < 0)
            BAIL_OUT ("write: %s", strerror (errno));
        s += n;
        len -= n;
    }
}

/* Read what the client sent: one line (with newline), "" if nothing. */
static const char *srv_recv (int fd)
{
    static char buf[PMI_SIMPLE_LINE_MAX + 1];
    size_t len = 0;
    struct pollfd pfd = {.fd = fd, .events = POLLIN};

    while (len < sizeof (buf) - 1 && poll (&pfd, 1, 100) == 1) {
        if (read (fd, &buf[len], 1) != 1)
            break;
        if (buf[len++] == '\n')
            break;
    }
    buf[len] = '\0';
    return buf;
}

static struct pmi_simple_client *pair_create (int *srv)
{
    struct pmi_simple_client *pmi;
    char fdstr[16];
    int sv[2];

    if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        BAIL_OUT ("socketpair: %s", strerror (errno));
    snprintf (fdstr, sizeof (fdstr), "%d", sv[0]);
    if (!(pmi = pmi_simple_client_create_fd (fdstr, "0", "1", NULL)))
        BAIL_OUT ("pmi_simple_client_create_fd: %s", strerror (errno));
    *srv = sv[1];
    return pmi;
}

static struct pmi_simple_client *pair_create_init (int *srv)
{
    struct pmi_simple_client *pmi = pair_create (srv);

    srv_send (*srv, "cmd=response_to_init rc=0\n");
    if (pmi_simple_client_init (pmi) < 0)
        BAIL_OUT ("pmi_simple_client_init: %s", strerror (errno));
    (void)srv_recv (*srv);
    return pmi;
}

static void test_client_create (void)
{
    struct pmi_simple_client *pmi;
    int sv[2];
    char fdstr[16];

    if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        BAIL_OUT ("socketpair");
    snprintf (fdstr, sizeof (fdstr), "%d", sv[0]);
    struct {
        const char *fd, *rank, *size, *spawned, *desc;
    } bad[] = {
        {NULL, "0", "1", NULL, "PMI_FD unset"},
        {fdstr, NULL, "1", NULL, "PMI_RANK unset"},
        {fdstr, "0", NULL, NULL, "PMI_SIZE unset"},
        {"", "0", "1", NULL, "empty PMI_FD"},
        {"abc", "0", "1", NULL, "non-numeric PMI_FD"},
        {"-1", "0", "1", NULL, "negative PMI_FD"},
        {fdstr, "+0", "1", NULL, "signed PMI_RANK"},
        {fdstr, " 0", "1", NULL, "PMI_RANK with blank"},
        {fdstr, "0x", "1", NULL, "PMI_RANK with junk"},
        {fdstr, "1", "1", NULL, "rank == size"},
        {fdstr, "0", "0", NULL, "size 0"},
        {fdstr, "0", "99999999999", NULL, "size overflows int"},
        {fdstr, "0", "1", "yes", "non-numeric PMI_SPAWNED"},
        {fdstr, "0", "1", "", "empty PMI_SPAWNED"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        pmi = pmi_simple_client_create_fd (bad[i].fd, bad[i].rank, bad[i].size,
                                           bad[i].spawned);
        ok (pmi == NULL && errno == EINVAL, "create_fd: %s: EINVAL",
            bad[i].desc);
        pmi_simple_client_destroy (pmi);
    }
    errno = 0;
    ok (pmi_simple_client_create_fd ("999", "0", "1", NULL) == NULL
            && errno == EBADF,
        "create_fd: descriptor not open: EBADF");

    pmi = pmi_simple_client_create_fd (fdstr, "3", "4", "1");
    ok (pmi != NULL, "create_fd: valid strings accepted");
    ok (pmi_simple_client_rank (pmi) == 3 && pmi_simple_client_size (pmi) == 4
            && pmi_simple_client_spawned (pmi) == 1,
        "rank, size, spawned reported");
    ok (fcntl (sv[0], F_GETFD) & FD_CLOEXEC, "descriptor set close-on-exec");
    errno = 0;
    ok (pmi_simple_client_get_maxes (pmi, NULL, NULL, NULL) < 0
            && errno == EINVAL,
        "request before init: EINVAL");
    ok (strlen (pmi_simple_client_last_error (pmi)) > 0,
        "last_error explains: \"%s\"", pmi_simple_client_last_error (pmi));
    ok (srv_recv (sv[1])[0] == '\0', "nothing was sent");
    errno = 55;
    pmi_simple_client_destroy (pmi);
    pmi_simple_client_destroy (NULL);
    ok (errno == 55, "destroy preserves errno and accepts NULL");
    ok (fcntl (sv[0], F_GETFD) < 0 && errno == EBADF,
        "destroy closed the descriptor");
    pmi = pmi_simple_client_create_fd (fdstr, "0", "1", "0");
    ok (pmi == NULL, "closed descriptor rejected");
    ok (pmi_simple_client_rank (NULL) < 0 && pmi_simple_client_size (NULL) < 0
            && pmi_simple_client_spawned (NULL) < 0,
        "accessors reject NULL");
    is (pmi_simple_client_last_error (NULL), "", "last_error (NULL) is \"\"");
    close (sv[1]);
}

static void test_client_init (void)
{
    const char *good[] = {
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
        "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n",
        "cmd=response_to_init\n",
        "pmi_subversion=0 cmd=response_to_init x=y  pmi_version=1 \n",
    };
    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++) {
        int srv;
        struct pmi_simple_client *pmi = pair_create (&srv);
        srv_send (srv, good[i]);
        ok (pmi_simple_client_init (pmi) == 0, "init accepts reply %zu", i);
        is (srv_recv (srv), "cmd=init pmi_version=1 pmi_subversion=1\n",
            "init request text");
        pmi_simple_client_destroy (pmi);
        close (srv);
    }
}

static void test_client_init_bad (void)
{
    struct {
        const char *reply;
        int errnum;
        const char *desc;
    } bad[] = {
        {"cmd=response_to_init rc=-1 msg=go_away\n", EIO, "rc=-1"},
        {"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n",
         EPROTONOSUPPORT, "server chose PMI-2"},
        {"cmd=response_to_init rc=0 pmi_version=one\n", EPROTO,
         "malformed version"},
        {"cmd=response_to_init rc=zero\n", EPROTO, "malformed rc"},
        {"cmd=maxes rc=0\n", EPROTO, "wrong cmd"},
        {"rc=0\n", EPROTO, "no cmd"},
        {"cmd=response_to_init rc=0 pmi_version\n", EPROTO, "bare word"},
        {"\n", EPROTO, "empty line"},
        {"", ECONNRESET, "EOF"},
        {"cmd=response_to_init rc", ECONNRESET, "EOF mid-line"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        int srv;
        struct pmi_simple_client *pmi = pair_create (&srv);
        srv_send (srv, bad[i].reply);
        if (bad[i].errnum == ECONNRESET)
            shutdown (srv, SHUT_WR);
        errno = 0;
        ok (pmi_simple_client_init (pmi) < 0 && errno == bad[i].errnum,
            "init: %s: %s", bad[i].desc, strerror (bad[i].errnum));
        diag ("last_error: %s", pmi_simple_client_last_error (pmi));
        if (bad[i].errnum == EIO) {
            is (pmi_simple_client_last_error (pmi), "go_away",
                "server's msg is kept");
            srv_send (srv, "cmd=response_to_init\n");
            ok (pmi_simple_client_init (pmi) == 0,
                "error reply leaves the connection usable");
            is (pmi_simple_client_last_error (pmi), "",
                "success clears last_error");
        }
        else {
            errno = 0;
            ok (pmi_simple_client_init (pmi) < 0 && errno == ENOTCONN,
                "after a protocol error the connection is closed: ENOTCONN");
        }
        pmi_simple_client_destroy (pmi);
        close (srv);
    }
}

static void test_client_long_reply (void)
{
    int srv;
    struct pmi_simple_client *pmi = pair_create (&srv);
    char *big = malloc (PMI_SIMPLE_LINE_MAX + 2);
    if (!big)
        BAIL_OUT ("out of memory");
    strcpy (big, "cmd=response_to_init x=");
    memset (big + strlen (big), 'x', PMI_SIMPLE_LINE_MAX + 1 - strlen (big));
    big[PMI_SIMPLE_LINE_MAX + 1] = '\0';
    srv_send (srv, big); // no newline within the limit
    errno = 0;
    ok (pmi_simple_client_init (pmi) < 0 && errno == EPROTO,
        "reply longer than PMI_SIMPLE_LINE_MAX: EPROTO");
    pmi_simple_client_destroy (pmi);
    close (srv);

    /* a reply of exactly PMI_SIMPLE_LINE_MAX bytes with newline is fine */
    pmi = pair_create (&srv);
    big[PMI_SIMPLE_LINE_MAX - 1] = '\n';
    big[PMI_SIMPLE_LINE_MAX] = '\0';
    srv_send (srv, big);
    ok (pmi_simple_client_init (pmi) == 0,
        "reply of exactly PMI_SIMPLE_LINE_MAX bytes accepted");
    pmi_simple_client_destroy (pmi);
    close (srv);
    free (big);
}

static void *slow_writer (void *arg)
{
    int fd = *(int *)arg;
    struct timespec ts = {0, 50 * 1000 * 1000};

    srv_send (fd, "cmd=get_result ");
    nanosleep (&ts, NULL);
    srv_send (fd, "rc=0 va");
    nanosleep (&ts, NULL);
    srv_send (fd, "lue=slow\n");
    return NULL;
}

static void test_client_queries (void)
{
    int srv;
    struct pmi_simple_client *pmi = pair_create_init (&srv);
    char buf[64];
    int a = -1, b = -1, c = -1;

    srv_send (srv, "cmd=maxes vallen_max=1024 keylen_max=64 "
                   "kvsname_max=256 rc=0\n");
    ok (pmi_simple_client_get_maxes (pmi, &a, &b, &c) == 0 && a == 256
            && b == 64 && c == 1024,
        "get_maxes with shuffled keys");
    is (srv_recv (srv), "cmd=get_maxes\n", "get_maxes request text");

    srv_send (srv, "cmd=universe_size size=4\n");
    ok (pmi_simple_client_get_universe_size (pmi, &a) == 0 && a == 4,
        "get_universe_size without rc");
    is (srv_recv (srv), "cmd=get_universe_size\n", "request text");
    srv_send (srv, "cmd=universe_size size=-1\n");
    ok (pmi_simple_client_get_universe_size (pmi, &a) == 0 && a == -1,
        "get_universe_size: hydra's size=-1 (unknown) is passed on");
    (void)srv_recv (srv);

    srv_send (srv, "cmd=appnum rc=0 appnum=2 msg=success\n");
    ok (pmi_simple_client_get_appnum (pmi, &a) == 0 && a == 2,
        "get_appnum with extra msg");
    is (srv_recv (srv), "cmd=get_appnum\n", "request text");

    srv_send (srv, "cmd=my_kvsname kvsname=6.0 rc=0\n");
    ok (pmi_simple_client_kvs_get_my_name (pmi, buf, sizeof (buf)) == 0
            && !strcmp (buf, "6.0"),
        "kvs_get_my_name (Slurm-style reply)");
    is (srv_recv (srv), "cmd=get_my_kvsname\n", "request text");
    srv_send (srv, "cmd=my_kvsname rc=0 kvsname=kvs_123\n");
    errno = 0;
    ok (pmi_simple_client_kvs_get_my_name (pmi, buf, 7) < 0
            && errno == EOVERFLOW,
        "kvs_get_my_name into a short buffer: EOVERFLOW");
    (void)srv_recv (srv);
    pmi_simple_client_destroy (pmi);
    close (srv);
}

static void test_client_put (void)
{
    int srv;
    struct pmi_simple_client *pmi = pair_create_init (&srv);

    srv_send (srv, "cmd=put_result rc=0 msg=success\n");
    ok (pmi_simple_client_kvs_put (pmi, "kvs_0", "k-1", "a=b,(c)") == 0,
        "kvs_put");
    is (srv_recv (srv), "cmd=put kvsname=kvs_0 key=k-1 value=a=b,(c)\n",
        "put request text");
    srv_send (srv, "cmd=put_result rc=0\n");
    ok (pmi_simple_client_kvs_put (pmi, "kvs_0", "e", "") == 0,
        "kvs_put of an empty value");
    is (srv_recv (srv), "cmd=put kvsname=kvs_0 key=e value=\n",
        "empty put request text");

    const char *badput[][3] = {
        {"kvs 0", "k", "v"},   {"kvs_0", "k=1", "v"}, {"kvs_0", "", "v"},
        {"kvs_0", "k", "v v"}, {"kvs_0", "k", "v\n"}, {NULL, "k", "v"},
        {"kvs_0", NULL, "v"},  {"kvs_0", "k", NULL},
    };
    for (size_t i = 0; i < sizeof (badput) / sizeof (badput[0]); i++) {
        errno = 0;
        ok (pmi_simple_client_kvs_put (pmi, badput[i][0], badput[i][1],
                                       badput[i][2])
                    < 0
                && errno == EINVAL,
            "kvs_put with invalid argument %zu: EINVAL", i);
    }
    char *bigval = malloc (PMI_SIMPLE_LINE_MAX + 1);
    if (!bigval)
        BAIL_OUT ("out of memory");
    memset (bigval, 'v', PMI_SIMPLE_LINE_MAX);
    bigval[PMI_SIMPLE_LINE_MAX] = '\0';
    errno = 0;
    ok (pmi_simple_client_kvs_put (pmi, "kvs_0", "k", bigval) < 0
            && errno == EOVERFLOW,
        "kvs_put that cannot fit in a line: EOVERFLOW");
    free (bigval);
    ok (srv_recv (srv)[0] == '\0', "no invalid request was sent");

    ok (pmi_simple_client_kvs_commit (pmi, "kvs_0") == 0, "kvs_commit");
    errno = 0;
    ok (pmi_simple_client_kvs_commit (pmi, "a b") < 0 && errno == EINVAL,
        "kvs_commit with bad kvsname: EINVAL");
    ok (srv_recv (srv)[0] == '\0', "commit sends nothing");

    srv_send (srv, "cmd=barrier_out\n");
    ok (pmi_simple_client_barrier (pmi) == 0, "barrier");
    is (srv_recv (srv), "cmd=barrier_in\n", "barrier request text");
    pmi_simple_client_destroy (pmi);
    close (srv);
}

static void test_client_get (void)
{
    int srv;
    struct pmi_simple_client *pmi = pair_create_init (&srv);
    char buf[64];

    srv_send (srv, "cmd=get_result rc=0 msg=success value=v1\n");
    ok (pmi_simple_client_kvs_get (pmi, "kvs_0", "k1", buf, sizeof (buf)) == 0
            && !strcmp (buf, "v1"),
        "kvs_get (hydra-style reply)");
    is (srv_recv (srv), "cmd=get kvsname=kvs_0 key=k1\n", "get request text");
    srv_send (srv, "cmd=get_result value=x=y rc=0\n");
    ok (pmi_simple_client_kvs_get (pmi, "kvs_0", "k", buf, sizeof (buf)) == 0
            && !strcmp (buf, "x=y"),
        "kvs_get: value first, containing '='");
    (void)srv_recv (srv);
    srv_send (srv, "cmd=get_result rc=0 value=\n");
    ok (pmi_simple_client_kvs_get (pmi, "kvs_0", "k", buf, sizeof (buf)) == 0
            && buf[0] == '\0',
        "kvs_get of an empty value");
    (void)srv_recv (srv);
    srv_send (srv, "cmd=get_result rc=-1 msg=key_not_found\n");
    errno = 0;
    ok (pmi_simple_client_kvs_get (pmi, "kvs_0", "k", buf, sizeof (buf)) < 0
            && errno == ENOENT,
        "kvs_get rc=-1: ENOENT");
    is (pmi_simple_client_last_error (pmi), "key_not_found",
        "server's msg is kept");
    (void)srv_recv (srv);
    /* verbatim from MPICH 4.0 hydra: a value comes with the error */
    srv_send (srv, "cmd=get_result rc=-1 msg=key_nokey_not_found "
                   "value=unknown\n");
    errno = 0;
    ok (pmi_simple_client_kvs_get (pmi, "kvs_0", "nokey", buf, sizeof (buf)) < 0
            && errno == ENOENT,
        "kvs_get: hydra's not-found reply (with value=unknown): ENOENT");
    is (pmi_simple_client_last_error (pmi), "key_nokey_not_found",
        "hydra's msg is kept");
    (void)srv_recv (srv);
    srv_send (srv, "cmd=get_result rc=4\n");
    errno = 0;
    ok (pmi_simple_client_kvs_get (pmi, "kvs_0", "k", buf, sizeof (buf)) < 0
            && errno == ENOENT,
        "kvs_get rc=INVALID_KEY: ENOENT");
    is (pmi_simple_client_last_error (pmi), "rc=4",
        "without msg, last_error shows rc");
    (void)srv_recv (srv);
    srv_send (srv, "cmd=get_result rc=0 value=0123456789\n");
    errno = 0;
    ok (pmi_simple_client_kvs_get (pmi, "kvs_0", "k", buf, 10) < 0
            && errno == EOVERFLOW,
        "kvs_get into a short buffer: EOVERFLOW");
    (void)srv_recv (srv);
    errno = 0;
    ok (pmi_simple_client_kvs_get (pmi, "kvs_0", "a b", buf, sizeof (buf)) < 0
            && errno == EINVAL,
        "kvs_get with bad key: EINVAL");

    pmi_simple_client_destroy (pmi);
    close (srv);
}

static void test_client_buffering (void)
{
    int srv;
    struct pmi_simple_client *pmi = pair_create_init (&srv);
    char buf[64];
    int a = -1, b = -1;

    /* two replies arriving in one write: the second one is kept */
    srv_send (srv, "cmd=appnum appnum=5\ncmd=universe_size size=9\n");
    ok (pmi_simple_client_get_appnum (pmi, &a) == 0 && a == 5
            && pmi_simple_client_get_universe_size (pmi, &b) == 0 && b == 9,
        "two replies in one read are both used, in order");
    (void)srv_recv (srv);
    (void)srv_recv (srv);

    /* a reply trickling in pieces */
    pthread_t t;
    if (pthread_create (&t, NULL, slow_writer, &srv) != 0)
        BAIL_OUT ("pthread_create");
    ok (pmi_simple_client_kvs_get (pmi, "kvs_0", "k", buf, sizeof (buf)) == 0
            && !strcmp (buf, "slow"),
        "reply arriving in three pieces is assembled");
    pthread_join (t, NULL);
    (void)srv_recv (srv);

    pmi_simple_client_destroy (pmi);
    close (srv);
}

static void test_client_rc_errno (void)
{
    int srv;
    struct pmi_simple_client *pmi = pair_create_init (&srv);
    struct {
        const char *reply;
        int errnum;
    } rcmap[] = {
        {"cmd=put_result rc=-1\n", EIO},
        {"cmd=put_result rc=1\n", EINVAL},
        {"cmd=put_result rc=2\n", ENOMEM},
        {"cmd=put_result rc=4\n", EINVAL},
        {"cmd=put_result rc=5 msg=key_too_long\n", ENAMETOOLONG},
        {"cmd=put_result rc=7\n", EOVERFLOW},
        {"cmd=put_result rc=13\n", EINVAL},
        {"cmd=put_result rc=99\n", EIO},
        {"cmd=put_result rc=-7\n", EIO},
    };
    for (size_t i = 0; i < sizeof (rcmap) / sizeof (rcmap[0]); i++) {
        srv_send (srv, rcmap[i].reply);
        errno = 0;
        ok (pmi_simple_client_kvs_put (pmi, "kvs_0", "k", "v") < 0
                && errno == rcmap[i].errnum,
            "put reply %.*s: %s", (int)strlen (rcmap[i].reply) - 1,
            rcmap[i].reply, strerror (rcmap[i].errnum));
        (void)srv_recv (srv);
    }
    pmi_simple_client_destroy (pmi);
    close (srv);
}

static void test_client_bad_replies (void)
{
    int srv;
    struct pmi_simple_client *pmi = pair_create_init (&srv);
    char buf[64];
    int a = -1, b = -1, c = -1;

    srv_send (srv, "cmd=maxes rc=0 kvsname_max=1 keylen_max=2\n");
    errno = 0;
    ok (pmi_simple_client_get_maxes (pmi, &a, &b, &c) < 0 && errno == EPROTO,
        "get_maxes reply lacking vallen_max: EPROTO");
    (void)srv_recv (srv);
    errno = 0;
    ok (pmi_simple_client_barrier (pmi) < 0 && errno == ENOTCONN,
        "connection closed after the protocol error");
    pmi_simple_client_destroy (pmi);
    close (srv);

    pmi = pair_create_init (&srv);
    srv_send (srv, "cmd=get_result rc=0\n");
    errno = 0;
    ok (pmi_simple_client_kvs_get (pmi, "kvs_0", "k", buf, sizeof (buf)) < 0
            && errno == EPROTO,
        "get_result rc=0 without value: EPROTO");
    pmi_simple_client_destroy (pmi);
    close (srv);

    pmi = pair_create_init (&srv);
    srv_send (srv, "cmd=appnum rc=0 appnum=-3\n");
    errno = 0;
    ok (pmi_simple_client_get_appnum (pmi, &a) < 0 && errno == EPROTO,
        "negative appnum: EPROTO");
    pmi_simple_client_destroy (pmi);
    close (srv);

    pmi = pair_create_init (&srv);
    srv_send (srv, "cmd=universe_size size=-2\n");
    errno = 0;
    ok (pmi_simple_client_get_universe_size (pmi, &a) < 0 && errno == EPROTO,
        "universe size below -1: EPROTO");
    pmi_simple_client_destroy (pmi);
    close (srv);

    pmi = pair_create_init (&srv);
    close (srv);
    errno = 0;
    ok (pmi_simple_client_barrier (pmi) < 0
            && (errno == ECONNRESET || errno == EPIPE),
        "server gone: barrier fails (%s)", strerror (errno));
    pmi_simple_client_destroy (pmi);
}

static void test_client_finalize_abort (void)
{
    int srv;
    struct pmi_simple_client *pmi = pair_create_init (&srv);

    srv_send (srv, "cmd=finalize_ack\n");
    ok (pmi_simple_client_finalize (pmi) == 0, "finalize");
    is (srv_recv (srv), "cmd=finalize\n", "finalize request text");
    errno = 0;
    ok (pmi_simple_client_barrier (pmi) < 0 && errno == EINVAL,
        "after finalize, requests need init again: EINVAL");

    ok (pmi_simple_client_abort (pmi, 7, "bad thing\nhappened\there") == 0,
        "abort returns without waiting for a reply");
    is (srv_recv (srv),
        "cmd=abort exitcode=7 error_msg=bad thing happened here\n",
        "abort request text: control characters became spaces");
    ok (pmi_simple_client_abort (pmi, 0, NULL) == 0, "abort without message");
    is (srv_recv (srv), "cmd=abort exitcode=0\n", "no error_msg sent");
    char *big = malloc (2 * PMI_SIMPLE_LINE_MAX);
    if (!big)
        BAIL_OUT ("out of memory");
    memset (big, 'm', 2 * PMI_SIMPLE_LINE_MAX - 1);
    big[2 * PMI_SIMPLE_LINE_MAX - 1] = '\0';
    ok (pmi_simple_client_abort (pmi, 1, big) == 0,
        "abort with an over-long message is sent truncated");
    const char *line = srv_recv (srv);
    ok (strlen (line) <= PMI_SIMPLE_LINE_MAX
            && !strncmp (line, "cmd=abort exitcode=1 error_msg=mmm", 34)
            && line[strlen (line) - 1] == '\n',
        "truncated abort line fits the line limit");
    free (big);
    pmi_simple_client_destroy (pmi);
    close (srv);
}

/* Real clients in threads against the server in a poll() loop. */

#define MAX_CHECKS 48

struct worker {
    pthread_t t;
    int fd;
    int rank;
    int size;
    void (*fn) (struct worker *w, struct pmi_simple_client *pmi);
    int nchecks;
    struct {
        bool pass;
        char desc[160];
    } checks[MAX_CHECKS];
};

/* Record a check in the worker; main() reports them as TAP. */
static bool wcheck (struct worker *w, bool pass, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static bool wcheck (struct worker *w, bool pass, const char *fmt, ...)
{
    va_list ap;

    if (w->nchecks < MAX_CHECKS) {
        w->checks[w->nchecks].pass = pass;
        va_start (ap, fmt);
        vsnprintf (w->checks[w->nchecks].desc, sizeof (w->checks[0].desc), fmt,
                   ap);
        va_end (ap);
        w->nchecks++;
    }
    return pass;
}

static void *worker_main (void *arg)
{
    struct worker *w = arg;
    struct pmi_simple_client *pmi;
    char fdstr[16], rankstr[16], sizestr[16];

    snprintf (fdstr, sizeof (fdstr), "%d", w->fd);
    snprintf (rankstr, sizeof (rankstr), "%d", w->rank);
    snprintf (sizestr, sizeof (sizestr), "%d", w->size);
    pmi = pmi_simple_client_create_fd (fdstr, rankstr, sizestr, NULL);
    if (!wcheck (w, pmi != NULL, "create_fd"))
        return NULL;
    if (wcheck (w, pmi_simple_client_init (pmi) == 0, "init"))
        w->fn (w, pmi);
    pmi_simple_client_destroy (pmi);
    return NULL;
}

/* The full bootstrap sequence a broker or MPI task performs. */
static void bootstrap (struct worker *w, struct pmi_simple_client *pmi)
{
    int kvsname_max = 0, keylen_max = 0, vallen_max = 0;
    int appnum = -1, usize = -1;
    char kvsname[PMI_SIMPLE_KVSNAME_MAX];
    char key[32], val[PMI_SIMPLE_VALLEN_MAX], exp[64];
    int next = (w->rank + 1) % w->size;

    wcheck (w,
            pmi_simple_client_get_maxes (pmi, &kvsname_max, &keylen_max,
                                         &vallen_max)
                    == 0
                && kvsname_max == PMI_SIMPLE_KVSNAME_MAX
                && keylen_max == PMI_SIMPLE_KEYLEN_MAX
                && vallen_max == PMI_SIMPLE_VALLEN_MAX,
            "get_maxes");
    wcheck (w, pmi_simple_client_get_appnum (pmi, &appnum) == 0 && appnum == 0,
            "get_appnum");
    wcheck (w,
            pmi_simple_client_get_universe_size (pmi, &usize) == 0
                && usize == w->size,
            "get_universe_size");
    if (!wcheck (
            w,
            pmi_simple_client_kvs_get_my_name (pmi, kvsname, sizeof (kvsname))
                    == 0
                && !strcmp (kvsname, KVSNAME),
            "kvs_get_my_name"))
        return;
    snprintf (key, sizeof (key), "business-card-%d", w->rank);
    snprintf (val, sizeof (val), "tcp://10.0.0.%d:5000?x=%d", w->rank, w->rank);
    wcheck (w, pmi_simple_client_kvs_put (pmi, kvsname, key, val) == 0,
            "kvs_put own key");
    wcheck (w, pmi_simple_client_kvs_commit (pmi, kvsname) == 0, "kvs_commit");
    if (!wcheck (w, pmi_simple_client_barrier (pmi) == 0, "barrier 1"))
        return;
    snprintf (key, sizeof (key), "business-card-%d", next);
    snprintf (exp, sizeof (exp), "tcp://10.0.0.%d:5000?x=%d", next, next);
    wcheck (w,
            pmi_simple_client_kvs_get (pmi, kvsname, key, val, sizeof (val))
                    == 0
                && !strcmp (val, exp),
            "kvs_get of rank %d's key", next);
    errno = 0;
    wcheck (w,
            pmi_simple_client_kvs_get (pmi, kvsname, "no-such-key", val,
                                       sizeof (val))
                    < 0
                && errno == ENOENT,
            "kvs_get of a missing key: ENOENT");
    wcheck (w, pmi_simple_client_barrier (pmi) == 0, "barrier 2");
    wcheck (w, pmi_simple_client_finalize (pmi) == 0, "finalize");
}

/* Limits and abort, end to end. */
static void limits_and_abort (struct worker *w, struct pmi_simple_client *pmi)
{
    char key[PMI_SIMPLE_KEYLEN_MAX + 1];
    char val[PMI_SIMPLE_VALLEN_MAX + 1];

    memset (key, 'k', sizeof (key) - 1);
    key[sizeof (key) - 1] = '\0';
    memset (val, 'v', sizeof (val) - 1);
    val[sizeof (val) - 1] = '\0';
    errno = 0;
    wcheck (w,
            pmi_simple_client_kvs_put (pmi, KVSNAME, key, "x") < 0
                && errno == ENAMETOOLONG,
            "put of an over-long key: ENAMETOOLONG");
    errno = 0;
    wcheck (w,
            pmi_simple_client_kvs_put (pmi, KVSNAME, "k", val) < 0
                && errno == EOVERFLOW,
            "put of an over-long value: EOVERFLOW (%s)",
            pmi_simple_client_last_error (pmi));
    errno = 0;
    wcheck (w,
            pmi_simple_client_kvs_put (pmi, "wrong", "k", "v") < 0
                && errno == EINVAL,
            "put to a foreign KVS: EINVAL");
    errno = 0;
    wcheck (w,
            pmi_simple_client_kvs_get (pmi, KVSNAME, "k", val, sizeof (val)) < 0
                && errno == ENOENT,
            "get of a missing key: ENOENT");
    wcheck (w, pmi_simple_client_abort (pmi, 42, "rank gives up") == 0,
            "abort");
}

struct job {
    struct ctx *ctx;
    struct peer peers[MAX_PROCS];
    struct worker workers[MAX_PROCS];
    int size;
    int nopen;
    int finalized;
    int errors; /* request() returned -1 */
};

static void peer_close (struct job *job, struct peer *p)
{
    if (p->open) {
        pmi_simple_server_disconnect (job->ctx->s, p);
        close (p->fd);
        p->fd = -1;
        p->open = false;
        job->nopen--;
    }
}

/* Feed every complete line in p's buffer to the server. */
static void peer_lines (struct job *job, struct peer *p)
{
    char *nl;

    while (p->open && (nl = memchr (p->rbuf, '\n', p->rlen))) {
        size_t len = nl - p->rbuf + 1;
        char line[PMI_SIMPLE_LINE_MAX + 1];
        memcpy (line, p->rbuf, len);
        line[len] = '\0';
        p->rlen -= len;
        memmove (p->rbuf, nl + 1, p->rlen);
        int rc = pmi_simple_server_request (job->ctx->s, line, p, p->rank);
        if (rc != 0) {
            if (rc < 0)
                job->errors++;
            else
                job->finalized++;
            peer_close (job, p);
        }
    }
    if (p->open && p->rlen == sizeof (p->rbuf)) {
        job->errors++; // over-long line
        peer_close (job, p);
    }
}

static void peer_readable (struct job *job, struct peer *p)
{
    ssize_t n = read (p->fd, p->rbuf + p->rlen, sizeof (p->rbuf) - p->rlen);

    if (n <= 0) {
        peer_close (job, p);
        return;
    }
    p->rlen += n;
    peer_lines (job, p);
}

/* Serve until every connection is closed; false on a 10s stall. */
static bool serve (struct job *job)
{
    while (job->nopen > 0) {
        struct pollfd pfd[MAX_PROCS];
        int idx[MAX_PROCS];
        int n = 0;

        run_deferred (job->ctx);
        for (int i = 0; i < job->size; i++) {
            if (job->peers[i].open) {
                pfd[n].fd = job->peers[i].fd;
                pfd[n].events = POLLIN;
                idx[n++] = i;
            }
        }
        int rc = poll (pfd, n, 10000);
        if (rc <= 0)
            return false;
        for (int i = 0; i < n; i++) {
            if (pfd[i].revents)
                peer_readable (job, &job->peers[idx[i]]);
        }
    }
    return true;
}

static void run_job (const char *name, int size, bool async,
                     void (*fn) (struct worker *w,
                                 struct pmi_simple_client *pmi),
                     struct job *job)
{
    memset (job, 0, sizeof (*job));
    job->ctx = ctx_create (size, async, 0);
    job->size = size;
    for (int i = 0; i < size; i++) {
        int sv[2];
        if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
            BAIL_OUT ("socketpair: %s", strerror (errno));
        peer_init (&job->peers[i], i);
        job->peers[i].fd = sv[1];
        job->peers[i].open = true;
        job->workers[i].fd = sv[0];
        job->workers[i].rank = i;
        job->workers[i].size = size;
        job->workers[i].fn = fn;
        job->nopen++;
    }
    for (int i = 0; i < size; i++) {
        if (pthread_create (&job->workers[i].t, NULL, worker_main,
                            &job->workers[i])
            != 0)
            BAIL_OUT ("pthread_create");
    }
    ok (serve (job), "%s: server loop ran until all clients closed", name);
    for (int i = 0; i < size; i++)
        peer_close (job, &job->peers[i]); // unblocks workers after a stall
    for (int i = 0; i < size; i++) {
        struct worker *w = &job->workers[i];
        pthread_join (w->t, NULL);
        for (int j = 0; j < w->nchecks; j++)
            ok (w->checks[j].pass, "%s: rank %d: %s", name, i,
                w->checks[j].desc);
    }
}

static void test_job (const char *name, int size, bool async)
{
    struct job job;

    run_job (name, size, async, bootstrap, &job);
    for (int i = 0; i < size; i++)
        cmp_ok (job.workers[i].nchecks, "==", 13, "%s: rank %d ran every step",
                name, i);
    cmp_ok (job.finalized, "==", size, "%s: every client finalized", name);
    cmp_ok (job.errors, "==", 0, "%s: no protocol errors", name);
    cmp_ok (job.ctx->barrier_enters, "==", 2,
            "%s: barrier_enter called once per barrier", name);
    cmp_ok (job.ctx->nentries, "==", size, "%s: %d keys stored", name, size);
    ctx_destroy (job.ctx);
}

static void test_job_limits (void)
{
    struct job job;

    run_job ("limits", 1, false, limits_and_abort, &job);
    cmp_ok (job.workers[0].nchecks, "==", 7, "limits: all steps ran");
    ok (job.ctx->aborts == 1 && job.ctx->abort_code == 42
            && !strcmp (job.ctx->abort_msg, "rank gives up"),
        "limits: server's abort op got the client's code and message");
    cmp_ok (job.finalized, "==", 1, "limits: abort made request() return 1");
    cmp_ok (job.ctx->nentries, "==", 0, "limits: nothing was stored");
    ctx_destroy (job.ctx);
}

/* pmi_simple_server_send_line: all of a line larger than the socket
 * buffer gets through a non-blocking fd while the peer reads; a peer
 * gone is EPIPE (no SIGPIPE: the test would die). */
static void *read_all_thread (void *arg)
{
    int fd = *(int *)arg;
    size_t *total = malloc (sizeof (*total));
    char buf[4096];
    ssize_t n;

    *total = 0;
    while ((n = read (fd, buf, sizeof (buf))) > 0)
        *total += n;
    return total;
}

static void test_server_send_line (void)
{
    size_t len = 1 << 20;
    char *line = malloc (len + 1);
    pthread_t t;
    size_t *total = NULL;
    int sv[2];

    if (!line || socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0
        || fcntl (sv[0], F_SETFL, O_NONBLOCK) < 0)
        BAIL_OUT ("setup: %s", strerror (errno));
    memset (line, 'x', len - 1);
    line[len - 1] = '\n';
    line[len] = '\0';
    if (pthread_create (&t, NULL, read_all_thread, &sv[1]) != 0)
        BAIL_OUT ("pthread_create");
    ok (pmi_simple_server_send_line (sv[0], line) == 0,
        "send_line writes a 1 MiB line through a non-blocking socket");
    close (sv[0]);
    pthread_join (t, (void **)&total);
    ok (total && *total == len, "the reader got every byte of it");
    free (total);
    close (sv[1]);

    if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        BAIL_OUT ("socketpair: %s", strerror (errno));
    close (sv[1]);
    errno = 0;
    ok (pmi_simple_server_send_line (sv[0], "cmd=barrier_out rc=0\n") < 0
            && errno == EPIPE,
        "send_line to a peer that is gone fails with EPIPE");
    close (sv[0]);
    free (line);
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);

    test_server_create ();
    test_server_basic ();
    test_server_init ();
    test_server_limits ();
    test_server_garbage ();
    test_server_async_get ();
    test_server_get_gone ();
    test_server_barrier ();
    test_server_barrier_leave ();
    test_server_spawn ();
    test_server_abort ();
    test_server_trace ();
    test_server_send_line ();

    test_client_create ();
    test_client_init ();
    test_client_init_bad ();
    test_client_long_reply ();
    test_client_queries ();
    test_client_put ();
    test_client_get ();
    test_client_buffering ();
    test_client_rc_errno ();
    test_client_bad_replies ();
    test_client_finalize_abort ();

    test_job ("sync-4", 4, false);
    test_job ("async-4", 4, true);
    test_job ("sync-1", 1, false);
    test_job ("async-8", 8, true);
    test_job_limits ();

    done_testing ();
    return 0;
}
