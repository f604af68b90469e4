/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* server.c - the RFC 42 subprocess server: requests in, children out.
 *
 * Each child is a struct proc (proc.c: spawning with libuv, its pipes,
 * buffering), kept on the server's list from its spawn until its stream
 * is over: a foreground process until ENODATA was sent, a background one
 * until it exited (a waitable one until it was waited on or attached
 * to).  A process has at most one client at a time: the exec request of
 * a foreground process, or the attach request of a background one.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

static void respond_error (subprocess_server_t *s, const flux_msg_t *msg,
                           int errnum, const char *text)
{
    if (flux_respond_error (s->h, msg, errnum, text) < 0)
        flux_log_error (s->h, "%s: error responding", s->service);
}

/* The server's auth callback refuses msg (answered unless it is a
 * write). */
static bool refused (subprocess_server_t *s, const flux_msg_t *msg)
{
    flux_error_t error;

    if (s->allow_user) {
        struct flux_msg_cred cred;
        if (flux_msg_get_cred (msg, &cred) < 0
            || (!(cred.rolemask & FLUX_ROLE_OWNER)
                && cred.userid != s->allow_uid)) {
            if (!flux_msg_is_noresponse (msg))
                respond_error (s, msg, EPERM,
                               "this subprocess server belongs to another "
                               "user");
            return true;
        }
    }
    if (!s->auth_cb)
        return false;
    error.text[0] = '\0';
    errno = 0;
    if (s->auth_cb (msg, s->auth_arg, &error) == 0)
        return false;
    if (!flux_msg_is_noresponse (msg))
        respond_error (s, msg, errno ? errno : EPERM,
                       error.text[0] ? error.text : NULL);
    return true;
}

int subprocess_server_allow_user (subprocess_server_t *s, uint32_t uid)
{
    if (!s || !s->handlers) {
        errno = EINVAL;
        return -1;
    }
    s->allow_user = true;
    s->allow_uid = uid;
    for (int i = 0; s->handlers[i]; i++)
        flux_msg_handler_allow_rolemask (s->handlers[i], FLUX_ROLE_USER);
    return 0;
}

void subprocess_server_set_auth_cb (subprocess_server_t *s,
                                    subprocess_server_auth_f cb, void *arg)
{
    if (s) {
        s->auth_cb = cb;
        s->auth_arg = arg;
    }
}

/* RFC 42 "Request Authentication": without flux-security, refuse.
 * Also the place of the auth callback, which every method but
 * disconnect passes first. */
static bool signed_request (subprocess_server_t *s, const flux_msg_t *msg)
{
    json_t *sig = NULL;

    if (refused (s, msg))
        return true;
    if (flux_msg_unpack (msg, "{s?o}", "signature", &sig) == 0 && sig) {
        respond_error (s, msg, EPERM,
                       "signed requests are not supported by this server");
        return true;
    }
    return false;
}

struct proc *server_find (subprocess_server_t *s, pid_t pid, const char *label)
{
    for (struct proc *p = s->procs; p; p = p->next) {
        if (label) {
            const char *l = flux_cmd_get_label (p->cmd);
            if (l && !strcmp (l, label))
                return p;
        }
        else if (p->pid == pid)
            return p;
    }
    return NULL;
}

/* A process just spawned joins the server's list (newest first). */
static void server_link (subprocess_server_t *s, struct proc *p)
{
    p->next = s->procs;
    if (s->procs)
        s->procs->prev = p;
    s->procs = p;
    s->started++;
}

