/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* task.c - spawn one task with libuv, read its output, write its stdin.
 *
 * Tasks stay in the shell's process group (no UV_PROCESS_DETACHED), so
 * the agent's last-resort killpg() ends them with the shell.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output.h"
#include "shell.h"
#include "task.h"

struct task *task_create (struct shell *shell, int rank, int localid)
{
    struct task *t = calloc (1, sizeof (*t));

    if (t) {
        t->shell = shell;
        t->rank = rank;
        t->localid = localid;
        t->stdin_fd = -1;
        t->pmi_fd = -1;
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
    t->in_open = t->out_open[0] = t->out_open[1] = false;
}

bool task_done (const struct task *t)
{
    return (t->reaped || t->spawn_errno) && !t->out_open[0] && !t->out_open[1];
}

static void exit_cb (uv_process_t *proc, int64_t status, int signum)
{
    struct task *t = proc->data;

    t->running = false;
    t->reaped = true;
    if (signum) {
        t->wait_status = signum;
        t->exit_code = 128 + signum;
    }
    else {
        t->wait_status = ((int)status & 0xff) << 8;
        t->exit_code = (int)status;
    }
    uv_close ((uv_handle_t *)proc, NULL);
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

int task_start (struct task *t, char **argv, struct env *env)
{
    uv_process_options_t opts = {0};
    uv_stdio_container_t stdio[4];
    int e;

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
    if (t->running)
        (void)kill (t->pid, signum);
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
