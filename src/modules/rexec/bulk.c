/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* bulk.c - rexec.bulk-exec: one command on many ranks, down the tree once,
 * outcomes reduced on the way up (see bulk.h).
 *
 * A session is one bulk-exec request on this broker: from the client (on
 * rank 0) or from the parent broker's rexec.  Its share is the request's
 * ranks; this broker runs the command if it is one of them and passes
 * each child the part of the share in the child's subtree.  "open" holds
 * the ranks of the share whose outcome has not been passed up yet; an
 * outcome (exit status, or error) is held in a group with the others of
 * the same value until the share has none open, or BULK_HOLD_MS passed,
 * or MAX_GROUPS distinct ones are held.  The session ends (ENODATA) when
 * its own process's stream and every child's stream are over.  Exit
 * status 0 is the outcome the end implies for every rank not reported:
 * a group of those is held until the end (or BULK_HOLD_MS) and left
 * out, so a subtree whose processes all succeeded costs its edge one
 * response, not two.  An outcome that could not be sent up (no memory)
 * turns the end into an error, so that it is never taken for a 0.
 *
 * Flow control: what goes up waits in the session's queue, in order,
 * while the requester's window is closed: output sent up and not yet
 * credited back (rexec.bulk-credit) is at least the window.  A child's
 * output is credited to it once it left here, in pieces of a quarter
 * window; the local process is paused while the queue holds a window or
 * more.  So a broker holds at most about (children + 1) x the window per
 * session, whatever the processes write and however slowly the client
 * reads: a process that writes faster blocks on its full pipe.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "libidset/idset.h"
#include "overlay/topology.h"

#include "bulk.h"

#define BULK_HOLD_MS 100
#define MAX_GROUPS 32

enum { GROUP_EXIT, GROUP_ERROR };

struct group {
    int type;
    int code; /* wait status, or errnum */
    char *text;
    struct idset *ranks;
};

struct child {
    struct session *sess;
    uint32_t rank;
    struct idset *share;
    flux_future_t *f;
    bool done;
    size_t owed; /* its output sent up from here, not yet credited to it */
};

/* A response waiting for the window: payload NULL is the end (ENODATA). */
struct pending {
    struct pending *next;
    char *payload;
    size_t size;        /* what counts against the window (output only) */
    struct child *from; /* the child whose output it is, or NULL */
};

struct session {
    struct bulk *b;
    const flux_msg_t *req;
    struct idset *share;
    struct idset *open; /* ranks whose outcome was not passed up yet */
    pid_t pid;          /* the local process while its stream is open */
    int status;         /* its wait status once finished */
    bool local_open;    /* this rank runs the command, stream not over */
    struct child *children;
    int nchildren;
    int children_open;
    struct group held[MAX_GROUPS];
    int nheld;
    uv_timer_t timer;
    bool timer_init;
    bool gone; /* the requester went: nothing more is sent to it */
    /* flow control (the requester's window) */
    size_t window;   /* bytes of output in flight up at most */
    size_t inflight; /* output sent up, not yet credited */
    bool unlimited;  /* the requester said: no more credit needed */
    struct pending *qhead, *qtail;
    size_t qbytes;     /* output waiting in the queue */
    bool local_paused; /* the local process is not read meanwhile */
    bool ending;       /* the end is queued: nothing more comes */
    bool outcome_lost; /* an outcome was not sent up: the end is an error */
    struct session *next, *prev;
};

struct bulk {
    flux_t *h;
    subprocess_server_t *srv;
    subprocess_server_auth_f check;
    uint32_t rank;
    struct topology *tree;
    flux_msg_handler_t **handlers;
    struct session *sessions;
    unsigned long nsessions, child_responses, reports, credits, pauses;
};

static void session_destroy (struct session *s);
static void hold (struct session *s, int type, int code, const char *text,
                  const struct idset *ranks);

static void group_clear (struct group *g)
{
    free (g->text);
    idset_destroy (g->ranks);
    memset (g, 0, sizeof (*g));
}

static void respond_error (struct bulk *b, const flux_msg_t *msg, int errnum,
                           const char *text)
{
    if (flux_respond_error (b->h, msg, errnum, text) < 0)
        flux_log_error (b->h, "rexec.bulk-exec: error responding");
}

/* ---- flow control ---- */

