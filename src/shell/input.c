/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* input.c - task stdin: the leader's `.stdin` method appends to the
 * `input` eventlog; or every task reads a file.  The leader does not
 * watch its own writes: once an append is committed (in the order of the
 * commits) it writes the data to its own tasks and forwards the event to
 * the other shells whose tasks it names (`<service>.input`), which write
 * to theirs.  A job of one shell costs the kvs-watch service nothing.
 *
 * A watch of `input` on every broker of a 64-node job cost each broker a
 * namespace root fetch, lookups and content loads from rank 0, about a
 * fifth of the brokers' CPU of `flux run -N64 true`.  Shells that share
 * the leader's broker (the tests' fake agent) still watch `input`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "libeventlog/eventlog.h"
#include "libflux/base64.h"
#include "libkvs/kvs.h"
#include "libtaskmap/taskmap.h"
#include "libutil/strsubst.h"

#include "input.h"
#include "kvsretry.h"
#include "shell.h"
#include "task.h"

#define INPUT_LIMIT (10 * 1024 * 1024)

struct input {
    struct shell *shell;
    char *path;    /* input.stdin.type "file" */
    int64_t total; /* bytes appended by .stdin (leader) */
    bool eof_all;  /* rank "all" got EOF: later writes fail EPIPE */
    flux_msg_handler_t *mh;
    flux_future_t *watch; /* lookup of `input` (WATCH_APPEND) */
    eventlog_parser_t *parser;
    struct stdin_req *pending; /* commits in flight, freed with the input */
    bool started;              /* input_start: the tasks exist */
    json_t *early;             /* leader: data committed before input_start */
    flux_msg_handler_t *input_mh; /* non-leader: <service>.input */
    bool forwarding;              /* leader: after barrier 2 */
    json_t *backlog;              /* leader: events committed before that */
};

/* A .stdin request whose commit is in flight: on the input's list until
 * answered, so that input_destroy frees those not answered yet (their
 * callbacks must not run after it).
 */
struct stdin_req {
    struct input *in;
    const flux_msg_t *msg;
    flux_future_t *f;
    json_t *io; /* the data event's context */
    struct stdin_req *prev, *next;
};

static void deliver (struct input *in, json_t *ctx);
static void forward (struct input *in, json_t *ctx);

static void stdin_req_destroy (struct stdin_req *req)
{
    struct input *in = req->in;

    if (req->prev)
        req->prev->next = req->next;
    else
        in->pending = req->next;
    if (req->next)
        req->next->prev = req->prev;
    flux_msg_decref (req->msg);
    flux_future_destroy (req->f);
    json_decref (req->io);
    free (req);
}

static void stdin_commit_cb (flux_future_t *f, void *arg)
{
    struct stdin_req *req = arg;
    flux_t *h = req->in->shell->h;

    if (flux_future_get (f, NULL) < 0)
        flux_respond_error (h, req->msg, errno, "committing input");
    else {
        struct input *in = req->in;
        if (in->started)
            deliver (in, req->io);
        else if (json_array_append (in->early, req->io) < 0)
            shell_log (in->shell, LOG_ERR, "input", "out of memory");
        if (in->forwarding)
            forward (in, req->io);
        else if (json_array_append (in->backlog, req->io) < 0)
            shell_log (in->shell, LOG_ERR, "input", "out of memory");
        flux_respond (h, req->msg, NULL);
    }
    stdin_req_destroy (req);
}

