/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/server.c - the subprocess server and the remote client over
 * loop://: both on one handle, requests looping back to the server's
 * handlers and responses to the client's futures, with real children.
 */
#include <errno.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libsubprocess/subprocess.h"
#include "tap.h"

extern char **environ;

static flux_t *h;
static flux_reactor_t *r;
static subprocess_server_t *srv;

/* What one remote process did. */
struct rec {
    char out[8192];
    size_t outlen;
    char err[1024];
    size_t errlen;
    int nout; /* stdout callbacks with data */
    int eofs;
    int started, finished, complete, error;
    int status, errnum;
    char errtext[256];
    int credit;
    char chan[256];
    flux_subprocess_t *p;
    bool write_on_credit;  /* send "hi\n" + EOF on the first credit */
    bool write_on_started; /* send 64 KiB + EOF when started */
};

static void on_started (flux_subprocess_t *p, void *arg)
{
    struct rec *rc = arg;
    rc->started++;
    if (rc->write_on_started) {
        static char big[65536];
        memset (big, 'x', sizeof (big));
        flux_subprocess_write (p, "stdin", big, sizeof (big), false);
        flux_subprocess_write (p, "stdin", big, sizeof (big), true);
    }
}

static void on_output (flux_subprocess_t *p, const char *stream,
                       const char *data, size_t len, bool eof, void *arg)
{
    struct rec *rc = arg;

    if (eof) {
        rc->eofs++;
        return;
    }
    if (!strcmp (stream, "stdout") && rc->outlen + len < sizeof (rc->out)) {
        memcpy (rc->out + rc->outlen, data, len);
        rc->outlen += len;
        rc->nout++;
    }
    else if (!strcmp (stream, "stderr")
             && rc->errlen + len < sizeof (rc->err)) {
        memcpy (rc->err + rc->errlen, data, len);
        rc->errlen += len;
    }
    else
        snprintf (rc->chan, sizeof (rc->chan), "%s:%.*s", stream, (int)len,
                  data);
}

static void on_credit (flux_subprocess_t *p, const char *stream, int bytes,
                       void *arg)
{
    struct rec *rc = arg;

    if (rc->write_on_credit && rc->credit == 0)
        flux_subprocess_write (p, "stdin", "hi\n", 3, true);
    rc->credit += bytes;
}

static void on_finished (flux_subprocess_t *p, int status, void *arg)
{
    struct rec *rc = arg;
    rc->finished++;
    rc->status = status;
}

static void on_complete (flux_subprocess_t *p, void *arg)
{
    struct rec *rc = arg;
    rc->complete++;
}

static void on_error (flux_subprocess_t *p, int errnum, const char *text,
                      void *arg)
{
    struct rec *rc = arg;
    rc->error++;
    rc->errnum = errnum;
    snprintf (rc->errtext, sizeof (rc->errtext), "%s", text ? text : "");
}

static const struct flux_subprocess_ops ops = {
    .on_started = on_started,
    .on_output = on_output,
    .on_finished = on_finished,
    .on_complete = on_complete,
    .on_error = on_error,
};
static const struct flux_subprocess_ops credit_ops = {
    .on_started = on_started,
    .on_output = on_output,
    .on_credit = on_credit,
    .on_finished = on_finished,
    .on_complete = on_complete,
    .on_error = on_error,
};

static bool rec_done (void *arg)
{
    struct rec *rc = arg;
    return rc->complete || rc->error;
}

static bool rec_started (void *arg)
{
    struct rec *rc = arg;
    return rc->started || rc->error;
}

static flux_cmd_t *sh (const char *script)
{
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    return flux_cmd_create (3, argv, environ);
}

/* Run cmd to its end, recorded in rc. */
static void run (flux_cmd_t *cmd, const struct flux_subprocess_ops *o,
                 struct rec *rc)
{
    rc->p = flux_rexec (h, "rexec", 0, cmd, o, rc);
    if (!rc->p)
        BAIL_OUT ("flux_rexec: %s", strerror (errno));
    if (!flux_reactor_run_until (r, rec_done, rc, 30.))
        diag ("timed out");
    flux_subprocess_destroy (rc->p);
    flux_cmd_destroy (cmd);
}

