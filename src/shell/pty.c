/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* pty.c - the `pty` shell options and the interactive session
 * terminus.0 (pty.h).  task.c runs a task on its pty; this file decides
 * which tasks get one and relays the session between the task's pty and
 * the attached clients.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/base64.h"
#include "libidset/idset.h"

#include "pty.h"
#include "shell.h"
#include "task.h"

#define MAX_CLIENTS 8
#define BACKLOG_SIZE 65536 /* output kept for the first client */
#define MAX_WRITE (1024 * 1024)
#define SESSION "terminus.0"
#define ATTACH_WAIT_MS                                    \
    10000 /* uncaptured: after the end, wait for a client \
           */

struct client {
    const flux_msg_t *msg; /* the attach request */
    struct client *next;
};

struct shell_pty {
    struct shell *shell;
    bool enabled, all, capture, interactive;
    struct idset *ranks;
    struct task *session; /* task 0, on this (the leader) shell */
    char topics[5][160];
    flux_msg_handler_t **handlers;
    struct client *clients;
    int nclients;
    bool attached; /* a client attached once: no more backlog */
    char *backlog; /* output before the first attach */
    size_t blen;
    bool ended; /* session task done: exit sent */
    bool held;  /* the shell waits for a first client */
    uv_timer_t *wait_timer;
};

/* An interactive session holds the shell (one count in nactive) until
 * its first client attaches, so that a client attaching while the task
 * runs gets the backlog.  When the task ends with no client, a captured
 * session (pty.capture, the default) lets the shell go at once: its
 * output is in the output eventlog, which a client attaching later reads
 * instead (job_attach.c).  An uncaptured one waits ATTACH_WAIT_MS more
 * for a client, the only way its output can still be seen (flux-core's
 * shell waits without a bound). */
static void hold_release (struct shell_pty *p)
{
    struct shell *shell = p->shell;

    if (!p->held)
        return;
    p->held = false;
    if (p->wait_timer) {
        uv_timer_stop (p->wait_timer);
        flux_uv_close_free ((uv_handle_t *)p->wait_timer);
        p->wait_timer = NULL;
    }
    if (--shell->nactive == 0 && shell->r)
        flux_reactor_stop (shell->r);
}

static void wait_timer_cb (uv_timer_t *t)
{
    hold_release (t->data);
}

static int parse_flag (json_t *o, const char *key, bool def, bool *val,
                       flux_error_t *error)
{
    json_t *v = json_object_get (o, key);

    *val = def;
    if (!v)
        return 0;
    if (json_is_boolean (v))
        *val = json_is_true (v);
    else if (json_is_integer (v))
        *val = json_integer_value (v) != 0;
    else {
        errno = EINVAL;
        return errprintf (error, "pty.%s must be 0 or 1", key);
    }
    return 0;
}

static int parse_options (struct shell_pty *p, flux_error_t *error)
{
    json_t *o = json_object_get (p->shell->info->options, "pty");
    json_t *r;
    const char *ranks = NULL;

    if (!o || json_is_false (o)
        || (json_is_integer (o) && json_integer_value (o) == 0))
        return 0;
    p->enabled = true;
    if (!json_is_object (o)) { /* -o pty: every task, captured */
        p->all = p->capture = true;
        return 0;
    }
    if (parse_flag (o, "interactive", false, &p->interactive, error) < 0
        || parse_flag (o, "capture", true, &p->capture, error) < 0)
        return -1;
    if ((r = json_object_get (o, "ranks"))) {
        if (json_is_integer (r) && json_integer_value (r) >= 0
            && json_integer_value (r) < INT32_MAX) {
            if (!(p->ranks = idset_create (0, IDSET_FLAG_AUTOGROW))
                || idset_set (p->ranks, (unsigned)json_integer_value (r)) < 0)
                return errprintf (error, "out of memory");
            return 0;
        }
        if (!(ranks = json_string_value (r))) {
            errno = EINVAL;
            return errprintf (error, "pty.ranks must be all or an idset");
        }
    }
    else
        ranks = p->interactive ? "0" : "all";
    if (!strcmp (ranks, "all"))
        p->all = true;
    else if (!(p->ranks = idset_decode (ranks))) {
        errno = EINVAL;
        return errprintf (error, "pty.ranks=%s: not all or an idset", ranks);
    }
    return 0;
}