static bool window_open (struct session *s)
{
    return s->unlimited || s->inflight < s->window;
}

static void credit_send (struct bulk *b, struct child *c, long long bytes)
{
    flux_future_t *f;

    if (!(f = flux_rpc_pack (b->h, "rexec.bulk-credit", c->rank,
                             FLUX_RPC_NORESPONSE, "{s:i s:I}", "matchtag",
                             (int)flux_rpc_get_matchtag (c->f), "bytes",
                             (json_int_t)bytes)))
        flux_log_error (b->h, "rexec.bulk-credit to broker %u", c->rank);
    flux_future_destroy (f);
    b->credits++;
}

/* size bytes of c's output left here: credit it a quarter window at a
 * time (it stops once a window is in flight: it is then owed that). */
static void child_credit (struct session *s, struct child *c, size_t size)
{
    c->owed += size;
    if (c->done || !c->f || c->owed < s->window / 4)
        return;
    credit_send (s->b, c, (long long)c->owed);
    c->owed = 0;
}

static void local_pause (struct session *s, bool pause)
{
    if (s->local_paused == pause || s->pid <= 0)
        return;
    if (subprocess_server_pause (s->b->srv, s->pid, pause) == 0) {
        s->local_paused = pause;
        if (pause)
            s->b->pauses++;
    }
}

/* Send p's payload up now (the end: ENODATA); false if the session
 * ended. */
static bool send_now (struct session *s, const char *payload, size_t size,
                      struct child *from)
{
    struct bulk *b = s->b;

    if (!payload) {
        if (flux_respond_error (
                b->h, s->req, s->outcome_lost ? ENOMEM : ENODATA,
                s->outcome_lost ? "bulk-exec: outcomes lost (out of memory)"
                                : NULL)
            < 0)
            flux_log_error (b->h, "rexec.bulk-exec: error responding");
        session_destroy (s);
        return false;
    }
    if (flux_respond (b->h, s->req, payload) < 0)
        flux_log_error (b->h, "rexec.bulk-exec: error responding");
    s->inflight += size;
    if (from)
        child_credit (s, from, size);
    return true;
}

/* Send what the window lets go; false if the session ended. */
static bool drain (struct session *s)
{
    while (s->qhead && window_open (s)) {
        struct pending *p = s->qhead;
        bool alive;
        if (!(s->qhead = p->next))
            s->qtail = NULL;
        s->qbytes -= p->size;
        alive = send_now (s, p->payload, p->size, p->from);
        free (p->payload);
        free (p);
        if (!alive)
            return false;
    }
    if (s->local_paused && s->qbytes <= s->window / 2)
        local_pause (s, false);
    return true;
}

/* A response up (payload NULL: the end), in order behind what waits;
 * size: the output bytes it counts.  False if the session ended. */
static bool up (struct session *s, const char *payload, size_t size,
                struct child *from)
{
    struct pending *p;

    if (s->gone)
        return true;
    if (!s->qhead && window_open (s))
        return send_now (s, payload, size, from);
    if (!(p = calloc (1, sizeof (*p)))
        || (payload && !(p->payload = strdup (payload)))) {
        free (p);
        flux_log_error (s->b->h, "rexec.bulk-exec: queueing a response");
        if (from) /* dropped: not held against the child */
            child_credit (s, from, size);
        if (payload && size == 0) /* a report */
            s->outcome_lost = true;
        return true;
    }
    p->size = size;
    p->from = from;
    if (s->qtail)
        s->qtail->next = p;
    else
        s->qhead = p;
    s->qtail = p;
    s->qbytes += size;
    if (s->qbytes >= s->window)
        local_pause (s, true);
    return true;
}

static void queue_clear (struct session *s)
{
    while (s->qhead) {
        struct pending *p = s->qhead;
        s->qhead = p->next;
        free (p->payload);
        free (p);
    }
    s->qtail = NULL;
    s->qbytes = 0;
}

/* The children still sending need no credit from here on (-1). */
static void children_unlimited (struct session *s)
{
    for (int i = 0; i < s->nchildren; i++) {
        struct child *c = &s->children[i];
        if (!c->done && c->f)
            credit_send (s->b, c, -1);
    }
}

/* The requester went: nothing more goes up, so nothing is held back any
 * more, here or below.  A session whose end was queued is then over:
 * the caller destroys it. */
