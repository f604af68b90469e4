/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* simple_server.c - PMI-1 wire protocol engine (RFC 13).
 *
 * Requests are dispatched through a table by their "cmd" value.  The only
 * per-client state the engine keeps is for clients with something
 * outstanding: a get waiting for the owner, a barrier entry, or a
 * multi-line spawn request being swallowed.  Those clients sit on one
 * short list; everyone else is stateless, so the owner never has to
 * register connections.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "keyval.h"
#include "simple_server.h"

enum client_state {
    CLIENT_GET,     /* waiting for pmi_simple_server_kvs_get_complete() */
    CLIENT_BARRIER, /* in the barrier */
    CLIENT_SPAWN,   /* inside a multi-line mcmd=spawn request */
};

struct client {
    void *handle;
    int rank;
    enum client_state state;
    int spawn_total; /* totspawns and spawnssofar seen in a spawn request */
    int spawn_sofar;
    struct client *next;
};

struct pmi_simple_server {
    struct pmi_simple_ops ops;
    void *arg;
    int appnum;
    int universe_size;
    int local_procs;
    int flags;
    char kvsname[PMI_SIMPLE_KVSNAME_MAX];
    struct client *clients; /* in order of arrival */
    int barrier_count;      /* clients in CLIENT_BARRIER */
    bool barrier_entered;   /* barrier_enter called, completion pending */
};

struct request {
    struct pmi_simple_server *s;
    const struct keyval *kv;
    void *client;
    int rank;
};

struct handler {
    const char *cmd;
    int (*fn) (struct request *rq, const struct handler *h);
    const char *reply_cmd; /* for unsupported commands */
};

/* Keys whose value is the rest of an abort line (flux-core, MPICH 4). */
static const char *const abort_tail_keys[] = {"error_msg", "message", NULL};

static void trace (struct pmi_simple_server *s, void *client, int rank,
                   char dir, const char *line)
{
    char buf[PMI_SIMPLE_LINE_MAX + 32];
    size_t len = strlen (line);

    if (!(s->flags & PMI_SIMPLE_SERVER_TRACE))
        return;
    if (len > 0 && line[len - 1] == '\n')
        len--;
    if (len > PMI_SIMPLE_LINE_MAX)
        len = PMI_SIMPLE_LINE_MAX;
    snprintf (buf, sizeof (buf), "%d: %c: %.*s", rank, dir, (int)len, line);
    s->ops.debug_trace (client, buf);
}

static int reply (struct pmi_simple_server *s, void *client, int rank,
                  const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));

/* Format one line (fmt supplies the newline) and send it. */
static int reply (struct pmi_simple_server *s, void *client, int rank,
                  const char *fmt, ...)
{
    char buf[PMI_SIMPLE_LINE_MAX + 1];
    va_list ap;
    int n;

    va_start (ap, fmt);
    n = vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    if (n < 0 || n >= (int)sizeof (buf)) {
        errno = EOVERFLOW; // not reached: replies are bounded by the limits
        return -1;
    }
    trace (s, client, rank, 'S', buf);
    return s->ops.response_send (client, buf);
}

static int reply_error (struct request *rq, const char *reply_cmd, int rc,
                        const char *msg)
{
    return reply (rq->s, rq->client, rq->rank, "cmd=%s rc=%d msg=%s\n",
                  reply_cmd, rc, msg);
}

/* strerror() text usable as a msg value: blanks become '_'. */
static const char *errno_msg (int errnum, char *buf, size_t size)
{
    snprintf (buf, size, "%s", strerror (errnum));
    for (char *p = buf; *p != '\0'; p++) {
        if (*p == ' ' || *p == '\t' || (unsigned char)*p < 0x20)
            *p = '_';
    }
    return buf;
}

static struct client *client_find (struct pmi_simple_server *s, void *handle)
{
    for (struct client *c = s->clients; c; c = c->next)
        if (c->handle == handle)
            return c;
    return NULL;
}