/* Checks of an exec request that need no spawn.  0 or -1 with text. */
static int exec_check (subprocess_server_t *s, bool background, int flags,
                       int local_flags, const flux_cmd_t *cmd,
                       flux_error_t *error)
{
    const char *label = flux_cmd_get_label (cmd);

    if (background && (flags & SUBPROCESS_REXEC_WRITE_CREDIT))
        return errprintf (error, "write-credit requires a streaming request");
    if (background && (local_flags & SUBPROCESS_LOCAL_STDIO_FALLTHROUGH))
        return errprintf (error,
                          "stdio-fallthrough requires a streaming request");
    if (background && flux_cmd_channel_count (cmd) > 0)
        return errprintf (error, "channels require a streaming request");
    if (background && (flags & SUBPROCESS_REXEC_OUTPUT_CREDIT))
        return errprintf (error, "output-credit requires a streaming request");
    if (!background && (flags & SUBPROCESS_REXEC_WAITABLE))
        return errprintf (error, "waitable requires a background request");
    if (label && server_find (s, 0, label))
        return errprintf (error, "command label is not unique");
    return 0;
}

static void exec_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    subprocess_server_t *s = arg;
    json_t *o;
    int flags, local_flags = 0;
    flux_cmd_t *cmd = NULL;
    flux_error_t error;
    bool background = !flux_msg_is_streaming (msg);
    struct proc *p;

    if (signed_request (s, msg))
        return;
    if (flux_request_unpack (msg, NULL, "{s:o s:i s?i}", "cmd", &o, "flags",
                             &flags, "local_flags", &local_flags)
        < 0) {
        respond_error (s, msg, EPROTO, "malformed exec request");
        return;
    }
    if (s->shutting_down) {
        respond_error (s, msg, ENOSYS, "subprocess server is shutting down");
        return;
    }
    if (flags < 0 || flags > 63 || local_flags < 0 || local_flags > 7) {
        respond_error (s, msg, EINVAL, "unknown flags in exec request");
        return;
    }
    if (!(cmd = flux_cmd_fromjson (o, &error))) {
        respond_error (s, msg, errno, error.text);
        return;
    }
    if (exec_check (s, background, flags, local_flags, cmd, &error) < 0) {
        respond_error (s, msg, EINVAL, error.text);
        flux_cmd_destroy (cmd);
        return;
    }
    /* proc_spawn owns cmd from here on, and answers msg itself */
    if (!(p = proc_spawn (s, msg, cmd, flags, local_flags, background)))
        return;
    server_link (s, p);
}

/* The foreground process whose exec request had this sender and tag. */
static struct proc *find_by_request (subprocess_server_t *s,
                                     const flux_msg_t *msg, uint32_t matchtag)
{
    for (struct proc *p = s->procs; p; p = p->next) {
        uint32_t tag;
        if (!p->background && p->exec_msg
            && flux_msg_get_matchtag (p->exec_msg, &tag) == 0 && tag == matchtag
            && flux_msg_route_match_first (p->exec_msg, msg))
            return p;
    }
    return NULL;
}

/* write: NORESPONSE, so every failure is silent (logged when it is the
 * client's mistake that loses data). */
static void write_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    subprocess_server_t *s = arg;
    json_t *io;
    int matchtag;
    const char *stream;
    char *data = NULL;
    size_t len = 0;
    bool eof = false;
    struct proc *p;

    if (refused (s, msg))
        return;
    if (flux_request_unpack (msg, NULL, "{s:i s:o}", "matchtag", &matchtag,
                             "io", &io)
            < 0
        || subprocess_io_decode (io, &stream, NULL, &data, &len, &eof) < 0)
        return;
    if ((p = find_by_request (s, msg, (uint32_t)matchtag)) && !p->exited)
        proc_write (p, stream, data, len, eof);
    free (data);
}

/* output-credit: NORESPONSE, silent like write. */
static void credit_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    subprocess_server_t *s = arg;
    int matchtag;
    json_int_t bytes;
    struct proc *p;

    if (refused (s, msg))
        return;
    if (flux_request_unpack (msg, NULL, "{s:i s:I}", "matchtag", &matchtag,
                             "bytes", &bytes)
            < 0
        || bytes < 0)
        return;
    if ((p = find_by_request (s, msg, (uint32_t)matchtag)) && p->client)
        proc_output_credit (p, (size_t)bytes);
}