static void unfollow (struct session *s)
{
    s->gone = true;
    queue_clear (s);
    local_pause (s, false);
    children_unlimited (s);
}

static bool group_is_zero (const struct group *g)
{
    return g->type == GROUP_EXIT && g->code == 0;
}

/* Which held groups flush() sends: all of them; all but exit 0 (the share
 * has no rank open, the end comes next: exit 0 waits for it or the hold);
 * at the end, all but exit 0, which the end implies. */
enum { FLUSH_ALL, FLUSH_NONZERO, FLUSH_END };

static void hold_timer_cb (uv_timer_t *t);

/* Send the held groups up (nothing if the requester went). */
static void flush (struct session *s, int which)
{
    struct bulk *b = s->b;
    int kept = 0;

    if (s->timer_init && which != FLUSH_NONZERO)
        uv_timer_stop (&s->timer);
    for (int i = 0; i < s->nheld; i++) {
        struct group *g = &s->held[i];
        char *ranks;
        json_t *o = NULL;
        char *str = NULL;

        if (group_is_zero (g) && which == FLUSH_NONZERO) {
            if (kept != i) { /* moved down */
                s->held[kept] = *g;
                memset (g, 0, sizeof (*g));
            }
            kept++;
            continue;
        }
        if (group_is_zero (g) && which == FLUSH_END && !s->outcome_lost) {
            group_clear (g);
            continue;
        }
        ranks = idset_encode (g->ranks, IDSET_FLAG_RANGE);
        if (ranks && g->type == GROUP_EXIT)
            o = json_pack ("{s:s s:s s:i}", "type", "exit", "ranks", ranks,
                           "status", g->code);
        else if (ranks)
            o = json_pack ("{s:s s:s s:i s:s}", "type", "error", "ranks", ranks,
                           "errnum", g->code, "error", g->text ? g->text : "");
        if (!o || !(str = json_dumps (o, JSON_COMPACT))) {
            flux_log_error (b->h, "rexec.bulk-exec: error responding");
            if (!group_is_zero (g)) /* an exit 0 lost is what the end says */
                s->outcome_lost = true;
        }
        else
            (void)up (s, str, 0, NULL); /* the end follows: never ends here */
        free (str);
        json_decref (o);
        b->reports++;
        free (ranks);
        group_clear (g);
    }
    s->nheld = kept;
    if (kept > 0 && s->timer_init && !uv_is_active ((uv_handle_t *)&s->timer))
        uv_timer_start (&s->timer, hold_timer_cb, BULK_HOLD_MS, 0);
}

static void hold_timer_cb (uv_timer_t *t)
{
    flush (t->data, FLUSH_ALL);
}

/* The session's streams are all over: its end goes up, it is gone. */
static void check_done (struct session *s)
{
    if (s->local_open || s->children_open > 0 || s->ending)
        return;
    if (idset_count (s->open) > 0) /* a rank nobody reported (no memory) */
        hold (s, GROUP_ERROR, EPROTO, "no outcome reported", s->open);
    flush (s, FLUSH_END);
    s->ending = true;
    if (s->gone)
        session_destroy (s);
    else
        (void)up (s, NULL, 0, NULL); /* the session ends once it is sent */
}

/* Hold the outcome of ranks (those of them still open); flush when the
 * share has none open, or hold at most BULK_HOLD_MS. */
static void hold (struct session *s, int type, int code, const char *text,
                  const struct idset *ranks)
{
    struct idset *ids = idset_intersect (s->open, ranks);
    struct group *g = NULL;

    if (!ids || idset_count (ids) == 0) {
        idset_destroy (ids);
        return;
    }
    (void)idset_subtract (s->open, ids);
    for (int i = 0; i < s->nheld; i++) {
        struct group *h = &s->held[i];
        if (h->type == type && h->code == code
            && (type == GROUP_EXIT
                || (h->text && text && !strcmp (h->text, text)))) {
            g = h;
            break;
        }
    }
    if (g) {
        (void)idset_add (g->ranks, ids);
        idset_destroy (ids);
    }
    else {
        if (s->nheld == MAX_GROUPS)
            flush (s, FLUSH_ALL);
        g = &s->held[s->nheld++];
        g->type = type;
        g->code = code;
        g->ranks = ids;
        if (type == GROUP_ERROR && !(g->text = strdup (text ? text : "")))
            flux_log_error (s->b->h, "rexec.bulk-exec: holding an error");
    }
    if (idset_count (s->open) == 0)
        flush (s, FLUSH_NONZERO);
    else if (s->timer_init && !uv_is_active ((uv_handle_t *)&s->timer))
        uv_timer_start (&s->timer, hold_timer_cb, BULK_HOLD_MS, 0);
}