static void stdin_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct input *in = arg;
    const char *stream, *rank, *data = NULL, *encoding = NULL;
    int eof = 0;
    json_t *io = NULL, *e = NULL;
    char *line = NULL;
    const char *errmsg = NULL;
    flux_kvs_txn_t *txn = NULL;
    flux_future_t *f = NULL;
    struct stdin_req *req = NULL;
    struct idset *ids = NULL;

    (void)mh;
    if (flux_msg_authorize (msg, in->shell->info->userid) < 0) {
        errmsg = "only the job owner may write to stdin";
        goto error;
    }
    if (flux_request_unpack (msg, NULL, "o", &io) < 0
        || json_unpack (io, "{s:s s:s s?s s?b s?s}", "stream", &stream, "rank",
                        &rank, "data", &data, "eof", &eof, "encoding",
                        &encoding)
               < 0
        || strcmp (stream, "stdin") != 0
        || (encoding && strcmp (encoding, "base64") != 0)
        || (strcmp (rank, "all") && !(ids = idset_decode (rank)))) {
        errno = EPROTO;
        errmsg = "malformed stdin request";
        goto error;
    }
    idset_destroy (ids);
    if (in->eof_all) {
        errno = EPIPE;
        errmsg = "stdin of every task is closed";
        goto error;
    }
    if (data)
        in->total += strlen (data);
    if (in->total > INPUT_LIMIT) {
        flux_respond_error (h, msg, ENOSPC, "stdin limit (10M) exceeded");
        shell_fatal (in->shell, 1, "stdin limit of 10M bytes exceeded");
        return;
    }
    if (eof && !strcmp (rank, "all"))
        in->eof_all = true;
    (void)shell_commit_flush (in->shell); /* the input header goes first */
    if (!(e = eventlog_entry_pack (0, "data", "O", io))
        || !(line = eventlog_entry_encode (e))
        || !(txn = flux_kvs_txn_create ())
        || flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "input", line) < 0
        || !(f = kvsretry_commit (h, 0, txn))
        || !(req = calloc (1, sizeof (*req)))
        || flux_future_then (f, -1., stdin_commit_cb, req) < 0)
        goto error;
    req->in = in;
    req->msg = flux_msg_incref (msg);
    req->f = f;
    req->io = json_incref (io);
    if ((req->next = in->pending))
        req->next->prev = req;
    in->pending = req;
    json_decref (e);
    free (line);
    flux_kvs_txn_destroy (txn);
    return;
error:
    flux_respond_error (h, msg, errno, errmsg);
    free (req);
    flux_future_destroy (f);
    json_decref (e);
    free (line);
    flux_kvs_txn_destroy (txn);
}

/* One `data` event of `input`: write it to the local tasks it names. */
static void deliver (struct input *in, json_t *ctx)
{
    struct shell *shell = in->shell;
    const char *rank, *data = NULL, *encoding = NULL;
    int eof = 0;
    struct idset *ids = NULL;
    char *buf = NULL;
    size_t len = 0;

    if (json_unpack (ctx, "{s:s s?s s?b s?s}", "rank", &rank, "data", &data,
                     "eof", &eof, "encoding", &encoding)
            < 0
        || (strcmp (rank, "all") && !(ids = idset_decode (rank))))
        return;
    if (data && encoding && !strcmp (encoding, "base64")) {
        size_t size = base64_decoded_size (strlen (data));
        ssize_t n;
        if (!(buf = malloc (size + 1))
            || (n = base64_decode (buf, size, data, strlen (data))) < 0) {
            free (buf);
            idset_destroy (ids);
            return;
        }
        len = n;
        data = buf;
    }
    else if (data)
        len = strlen (data);
    for (int i = 0; i < shell->ntasks; i++) {
        struct task *t = shell->tasks[i];
        if (ids && !idset_test (ids, t->rank))
            continue;
        if (!t->in_open)
            continue;
        (void)task_write_stdin (t, data ? data : "", data ? len : 0, eof);
    }
    free (buf);
    idset_destroy (ids);
}

static bool own_broker (struct shell *shell, int shell_rank)
{
    return shell->info->brokers[shell_rank] == shell->info->brokers[0];
}

static void send_input (struct input *in, int shell_rank, json_t *ctx)
{
    struct shell *shell = in->shell;
    char topic[128];
    flux_future_t *f;

    snprintf (topic, sizeof (topic), "%s.input", shell->service);
    if (!(f = flux_rpc_pack (shell->h, topic, shell->info->brokers[shell_rank],
                             FLUX_RPC_NORESPONSE, "{s:O}", "context", ctx)))
        shell_log (shell, LOG_ERR, "input", "forwarding to shell %d: %s",
                   shell_rank, strerror (errno));
    flux_future_destroy (f);
}

/* Leader: send one `data` event to the other shells (not sharing its
 * broker) with a task it names.  Messages of one sender to one service
 * keep their order, so each shell sees the events in eventlog order.
 */
