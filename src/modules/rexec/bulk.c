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
 * its own process's stream and every child's stream are over.
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
    unsigned long nsessions, child_responses, reports;
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

/* Send the held groups up (nothing if the requester went). */
static void flush (struct session *s)
{
    struct bulk *b = s->b;

    if (s->timer_init)
        uv_timer_stop (&s->timer);
    for (int i = 0; i < s->nheld; i++) {
        struct group *g = &s->held[i];
        char *ranks = idset_encode (g->ranks, IDSET_FLAG_RANGE);
        int rc;

        if (!ranks)
            rc = -1;
        else if (s->gone)
            rc = 0;
        else if (g->type == GROUP_EXIT)
            rc = flux_respond_pack (b->h, s->req, "{s:s s:s s:i}", "type",
                                    "exit", "ranks", ranks, "status", g->code);
        else
            rc = flux_respond_pack (b->h, s->req, "{s:s s:s s:i s:s}", "type",
                                    "error", "ranks", ranks, "errnum", g->code,
                                    "error", g->text ? g->text : "");
        if (rc < 0)
            flux_log_error (b->h, "rexec.bulk-exec: error responding");
        b->reports++;
        free (ranks);
        group_clear (g);
    }
    s->nheld = 0;
}

static void hold_timer_cb (uv_timer_t *t)
{
    flush (t->data);
}

/* The session's streams are all over: its end goes up, it is gone. */
static void check_done (struct session *s)
{
    if (s->local_open || s->children_open > 0)
        return;
    if (idset_count (s->open) > 0) /* a rank nobody reported (no memory) */
        hold (s, GROUP_ERROR, EPROTO, "no outcome reported", s->open);
    flush (s);
    if (!s->gone && flux_respond_error (s->b->h, s->req, ENODATA, NULL) < 0)
        flux_log_error (s->b->h, "rexec.bulk-exec: error responding");
    session_destroy (s);
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
            flush (s);
        g = &s->held[s->nheld++];
        g->type = type;
        g->code = code;
        g->ranks = ids;
        if (type == GROUP_ERROR && !(g->text = strdup (text ? text : "")))
            flux_log_error (s->b->h, "rexec.bulk-exec: holding an error");
    }
    if (idset_count (s->open) == 0)
        flush (s);
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
             && json_object_get (io, "data")
             && flux_respond_pack (s->b->h, s->req, "{s:s s:O}", "type",
                                   "output", "io", io)
                    < 0)
        flux_log_error (s->b->h, "rexec.bulk-exec: error responding");
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
        return;
    }
    (void)subprocess_server_write (b->srv, s->pid, "stdin", NULL, 0, true);
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
        if (!s->gone && flux_respond (s->b->h, s->req, str) < 0)
            flux_log_error (s->b->h, "rexec.bulk-exec: error responding");
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
                              FLUX_RPC_STREAMING, "{s:O s:i s:s}", "cmd", cmd,
                              "flags", flags, "ranks", ranks);
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

    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:o s:i s:s}", "cmd", &cmd, "flags",
                             &flags, "ranks", &ranks)
        < 0) {
        respond_error (b, msg, EPROTO, "malformed bulk-exec request");
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
    if (flux_msg_is_noresponse (msg))
        return;
    if (errnum)
        respond_error (b, msg, errnum, NULL);
    else if (flux_respond (b->h, msg, NULL) < 0)
        flux_log_error (b->h, "rexec.bulk-kill: error responding");
}

void bulk_disconnect (const flux_msg_t *msg, void *arg)
{
    struct bulk *b = arg;

    for (struct session *s = b->sessions; s; s = s->next) {
        if (!s->gone && flux_msg_route_match_first (s->req, msg)) {
            s->gone = true;
            session_kill (s, SIGKILL);
        }
    }
}

json_t *bulk_stats (struct bulk *b)
{
    int n = 0;

    for (struct session *s = b->sessions; s; s = s->next)
        n++;
    return json_pack ("{s:i s:I s:I s:I}", "running", n, "sessions",
                      (json_int_t)b->nsessions, "child-responses",
                      (json_int_t)b->child_responses, "reports",
                      (json_int_t)b->reports);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "rexec.bulk-exec", exec_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "rexec.bulk-kill", kill_cb, 0},
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
            s->gone = true;
            session_kill (s, SIGKILL);
            session_destroy (s);
        }
        topology_destroy (b->tree);
        free (b);
        errno = saved_errno;
    }
}