static void hold_rank (struct session *s, int type, int code, const char *text)
{
    struct idset *me = idset_create (0, IDSET_FLAG_AUTOGROW);

    if (me && idset_set (me, s->b->rank) == 0)
        hold (s, type, code, text, me);
    idset_destroy (me);
}

/* ---- the local process ---- */

static void local_cb (const json_t *resp, int errnum, void *arg)
{
    struct session *s = arg;
    const char *type = NULL;
    json_t *io;

    if (!resp) { /* ENODATA: its finished and EOFs came */
        s->pid = 0;
        s->local_paused = false;
        s->local_open = false;
        hold_rank (s, GROUP_EXIT, s->status, NULL);
        check_done (s);
        return;
    }
    (void)errnum;
    if (json_unpack ((json_t *)resp, "{s:s}", "type", &type) < 0)
        return;
    if (!strcmp (type, "finished"))
        (void)json_unpack ((json_t *)resp, "{s:i}", "status", &s->status);
    else if (!strcmp (type, "output") && !s->gone
             && (io = json_object_get (resp, "io"))
             && json_object_get (io, "data")) {
        json_t *o = json_pack ("{s:s s:O}", "type", "output", "io", io);
        char *str = o ? json_dumps (o, JSON_COMPACT) : NULL;
        if (!str)
            flux_log_error (s->b->h, "rexec.bulk-exec: error responding");
        else
            (void)up (s, str, strlen (str), NULL);
        free (str);
        json_decref (o);
    }
}

/* Run cmd (taken) here: its outcome is this rank's. */
static void local_start (struct session *s, flux_cmd_t *cmd, int flags)
{
    struct bulk *b = s->b;
    flux_error_t error;

    s->local_open = true; /* the sink may be called before spawn returns */
    if ((s->pid
         = subprocess_server_spawn (b->srv, cmd, flags, local_cb, s, &error))
        < 0) {
        s->pid = 0;
        s->local_open = false;
        hold_rank (s, GROUP_ERROR, errno, error.text);
    }
}

/* ---- the children ---- */

static void child_lost (struct child *c, int errnum, const char *text)
{
    char buf[256];

    if (!text || !*text) {
        snprintf (buf, sizeof (buf), "broker %u: %s", c->rank,
                  strerror (errnum));
        text = buf;
    }
    hold (c->sess, GROUP_ERROR, errnum, text, c->share);
}

static void child_end (struct child *c)
{
    struct session *s = c->sess;

    c->done = true;
    s->children_open--;
    check_done (s);
}

static int child_report (struct child *c, const char *str)
{
    struct session *s = c->sess;
    json_t *o = json_loads (str, 0, NULL);
    const char *type, *ranks, *text = NULL;
    int code = 0;
    struct idset *ids = NULL;
    int rc = -1;

    if (!o || json_unpack (o, "{s:s}", "type", &type) < 0)
        goto done;
    if (!strcmp (type, "output")) {
        if (s->gone)
            child_credit (s, c, strlen (str));
        else
            (void)up (s, str, strlen (str), c);
        rc = 0;
        goto done;
    }
    if (!strcmp (type, "exit")) {
        if (json_unpack (o, "{s:s s:i}", "ranks", &ranks, "status", &code) < 0)
            goto done;
    }
    else if (!strcmp (type, "error")) {
        if (json_unpack (o, "{s:s s:i s:s}", "ranks", &ranks, "errnum", &code,
                         "error", &text)
            < 0)
            goto done;
    }
    else
        goto done;
    if (!(ids = idset_decode (ranks)) || !idset_is_subset (ids, c->share))
        goto done;
    hold (s, !strcmp (type, "exit") ? GROUP_EXIT : GROUP_ERROR, code, text,
          ids);
    rc = 0;
done:
    idset_destroy (ids);
    json_decref (o);
    return rc;
}