static struct client *client_add (struct pmi_simple_server *s, void *handle,
                                  int rank, enum client_state state)
{
    struct client *c;
    struct client **tail = &s->clients;

    if (!(c = calloc (1, sizeof (*c))))
        return NULL;
    c->handle = handle;
    c->rank = rank;
    c->state = state;
    while (*tail)
        tail = &(*tail)->next;
    *tail = c;
    return c;
}

static void client_remove (struct pmi_simple_server *s, struct client *c)
{
    for (struct client **pp = &s->clients; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            free (c);
            return;
        }
    }
}

/* Checks shared by put and get.  Return 0 or a PMI error code, *msg set. */
static int check_kvsname (struct pmi_simple_server *s, const char *name,
                          const char **msg)
{
    if (strcmp (name, s->kvsname) != 0) {
        *msg = "invalid_kvsname";
        return PMI_SIMPLE_ERR_INVALID_ARG;
    }
    return 0;
}

static int check_key (const char *key, const char **msg)
{
    if (!keyval_valid_word (key)) {
        *msg = "invalid_key";
        return PMI_SIMPLE_ERR_INVALID_KEY;
    }
    if (strlen (key) >= PMI_SIMPLE_KEYLEN_MAX) {
        *msg = "key_too_long";
        return PMI_SIMPLE_ERR_INVALID_KEY_LENGTH;
    }
    return 0;
}

static bool value_ok (const char *val)
{
    return keyval_valid_value (val) && strlen (val) < PMI_SIMPLE_VALLEN_MAX;
}

static int handle_init (struct request *rq, const struct handler *h)
{
    int version, subversion;

    if (keyval_get_int (rq->kv, "pmi_version", &version) < 0
        || keyval_get_int (rq->kv, "pmi_subversion", &subversion) < 0)
        return reply_error (rq, "response_to_init", PMI_SIMPLE_ERR_INVALID_ARGS,
                            "missing_or_malformed_pmi_version");
    if (version < 1 || subversion < 0)
        return reply_error (rq, "response_to_init", PMI_SIMPLE_FAIL,
                            "unsupported_pmi_version");
    /* we speak 1.0 and 1.1; offer 1.1 to anyone asking for more */
    return reply (rq->s, rq->client, rq->rank,
                  "cmd=response_to_init rc=0 pmi_version=1 "
                  "pmi_subversion=%d\n",
                  version == 1 && subversion == 0 ? 0 : 1);
}

static int handle_get_maxes (struct request *rq, const struct handler *h)
{
    return reply (rq->s, rq->client, rq->rank,
                  "cmd=maxes rc=0 kvsname_max=%d keylen_max=%d "
                  "vallen_max=%d\n",
                  PMI_SIMPLE_KVSNAME_MAX, PMI_SIMPLE_KEYLEN_MAX,
                  PMI_SIMPLE_VALLEN_MAX);
}

static int handle_get_appnum (struct request *rq, const struct handler *h)
{
    return reply (rq->s, rq->client, rq->rank, "cmd=appnum rc=0 appnum=%d\n",
                  rq->s->appnum);
}

static int handle_get_universe_size (struct request *rq,
                                     const struct handler *h)
{
    return reply (rq->s, rq->client, rq->rank,
                  "cmd=universe_size rc=0 size=%d\n", rq->s->universe_size);
}

static int handle_get_my_kvsname (struct request *rq, const struct handler *h)
{
    return reply (rq->s, rq->client, rq->rank,
                  "cmd=my_kvsname rc=0 kvsname=%s\n", rq->s->kvsname);
}