static void forward (struct input *in, json_t *ctx)
{
    struct shell *shell = in->shell;
    int n = shell->info->shell_size;
    const char *rank;
    struct idset *ids;
    bool *to;

    if (n < 2 || json_unpack (ctx, "{s:s}", "rank", &rank) < 0)
        return;
    if (!strcmp (rank, "all")) {
        for (int i = 1; i < n; i++)
            if (!own_broker (shell, i))
                send_input (in, i, ctx);
        return;
    }
    if (!(ids = idset_decode (rank)) || !(to = calloc (n, sizeof (*to)))) {
        idset_destroy (ids);
        return;
    }
    for (unsigned int id = idset_first (ids); id != IDSET_INVALID_ID;
         id = idset_next (ids, id)) {
        int node = taskmap_nodeid (shell->info->map, (int)id);
        if (node > 0 && node < n)
            to[node] = true;
    }
    for (int i = 1; i < n; i++)
        if (to[i] && !own_broker (shell, i))
            send_input (in, i, ctx);
    free (to);
    idset_destroy (ids);
}

/* Non-leader: <service>.input {context:o} from the leader (no response). */
static void input_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct input *in = arg;
    json_t *ctx;

    (void)h;
    (void)mh;
    if (flux_msg_authorize (msg, in->shell->info->userid) < 0
        || flux_request_unpack (msg, NULL, "{s:o}", "context", &ctx) < 0
        || !json_is_object (ctx)) {
        fprintf (stderr, "flux-shell: malformed input request\n");
        return;
    }
    deliver (in, ctx);
}

static void watch_cb (flux_future_t *f, void *arg)
{
    struct input *in = arg;
    const char *s;
    json_t *entry;

    if (flux_kvs_lookup_get (f, &s) < 0) {
        if (errno != ENODATA)
            shell_log (in->shell, LOG_ERR, "input", "watching input: %s",
                       strerror (errno));
        return;
    }
    if (s && eventlog_parser_feed (in->parser, s, strlen (s)) < 0) {
        shell_log (in->shell, LOG_ERR, "input", "input eventlog: %s",
                   strerror (errno));
        return;
    }
    while ((entry = eventlog_parser_next (in->parser))) {
        const char *name;
        json_t *ctx;
        if (eventlog_entry_parse (entry, NULL, &name, &ctx) == 0
            && !strcmp (name, "data") && ctx)
            deliver (in, ctx);
        json_decref (entry);
    }
    flux_future_reset (f);
}

static int write_header (struct input *in, flux_error_t *error)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    flux_future_t *f = NULL;
    json_t *e;
    char *line = NULL;
    int rc = -1;

    e = eventlog_entry_pack (0, "header", "{s:i s:{s:s} s:{s:i} s:{}}",
                             "version", 1, "encoding", "stdin", "UTF-8",
                             "count", "stdin", 1, "options");
    if (txn && e && (line = eventlog_entry_encode (e))
        && flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "input", line) == 0
        && shell_commit_async (in->shell, txn, "writing the input header") == 0)
        rc = 0;
    else
        errprintf (error, "writing the input header: %s", strerror (errno));
    flux_future_destroy (f);
    json_decref (e);
    free (line);
    flux_kvs_txn_destroy (txn);
    return rc;
}

static int parse_options (struct input *in, flux_error_t *error)
{
    struct shell *shell = in->shell;
    json_t *o = json_object_get (shell->info->options, "input");
    const char *type = NULL, *path = NULL;

    if (!o)
        return 0;
    if (json_unpack (o, "{s?{s?s s?s}}", "stdin", "type", &type, "path", &path)
        < 0) {
        errno = EINVAL;
        return errprintf (error, "malformed input options");
    }
    if (type && strcmp (type, "service") && strcmp (type, "file")) {
        errno = EINVAL;
        return errprintf (error, "input.stdin.type must be service or file");
    }
    if (type && !strcmp (type, "file")) {
        char *a, *b;
        if (!path) {
            errno = EINVAL;
            return errprintf (error, "input.stdin.type file needs a path");
        }
        a = strsubst (path, "{{id}}", shell->jobid_f58);
        b = a ? strsubst (a, "{{jobid}}", shell->jobid_f58) : NULL;
        in->path = b ? strsubst (b, "{{name}}", shell->info->name) : NULL;
        free (a);
        free (b);
        if (!in->path)
            return errprintf (error, "out of memory");
    }
    return 0;
}