static void child_cb (flux_future_t *f, void *arg)
{
    struct child *c = arg;
    const char *str = NULL;

    c->sess->b->child_responses++;
    if (flux_rpc_get (f, &str) < 0) {
        if (errno != ENODATA)
            child_lost (c, errno, future_strerror (f, errno));
        else /* its ranks not reported exited 0 */
            hold (c->sess, GROUP_EXIT, 0, NULL, c->share);
        child_end (c);
        return;
    }
    if (!str || child_report (c, str) < 0) {
        flux_log (c->sess->b->h, LOG_ERR,
                  "rexec.bulk-exec: malformed response from broker %u",
                  c->rank);
        child_lost (c, EPROTO, NULL);
        /* its stream is not followed further: it ends here */
        flux_future_destroy (c->f);
        c->f = NULL;
        child_end (c);
        return;
    }
    flux_future_reset (f);
}

/* Split the share among the children: each rank below this broker goes
 * to the child toward it (O(ranks x depth)). */
static int children_create (struct session *s, const json_t *cmd, int flags)
{
    struct bulk *b = s->b;
    int n = topology_child_count (b->tree, b->rank);
    const uint32_t *kids = topology_children (b->tree, b->rank);
    unsigned int id;

    if (n == 0)
        return 0;
    if (!(s->children = calloc (n, sizeof (*s->children))))
        return -1;
    s->nchildren = n;
    for (int i = 0; i < n; i++) {
        s->children[i].sess = s;
        s->children[i].rank = kids[i];
        s->children[i].done = true;
    }
    for (id = idset_first (s->share); id != IDSET_INVALID_ID;
         id = idset_next (s->share, id)) {
        int64_t k;
        int i;
        if (id == b->rank)
            continue;
        if ((k = topology_child_toward (b->tree, b->rank, id)) < 0
            || (i = topology_child_index (b->tree, b->rank, (uint32_t)k)) < 0)
            return -1;
        if (!s->children[i].share
            && !(s->children[i].share = idset_create (0, IDSET_FLAG_AUTOGROW)))
            return -1;
        if (idset_set (s->children[i].share, id) < 0)
            return -1;
    }
    for (int i = 0; i < n; i++) {
        struct child *c = &s->children[i];
        char *ranks;
        if (!c->share)
            continue;
        if (!(ranks = idset_encode (c->share, IDSET_FLAG_RANGE)))
            return -1;
        c->f = flux_rpc_pack (b->h, "rexec.bulk-exec", c->rank,
                              FLUX_RPC_STREAMING, "{s:O s:i s:s s:I}", "cmd",
                              cmd, "flags", flags, "ranks", ranks, "window",
                              (json_int_t)s->window);
        free (ranks);
        c->done = false;
        s->children_open++;
        if (!c->f || flux_future_then (c->f, -1., child_cb, c) < 0) {
            child_lost (c, errno, NULL);
            child_end (c);
        }
    }
    return 0;
}

/* ---- sessions ---- */

static void timer_closed (uv_handle_t *h);

static void session_destroy (struct session *s)
{
    struct bulk *b = s->b;

    if (s->prev)
        s->prev->next = s->next;
    else if (b->sessions == s)
        b->sessions = s->next;
    if (s->next)
        s->next->prev = s->prev;
    if (s->pid > 0)
        subprocess_server_forget (b->srv, s->pid);
    for (int i = 0; i < s->nchildren; i++) {
        flux_future_destroy (s->children[i].f);
        idset_destroy (s->children[i].share);
    }
    free (s->children);
    for (int i = 0; i < s->nheld; i++)
        group_clear (&s->held[i]);
    queue_clear (s);
    idset_destroy (s->share);
    idset_destroy (s->open);
    flux_msg_decref (s->req);
    if (s->timer_init) /* freed once libuv has closed it */
        uv_close ((uv_handle_t *)&s->timer, timer_closed);
    else
        free (s);
}

static void timer_closed (uv_handle_t *h)
{
    free (h->data);
}