static bool has_pty (struct shell_pty *p, int rank)
{
    return p->enabled
           && (p->all || (p->ranks && idset_test (p->ranks, (unsigned)rank)));
}

static void client_remove (struct shell_pty *p, struct client **cp)
{
    struct client *c = *cp;

    *cp = c->next;
    flux_msg_decref (c->msg);
    free (c);
    p->nclients--;
}

static int send_data (struct shell_pty *p, const flux_msg_t *msg,
                      const char *data, size_t len)
{
    size_t size = base64_encoded_size (len) + 1;
    char *b64 = malloc (size);
    int rc = -1;

    if (b64 && base64_encode (b64, size, data, len) >= 0)
        rc = flux_respond_pack (p->shell->h, msg, "{s:s s:s}", "type", "data",
                                "data", b64);
    free (b64);
    return rc;
}

static void send_exit (struct shell_pty *p, const flux_msg_t *msg)
{
    flux_t *h = p->shell->h;

    if (flux_respond_pack (h, msg, "{s:s s:i}", "type", "exit", "status",
                           p->session->wait_status)
            < 0
        || flux_respond_error (h, msg, ENODATA, NULL) < 0)
        fprintf (stderr, "flux-shell: pty: responding: %s\n", strerror (errno));
}

void shell_pty_output (struct shell_pty *p, struct task *t, const char *data,
                       size_t len)
{
    if (!p || t != p->session)
        return;
    if (!p->attached) { /* keep the last BACKLOG_SIZE bytes */
        if (len >= BACKLOG_SIZE) {
            data += len - BACKLOG_SIZE;
            len = BACKLOG_SIZE;
        }
        if (p->blen + len > BACKLOG_SIZE) {
            size_t drop = p->blen + len - BACKLOG_SIZE;
            memmove (p->backlog, p->backlog + drop, p->blen - drop);
            p->blen -= drop;
        }
        memcpy (p->backlog + p->blen, data, len);
        p->blen += len;
        return;
    }
    for (struct client **cp = &p->clients; *cp;) {
        if (send_data (p, (*cp)->msg, data, len) < 0)
            client_remove (p, cp); /* its connection is gone */
        else
            cp = &(*cp)->next;
    }
}

void shell_pty_task_done (struct shell_pty *p, struct task *t)
{
    if (!p || t != p->session || p->ended)
        return;
    p->ended = true;
    if (p->held && !p->attached && p->capture)
        hold_release (p);
    else if (p->held && !p->wait_timer) {
        if ((p->wait_timer = calloc (1, sizeof (*p->wait_timer)))
            && uv_timer_init (p->shell->loop, p->wait_timer) == 0) {
            p->wait_timer->data = p;
            uv_timer_start (p->wait_timer, wait_timer_cb, ATTACH_WAIT_MS, 0);
        }
        else {
            free (p->wait_timer);
            p->wait_timer = NULL;
            hold_release (p);
        }
    }
    while (p->clients) {
        send_exit (p, p->clients->msg);
        client_remove (p, &p->clients);
    }
}

static bool authorized (struct shell_pty *p, const flux_msg_t *msg)
{
    if (flux_msg_authorize (msg, p->shell->info->userid) == 0)
        return true;
    (void)flux_respond_error (p->shell->h, msg, EPERM,
                              "only the job owner may use its pty");
    return false;
}

static bool size_ok (int rows, int cols)
{
    return rows >= 0 && rows <= 65535 && cols >= 0 && cols <= 65535;
}