static int handle_put (struct request *rq, const struct handler *h)
{
    struct pmi_simple_server *s = rq->s;
    const char *kvsname, *key, *val, *msg;
    char ebuf[128];
    int rc;

    if (keyval_get_str (rq->kv, "kvsname", &kvsname) < 0
        || keyval_get_str (rq->kv, "key", &key) < 0
        || keyval_get_str (rq->kv, "value", &val) < 0)
        return reply_error (rq, "put_result", PMI_SIMPLE_ERR_INVALID_NUM_ARGS,
                            "missing_kvsname_key_or_value");
    if ((rc = check_kvsname (s, kvsname, &msg)) || (rc = check_key (key, &msg)))
        return reply_error (rq, "put_result", rc, msg);
    if (!value_ok (val))
        return reply_error (rq, "put_result", PMI_SIMPLE_ERR_INVALID_VAL_LENGTH,
                            "value_too_long");
    if (s->ops.kvs_put (s->arg, kvsname, key, val) < 0)
        return reply_error (rq, "put_result", PMI_SIMPLE_FAIL,
                            errno_msg (errno, ebuf, sizeof (ebuf)));
    return reply (s, rq->client, rq->rank, "cmd=put_result rc=0\n");
}

static int handle_get (struct request *rq, const struct handler *h)
{
    struct pmi_simple_server *s = rq->s;
    const char *kvsname, *key, *msg;
    struct client *c;
    char ebuf[128];
    int rc;

    if (keyval_get_str (rq->kv, "kvsname", &kvsname) < 0
        || keyval_get_str (rq->kv, "key", &key) < 0)
        return reply_error (rq, "get_result", PMI_SIMPLE_ERR_INVALID_NUM_ARGS,
                            "missing_kvsname_or_key");
    if ((rc = check_kvsname (s, kvsname, &msg)) || (rc = check_key (key, &msg)))
        return reply_error (rq, "get_result", rc, msg);
    if (!client_add (s, rq->client, rq->rank, CLIENT_GET))
        return -1;
    if (s->ops.kvs_get (s->arg, rq->client, kvsname, key) < 0) {
        int saved_errno = errno;
        /* the owner may have answered (or forgotten the client) already */
        if ((c = client_find (s, rq->client)) && c->state == CLIENT_GET) {
            client_remove (s, c);
            return reply_error (rq, "get_result", PMI_SIMPLE_FAIL,
                                errno_msg (saved_errno, ebuf, sizeof (ebuf)));
        }
    }
    return 0;
}

/* Answer every client in the barrier and end it.  The waiters are
 * detached first, so callbacks may re-enter the engine.
 */