/* signum to the session's processes, down the tree. */
static void session_kill (struct session *s, int signum)
{
    struct bulk *b = s->b;

    if (s->pid > 0)
        (void)subprocess_server_kill (b->srv, s->pid, signum);
    for (int i = 0; i < s->nchildren; i++) {
        struct child *c = &s->children[i];
        flux_future_t *f;
        if (c->done || !c->f)
            continue;
        if (!(f = flux_rpc_pack (b->h, "rexec.bulk-kill", c->rank,
                                 FLUX_RPC_NORESPONSE, "{s:i s:i}", "matchtag",
                                 (int)flux_rpc_get_matchtag (c->f), "signum",
                                 signum)))
            flux_log_error (b->h, "rexec.bulk-kill to broker %u", c->rank);
        flux_future_destroy (f);
    }
}

static void exec_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct bulk *b = arg;
    struct session *s = NULL;
    flux_error_t error;
    json_t *cmd;
    flux_cmd_t *fcmd = NULL;
    const char *ranks;
    int flags;
    json_int_t window = BULK_WINDOW;

    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:o s:i s:s s?I}", "cmd", &cmd,
                             "flags", &flags, "ranks", &ranks, "window",
                             &window)
        < 0) {
        respond_error (b, msg, EPROTO, "malformed bulk-exec request");
        return;
    }
    if (window < BULK_WINDOW_MIN || window > BULK_WINDOW_MAX) {
        respond_error (b, msg, EINVAL, "bulk-exec: window out of range");
        return;
    }
    if (flags < 0
        || (flags & ~(SUBPROCESS_REXEC_STDOUT | SUBPROCESS_REXEC_STDERR))) {
        respond_error (b, msg, EINVAL, "bulk-exec takes flags stdout, stderr");
        return;
    }
    error.text[0] = '\0';
    if (b->check && b->check (msg, NULL, &error) < 0) {
        respond_error (b, msg, errno, error.text[0] ? error.text : NULL);
        return;
    }
    if (!(s = calloc (1, sizeof (*s))) || !(s->share = idset_decode (ranks))
        || idset_count (s->share) == 0) {
        respond_error (b, msg, s ? EINVAL : ENOMEM,
                       s ? "bulk-exec: ranks is not a non-empty idset" : NULL);
        goto error;
    }
    for (unsigned int id = idset_first (s->share); id != IDSET_INVALID_ID;
         id = idset_next (s->share, id)) {
        if (id >= topology_size (b->tree)
            || !topology_in_subtree (b->tree, b->rank, id)) {
            respond_error (b, msg, EINVAL,
                           "bulk-exec: ranks outside this broker's subtree");
            goto error;
        }
    }
    /* checked here (its children get the object as it came) */
    if (!(fcmd = flux_cmd_fromjson (cmd, &error))) {
        respond_error (b, msg, errno, error.text);
        goto error;
    }
    if (!flux_msg_is_streaming (msg)) {
        respond_error (b, msg, EPROTO, "bulk-exec must be streaming");
        goto error;
    }
    if (!(s->open = idset_copy (s->share))) {
        respond_error (b, msg, ENOMEM, NULL);
        goto error;
    }
    s->b = b;
    s->req = flux_msg_incref (msg);
    s->window = (size_t)window;
    if (uv_timer_init (flux_reactor_uv (flux_get_reactor (h)), &s->timer)
        == 0) {
        s->timer_init = true;
        s->timer.data = s;
    }
    s->next = b->sessions;
    if (b->sessions)
        b->sessions->prev = s;
    b->sessions = s;
    b->nsessions++;
    /* children first: their part is on its way while this one spawns */
    s->children_open = 1; /* held until everything is started */
    if (children_create (s, cmd, flags) < 0) {
        int errnum = errno ? errno : ENOMEM;
        /* what did not go is lost to the requester: say so per rank */
        for (int i = 0; i < s->nchildren; i++) {
            struct child *c = &s->children[i];
            if (c->share && !c->f && c->done)
                child_lost (c, errnum, "bulk-exec: cannot forward");
        }
    }
    if (idset_test (s->share, b->rank)) {
        local_start (s, fcmd, flags);
        fcmd = NULL;
    }
    flux_cmd_destroy (fcmd);
    s->children_open--;
    check_done (s);
    return;
error:
    flux_cmd_destroy (fcmd);
    if (s) {
        idset_destroy (s->share);
        free (s);
    }
}

static struct session *find_session (struct bulk *b, const flux_msg_t *msg,
                                     uint32_t matchtag)
{
    for (struct session *s = b->sessions; s; s = s->next) {
        uint32_t tag;
        if (flux_msg_get_matchtag (s->req, &tag) == 0 && tag == matchtag
            && flux_msg_route_match_first (s->req, msg))
            return s;
    }
    return NULL;
}