static void kill_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    subprocess_server_t *s = arg;
    int pid, signum;
    const char *label = NULL;
    struct proc *p;
    char text[256];

    if (signed_request (s, msg))
        return;
    if (flux_request_unpack (msg, NULL, "{s:i s:i s?s}", "pid", &pid, "signum",
                             &signum, "label", &label)
        < 0) {
        respond_error (s, msg, EPROTO, "malformed kill request");
        return;
    }
    if (signum <= 0 || signum >= NSIG) {
        respond_error (s, msg, EINVAL, "invalid signal number");
        return;
    }
    if (!(p = server_find (s, pid, label)) || p->exited) {
        if (label)
            snprintf (text, sizeof (text),
                      "label %s does not belong to any subprocess", label);
        else
            snprintf (text, sizeof (text),
                      "pid %d does not belong to any subprocess", pid);
        respond_error (s, msg, ESRCH, text);
        return;
    }
    if (proc_signal (p, signum) < 0) {
        respond_error (s, msg, errno, NULL);
        return;
    }
    if (flux_respond (h, msg, NULL) < 0)
        flux_log_error (h, "%s.kill: error responding", s->service);
}

static void list_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    subprocess_server_t *s = arg;
    json_t *procs;

    if (refused (s, msg))
        return;
    if (!(procs = json_array ()))
        goto nomem;
    for (struct proc *p = s->procs; p; p = p->next) {
        const char *label = flux_cmd_get_label (p->cmd);
        /* bg, waitable, attached: as flux-core's newer servers add them
         * (a foreground process always has its client attached) */
        json_t *o = json_pack (
            "{s:i s:s s:s s:s s:b s:b s:b}", "pid", (int)p->pid, "cmd",
            flux_cmd_arg (p->cmd, 0), "label", label ? label : "", "state",
            p->exited ? "Z" : "R", "bg", p->background, "waitable", p->waitable,
            "attached", p->client != NULL || p->wait_msg != NULL);
        if (!o || json_array_append_new (procs, o) < 0) {
            json_decref (o);
            goto nomem;
        }
    }
    if (flux_respond_pack (h, msg, "{s:i s:o}", "rank", (int)s->rank, "procs",
                           procs)
        < 0)
        flux_log_error (h, "%s.list: error responding", s->service);
    return;
nomem:
    json_decref (procs);
    respond_error (s, msg, ENOMEM, NULL);
}

static void wait_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    subprocess_server_t *s = arg;
    int pid;
    const char *label = NULL;
    struct proc *p;

    if (signed_request (s, msg))
        return;
    if (flux_request_unpack (msg, NULL, "{s:i s?s}", "pid", &pid, "label",
                             &label)
        < 0) {
        respond_error (s, msg, EPROTO, "malformed wait request");
        return;
    }
    if (!(p = server_find (s, pid, label))) {
        respond_error (s, msg, ESRCH, "no such subprocess");
        return;
    }
    if (!p->waitable || p->waited) {
        respond_error (s, msg, EINVAL,
                       p->waited ? "subprocess was already waited on"
                                 : "subprocess is not waitable");
        return;
    }
    if (p->client) {
        respond_error (s, msg, EBUSY, "a client is attached");
        return;
    }
    p->waited = true;
    p->wait_msg = flux_msg_incref (msg);
    proc_check_done (p);
}

static void attach_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    subprocess_server_t *s = arg;
    int pid, flags;
    const char *label = NULL;
    struct proc *p;

    if (signed_request (s, msg))
        return;
    if (!flux_msg_is_streaming (msg)) {
        respond_error (s, msg, EPROTO, "attach requires a streaming request");
        return;
    }
    if (flux_request_unpack (msg, NULL, "{s:i s?s s:i}", "pid", &pid, "label",
                             &label, "flags", &flags)
        < 0) {
        respond_error (s, msg, EPROTO, "malformed attach request");
        return;
    }
    if (!(p = server_find (s, pid, label))) {
        respond_error (s, msg, ENOENT, "no such subprocess");
        return;
    }
    if (!p->background || p->client || p->waited) {
        respond_error (s, msg, EBUSY, "subprocess is busy");
        return;
    }
    proc_attach (p, msg, flags);
}