struct input *input_create (struct shell *shell, flux_error_t *error)
{
    struct input *in = calloc (1, sizeof (*in));
    char topic[128];

    if (!in)
        return NULL;
    in->shell = shell;
    if (parse_options (in, error) < 0)
        goto error;
    if (in->path)
        return in;
    if (!shell->leader) {
        if (own_broker (shell, shell->info->shell_rank))
            return in; /* watches `input` */
        snprintf (topic, sizeof (topic), "%s.input", shell->service);
        if (!(in->input_mh = flux_msg_handler_create (
                  shell->h,
                  (struct flux_match){FLUX_MSGTYPE_REQUEST, FLUX_MATCHTAG_NONE,
                                      topic},
                  input_cb, in))) {
            errprintf (error, "%s: %s", topic, strerror (errno));
            goto error;
        }
        flux_msg_handler_allow_rolemask (in->input_mh, FLUX_ROLE_USER);
        flux_msg_handler_start (in->input_mh);
        return in;
    }
    if (!(in->early = json_array ()) || !(in->backlog = json_array ())) {
        errprintf (error, "out of memory");
        goto error;
    }
    if (write_header (in, error) < 0)
        goto error;
    snprintf (topic, sizeof (topic), "%s.stdin", shell->service);
    if (!(in->mh = flux_msg_handler_create (
              shell->h,
              (struct flux_match){FLUX_MSGTYPE_REQUEST, FLUX_MATCHTAG_NONE,
                                  topic},
              stdin_cb, in))) {
        errprintf (error, "%s: %s", topic, strerror (errno));
        goto error;
    }
    flux_msg_handler_allow_rolemask (in->mh, FLUX_ROLE_USER);
    flux_msg_handler_start (in->mh);
    return in;
error:
    input_destroy (in);
    return NULL;
}

int input_task_setup (struct input *in, struct task *t, flux_error_t *error)
{
    if (!in->path)
        return 0;
    if ((t->stdin_fd = open (in->path, O_RDONLY | O_CLOEXEC)) < 0)
        return errprintf (error, "%s: %s", in->path, strerror (errno));
    return 0;
}

int input_start (struct input *in, flux_error_t *error)
{
    size_t i;
    json_t *io;

    in->started = true;
    if (in->path || in->input_mh)
        return 0;
    if (in->shell->leader) {
        json_array_foreach (in->early, i, io)
        {
            deliver (in, io);
        }
        json_array_clear (in->early);
        return 0;
    }
    if (!(in->parser = eventlog_parser_create ())
        || !(in->watch = flux_kvs_lookup (in->shell->h, NULL,
                                          FLUX_KVS_WATCH | FLUX_KVS_WAITCREATE
                                              | FLUX_KVS_WATCH_APPEND,
                                          "input"))
        || flux_future_then (in->watch, -1., watch_cb, in) < 0)
        return errprintf (error, "watching input: %s", strerror (errno));
    return 0;
}

void input_forward_start (struct input *in)
{
    size_t i;
    json_t *ctx;

    if (!in || in->path || !in->shell->leader || in->forwarding)
        return;
    in->forwarding = true;
    json_array_foreach (in->backlog, i, ctx) forward (in, ctx);
    json_array_clear (in->backlog);
}

void input_destroy (struct input *in)
{
    if (in) {
        int saved_errno = errno;
        while (in->pending)
            stdin_req_destroy (in->pending);
        if (in->watch) {
            (void)flux_kvs_lookup_cancel (in->watch);
            flux_future_destroy (in->watch);
        }
        eventlog_parser_destroy (in->parser);
        json_decref (in->early);
        json_decref (in->backlog);
        flux_msg_handler_destroy (in->input_mh);
        flux_msg_handler_destroy (in->mh);
        free (in->path);
        free (in);
        errno = saved_errno;
    }
}