static void attach_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct shell_pty *p = arg;
    int rows = -1, cols = -1;
    struct client *c;

    (void)mh;
    if (!authorized (p, msg))
        return;
    if (flux_request_unpack (msg, NULL, "{s?i s?i}", "rows", &rows, "cols",
                             &cols)
            < 0
        || !flux_msg_is_streaming (msg) || (rows < 0) != (cols < 0)
        || (rows >= 0 && !size_ok (rows, cols))) {
        (void)flux_respond_error (h, msg, EPROTO, "malformed pty attach");
        return;
    }
    if (p->ended) {
        (void)flux_respond_pack (h, msg, "{s:s}", "type", "attach");
        if (p->blen > 0 && !p->attached)
            (void)send_data (p, msg, p->backlog, p->blen);
        p->attached = true;
        send_exit (p, msg);
        hold_release (p);
        return;
    }
    if (p->nclients >= MAX_CLIENTS) {
        (void)flux_respond_error (h, msg, EBUSY, "too many pty clients");
        return;
    }
    if (!(c = calloc (1, sizeof (*c)))) {
        (void)flux_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    /* the client shows task 0's output from here (the backlog first) */
    if (flux_respond_pack (h, msg, "{s:s}", "type", "attach") < 0) {
        free (c);
        return; /* its connection is gone */
    }
    c->msg = flux_msg_incref (msg);
    c->next = p->clients;
    p->clients = c;
    p->nclients++;
    if (rows >= 0)
        (void)task_pty_resize (p->session, rows, cols);
    if (!p->attached) {
        p->attached = true;
        if (p->blen > 0 && send_data (p, msg, p->backlog, p->blen) < 0)
            client_remove (p, &p->clients);
        free (p->backlog);
        p->backlog = NULL;
        p->blen = 0;
    }
    hold_release (p);
}

static void write_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct shell_pty *p = arg;
    const char *data;
    size_t len;
    char *buf = NULL;
    ssize_t n;

    (void)mh;
    if (!authorized (p, msg))
        return;
    if (flux_request_unpack (msg, NULL, "{s:s%}", "data", &data, &len) < 0
        || len > MAX_WRITE || !base64_valid (data, len)) {
        (void)flux_respond_error (h, msg, EPROTO, "malformed pty write");
        return;
    }
    if (!(buf = malloc (base64_decoded_size (len) + 1))
        || (n = base64_decode (buf, base64_decoded_size (len) + 1, data, len))
               < 0) {
        (void)flux_respond_error (h, msg, errno ? errno : EPROTO,
                                  "decoding pty write");
        goto out;
    }
    if (p->ended) {
        (void)flux_respond_error (h, msg, EPIPE, "the pty task has exited");
        goto out;
    }
    if (n > 0 && task_write_stdin (p->session, buf, (size_t)n, false) < 0) {
        (void)flux_respond_error (h, msg, errno, "writing to the pty");
        goto out;
    }
    (void)flux_respond (h, msg, NULL);
out:
    free (buf);
}

static void resize_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct shell_pty *p = arg;
    int rows, cols;

    (void)mh;
    if (!authorized (p, msg))
        return;
    if (flux_request_unpack (msg, NULL, "{s:i s:i}", "rows", &rows, "cols",
                             &cols)
            < 0
        || !size_ok (rows, cols)) {
        (void)flux_respond_error (h, msg, EPROTO, "malformed pty resize");
        return;
    }
    if (!p->ended && task_pty_resize (p->session, rows, cols) < 0) {
        (void)flux_respond_error (h, msg, errno, "resizing the pty");
        return;
    }
    (void)flux_respond (h, msg, NULL);
}

/* The sender's attaches end: on detach with ENODATA, on disconnect
 * silently (nobody is left to hear). */
static void drop_clients (struct shell_pty *p, const flux_msg_t *msg,
                          bool respond)
{
    for (struct client **cp = &p->clients; *cp;) {
        if (flux_msg_route_match_first ((*cp)->msg, msg)) {
            if (respond)
                (void)flux_respond_error (p->shell->h, (*cp)->msg, ENODATA,
                                          NULL);
            client_remove (p, cp);
        }
        else
            cp = &(*cp)->next;
    }
}