/* A client went away: its foreground processes die, its attach ends,
 * its wait is dropped. */
static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    subprocess_server_t *s = arg;

    for (struct proc *p = s->procs; p; p = p->next) {
        if (p->client && flux_msg_route_match_first (p->client, msg)) {
            if (!p->background && !p->exited)
                (void)proc_signal (p, SIGKILL);
            proc_client_gone (p);
        }
        if (p->wait_msg && flux_msg_route_match_first (p->wait_msg, msg)) {
            flux_msg_decref (p->wait_msg);
            p->wait_msg = NULL;
            p->waited = false;
        }
    }
    /* a foreground process with no client left ends here once it exits */
    for (struct proc *p = s->procs, *next; p; p = next) {
        next = p->next;
        proc_check_done (p);
    }
    if (s->disconnect_cb)
        s->disconnect_cb (msg, s->disconnect_arg);
}

void subprocess_server_set_disconnect_cb (subprocess_server_t *s,
                                          subprocess_server_disconnect_f cb,
                                          void *arg)
{
    if (s) {
        s->disconnect_cb = cb;
        s->disconnect_arg = arg;
    }
}

pid_t subprocess_server_spawn (subprocess_server_t *s, flux_cmd_t *cmd,
                               int flags, subprocess_server_sink_f sink,
                               void *arg, flux_error_t *error)
{
    struct proc *p;

    if (!s || !cmd || !sink || (flags & ~31)
        || (flags & SUBPROCESS_REXEC_WAITABLE)) {
        flux_cmd_destroy (cmd);
        errno = EINVAL;
        return errprintf (error, "invalid argument");
    }
    if (s->shutting_down) {
        flux_cmd_destroy (cmd);
        errno = ENOSYS;
        return errprintf (error, "subprocess server is shutting down");
    }
    if (flux_cmd_argc (cmd) == 0) {
        flux_cmd_destroy (cmd);
        errno = EINVAL;
        return errprintf (error, "command string is empty");
    }
    /* the sink hears "started" before this returns */
    if (!(p = proc_spawn_sink (s, cmd, flags, sink, arg, error)))
        return -1;
    server_link (s, p);
    return p->pid;
}

/* The server's sink process pid, NULL with ESRCH. */
static struct proc *find_sink (subprocess_server_t *s, pid_t pid)
{
    struct proc *p = s && pid > 0 ? server_find (s, pid, NULL) : NULL;

    if (!p || !p->sink) {
        errno = ESRCH;
        return NULL;
    }
    return p;
}

int subprocess_server_write (subprocess_server_t *s, pid_t pid,
                             const char *stream, const char *data, size_t len,
                             bool eof)
{
    struct proc *p;

    if (!(p = find_sink (s, pid)))
        return -1;
    proc_write (p, stream, data, len, eof);
    return 0;
}

int subprocess_server_kill (subprocess_server_t *s, pid_t pid, int signum)
{
    struct proc *p;

    if (!(p = find_sink (s, pid)) || p->exited) {
        errno = ESRCH;
        return -1;
    }
    return proc_signal (p, signum);
}

int subprocess_server_pause (subprocess_server_t *s, pid_t pid, bool pause)
{
    struct proc *p;

    if (!(p = find_sink (s, pid)))
        return -1;
    proc_pause (p, pause);
    return 0;
}

void subprocess_server_forget (subprocess_server_t *s, pid_t pid)
{
    struct proc *p;

    if (!(p = find_sink (s, pid)))
        return;
    proc_pause (p, false); /* its output is read to its end, and dropped */
    p->sink_open = false;
    p->sink = NULL;
    if (!p->exited)
        (void)proc_signal (p, SIGKILL);
    proc_check_done (p);
}