static void test_basic (void)
{
    struct rec rc = {0};
    char *argv[] = {"echo", "hello", NULL};

    run (flux_cmd_create (2, argv, environ), &ops, &rc);
    ok (rc.started == 1 && rc.finished == 1 && rc.complete == 1
            && rc.error == 0,
        "echo: started, finished, complete");
    ok (rc.outlen == 6 && !memcmp (rc.out, "hello\n", 6), "echo: output");
    cmp_ok (rc.eofs, "==", 2, "echo: EOF on stdout and stderr");
    ok (WIFEXITED (rc.status) && WEXITSTATUS (rc.status) == 0, "echo: exit 0");

    memset (&rc, 0, sizeof (rc));
    run (sh ("echo oops >&2; exit 3"), &ops, &rc);
    ok (rc.complete && WIFEXITED (rc.status) && WEXITSTATUS (rc.status) == 3,
        "exit 3 is a raw wait status");
    ok (rc.errlen == 5 && !memcmp (rc.err, "oops\n", 5), "stderr relayed");

    memset (&rc, 0, sizeof (rc));
    run (sh ("kill -9 $$"), &ops, &rc);
    ok (rc.complete && WIFSIGNALED (rc.status) && WTERMSIG (rc.status) == 9,
        "killed by signal 9");

    memset (&rc, 0, sizeof (rc));
    char *nx[] = {"/nonexistent/command", NULL};
    run (flux_cmd_create (1, nx, environ), &ops, &rc);
    ok (rc.error == 1 && rc.errnum == ENOENT && rc.started == 0
            && rc.finished == 0,
        "a missing command: one error, ENOENT, nothing else");
    ok (strstr (rc.errtext, "/nonexistent/command") != NULL,
        "its text names the command: %s", rc.errtext);

    /* a command without a slash is searched in the child's PATH (as
     * execvp in the child would), not the server's */
    char dir[] = "/tmp/subproc-path.XXXXXX", file[64];
    FILE *fp;
    if (!mkdtemp (dir))
        BAIL_OUT ("mkdtemp");
    snprintf (file, sizeof (file), "%s/only-here", dir);
    if (!(fp = fopen (file, "w")))
        BAIL_OUT ("fopen");
    fprintf (fp, "#!/bin/sh\necho found-in-child-path\n");
    fclose (fp);
    chmod (file, 0755);
    char *oh[] = {"only-here", NULL};
    char pathenv[128];
    flux_cmd_t *cmd = flux_cmd_create (1, oh, environ);
    snprintf (pathenv, sizeof (pathenv), "/nonexistent:%s:/bin:/usr/bin", dir);
    flux_cmd_setenv (cmd, "PATH", pathenv, true);
    memset (&rc, 0, sizeof (rc));
    run (cmd, &ops, &rc);
    ok (rc.complete && rc.outlen == 20
            && !memcmp (rc.out, "found-in-child-path\n", 20),
        "a command found in the child's PATH runs");
    memset (&rc, 0, sizeof (rc));
    run (flux_cmd_create (1, oh, environ), &ops, &rc);
    ok (rc.error == 1 && rc.errnum == ENOENT && rc.started == 0,
        "the same, not in the child's PATH: ENOENT");
    chmod (file, 0644);
    cmd = flux_cmd_create (1, oh, environ);
    flux_cmd_setenv (cmd, "PATH", pathenv, true);
    memset (&rc, 0, sizeof (rc));
    run (cmd, &ops, &rc);
    ok (rc.error == 1 && rc.errnum == EACCES && rc.started == 0,
        "found but not executable: EACCES");
    unlink (file);
    rmdir (dir);
}

static void test_lines (void)
{
    struct rec rc = {0};
    flux_cmd_t *cmd;

    run (sh ("printf 'a\\nb\\nc'"), &ops, &rc);
    ok (rc.nout == 3 && rc.outlen == 5 && !memcmp (rc.out, "a\nb\nc", 5),
        "line buffered: one output per line, the rest at EOF");

    memset (&rc, 0, sizeof (rc));
    cmd = sh ("echo abcdefghij");
    flux_cmd_setopt (cmd, "stdout_BUFSIZE", "4");
    run (cmd, &ops, &rc);
    ok (rc.outlen == 11 && !memcmp (rc.out, "abcdefghij\n", 11) && rc.nout == 3,
        "a line longer than stdout_BUFSIZE goes in pieces (%d)", rc.nout);

    memset (&rc, 0, sizeof (rc));
    run (sh ("printf abc; sleep 0.1; printf 'def\\nghi'; sleep 0.1; "
             "printf 'jk\\nlm'; sleep 0.1; printf 'n\\n'"),
         &ops, &rc);
    ok (rc.nout == 3 && rc.outlen == 17
            && !memcmp (rc.out, "abcdef\nghijk\nlmn\n", 17),
        "lines cut across reads are whole (%d outputs)", rc.nout);

    memset (&rc, 0, sizeof (rc));
    cmd = sh ("printf abc; sleep 0.1; printf 'defghij\\n'");
    flux_cmd_setopt (cmd, "stdout_BUFSIZE", "4");
    run (cmd, &ops, &rc);
    ok (rc.outlen == 11 && !memcmp (rc.out, "abcdefghij\n", 11),
        "a line longer than stdout_BUFSIZE, cut across reads (%d outputs)",
        rc.nout);

    memset (&rc, 0, sizeof (rc));
    run (sh ("printf 'x\\377\\376y\\n'"), &ops, &rc);
    ok (rc.outlen == 5 && !memcmp (rc.out, "x\377\376y\n", 5),
        "bytes that are not UTF-8 arrive unchanged (base64 on the wire)");

    memset (&rc, 0, sizeof (rc));
    cmd = sh ("echo x");
    flux_cmd_setopt (cmd, "stdout_BUFSIZE", "0");
    run (cmd, &ops, &rc);
    ok (rc.error && rc.errnum == EINVAL, "stdout_BUFSIZE=0: EINVAL");
}

