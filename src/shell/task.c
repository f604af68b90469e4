/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* task.c - spawn one task, read its output, write its stdin.
 *
 * Each task leads a process group of its own, as flux-core's (its
 * libsubprocess SETPGRP), and every signal goes to that group, so that
 * `sh -c "a; b"` or `cmd &` under a task get it too.  The task calls
 * setsid() in the child (a new session is a new group, and loses
 * nothing here since the shell, a session leader started with stdin
 * /dev/null, has no terminal to give); spawn() returns once the child
 * has exec'ed, so no signal can come before.  With the shell option
 * `nosetpgrp` (as flux-core's) a task stays in the shell's group and is
 * signaled alone; a pty task always leads a session (it must, to own the
 * pty as its controlling terminal).
 *
 * The tasks are spawned here (vfork), not by libuv, for what the child
 * must do before exec that libuv cannot: PR_SET_PDEATHSIG(SIGKILL), so that a
 * task dies with its shell however the shell dies (kill -9 from outside
 * too), and TIOCSCTTY for a pty.  The death signal survives the exec
 * (but for a setuid or setgid program, or one with file capabilities)
 * and is not inherited by what the task forks: the task's own children
 * are reached through its group (the agent or the IMP kill it when the
 * shell dies without doing so, doc/guide/exec.md).
 *
 * A task that exits is left a zombie until the shell ends (waitid
 * WNOWAIT for its status): its pid, which is its group's id, cannot be
 * given to another process meanwhile, so the SIGKILL of the group at the
 * shell's exit, or of the task itself (nosetpgrp), never reaches an
 * unrelated process.  The shell's SIGCHLD watcher calls task_check_exit()
 * (libuv reaps only the pids it spawned: the rexec server's).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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
    close_handle ((uv_handle_t *)&t->pty_poll);
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
 * stderr is not: as flux-core's shell does (stdout too with
 * output.stdout.buffer.type=none: flux run -u).
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
        if (stream == 0 && output_line_buffered (t->shell->out, 0))
            emit_stdout (t, buf->base, n);
        else
            output_write (t->shell->out, t->rank, stream, buf->base, n);
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

void task_check_exit (struct task *t)
{
    siginfo_t si = {0};
    int rc;

    if (!t->running)
        return;
    do {
        rc = waitid (P_PID, (id_t)t->pid, &si, WEXITED | WNOHANG | WNOWAIT);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0 || si.si_pid != t->pid)
        return;
    t->zombie = true; /* task_reap() at the end (see the top) */
    if (si.si_code == CLD_EXITED)
        task_exited (t, 0, si.si_status);
    else
        task_exited (t, si.si_status, 0);
}

void task_reap (struct task *t)
{
    /* a task still running was just SIGKILLed: reaped if already gone,
     * else left to die (not waited for: it may be in an uninterruptible
     * sleep) */
    if (t->zombie || t->running) {
        while (waitpid (t->pid, NULL, t->zombie ? 0 : WNOHANG) < 0
               && errno == EINTR)
            ;
        t->zombie = t->running = false;
    }
}

/* The fds the child gets as 0, 1, 2 and (pmi >= 0) 3. */
struct child_fds {
    int in, out, err, pmi;
};

static int movefd (int fd)
{
    return fd > 3 ? fd : fcntl (fd, F_DUPFD_CLOEXEC, 10);
}

/* Where the last search found its name: the tasks of a shell run one
 * command with one PATH, and a search costs a failed execve per
 * directory before the right one, with the shell stopped (vfork).  The
 * child writes each candidate to tried[] (the shell's memory) before
 * its execve; once one ran, the shell keeps it for the next task of the
 * same name and PATH, whose child tries it first (and searches if it is
 * gone).  Only the shell writes name, path and found.
 */
static struct {
    char tried[PATH_MAX];
    char found[PATH_MAX];
    char *name, *path; /* of found; NULL: nothing found yet */
} search_cache;

static const char *env_path (char **envp)
{
    for (char **e = envp; *e; e++) {
        if (!strncmp (*e, "PATH=", 5))
            return *e + 5;
    }
    return NULL;
}

/* The cached file for name with PATH path (NULL: none), or NULL. */
static const char *cached_file (const char *name, const char *path)
{
    if (!search_cache.name || strcmp (search_cache.name, name) != 0
        || (path == NULL) != (search_cache.path == NULL)
        || (path && strcmp (path, search_cache.path) != 0))
        return NULL;
    return search_cache.found;
}

/* In the shell, after a child ran: keep where its search for name with
 * PATH path ended (hit: the cache held that name and path). */
static void cache_found (const char *name, const char *path, bool hit)
{
    char *namecopy, *pathcopy = NULL;

    if (strchr (name, '/') || search_cache.tried[0] == '\0')
        return;
    if (!hit) {
        if (!(namecopy = strdup (name))
            || (path && !(pathcopy = strdup (path)))) {
            free (namecopy);
            return; /* out of memory: the next task searches */
        }
        free (search_cache.name);
        free (search_cache.path);
        search_cache.name = namecopy;
        search_cache.path = pathcopy;
    }
    else if (!strcmp (search_cache.found, search_cache.tried))
        return; /* found where it was */
    memcpy (search_cache.found, search_cache.tried,
            strlen (search_cache.tried) + 1);
}

/* execvp() with envp's PATH (glibc's execvpe() searches the caller's
 * PATH, and the child must not set environ: with vfork() it is the
 * shell's).  The same search as execvp: PATH's directories in order
 * (an empty one is the current directory; no PATH: /bin:/usr/bin), a
 * name with a slash as is, a file without a known format run by
 * /bin/sh, EACCES if some match could not be run and none could.
 * path: envp's PATH (NULL: none); cached: where the last search found
 * this name (tried first).  Returns only on failure, with errno.
 */
static void exec_search (char **argv, char **envp, const char *path,
                         const char *cached)
{
    const char *name = argv[0];
    size_t namelen = strlen (name);
    bool eacces = false;
    char buf[PATH_MAX];

    if (strchr (name, '/')) {
        (void)execve (name, argv, envp);
        if (errno == ENOEXEC)
            goto sh;
        return;
    }
    if (cached) {
        memcpy (search_cache.tried, cached, strlen (cached) + 1);
        (void)execve (cached, argv, envp);
        if (errno == ENOEXEC) {
            name = cached;
            goto sh;
        }
        /* gone, or no longer runnable: search as execvp would */
    }
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        const char *end = strchrnul (p, ':');
        size_t len = (size_t)(end - p);
        if (len + namelen + 2 <= sizeof (buf)) {
            memcpy (buf, p, len);
            if (len > 0)
                buf[len++] = '/';
            memcpy (buf + len, name, namelen + 1);
            memcpy (search_cache.tried, buf, len + namelen + 1);
            (void)execve (buf, argv, envp);
            if (errno == ENOEXEC) {
                name = buf;
                goto sh;
            }
            if (errno == EACCES)
                eacces = true;
            else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE
                     && errno != ENODEV && errno != ETIMEDOUT)
                return;
        }
        p = end;
        if (!*p)
            break;
    }
    errno = eacces ? EACCES : ENOENT;
    return;