/* The answer to bulk-kill or bulk-credit, if one was asked for (the
 * brokers send them NORESPONSE). */
static void answer (struct bulk *b, const flux_msg_t *msg, int errnum)
{
    if (flux_msg_is_noresponse (msg))
        return;
    if (errnum)
        respond_error (b, msg, errnum, NULL);
    else if (flux_respond (b->h, msg, NULL) < 0) {
        const char *topic = "rexec.bulk";
        (void)flux_msg_get_topic (msg, &topic);
        flux_log_error (b->h, "%s: error responding", topic);
    }
}

static void kill_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct bulk *b = arg;
    struct session *s;
    int matchtag, signum;
    int errnum = 0;

    (void)h;
    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:i s:i}", "matchtag", &matchtag,
                             "signum", &signum)
        < 0)
        errnum = EPROTO;
    else if (signum <= 0 || signum >= NSIG)
        errnum = EINVAL;
    else if (!(s = find_session (b, msg, (uint32_t)matchtag)))
        errnum = ESRCH;
    else
        session_kill (s, signum);
    answer (b, msg, errnum);
}

static void credit_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct bulk *b = arg;
    struct session *s;
    int matchtag;
    json_int_t bytes;
    int errnum = 0;

    (void)h;
    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:i s:I}", "matchtag", &matchtag,
                             "bytes", &bytes)
        < 0)
        errnum = EPROTO;
    else if (bytes < -1)
        errnum = EINVAL;
    else if (!(s = find_session (b, msg, (uint32_t)matchtag)))
        errnum = ESRCH;
    else {
        if (bytes < 0) {
            s->unlimited = true;
            children_unlimited (s); /* and so for its children */
        }
        else
            s->inflight
                -= (size_t)bytes < s->inflight ? (size_t)bytes : s->inflight;
        (void)drain (s); /* may end the session */
    }
    answer (b, msg, errnum);
}

void bulk_disconnect (const flux_msg_t *msg, void *arg)
{
    struct bulk *b = arg;

    for (struct session *s = b->sessions, *next; s; s = next) {
        next = s->next;
        if (!s->gone && flux_msg_route_match_first (s->req, msg)) {
            unfollow (s);
            session_kill (s, SIGKILL);
            if (s->ending) /* only its end was still to go */
                session_destroy (s);
        }
    }
}

json_t *bulk_stats (struct bulk *b)
{
    int n = 0;

    for (struct session *s = b->sessions; s; s = s->next)
        n++;
    return json_pack ("{s:i s:I s:I s:I s:I s:I}", "running", n, "sessions",
                      (json_int_t)b->nsessions, "child-responses",
                      (json_int_t)b->child_responses, "reports",
                      (json_int_t)b->reports, "credits", (json_int_t)b->credits,
                      "pauses", (json_int_t)b->pauses);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "rexec.bulk-exec", exec_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "rexec.bulk-kill", kill_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "rexec.bulk-credit", credit_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

struct bulk *bulk_create (flux_t *h, subprocess_server_t *srv,
                          subprocess_server_auth_f check, flux_error_t *error)
{
    struct bulk *b;

    if (!(b = calloc (1, sizeof (*b)))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    b->h = h;
    b->srv = srv;
    b->check = check;
    if (flux_get_rank (h, &b->rank) < 0) {
        errprintf (error, "reading rank: %s", strerror (errno));
        goto error;
    }
    if (!(b->tree = topology_create_broker (h, error)))
        goto error;
    if (flux_msg_handler_addvec (h, htab, b, &b->handlers) < 0) {
        errprintf (error, "registering handlers: %s", strerror (errno));
        goto error;
    }
    return b;
error:
    bulk_destroy (b);
    return NULL;
}

void bulk_destroy (struct bulk *b)
{
    if (b) {
        int saved_errno = errno;
        flux_msg_handler_delvec (b->handlers);
        while (b->sessions) {
            struct session *s = b->sessions;
            if (!s->gone)
                respond_error (b, s->req, ENOSYS, "rexec is shutting down");
            unfollow (s);
            session_kill (s, SIGKILL);
            session_destroy (s);
        }
        topology_destroy (b->tree);
        free (b);
        errno = saved_errno;
    }
}