static void test_env_cwd_channel (void)
{
    struct rec rc = {0};
    flux_cmd_t *cmd;

    cmd = sh ("pwd; echo $FOO; echo ${FLUX_URI:-none}; "
              "echo ${FLUX_PROXY_REMOTE:-unset}");
    flux_cmd_setcwd (cmd, "/");
    flux_cmd_setenv (cmd, "FOO", "bar", true);
    flux_cmd_setenv (cmd, "PATH", getenv ("PATH"), true);
    flux_cmd_setenv (cmd, "FLUX_PROXY_REMOTE", "x", true);
    run (cmd, &ops, &rc);
    rc.out[rc.outlen] = '\0';
    is (rc.out, "/\nbar\nloop://\nunset\n",
        "cwd, env, FLUX_URI set to the server's, FLUX_PROXY_REMOTE removed");

    memset (&rc, 0, sizeof (rc));
    cmd = sh ("pwd");
    flux_cmd_setcwd (cmd, "/nonexistent");
    run (cmd, &ops, &rc);
    ok (rc.error && rc.errnum == ENOENT, "a missing cwd: ENOENT");

    memset (&rc, 0, sizeof (rc));
    cmd = sh ("echo on-channel >&$CH");
    flux_cmd_add_channel (cmd, "CH");
    run (cmd, &ops, &rc);
    is (rc.chan, "CH:on-channel\n", "a channel: NAME=fd, its output relayed");
}

static void test_stdin (void)
{
    struct rec rc = {.write_on_credit = true};
    char *argv[] = {"cat", NULL};

    run (flux_cmd_create (1, argv, environ), &credit_ops, &rc);
    ok (rc.complete && rc.outlen == 3 && !memcmp (rc.out, "hi\n", 3),
        "cat: stdin written on credit, EOF, echoed back");
    cmp_ok (rc.credit, "==", SUBPROCESS_DEFAULT_BUFSIZE + 3,
            "credits: the whole buffer, then the bytes written");
}

static void test_stdin_closed (void)
{
    struct rec rc = {.write_on_started = true};

    run (sh ("exec 0<&-; sleep 0.5; echo alive"), &ops, &rc);
    ok (rc.complete && WIFEXITED (rc.status) && WEXITSTATUS (rc.status) == 0
            && rc.outlen == 6,
        "writing to a child that closed its stdin: dropped, the child and "
        "the server go on");
}

static void test_kill_early (void)
{
    struct rec rc = {0};
    char *argv[] = {"sleep", "100", NULL};
    flux_cmd_t *cmd = flux_cmd_create (1 + 1, argv, environ);

    rc.p = flux_rexec (h, "rexec", 0, cmd, &ops, &rc);
    ok (rc.p && flux_subprocess_kill (rc.p, SIGTERM) == 0,
        "a kill before started is held");
    flux_reactor_run_until (r, rec_done, &rc, 30.);
    ok (rc.complete && WIFSIGNALED (rc.status)
            && WTERMSIG (rc.status) == SIGTERM,
        "and sent once the pid is known");
    errno = 0;
    ok (flux_subprocess_kill (rc.p, SIGTERM) < 0 && errno == ESRCH,
        "kill after the end: ESRCH");
    flux_subprocess_destroy (rc.p);
    flux_cmd_destroy (cmd);
}

/* A raw request on the loop (the reactor must run for the server to see
 * it); the first response's errnum and text, or its payload. */
static bool future_ready (void *arg)
{
    return flux_future_is_ready (arg);
}

static void nop_continuation (flux_future_t *f, void *arg)
{
}

static int raw (const char *topic, const char *payload, int flags, char *text,
                size_t size, json_t **result)
{
    flux_future_t *f = flux_rpc (h, topic, payload, 0, flags);
    const char *s;
    int rc = 0;

    if (!f || flux_future_then (f, -1., nop_continuation, NULL) < 0)
        BAIL_OUT ("flux_rpc: %s", strerror (errno));
    if (!flux_reactor_run_until (r, future_ready, f, 30.))
        BAIL_OUT ("%s: no answer", topic);
    if (flux_rpc_get (f, &s) < 0) {
        rc = errno;
        if (text)
            snprintf (text, size, "%s",
                      flux_future_error_string (f)
                          ? flux_future_error_string (f)
                          : "");
    }
    else if (result)
        *result = s ? json_loads (s, 0, NULL) : NULL;
    flux_future_destroy (f);
    return rc;
}

