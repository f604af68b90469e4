/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* task.c - spawn one task with libuv, read its output, write its stdin.
 *
 * Each task leads a process group of its own, as flux-core's (its
 * libsubprocess SETPGRP), and every signal goes to that group, so that
 * `sh -c "a; b"` or `cmd &` under a task get it too.  libuv can run no
 * setpgid() in the child, only setsid() (UV_PROCESS_DETACHED): a new
 * session is a new group, and loses nothing here since the shell, a
 * session leader started with stdin /dev/null, has no terminal to give.
 * uv_spawn() returns once the child has exec'ed, so setsid() is done
 * before the first signal can be sent: no race to close in the parent.
 * The group id is the task's pid and stays the group's after the task
 * itself is reaped (the group lives on while a process it started
 * does).  Since the tasks leave the shell's group, the agent's killpg()
 * of the shell no longer reaches them: the shell kills their groups
 * itself (task_kill_group(): at its exit, on SHELL_KILL_SIGNAL).
 *
 * A task on a pty must lead a session to own the pty as its
 * controlling terminal, and libuv cannot run TIOCSCTTY in the child, so
 * it is forked here and reaped from a SIGCHLD watcher of its own
 * (libuv's reaps only the pids it spawned).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "output.h"
#include "pty.h"
#include "shell.h"
#include "task.h"

#define PTY_WRITE_LIMIT (1024 * 1024) /* bytes waiting for the master */

struct task *task_create (struct shell *shell, int rank, int localid)
{
    struct task *t = calloc (1, sizeof (*t));

    if (t) {
        t->shell = shell;
        t->rank = rank;
        t->localid = localid;
        t->stdin_fd = -1;
        t->pmi_fd = -1;
        t->pty_master = -1;
        t->pty_slave = -1;
    }
    return t;
}

void task_destroy (struct task *t)
{
    if (t) {
        int saved_errno = errno;
        if (t->stdin_fd >= 0)
            close (t->stdin_fd);
        if (t->pmi_fd >= 0)
            close (t->pmi_fd);
        if (t->pty_master >= 0)
            close (t->pty_master);
        if (t->pty_slave >= 0)
            close (t->pty_slave);
        free (t->pty_wbuf);
        free (t);
        errno = saved_errno;
    }
}

static void close_handle (uv_handle_t *h)
{
    if (h->loop && !uv_is_closing (h))
        uv_close (h, NULL);
}

void task_close (struct task *t)
{
    close_handle ((uv_handle_t *)&t->in);
    close_handle ((uv_handle_t *)&t->out[0]);
    close_handle ((uv_handle_t *)&t->out[1]);
    close_handle ((uv_handle_t *)&t->proc);
    close_handle ((uv_handle_t *)&t->pty_poll);
    close_handle ((uv_handle_t *)&t->pty_chld);
    t->in_open = t->out_open[0] = t->out_open[1] = t->pty_open = false;
}

bool task_done (const struct task *t)
{
    return (t->reaped || t->spawn_errno) && !t->out_open[0] && !t->out_open[1]
           && !t->pty_open;
}

static void task_exited (struct task *t, int signum, int status)
{
    t->running = false;
    t->reaped = true;
    if (signum) {
        t->wait_status = signum;
        t->exit_code = 128 + signum;
    }
    else {
        t->wait_status = (status & 0xff) << 8;
        t->exit_code = status;
    }
    if (t->on_pty && !t->pty_open)
        shell_pty_task_done (t->shell->pty, t);
    shell_task_done (t->shell, t);
}

static void exit_cb (uv_process_t *proc, int64_t status, int signum)
{
    struct task *t = proc->data;

    uv_close ((uv_handle_t *)proc, NULL);
    task_exited (t, signum, (int)status);
}

static void alloc_cb (uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    static char mem[65536]; /* one read at a time: the loop is serial */

    (void)h;
    (void)suggested;
    buf->base = mem;
    buf->len = sizeof (mem);
}

static void out_close_cb (uv_handle_t *h)
{
    struct task *t = h->data;
    int stream = (uv_pipe_t *)h == &t->out[0] ? 0 : 1;

    t->out_open[stream] = false;
    shell_task_done (t->shell, t);
}

/* stdout is line buffered (whole lines, or 4K when a line is longer),
 * stderr is not: as flux-core's shell does.
 */
static void emit_stdout (struct task *t, const char *data, size_t len)
{
    struct output *out = t->shell->out;

    while (len > 0) {
        size_t n = sizeof (t->linebuf) - t->linelen;
        const char *nl;
        if (n > len)
            n = len;
        memcpy (t->linebuf + t->linelen, data, n);
        t->linelen += n;
        data += n;
        len -= n;
        nl = memrchr (t->linebuf, '\n', t->linelen);
        if (nl) {
            size_t k = nl - t->linebuf + 1;
            output_write (out, t->rank, OUTPUT_STDOUT, t->linebuf, k);
            memmove (t->linebuf, t->linebuf + k, t->linelen - k);
            t->linelen -= k;
        }
        else if (t->linelen == sizeof (t->linebuf)) {
            output_write (out, t->rank, OUTPUT_STDOUT, t->linebuf, t->linelen);
            t->linelen = 0;
        }
    }
}

static void read_cb (uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct task *t = s->data;
    int stream = (uv_pipe_t *)s == &t->out[0] ? 0 : 1;

    if (n > 0) {
        if (stream == 0)
            emit_stdout (t, buf->base, n);
        else
            output_write (t->shell->out, t->rank, OUTPUT_STDERR, buf->base, n);
    }
    else if (n < 0) {
        if (stream == 0 && t->linelen > 0) {
            output_write (t->shell->out, t->rank, OUTPUT_STDOUT, t->linebuf,
                          t->linelen);
            t->linelen = 0;
        }
        output_eof (t->shell->out, t->rank, stream);
        uv_read_stop (s);
        uv_close ((uv_handle_t *)s, out_close_cb);
    }
}

/* pty tasks */

static void pty_poll_update (struct task *t);

static void pty_close_cb (uv_handle_t *h)
{
    struct task *t = h->data;

    close (t->pty_master);
    t->pty_master = -1;
    t->pty_wlen = 0;
    if (t->reaped)
        shell_pty_task_done (t->shell->pty, t);
    shell_task_done (t->shell, t);
}

/* The master reads EIO once no process holds the slave: the end. */
static void pty_eof (struct task *t)
{
    if (t->pty_capture && t->linelen > 0) {
        output_write (t->shell->out, t->rank, OUTPUT_STDOUT, t->linebuf,
                      t->linelen);
        t->linelen = 0;
    }
    output_eof (t->shell->out, t->rank, OUTPUT_STDOUT);
    output_eof (t->shell->out, t->rank, OUTPUT_STDERR);
    uv_poll_stop (&t->pty_poll);
    t->pty_open = false; /* pty_close_cb ends the task */
    uv_close ((uv_handle_t *)&t->pty_poll, pty_close_cb);
}

static void pty_read (struct task *t)
{
    static char buf[65536];
    ssize_t n;

    if ((n = read (t->pty_master, buf, sizeof (buf))) < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return;
        pty_eof (t); /* EIO */
        return;
    }
    if (n == 0) {
        pty_eof (t);
        return;
    }
    if (t->pty_capture)
        emit_stdout (t, buf, (size_t)n);
    shell_pty_output (t->shell->pty, t, buf, (size_t)n);
}

static void pty_write (struct task *t)
{
    ssize_t n;

    while (t->pty_wlen > 0) {
        if ((n = write (t->pty_master, t->pty_wbuf, t->pty_wlen)) < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                t->pty_wlen = 0; /* EIO: the task is gone, drop it */
            break;
        }
        memmove (t->pty_wbuf, t->pty_wbuf + n, t->pty_wlen - (size_t)n);
        t->pty_wlen -= (size_t)n;
    }
}

static void pty_poll_cb (uv_poll_t *p, int status, int events)
{
    struct task *t = p->data;

    if (status < 0) {
        pty_eof (t);
        return;
    }
    if ((events & UV_WRITABLE))
        pty_write (t);
    if ((events & (UV_READABLE | UV_DISCONNECT)) && t->pty_open)
        pty_read (t);
    if (t->pty_open)
        pty_poll_update (t);
}

static void pty_poll_update (struct task *t)
{
    int events = UV_READABLE | UV_DISCONNECT;

    if (t->pty_wlen > 0)
        events |= UV_WRITABLE;
    (void)uv_poll_start (&t->pty_poll, events, pty_poll_cb);
}

static void pty_chld_cb (uv_signal_t *w, int signum)
{
    struct task *t = w->data;
    int status;
    pid_t pid;

    (void)signum;
    if (!t->running)
        return;
    do {
        pid = waitpid (t->pid, &status, WNOHANG);
    } while (pid < 0 && errno == EINTR);
    if (pid != t->pid)
        return;
    uv_signal_stop (w);
    uv_close ((uv_handle_t *)w, NULL);
    if (WIFSIGNALED (status))
        task_exited (t, WTERMSIG (status), 0);
    else
        task_exited (t, 0, WEXITSTATUS (status));
}

/* In the child: a new session on the pty, stdio on it, then exec.  An
 * exec failure is written to errfd (close-on-exec: EOF means success).
 */
static void pty_child (struct task *t, char **argv, char **envp, int errfd)
{
    int e, slave, in, pmi;
    sigset_t none;

    for (int sig = 1; sig < NSIG; sig++)
        (void)signal (sig, SIG_DFL);
    sigemptyset (&none);
    (void)sigprocmask (SIG_SETMASK, &none, NULL);
    if (setsid () < 0 || ioctl (t->pty_slave, TIOCSCTTY, 0) < 0)
        goto fail;
    /* move the fds out of the way first: any of them may sit on 0-3 */
    slave = fcntl (t->pty_slave, F_DUPFD_CLOEXEC, 10);
    in = t->stdin_fd >= 0 ? fcntl (t->stdin_fd, F_DUPFD_CLOEXEC, 10) : slave;
    pmi = t->pmi_fd >= 0 ? fcntl (t->pmi_fd, F_DUPFD_CLOEXEC, 10) : -1;
    if (slave < 0 || in < 0 || (t->pmi_fd >= 0 && pmi < 0) || dup2 (in, 0) < 0
        || dup2 (slave, 1) < 0 || dup2 (slave, 2) < 0
        || (pmi >= 0 && dup2 (pmi, 3) < 0))
        goto fail;
    for (int fd = 0; fd <= (t->pmi_fd >= 0 ? 3 : 2); fd++)
        (void)fcntl (fd, F_SETFD, 0);
    environ = envp;
    execvp (argv[0], argv);
fail:
    e = errno;
    (void)!write (errfd, &e, sizeof (e));
    _exit (127);
}

static int pty_start (struct task *t, char **argv, struct env *env)
{
    char **envp = env_vector (env);
    int pfd[2], e = 0;
    ssize_t n;
    pid_t pid;

    if (!envp || pipe2 (pfd, O_CLOEXEC) < 0)
        return -1;
    t->pty_chld.data = t;
    t->pty_poll.data = t;
    if (uv_signal_init (t->shell->loop, &t->pty_chld) < 0
        || uv_signal_start (&t->pty_chld, pty_chld_cb, SIGCHLD) < 0) {
        close (pfd[0]);
        close (pfd[1]);
        errno = EAGAIN;
        return -1;
    }
    if ((pid = fork ()) < 0) {
        e = errno;
        goto fail;
    }
    if (pid == 0) {
        close (pfd[0]);
        pty_child (t, argv, envp, pfd[1]);
    }
    close (pfd[1]);
    pfd[1] = -1;
    while ((n = read (pfd[0], &e, sizeof (e))) < 0 && errno == EINTR)
        ;
    if (n == (ssize_t)sizeof (e)) { /* exec failed: reap the child */
        while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
            ;
        goto fail;
    }
    e = 0;
    close (pfd[0]);
    close (t->pty_slave);
    t->pty_slave = -1;
    t->pid = pid;
    t->running = true;
    if (t->stdin_fd >= 0) {
        close (t->stdin_fd);
        t->stdin_fd = -1;
    }
    if (t->pmi_fd >= 0) {
        close (t->pmi_fd);
        t->pmi_fd = -1;
    }
    (void)fcntl (t->pty_master, F_SETFL,
                 fcntl (t->pty_master, F_GETFL) | O_NONBLOCK);
    if (uv_poll_init (t->shell->loop, &t->pty_poll, t->pty_master) < 0) {
        /* cannot happen with a pty; without output the task is
         * killed rather than left unread */
        kill (pid, SIGKILL);
        return 0;
    }
    t->pty_open = true;
    t->in_open = true;
    pty_poll_update (t);
    return 0;
fail:
    close (pfd[0]);
    if (pfd[1] >= 0)
        close (pfd[1]);
    uv_close ((uv_handle_t *)&t->pty_chld, NULL);
    t->spawn_errno = e;
    t->exit_code = (e == EPERM || e == EACCES) ? 126 : e == ENOENT ? 127 : 1;
    errno = e;
    return -1;
}

int task_pty_resize (struct task *t, int rows, int cols)
{
    struct winsize ws
        = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};

    if (t->pty_master < 0 || !t->pty_open) {
        errno = ENOTTY;
        return -1;
    }
    return ioctl (t->pty_master, TIOCSWINSZ, &ws);
}