static void detach_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct shell_pty *p = arg;

    (void)mh;
    if (!authorized (p, msg))
        return;
    drop_clients (p, msg, true);
    (void)flux_respond (h, msg, NULL);
}

static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    (void)h;
    (void)mh;
    drop_clients (arg, msg, false);
}

static int start_session (struct shell_pty *p, flux_error_t *error)
{
    static const char *methods[]
        = {"attach", "write", "resize", "detach", "disconnect"};
    static const flux_msg_handler_f cbs[]
        = {attach_cb, write_cb, resize_cb, detach_cb, disconnect_cb};
    struct flux_msg_handler_spec tab[6];
    struct shell *shell = p->shell;

    for (int i = 0; i < shell->ntasks; i++) {
        if (shell->tasks[i]->rank == 0)
            p->session = shell->tasks[i];
    }
    if (!p->session)
        return 0; /* task 0 runs elsewhere */
    if (!shell->leader) {
        errno = EINVAL;
        return errprintf (error, "pty.interactive: task 0 must run on the "
                                 "first node of the job");
    }
    if (!(p->backlog = malloc (BACKLOG_SIZE)))
        return errprintf (error, "out of memory");
    for (int i = 0; i < 5; i++) {
        snprintf (p->topics[i], sizeof (p->topics[i]), "%s.%s.%s",
                  shell->service, SESSION, methods[i]);
        tab[i] = (struct flux_msg_handler_spec){
            FLUX_MSGTYPE_REQUEST, p->topics[i], cbs[i],
            i == 4 ? FLUX_ROLE_ALL : FLUX_ROLE_USER};
    }
    tab[5] = (struct flux_msg_handler_spec)FLUX_MSGHANDLER_TABLE_END;
    if (flux_msg_handler_addvec (shell->h, tab, p, &p->handlers) < 0)
        return errprintf (error, "pty: registering %s: %s", SESSION,
                          strerror (errno));
    p->held = true;
    shell->nactive++;
    return 0;
}

struct shell_pty *shell_pty_create (struct shell *shell, flux_error_t *error)
{
    struct shell_pty *p = calloc (1, sizeof (*p));

    if (!p) {
        errprintf (error, "out of memory");
        return NULL;
    }
    p->shell = shell;
    if (parse_options (p, error) < 0
        || (p->interactive && start_session (p, error) < 0)) {
        shell_pty_destroy (p);
        return NULL;
    }
    return p;
}

void shell_pty_destroy (struct shell_pty *p)
{
    if (p) {
        int saved_errno = errno;
        flux_msg_handler_delvec (p->handlers);
        if (p->wait_timer)
            flux_uv_close_free ((uv_handle_t *)p->wait_timer);
        while (p->clients) { /* the shell exits before the session ended */
            (void)flux_respond_error (p->shell->h, p->clients->msg, ENODATA,
                                      NULL);
            client_remove (p, &p->clients);
        }
        idset_destroy (p->ranks);
        free (p->backlog);
        free (p);
        errno = saved_errno;
    }
}

const char *shell_pty_session (struct shell_pty *p)
{
    return p && p->session ? SESSION : NULL;
}

bool shell_pty_capture (struct shell_pty *p)
{
    return p && p->enabled && p->capture;
}

int shell_pty_task_setup (struct shell_pty *p, struct task *t, struct env *env,
                          flux_error_t *error)
{
    int m, s = -1;
    const char *name;

    if (!has_pty (p, t->rank))
        return 0;
    if ((m = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0
        || grantpt (m) < 0 || unlockpt (m) < 0 || !(name = ptsname (m))
        || (s = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
        int e = errno;
        if (m >= 0)
            close (m);
        errno = e;
        return errprintf (error, "task %d: cannot open a pty: %s", t->rank,
                          strerror (e));
    }
    t->pty_master = m;
    t->pty_slave = s;
    t->on_pty = true;
    t->pty_capture = p->capture;
    if (env_setf (env, "FLUX_TERMINUS_SESSION", "%d",
                  t == p->session ? 0 : t->rank)
        < 0)
        return errprintf (error, "out of memory");
    return 0;
}