void server_unlink (subprocess_server_t *s, struct proc *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        s->procs = p->next;
    if (p->next)
        p->next->prev = p->prev;
    p->next = p->prev = NULL;
}

subprocess_server_t *subprocess_server_create (flux_t *h, const char *service,
                                               const char *local_uri,
                                               uint32_t rank,
                                               flux_error_t *error)
{
    subprocess_server_t *s;
    char topic[8][128];
    struct flux_msg_handler_spec tab[9];
    const char *methods[8] = {"exec", "write",  "kill",       "list",
                              "wait", "attach", "disconnect", "output-credit"};
    flux_msg_handler_f cbs[8] = {exec_cb, write_cb,  kill_cb,       list_cb,
                                 wait_cb, attach_cb, disconnect_cb, credit_cb};

    if (!h || !service || strlen (service) > 100) {
        errprintf (error, "invalid argument");
        errno = EINVAL;
        return NULL;
    }
    if (!(s = calloc (1, sizeof (*s))))
        goto nomem;
    s->devnull = -1;
    list_init (&s->resume_list);
    if (!(s->service = strdup (service))
        || (local_uri && !(s->local_uri = strdup (local_uri))))
        goto nomem;
    s->h = h;
    s->rank = rank;
    snprintf (s->rankstr, sizeof (s->rankstr), "%u", rank);
    for (int i = 0; i < 8; i++) {
        snprintf (topic[i], sizeof (topic[i]), "%s.%s", service, methods[i]);
        tab[i] = (struct flux_msg_handler_spec){FLUX_MSGTYPE_REQUEST, topic[i],
                                                cbs[i], 0};
    }
    tab[8] = (struct flux_msg_handler_spec)FLUX_MSGHANDLER_TABLE_END;
    if (flux_msg_handler_addvec (h, tab, s, &s->handlers) < 0) {
        errprintf (error, "registering handlers: %s", strerror (errno));
        subprocess_server_destroy (s);
        return NULL;
    }
    return s;
nomem:
    subprocess_server_destroy (s);
    errprintf (error, "out of memory");
    errno = ENOMEM;
    return NULL;
}

int subprocess_server_terminate (subprocess_server_t *s, int signum)
{
    int n = 0;

    if (!s)
        return 0;
    s->shutting_down = true;
    for (struct proc *p = s->procs; p; p = p->next) {
        if (!p->exited && proc_signal (p, signum) == 0)
            n++;
    }
    return n;
}

int subprocess_server_running (subprocess_server_t *s)
{
    int n = 0;

    for (struct proc *p = s ? s->procs : NULL; p; p = p->next) {
        if (!p->exited)
            n++;
    }
    return n;
}

bool subprocess_server_owns (subprocess_server_t *s, pid_t pid)
{
    /* an exited one was reaped: its pid may be another process's now */
    for (struct proc *p = s ? s->procs : NULL; p && pid > 0; p = p->next) {
        if (p->pid == pid && !p->exited)
            return true;
    }
    return false;
}

json_t *subprocess_server_stats (subprocess_server_t *s)
{
    int running = 0, zombies = 0;

    for (struct proc *p = s->procs; p; p = p->next) {
        if (p->exited)
            zombies++;
        else
            running++;
    }
    return json_pack ("{s:i s:i s:i s:i s:i}", "running", running, "zombies",
                      zombies, "started", s->started, "failed", s->failed,
                      "exited", s->exited);
}

void subprocess_server_destroy (subprocess_server_t *s)
{
    if (s) {
        int saved_errno = errno;
        flux_msg_handler_delvec (s->handlers);
        while (s->procs) {
            struct proc *p = s->procs;
            if (!p->exited)
                (void)proc_signal (p, SIGKILL);
            proc_release (p); /* unlinks */
        }
        proc_resume_fini (s);
        if (s->devnull >= 0)
            (void)close (s->devnull);
        free (s->rbuf);
        free (s->service);
        free (s->local_uri);
        free (s);
        errno = saved_errno;
    }
}