static int barrier_release (struct pmi_simple_server *s, int rc,
                            const char *msg)
{
    struct client *waiters = NULL;
    struct client **wtail = &waiters;
    struct client **pp = &s->clients;
    int err = 0;

    while (*pp) {
        struct client *c = *pp;
        if (c->state == CLIENT_BARRIER) {
            *pp = c->next;
            c->next = NULL;
            *wtail = c;
            wtail = &c->next;
        }
        else
            pp = &c->next;
    }
    s->barrier_count = 0;
    s->barrier_entered = false;
    while (waiters) {
        struct client *c = waiters;
        waiters = c->next;
        int n = rc == 0
                    ? reply (s, c->handle, c->rank, "cmd=barrier_out rc=0\n")
                    : reply (s, c->handle, c->rank,
                             "cmd=barrier_out rc=-1 msg=%s\n", msg);
        if (n < 0 && err == 0)
            err = errno;
        free (c);
    }
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

static int handle_barrier_in (struct request *rq, const struct handler *h)
{
    struct pmi_simple_server *s = rq->s;
    char ebuf[128];

    if (s->barrier_entered)
        return reply_error (rq, "barrier_out", PMI_SIMPLE_FAIL,
                            "barrier_has_more_than_local_procs_clients");
    if (!client_add (s, rq->client, rq->rank, CLIENT_BARRIER))
        return -1;
    if (++s->barrier_count < s->local_procs)
        return 0;
    s->barrier_entered = true;
    if (s->ops.barrier_enter (s->arg) < 0 && s->barrier_entered)
        return barrier_release (s, -1, errno_msg (errno, ebuf, sizeof (ebuf)));
    return 0;
}

static int handle_finalize (struct request *rq, const struct handler *h)
{
    if (reply (rq->s, rq->client, rq->rank, "cmd=finalize_ack rc=0\n") < 0)
        return -1;
    return 1;
}

static int handle_abort (struct request *rq, const struct handler *h)
{
    struct pmi_simple_server *s = rq->s;
    const char *msg = "";
    int exit_code;

    /* the client is on its way out: take what it says, leniently */
    if (keyval_get_int (rq->kv, "exitcode", &exit_code) < 0)
        exit_code = 1;
    if (keyval_get_str (rq->kv, "error_msg", &msg) < 0
        && keyval_get_str (rq->kv, "message", &msg) < 0)
        msg = "";
    if (s->ops.abort)
        s->ops.abort (s->arg, rq->client, exit_code, msg);
    return 1;
}

static int handle_unsupported (struct request *rq, const struct handler *h)
{
    return reply_error (rq, h->reply_cmd, PMI_SIMPLE_FAIL,
                        "name_publishing_is_not_supported");
}

static const struct handler handlers[] = {
    {"init", handle_init, NULL},
    {"get_maxes", handle_get_maxes, NULL},
    {"get_appnum", handle_get_appnum, NULL},
    {"get_universe_size", handle_get_universe_size, NULL},
    {"get_my_kvsname", handle_get_my_kvsname, NULL},
    {"put", handle_put, NULL},
    {"get", handle_get, NULL},
    {"barrier_in", handle_barrier_in, NULL},
    {"finalize", handle_finalize, NULL},
    {"abort", handle_abort, NULL},
    {"publish_name", handle_unsupported, "publish_result"},
    {"unpublish_name", handle_unsupported, "unpublish_result"},
    {"lookup_name", handle_unsupported, "lookup_result"},
};

/* First line of a multi-line "mcmd=spawn" request. */
static int spawn_begin (struct request *rq, const char *mcmd)
{
    if (strcmp (mcmd, "spawn") != 0)
        return reply (rq->s, rq->client, rq->rank,
                      "cmd=error rc=-1 msg=unsupported_command:%.64s\n", mcmd);
    if (!client_add (rq->s, rq->client, rq->rank, CLIENT_SPAWN))
        return -1;
    return 0;
}

/* Later spawn lines: note progress, reply after the last "endcmd".
 * Argument lines may hold blanks, so lines that do not parse are skipped.
 */
static int spawn_continue (struct pmi_simple_server *s, struct client *c,
                           const char *line)
{
    size_t len = strlen (line);
    struct keyval *kv;

    if (len > 0 && line[len - 1] == '\n')
        len--;
    if (len == 6 && !strncmp (line, "endcmd", 6)) {
        void *handle = c->handle;
        int rank = c->rank;
        if (c->spawn_sofar < c->spawn_total)
            return 0; // another mcmd=spawn segment follows
        client_remove (s, c);
        return reply (s, handle, rank,
                      "cmd=spawn_result rc=-1 msg=spawn_is_not_supported\n");
    }
    if ((kv = keyval_parse (line))) {
        (void)keyval_get_int (kv, "totspawns", &c->spawn_total);
        (void)keyval_get_int (kv, "spawnssofar", &c->spawn_sofar);
        keyval_destroy (kv);
    }
    return 0;
}

static int dispatch (struct request *rq)
{
    const char *cmd;

    if (keyval_get_str (rq->kv, "cmd", &cmd) < 0) {
        if (keyval_get_str (rq->kv, "mcmd", &cmd) == 0)
            return spawn_begin (rq, cmd);
        errno = EPROTO;
        return -1;
    }
    if (*cmd == '\0') {
        errno = EPROTO;
        return -1;
    }
    for (size_t i = 0; i < sizeof (handlers) / sizeof (handlers[0]); i++) {
        if (!strcmp (cmd, handlers[i].cmd))
            return handlers[i].fn (rq, &handlers[i]);
    }
    return reply (rq->s, rq->client, rq->rank,
                  "cmd=error rc=-1 msg=unsupported_command:%.64s\n", cmd);
}

/* Is this "cmd=abort ..."?  Its message may contain blanks. */
static bool is_abort (const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    return !strncmp (line, "cmd=abort", 9)
           && strchr (" \t\n", line[9]); // also matches the NUL
}

int pmi_simple_server_request (struct pmi_simple_server *s, const char *line,
                               void *client, int rank)
{
    struct request rq = {.s = s, .client = client, .rank = rank};
    struct keyval *kv;
    struct client *c;
    int rc;

    if (!s || !line || !client || rank < 0) {
        errno = EINVAL;
        return -1;
    }
    trace (s, client, rank, 'C', line);
    if (strlen (line) > PMI_SIMPLE_LINE_MAX) {
        errno = EPROTO;
        return -1;
    }
    if ((c = client_find (s, client))) {
        if (c->state == CLIENT_SPAWN)
            return spawn_continue (s, c, line);
        errno = EPROTO; // lock-step: a get or barrier is still pending
        return -1;
    }
    kv = keyval_parse_tail (line, is_abort (line) ? abort_tail_keys : NULL);
    if (!kv)
        return -1;
    rq.kv = kv;
    rc = dispatch (&rq);
    keyval_destroy (kv);
    return rc;
}

int pmi_simple_server_kvs_get_complete (struct pmi_simple_server *s,
                                        void *client, const char *val)
{
    struct client *c;
    int rank;

    if (!s || !client) {
        errno = EINVAL;
        return -1;
    }
    if (!(c = client_find (s, client)) || c->state != CLIENT_GET) {
        errno = ENOENT;
        return -1;
    }
    if (val && !value_ok (val)) {
        errno = EINVAL;
        return -1;
    }
    rank = c->rank;
    client_remove (s, c);
    if (!val)
        return reply (s, client, rank,
                      "cmd=get_result rc=-1 msg=key_not_found\n");
    return reply (s, client, rank, "cmd=get_result rc=0 value=%s\n", val);
}

int pmi_simple_server_barrier_complete (struct pmi_simple_server *s, int rc)
{
    if (!s || !s->barrier_entered) {
        errno = EINVAL;
        return -1;
    }
    return barrier_release (s, rc, "barrier_failed");
}

void pmi_simple_server_disconnect (struct pmi_simple_server *s, void *client)
{
    struct client *c;

    if (!s || !(c = client_find (s, client)))
        return;
    if (c->state == CLIENT_BARRIER)
        s->barrier_count--;
    client_remove (s, c);
}

struct pmi_simple_server *pmi_simple_server_create (
    const struct pmi_simple_ops *ops, int appnum, int universe_size,
    int local_procs, const char *kvsname, int flags, void *arg)
{
    struct pmi_simple_server *s;

    if (!ops || !ops->kvs_put || !ops->kvs_get || !ops->barrier_enter
        || !ops->response_send || appnum < 0 || universe_size < 1
        || local_procs < 1 || !keyval_valid_word (kvsname)
        || strlen (kvsname) >= PMI_SIMPLE_KVSNAME_MAX
        || (flags & ~PMI_SIMPLE_SERVER_TRACE)
        || ((flags & PMI_SIMPLE_SERVER_TRACE) && !ops->debug_trace)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = calloc (1, sizeof (*s))))
        return NULL;
    s->ops = *ops;
    s->arg = arg;
    s->appnum = appnum;
    s->universe_size = universe_size;
    s->local_procs = local_procs;
    s->flags = flags;
    strcpy (s->kvsname, kvsname);
    return s;
}

void pmi_simple_server_destroy (struct pmi_simple_server *s)
{
    if (s) {
        int saved_errno = errno;
        while (s->clients) {
            struct client *c = s->clients;
            s->clients = c->next;
            free (c);
        }
        free (s);
        errno = saved_errno;
    }
}

int pmi_simple_server_send_line (int fd, const char *line)
{
    size_t len = strlen (line);

    while (len > 0) {
        ssize_t n = send (fd, line, len, MSG_NOSIGNAL);
        if (n < 0) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            if (errno == EAGAIN)
                (void)poll (&pfd, 1, 1000);
            else if (errno != EINTR)
                return -1;
            continue;
        }
        line += n;
        len -= n;
    }
    return 0;
}