sh : {
    int argc = 0;
    while (argv[argc])
        argc++;
    char *shargv[argc + 2];
    shargv[0] = "/bin/sh";
    shargv[1] = (char *)name;
    for (int i = 1; i <= argc; i++)
        shargv[i + 1] = argv[i];
    (void)execve (shargv[0], shargv, envp);
}
}

/* In the child: die with the shell, a group of its own (or a session on
 * the pty), stdio, the job's rlimits, then exec.  The child runs in the
 * shell's memory (vfork) until it execs: system calls only, nothing
 * written but its stack, search_cache.tried and *err (the errno of a
 * failure), and no handler of the shell's may run in it (spawn() blocks
 * every signal; the handlers are reset here before the mask is cleared).
 */
static void __attribute__ ((noreturn))
child (struct task *t, pid_t shell, char **argv, char **envp, const char *path,
       const char *cached, struct child_fds *fds, volatile int *err)
{
    int in, out, err2, pmi = -1;
    sigset_t none;

    /* what an exec keeps: ignored signals (the shell ignores SIGPIPE);
     * the classic ones only, as libuv: glibc uses real-time signals */
    for (int sig = 1; sig < 32; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP)
            (void)signal (sig, SIG_DFL);
    }
    /* the death signal follows the thread that forked (the shell's only
     * one that spawns); a shell already gone is checked after */
    if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0)
        goto fail;
    if (getppid () != shell) {
        errno = ESRCH;
        goto fail;
    }
    if (t->own_group && setsid () < 0)
        goto fail;
    if (t->on_pty && ioctl (t->pty_slave, TIOCSCTTY, 0) < 0)
        goto fail;
    /* one on 0-3 is moved out of the way first; dup2() clears
     * close-on-exec on the copy (the source never equals the target) */
    in = movefd (fds->in);
    out = movefd (fds->out);
    err2 = movefd (fds->err);
    if (fds->pmi >= 0)
        pmi = movefd (fds->pmi);
    if (in < 0 || out < 0 || err2 < 0 || (fds->pmi >= 0 && pmi < 0)
        || dup2 (in, 0) < 0 || dup2 (out, 1) < 0 || dup2 (err2, 2) < 0
        || (pmi >= 0 && dup2 (pmi, 3) < 0))
        goto fail;
    /* the job's limits (option rlimit, within the hard limits) */
    for (int i = 0; i < t->shell->nrlimits; i++) {
        if (setrlimit (t->shell->rlimits[i].resource, &t->shell->rlimits[i].rl)
            < 0)
            goto fail;
    }
    sigemptyset (&none);
    (void)sigprocmask (SIG_SETMASK, &none, NULL);
    exec_search (argv, envp, path, cached);