static void test_bad_requests (void)
{
    char text[256];
    const char *cmd = "{\"cmdline\":[\"true\"],\"env\":{},\"opts\":{},"
                      "\"channels\":[]}";
    char buf[512];

    ok (raw ("rexec.exec", NULL, FLUX_RPC_STREAMING, text, sizeof (text), NULL)
            == EPROTO,
        "exec without payload: EPROTO");
    ok (raw ("rexec.exec", "[1]", FLUX_RPC_STREAMING, text, sizeof (text), NULL)
            == EPROTO,
        "exec with an array: EPROTO");
    ok (raw ("rexec.exec", "{\"cmd\":{},\"flags\":3}", FLUX_RPC_STREAMING, text,
             sizeof (text), NULL)
                == EPROTO
            && !strcmp (text, "error parsing command string"),
        "exec with an empty cmd: EPROTO, error parsing command string");
    ok (raw ("rexec.exec",
             "{\"cmd\":{\"cmdline\":[],\"env\":{},\"opts\":{},"
             "\"channels\":[]},\"flags\":3}",
             FLUX_RPC_STREAMING, text, sizeof (text), NULL)
                == EPROTO
            && !strcmp (text, "command string is empty"),
        "exec with an empty cmdline: command string is empty");
    snprintf (buf, sizeof (buf), "{\"cmd\":%s,\"flags\":8}", cmd);
    ok (raw ("rexec.exec", buf, 0, text, sizeof (text), NULL) == EINVAL,
        "background with write-credit: EINVAL");
    snprintf (buf, sizeof (buf), "{\"cmd\":%s,\"flags\":16}", cmd);
    ok (raw ("rexec.exec", buf, FLUX_RPC_STREAMING, text, sizeof (text), NULL)
            == EINVAL,
        "waitable in the foreground: EINVAL");
    snprintf (buf, sizeof (buf), "{\"cmd\":%s,\"flags\":3,\"signature\":\"x\"}",
              cmd);
    ok (raw ("rexec.exec", buf, FLUX_RPC_STREAMING, text, sizeof (text), NULL)
            == EPERM,
        "a signed request: EPERM (no flux-security)");
    ok (raw ("rexec.kill", "{\"pid\":999999,\"signum\":15}", 0, text,
             sizeof (text), NULL)
                == ESRCH
            && !strcmp (text, "pid 999999 does not belong to any subprocess"),
        "kill of an unknown pid: ESRCH, %s", text);
    ok (raw ("rexec.kill", "{\"pid\":1,\"signum\":0}", 0, text, sizeof (text),
             NULL)
            == EINVAL,
        "kill with signum 0: EINVAL");
    ok (raw ("rexec.kill", "{\"pid\":\"1\"}", 0, text, sizeof (text), NULL)
            == EPROTO,
        "kill malformed: EPROTO");
    ok (raw ("rexec.wait", "{}", 0, text, sizeof (text), NULL) == EPROTO,
        "wait malformed: EPROTO");
    ok (raw ("rexec.attach", "{\"pid\":1,\"flags\":3}", 0, text, sizeof (text),
             NULL)
            == EPROTO,
        "attach not streaming: EPROTO");
    ok (raw ("rexec.attach", "{\"pid\":1,\"flags\":3}", FLUX_RPC_STREAMING,
             text, sizeof (text), NULL)
            == ENOENT,
        "attach to an unknown pid: ENOENT");
    /* write with garbage: no response by protocol; the server lives */
    flux_future_destroy (flux_rpc (h, "rexec.write", "{\"matchtag\":\"x\"}", 0,
                                   FLUX_RPC_NORESPONSE));
}

static int refuse_all (const flux_msg_t *msg, void *arg, flux_error_t *error)
{
    errno = EPERM;
    return errprintf (error, "refused by the auth callback");
}

static void test_auth (void)
{
    char text[256];
    char buf[512];

    subprocess_server_set_auth_cb (srv, refuse_all, NULL);
    snprintf (buf, sizeof (buf),
              "{\"cmd\":{\"cmdline\":[\"true\"],\"env\":{},\"opts\":{},"
              "\"channels\":[]},\"flags\":3}");
    ok (raw ("rexec.exec", buf, FLUX_RPC_STREAMING, text, sizeof (text), NULL)
                == EPERM
            && !strcmp (text, "refused by the auth callback"),
        "the auth callback refuses exec with its errno and text");
    ok (raw ("rexec.list", NULL, 0, text, sizeof (text), NULL) == EPERM,
        "and list");
    ok (raw ("rexec.kill", "{\"pid\":1,\"signum\":1}", 0, text, sizeof (text),
             NULL)
            == EPERM,
        "and kill");
    subprocess_server_set_auth_cb (srv, NULL, NULL);
    ok (raw ("rexec.list", NULL, 0, text, sizeof (text), NULL) == 0,
        "without it, list is answered again");
}