static int pty_write_stdin (struct task *t, const char *data, size_t len,
                            bool eof)
{
    static const char veof = 4; /* ^D: EOF for a reader in canonical mode */
    char *p;

    if (!t->in_open || !t->pty_open) {
        errno = EPIPE;
        return -1;
    }
    if (eof) {
        t->in_open = false;
        data = len > 0 ? data : &veof;
        len = len > 0 ? len : 1;
    }
    if (t->pty_wlen + len > PTY_WRITE_LIMIT) {
        errno = ENOSPC;
        return -1;
    }
    if (!(p = realloc (t->pty_wbuf, t->pty_wlen + len)))
        return -1;
    t->pty_wbuf = p;
    memcpy (t->pty_wbuf + t->pty_wlen, data, len);
    t->pty_wlen += len;
    pty_write (t);
    pty_poll_update (t);
    return 0;
}

int task_start (struct task *t, char **argv, struct env *env)
{
    uv_process_options_t opts = {0};
    uv_stdio_container_t stdio[4];
    int e;

    if (t->on_pty)
        return pty_start (t, argv, env);
    uv_pipe_init (t->shell->loop, &t->out[0], 0);
    uv_pipe_init (t->shell->loop, &t->out[1], 0);
    t->out[0].data = t->out[1].data = t;
    if (t->stdin_fd >= 0) {
        stdio[0].flags = UV_INHERIT_FD;
        stdio[0].data.fd = t->stdin_fd;
    }
    else {
        uv_pipe_init (t->shell->loop, &t->in, 0);
        t->in.data = t;
        stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
        stdio[0].data.stream = (uv_stream_t *)&t->in;
    }
    for (int i = 0; i < 2; i++) {
        stdio[i + 1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
        stdio[i + 1].data.stream = (uv_stream_t *)&t->out[i];
    }
    opts.stdio_count = 3;
    if (t->pmi_fd >= 0) {
        stdio[3].flags = UV_INHERIT_FD;
        stdio[3].data.fd = t->pmi_fd;
        opts.stdio_count = 4;
    }
    opts.stdio = stdio;
    opts.file = argv[0];
    opts.args = argv;
    opts.env = env_vector (env);
    opts.exit_cb = exit_cb;
    opts.flags = UV_PROCESS_DETACHED; /* setsid(): a group of its own */
    t->proc.data = t;
    if ((e = uv_spawn (t->shell->loop, &t->proc, &opts)) < 0) {
        /* libuv leaves the handles initialized: close them */
        uv_close ((uv_handle_t *)&t->proc, NULL);
        uv_close ((uv_handle_t *)&t->out[0], NULL);
        uv_close ((uv_handle_t *)&t->out[1], NULL);
        if (t->stdin_fd < 0)
            uv_close ((uv_handle_t *)&t->in, NULL);
        t->spawn_errno = -e;
        t->exit_code = (-e == EPERM || -e == EACCES) ? 126
                       : -e == ENOENT                ? 127
                                                     : 1;
        errno = -e;
        return -1;
    }
    t->pid = t->proc.pid;
    t->running = true;
    if (t->stdin_fd < 0)
        t->in_open = true;
    else {
        close (t->stdin_fd);
        t->stdin_fd = -1;
    }
    if (t->pmi_fd >= 0) {
        close (t->pmi_fd);
        t->pmi_fd = -1;
    }
    for (int i = 0; i < 2; i++) {
        t->out_open[i] = true;
        uv_read_start ((uv_stream_t *)&t->out[i], alloc_cb, read_cb);
    }
    return 0;
}

void task_kill (struct task *t, int signum)
{
    /* until the task is done its group may hold processes: the task
     * reaped, a child of it still writing its output */
    if (t->pid <= 0 || task_done (t))
        return;
    /* ESRCH: the task moved itself to another group (setpgid): it
     * still gets the signal */
    if (kill (-t->pid, signum) < 0 && t->running)
        (void)kill (t->pid, signum);
}

void task_kill_group (struct task *t, int signum)
{
    if (t->pid > 0)
        (void)kill (-t->pid, signum);
}

static void write_cb (uv_write_t *req, int status)
{
    (void)status; /* a task that closed its stdin: data is dropped */
    free (req);
}

static void shutdown_cb (uv_shutdown_t *req, int status)
{
    (void)status;
    if (!uv_is_closing ((uv_handle_t *)req->handle))
        uv_close ((uv_handle_t *)req->handle, NULL);
    free (req);
}

int task_write_stdin (struct task *t, const char *data, size_t len, bool eof)
{
    if (t->on_pty)
        return pty_write_stdin (t, data, len, eof);
    if (!t->in_open) {
        errno = EPIPE;
        return -1;
    }
    if (len > 0) {
        uv_write_t *req = malloc (sizeof (*req) + len);
        uv_buf_t buf;
        if (!req)
            return -1;
        memcpy ((char *)(req + 1), data, len);
        buf = uv_buf_init ((char *)(req + 1), len);
        if (uv_write (req, (uv_stream_t *)&t->in, &buf, 1, write_cb) < 0) {
            free (req);
            errno = EPIPE;
            return -1;
        }
    }
    if (eof) {
        t->in_open = false;
        /* uv_close() would cancel queued writes: shut down first, close
         * once they are written */
        uv_shutdown_t *req = malloc (sizeof (*req));
        if (req && uv_shutdown (req, (uv_stream_t *)&t->in, shutdown_cb) == 0)
            return 0;
        free (req);
        uv_close ((uv_handle_t *)&t->in, NULL);
    }
    return 0;
}