fail:
    *err = errno ? errno : ENOEXEC;
    _exit (127);
}

/* vfork and exec the task; 0 once it runs (t->pid), else the errno of
 * the failure (the child reaped).  vfork, not fork: the shell's page
 * tables are not copied (and the copy-on-write faults after a fork are
 * not taken), and the shell waits until the child has exec'ed or
 * failed, so no pipe is needed to hear of a failed exec.  Every signal
 * is blocked meanwhile: a handler of the shell's run by the child
 * would act in the shell's memory.
 */
static int spawn (struct task *t, char **argv, char **envp,
                  struct child_fds *fds)
{
    pid_t shell = getpid ();
    const char *volatile path; /* volatile: read again after vfork */
    const char *volatile cached;
    volatile int err = 0;
    sigset_t all, mask;
    int e;
    pid_t pid;

    if (!envp)
        return ENOMEM;
    path = env_path (envp);
    cached = cached_file (argv[0], path);
    search_cache.tried[0] = '\0';
    sigfillset (&all);
    if (sigprocmask (SIG_SETMASK, &all, &mask) < 0)
        return errno;
    pid = vfork ();
    if (pid == 0)
        child (t, shell, argv, envp, path, cached, fds, &err);
    e = pid < 0 ? errno : 0;
    (void)sigprocmask (SIG_SETMASK, &mask, NULL);
    if (pid < 0)
        return e;
    if (err != 0) { /* exec failed: reap the child */
        e = err;
        while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
            ;
        return e;
    }
    cache_found (argv[0], path, cached != NULL);
    t->pid = pid;
    t->running = true;
    return 0;
}

static void spawn_failed (struct task *t, int e)
{
    t->spawn_errno = e;
    t->exit_code = (e == EPERM || e == EACCES) ? 126 : e == ENOENT ? 127 : 1;
    errno = e;
}