static void test_background (void)
{
    char buf[512];
    json_t *o = NULL, *procs;
    int pid = 0;
    char text[256];

    snprintf (buf, sizeof (buf),
              "{\"cmd\":{\"cmdline\":[\"sh\",\"-c\",\"echo bg; sleep 0.2\"],"
              "\"env\":{},\"opts\":{},\"channels\":[],\"label\":\"b1\"},"
              "\"flags\":16}");
    ok (raw ("rexec.exec", buf, 0, text, sizeof (text), &o) == 0
            && json_unpack (o, "{s:i}", "pid", &pid) == 0 && pid > 0,
        "background exec: one started response");
    json_decref (o);
    o = NULL;
    ok (raw ("rexec.exec", buf, 0, text, sizeof (text), NULL) == EINVAL
            && !strcmp (text, "command label is not unique"),
        "the same label again: command label is not unique");
    ok (raw ("rexec.list", NULL, 0, text, sizeof (text), &o) == 0
            && json_unpack (o, "{s:o}", "procs", &procs) == 0
            && json_array_size (procs) == 1,
        "list shows it");
    ok (json_is_string (json_object_get (json_array_get (procs, 0), "label"))
            && !strcmp (json_string_value (json_object_get (
                            json_array_get (procs, 0), "label")),
                        "b1"),
        "with its label");
    json_decref (o);
    o = NULL;
    ok (raw ("rexec.wait", "{\"pid\":0,\"label\":\"b1\"}", 0, text,
             sizeof (text),
             &o) == 0
            && json_integer_value (json_object_get (o, "status")) == 0,
        "wait by label: status 0");
    ok (json_array_size (json_object_get (o, "output")) == 1,
        "and the output kept");
    json_decref (o);
    snprintf (buf, sizeof (buf), "{\"pid\":%d}", pid);
    ok (raw ("rexec.wait", buf, 0, text, sizeof (text), NULL) == ESRCH,
        "waited on: gone (ESRCH)");
}

/* A streaming request's responses as "type type ... errno=N". */
struct stream_rec {
    char trace[512];
    bool done;
};

static void stream_continuation (flux_future_t *f, void *arg)
{
    struct stream_rec *sr = arg;
    const char *type = "?";
    json_t *io = NULL;
    size_t n = strlen (sr->trace);

    if (flux_rpc_get_unpack (f, "{s:s s?o}", "type", &type, "io", &io) < 0) {
        snprintf (sr->trace + n, sizeof (sr->trace) - n, "errno=%d", errno);
        sr->done = true;
        return;
    }
    if (io && json_object_get (io, "eof"))
        snprintf (sr->trace + n, sizeof (sr->trace) - n, "%s-eof ",
                  json_string_value (json_object_get (io, "stream")));
    else if (io)
        snprintf (sr->trace + n, sizeof (sr->trace) - n, "%s:%s ",
                  json_string_value (json_object_get (io, "stream")),
                  json_string_value (json_object_get (io, "data")));
    else
        snprintf (sr->trace + n, sizeof (sr->trace) - n, "%s ", type);
    flux_future_reset (f);
}

static bool stream_done (void *arg)
{
    return ((struct stream_rec *)arg)->done;
}

static void test_attach (void)
{
    char buf[512], text[256];
    json_t *o = NULL;
    int pid = 0;
    struct stream_rec sr = {0};
    flux_future_t *f;

    snprintf (buf, sizeof (buf),
              "{\"cmd\":{\"cmdline\":[\"sh\",\"-c\",\"exec 2>&-; sleep 0.5; "
              "echo late\"],\"env\":{},\"opts\":{},\"channels\":[]},"
              "\"flags\":16}");
    ok (raw ("rexec.exec", buf, 0, text, sizeof (text), &o) == 0
            && json_unpack (o, "{s:i}", "pid", &pid) == 0,
        "a waitable background process");
    json_decref (o);
    snprintf (buf, sizeof (buf), "{\"pid\":%d,\"flags\":3}", pid);
    f = flux_rpc (h, "rexec.attach", buf, 0, FLUX_RPC_STREAMING);
    ok (f && flux_future_then (f, -1., stream_continuation, &sr) == 0
            && flux_reactor_run_until (r, stream_done, &sr, 30.),
        "attach to it: the stream ends");
    is (sr.trace,
        "attached stderr-eof stdout:late\n stdout-eof finished errno=61",
        "attached, the EOF of the stream closed before, output, EOF, "
        "finished, ENODATA");
    flux_future_destroy (f);
    ok (raw ("rexec.wait", buf, 0, text, sizeof (text), NULL) == ESRCH,
        "attached to the end: reaped (wait finds nothing)");
}

static bool none_running (void *arg)
{
    return subprocess_server_running (srv) == 0;
}

static void test_disconnect (void)
{
    struct rec rc = {0};
    char *argv[] = {"sleep", "100", NULL};
    flux_cmd_t *cmd = flux_cmd_create (2, argv, environ);
    flux_future_t *f;

    rc.p = flux_rexec (h, "rexec", 0, cmd, &ops, &rc);
    flux_reactor_run_until (r, rec_started, &rc, 30.);
    cmp_ok (subprocess_server_running (srv), "==", 1, "sleep runs");
    f = flux_rpc (h, "rexec.disconnect", NULL, 0, FLUX_RPC_NORESPONSE);
    flux_future_destroy (f);
    ok (flux_reactor_run_until (r, none_running, NULL, 30.),
        "a disconnect kills the sender's foreground process");
    flux_subprocess_destroy (rc.p);
    flux_cmd_destroy (cmd);
}

/* ---- output credit (OUTPUT_CREDIT, not in flux-core) ---- */

/* A raw exec stream (no libsubprocess client: it would credit). */
struct rawrec {
    size_t bytes, cost;
    int pid, nout;
    bool ended;
};