static int pty_start (struct task *t, char **argv, struct env *env)
{
    struct child_fds fds = {t->stdin_fd >= 0 ? t->stdin_fd : t->pty_slave,
                            t->pty_slave, t->pty_slave, t->pmi_fd};
    int e;

    t->pty_poll.data = t;
    if ((e = spawn (t, argv, env_vector (env), &fds)) != 0) {
        spawn_failed (t, e);
        return -1;
    }
    close (t->pty_slave);
    t->pty_slave = -1;
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
        kill (t->pid, SIGKILL);
        return 0;
    }
    t->pty_open = true;
    t->in_open = true;
    pty_poll_update (t);
    return 0;
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

/* The task's stdio: socketpairs, as libuv's UV_CREATE_PIPE makes them
 * (the shell's ends close-on-exec); stdin may be a file instead. */
int task_start (struct task *t, char **argv, struct env *env)
{
    int sv[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    struct child_fds fds;
    int e = 0;

    if (t->on_pty)
        return pty_start (t, argv, env);
    for (int i = 0; i < 3; i++) {
        if (i == 0 && t->stdin_fd >= 0)
            continue;
        if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]) < 0) {
            e = errno;
            goto fail;
        }
    }
    /* [i][0] stays here, [i][1] goes to the task */
    fds.in = t->stdin_fd >= 0 ? t->stdin_fd : sv[0][1];
    fds.out = sv[1][1];
    fds.err = sv[2][1];
    fds.pmi = t->pmi_fd;
    if ((e = spawn (t, argv, env_vector (env), &fds)) != 0)
        goto fail;
    for (int i = 0; i < 3; i++) {
        if (sv[i][1] >= 0)
            close (sv[i][1]);
        sv[i][1] = -1;
    }
    if (t->stdin_fd >= 0) {
        close (t->stdin_fd);
        t->stdin_fd = -1;
    }
    if (t->pmi_fd >= 0) {
        close (t->pmi_fd);
        t->pmi_fd = -1;
    }
    /* the task runs: from here a failure loses its stdio, not the task */
    if (sv[0][0] >= 0) {
        uv_pipe_init (t->shell->loop, &t->in, 0);
        t->in.data = t;
        if (uv_pipe_open (&t->in, sv[0][0]) == 0)
            t->in_open = true;
        else {
            close (sv[0][0]);
            uv_close ((uv_handle_t *)&t->in, NULL);
        }
    }
    for (int i = 0; i < 2; i++) {
        uv_pipe_init (t->shell->loop, &t->out[i], 0);
        t->out[i].data = t;
        if (uv_pipe_open (&t->out[i], sv[i + 1][0]) < 0) {
            close (sv[i + 1][0]);
            uv_close ((uv_handle_t *)&t->out[i], NULL);
            output_eof (t->shell->out, t->rank, i);
            continue;
        }
        t->out_open[i] = true;
        uv_read_start ((uv_stream_t *)&t->out[i], alloc_cb, read_cb);
    }
    return 0;
fail:
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 2; j++)
            if (sv[i][j] >= 0)
                close (sv[i][j]);
    }
    spawn_failed (t, e);
    return -1;
}

void task_kill (struct task *t, int signum)
{
    /* until the task is done its group may hold processes: the task
     * exited, a child of it still writing its output */
    if (t->pid <= 0 || task_done (t))
        return;
    if (!t->own_group) {
        /* nosetpgrp: the task alone (still a zombie if it exited) */
        (void)kill (t->pid, signum);
        return;
    }
    /* ESRCH: the task moved itself to another group (setpgid): it
     * still gets the signal */
    if (kill (-t->pid, signum) < 0 && t->running)
        (void)kill (t->pid, signum);
}

void task_kill_group (struct task *t, int signum)
{
    if (t->pid > 0)
        (void)kill (t->own_group ? -t->pid : t->pid, signum);
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