static void raw_cb (flux_future_t *f, void *arg)
{
    struct rawrec *rr = arg;
    const char *type = NULL;
    json_t *o, *io;

    if (flux_rpc_get_unpack (f, "o", &o) < 0) {
        rr->ended = true;
        return;
    }
    if (json_unpack (o, "{s:s}", "type", &type) == 0) {
        if (!strcmp (type, "started"))
            (void)json_unpack (o, "{s:i}", "pid", &rr->pid);
        else if (!strcmp (type, "output") && (io = json_object_get (o, "io"))) {
            const char *stream;
            char *data = NULL;
            size_t len = 0;
            bool eof;
            if (subprocess_io_decode (io, &stream, NULL, &data, &len, &eof)
                == 0) {
                rr->bytes += len;
                rr->cost += SUBPROCESS_OUTPUT_COST (len);
                rr->nout++;
            }
            free (data);
        }
    }
    flux_future_reset (f);
}

/* Processes the server lists (rexec.list). */
static int nprocs (void)
{
    json_t *o = NULL, *procs;
    int n = -1;

    if (raw ("rexec.list", NULL, 0, NULL, 0, &o) == 0
        && json_unpack (o, "{s:o}", "procs", &procs) == 0)
        n = (int)json_array_size (procs);
    json_decref (o);
    return n;
}

static bool never (void *arg)
{
    return false;
}

static void credit (uint32_t matchtag, json_int_t bytes)
{
    flux_future_t *f = flux_rpc_pack (
        h, "rexec.output-credit", 0, FLUX_RPC_NORESPONSE, "{s:i s:I}",
        "matchtag", (int)matchtag, "bytes", bytes);
    flux_future_destroy (f);
}

/* exec cmd (stdout, OUTPUT_CREDIT), its responses to rr, and run the
 * loop 0.5 s with no credit given. */
static flux_future_t *exec_credited (json_t *cmd, struct rawrec *rr,
                                     uint32_t *tag)
{
    flux_future_t *f;

    f = flux_rpc_pack (h, "rexec.exec", 0, FLUX_RPC_STREAMING, "{s:O s:i s:i}",
                       "cmd", cmd, "flags",
                       SUBPROCESS_REXEC_STDOUT | SUBPROCESS_REXEC_OUTPUT_CREDIT,
                       "local_flags", 0);
    if (!f || flux_future_then (f, -1., raw_cb, rr) < 0)
        BAIL_OUT ("rexec.exec: %s", strerror (errno));
    *tag = flux_rpc_get_matchtag (f);
    flux_reactor_run_until (r, never, NULL, 0.5);
    return f;
}

static void test_output_credit (void)
{
    struct rawrec rr = {0};
    flux_cmd_t *cmd = sh ("exec tr '\\0' x </dev/zero");
    json_t *o;
    flux_future_t *f;
    uint32_t tag;
    size_t first;

    /* unbuffered: one response per read (at most 64 KiB) */
    flux_cmd_setopt (cmd, "stdout_LINE_BUFFER", "false");
    o = flux_cmd_tojson (cmd);
    f = exec_credited (o, &rr, &tag);
    first = rr.cost;
    ok (rr.pid > 0 && first >= SUBPROCESS_OUTPUT_WINDOW
            && first
                   < SUBPROCESS_OUTPUT_WINDOW + SUBPROCESS_OUTPUT_COST (65536),
        "output stops once a window is not credited (%zu bytes in %d "
        "responses)",
        rr.bytes, rr.nout);
    credit (tag + 1, 1 << 30); /* not this stream's */
    credit (tag, -5);          /* ignored */
    flux_reactor_run_until (r, never, NULL, 0.3);
    ok (rr.cost == first, "a credit of another stream, or < 0, is ignored");
    credit (tag, (json_int_t)first);
    flux_reactor_run_until (r, never, NULL, 0.3);
    ok (rr.cost >= first + SUBPROCESS_OUTPUT_WINDOW
            && rr.cost < 2 * SUBPROCESS_OUTPUT_WINDOW
                             + 2 * SUBPROCESS_OUTPUT_COST (65536),
        "credited: one window more comes, no more (%zu bytes)", rr.bytes);
    ok (kill (rr.pid, SIGKILL) == 0, "kill the process");
    flux_reactor_run_until (r, never, NULL, 0.3);
    ok (!rr.ended && nprocs () == 1,
        "its stream does not end while its output waits for credit");
    flux_future_destroy (
        flux_rpc (h, "rexec.disconnect", NULL, 0, FLUX_RPC_NORESPONSE));
    flux_reactor_run_until (r, never, NULL, 0.3);
    ok (nprocs () == 0,
        "its client gone, the rest is read and dropped: it is released");
    flux_future_destroy (f);
    json_decref (o);
    flux_cmd_destroy (cmd);

    /* the library's client credits what on_output consumed */
    struct rec rc = {0};
    run (sh ("yes 0123456789012345678901234567890123456789 | head -n 50000"),
         &ops, &rc);
    ok (rc.complete && rc.status == 0 && rc.eofs == 2,
        "flux_rexec: 50,000 lines (about 30 windows) flow to the end");
}

static bool raw_ended (void *arg)
{
    return ((struct rawrec *)arg)->ended;
}

/* Line buffered, a line per response: the output stops at the line
 * that fills the window, not at the end of the read in hand (64 KiB of
 * 2-byte lines would be 32K responses past it). */
static void test_output_credit_lines (void)
{
    struct rawrec rr = {0};
    flux_cmd_t *cmd = sh ("exec yes");
    json_t *o = flux_cmd_tojson (cmd);
    size_t line = SUBPROCESS_OUTPUT_COST (2);
    flux_future_t *f;
    uint32_t tag;
    size_t first;

    f = exec_credited (o, &rr, &tag);
    first = rr.cost;
    ok (rr.pid > 0 && first >= SUBPROCESS_OUTPUT_WINDOW
            && first < SUBPROCESS_OUTPUT_WINDOW + line,
        "lines: output stops at the line that fills the window (%d "
        "responses)",
        rr.nout);
    credit (tag, (json_int_t)first);
    flux_reactor_run_until (r, never, NULL, 0.5);
    ok (rr.cost >= first + SUBPROCESS_OUTPUT_WINDOW
            && rr.cost < first + SUBPROCESS_OUTPUT_WINDOW + line,
        "credited: what was held goes first, then one window to the line "
        "(%d responses)",
        rr.nout);
    ok (kill (rr.pid, SIGKILL) == 0, "kill the process");
    flux_reactor_run_until (r, never, NULL, 0.3);
    ok (!rr.ended, "its stream waits with what it held");
    /* credit what came, as a client does, until the end */
    size_t credited = first;
    for (int i = 0; i < 600 && !rr.ended; i++) {
        credit (tag, (json_int_t)(rr.cost - credited));
        credited = rr.cost;
        flux_reactor_run_until (r, raw_ended, &rr, 0.05);
    }
    ok (rr.ended && nprocs () == 0,
        "credited: the rest flows, then its end; it is released");
    diag ("%d responses in all", rr.nout);
    flux_future_destroy (f);
    json_decref (o);
    flux_cmd_destroy (cmd);
}

/* ---- the server's own processes: subprocess_server_spawn ---- */

struct sinkrec {
    int started, finished, ended, status;
    char out[256];
    size_t outlen;
    size_t total; /* output bytes, all of them */
    int nout;     /* output responses with data */
    int ended_errnum;
};

static void sink_cb (const json_t *resp, int errnum, void *arg)
{
    struct sinkrec *sr = arg;
    const char *type = NULL;
    json_t *io;

    if (!resp) {
        sr->ended++;
        sr->ended_errnum = errnum;
        return;
    }
    if (json_unpack ((json_t *)resp, "{s:s}", "type", &type) < 0)
        return;
    if (!strcmp (type, "started"))
        sr->started++;
    else if (!strcmp (type, "finished")) {
        sr->finished++;
        (void)json_unpack ((json_t *)resp, "{s:i}", "status", &sr->status);
    }
    else if (!strcmp (type, "output") && (io = json_object_get (resp, "io"))) {
        const char *stream, *rank;
        char *data = NULL;
        size_t len;
        bool eof;
        if (subprocess_io_decode (io, &stream, &rank, &data, &len, &eof) == 0
            && data) {
            sr->total += len;
            sr->nout++;
            if (sr->outlen + len < sizeof (sr->out)) {
                memcpy (sr->out + sr->outlen, data, len);
                sr->outlen += len;
            }
        }
        free (data);
    }
}

static bool sink_ended (void *arg)
{
    return ((struct sinkrec *)arg)->ended > 0;
}

static void test_spawn_sink (void)
{
    struct sinkrec sr = {0};
    flux_error_t error;
    pid_t pid;

    pid = subprocess_server_spawn (srv, sh ("cat; echo hi; exit 3"),
                                   SUBPROCESS_REXEC_STDOUT, sink_cb, &sr,
                                   &error);
    ok (pid > 0 && sr.started == 1,
        "spawn: a pid, and the sink heard started before it returned");
    ok (flux_reactor_run_until (r, sink_ended, &sr, 30.),
        "the sink heard the end (stdin is /dev/null: cat ended at once)");
    ok (sr.finished == 1 && sr.status == 3 << 8,
        "finished once, with the wait status (exit 3)");
    ok (sr.outlen == 3 && !memcmp (sr.out, "hi\n", 3), "its output");
    ok (sr.ended == 1 && sr.ended_errnum == ENODATA, "the end is ENODATA");
    ok (!subprocess_server_owns (srv, pid)
            && subprocess_server_kill (srv, pid, SIGTERM) < 0 && errno == ESRCH,
        "afterwards it is no longer the server's (ESRCH)");

    memset (&sr, 0, sizeof (sr));
    errno = 0;
    ok (subprocess_server_spawn (srv, sh ("true"), SUBPROCESS_REXEC_WAITABLE,
                                 sink_cb, &sr, &error)
                < 0
            && errno == EINVAL,
        "spawn: waitable is refused (EINVAL)");
    {
        char *argv[] = {"/nonexistent/cmd", NULL};
        errno = 0;
        ok (subprocess_server_spawn (srv, flux_cmd_create (1, argv, environ), 3,
                                     sink_cb, &sr, &error)
                    < 0
                && errno == ENOENT && strstr (error.text, "/nonexistent/cmd"),
            "spawn: a missing command fails ENOENT, with its name (%s)",
            error.text);
    }
    {
        flux_cmd_t *cmd = sh ("true");
        errno = 0;
        ok (flux_cmd_setcwd (cmd, "/nonexistent") == 0
                && subprocess_server_spawn (srv, cmd, 3, sink_cb, &sr, &error)
                       < 0
                && errno == ENOENT
                && strstr (error.text, "working directory /nonexistent"),
            "spawn: a missing working directory fails ENOENT, said so (%s)",
            error.text);
    }
    ok (sr.started == 0 && sr.ended == 0, "the sink never heard of it");

    pid = subprocess_server_spawn (srv, sh ("exec sleep 100"), 3, sink_cb, &sr,
                                   &error);
    ok (pid > 0, "spawn sleep 100");
    ok (subprocess_server_kill (srv, pid, 0) == 0, "kill: signal 0 reaches it");
    subprocess_server_forget (srv, pid);
    ok (flux_reactor_run_until (r, none_running, NULL, 30.),
        "forget: it is killed and reaped");
    ok (sr.ended == 0 && sr.finished == 0, "and its sink is not called");

    memset (&sr, 0, sizeof (sr));
    pid = subprocess_server_spawn (srv, sh ("printf 'a\\nb\\nc\\n'"),
                                   SUBPROCESS_REXEC_STDOUT, sink_cb, &sr,
                                   &error);
    (void)subprocess_server_write (srv, pid, "stdin", NULL, 0, true);
    ok (flux_reactor_run_until (r, sink_ended, &sr, 30.) && sr.nout == 1
            && sr.outlen == 6 && !memcmp (sr.out, "a\nb\nc\n", 6),
        "a sink's lines of one read are one response (%d)", sr.nout);

    memset (&sr, 0, sizeof (sr));
    pid = subprocess_server_spawn (
        srv, sh ("exec yes"), SUBPROCESS_REXEC_STDOUT, sink_cb, &sr, &error);
    ok (pid > 0 && subprocess_server_pause (srv, pid, true) == 0,
        "spawn yes, pause it");
    flux_reactor_run_until (r, never, NULL, 0.3);
    ok (sr.total == 0, "paused: none of its output is read");
    ok (subprocess_server_pause (srv, pid, false) == 0, "resume it");
    flux_reactor_run_until (r, never, NULL, 0.3);
    ok (sr.total > 0, "its output flows (%zu bytes)", sr.total);
    ok (subprocess_server_pause (srv, pid, true) == 0, "pause it again");
    subprocess_server_forget (srv, pid);
    ok (flux_reactor_run_until (r, none_running, NULL, 30.),
        "forget while paused: it is killed, read to its end and reaped");
    errno = 0;
    ok (subprocess_server_pause (srv, pid, true) < 0 && errno == ESRCH,
        "pause: ESRCH once it is not the server's");
}

static void test_terminate (void)
{
    struct rec rc = {0};
    char *argv[] = {"sleep", "100", NULL};
    flux_cmd_t *cmd = flux_cmd_create (2, argv, environ);

    rc.p = flux_rexec (h, "rexec", 0, cmd, &ops, &rc);
    flux_reactor_run_until (r, rec_started, &rc, 30.);
    cmp_ok (subprocess_server_terminate (srv, SIGTERM), "==", 1,
            "terminate signals the running child");
    flux_reactor_run_until (r, rec_done, &rc, 30.);
    ok (rc.complete && WIFSIGNALED (rc.status)
            && WTERMSIG (rc.status) == SIGTERM,
        "which ends with SIGTERM");
    flux_subprocess_destroy (rc.p);
    flux_cmd_destroy (cmd);
    memset (&rc, 0, sizeof (rc));
    char *t[] = {"true", NULL};
    run (flux_cmd_create (1, t, environ), &ops, &rc);
    ok (rc.error && rc.errnum == ENOSYS, "then exec is refused ENOSYS");
}

int main (int argc, char **argv)
{
    flux_error_t error;

    plan (NO_PLAN);
    signal (SIGPIPE, SIG_IGN); /* as the broker: see subprocess.h */
    if (!(h = flux_open ("loop://", 0)))
        BAIL_OUT ("flux_open loop://: %s", strerror (errno));
    r = flux_get_reactor (h);
    ok ((srv = subprocess_server_create (h, "rexec", "loop://", 0, &error))
            != NULL,
        "subprocess_server_create");
    test_basic ();
    test_lines ();
    test_env_cwd_channel ();
    test_stdin ();
    test_stdin_closed ();
    test_kill_early ();
    test_bad_requests ();
    test_auth ();
    test_background ();
    test_attach ();
    test_disconnect ();
    test_output_credit ();
    test_output_credit_lines ();
    test_spawn_sink ();
    test_terminate ();
    subprocess_server_destroy (srv);
    flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
    flux_close (h);
    done_testing ();
    return 0;
}
