/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* proc.c - a job shell process and its output (see proc.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

#define LINE_MAX_BYTES 4096

struct pipe_ctx {
    uv_pipe_t pipe;
    struct proc *p;
    const char *name;
    bool open;
    size_t len;
    char buf[LINE_MAX_BYTES + 1];
};

struct proc {
    uv_process_t process;
    bool process_open;
    bool exited;
    bool destroyed;
    pid_t pid;
    struct pipe_ctx out, err;
    proc_exit_f exit_cb;
    proc_line_f line_cb;
    void *arg;
};

int proc_wait_status (int64_t exit_status, int term_signal)
{
    if (term_signal > 0)
        return term_signal & 0x7f;
    return (int)((exit_status & 0xff) << 8);
}

/* Free once every handle is closed. */
static void maybe_free (struct proc *p)
{
    if (p->destroyed && !p->process_open && !p->out.open && !p->err.open)
        free (p);
}

static void pipe_close_cb (uv_handle_t *h)
{
    struct pipe_ctx *pc = h->data;
    pc->open = false;
    maybe_free (pc->p);
}

static void process_close_cb (uv_handle_t *h)
{
    struct proc *p = h->data;
    p->process_open = false;
    maybe_free (p);
}

static void emit (struct pipe_ctx *pc)
{
    pc->buf[pc->len] = '\0';
    if (pc->p->line_cb && !pc->p->destroyed)
        pc->p->line_cb (pc->p, pc->name, pc->buf, pc->p->arg);
    pc->len = 0;
}

static void alloc_cb (uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct pipe_ctx *pc = h->data;
    buf->base = pc->buf + pc->len;
    buf->len = LINE_MAX_BYTES - pc->len;
}

static void pipe_shut (struct pipe_ctx *pc)
{
    if (pc->open && !uv_is_closing ((uv_handle_t *)&pc->pipe)) {
        uv_read_stop ((uv_stream_t *)&pc->pipe);
        uv_close ((uv_handle_t *)&pc->pipe, pipe_close_cb);
    }
}

static void read_cb (uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct pipe_ctx *pc = s->data;

    if (n < 0) {
        if (pc->len > 0)
            emit (pc);
        pipe_shut (pc);
        return;
    }
    /* the bytes were read in place, at buf->base == pc->buf + pc->len */
    pc->len += (size_t)n;
    for (;;) {
        char *nl = memchr (pc->buf, '\n', pc->len);
        size_t rest;
        if (!nl)
            break;
        *nl = '\0';
        rest = pc->len - (size_t)(nl - pc->buf) - 1;
        pc->len = (size_t)(nl - pc->buf);
        emit (pc);
        memmove (pc->buf, nl + 1, rest);
        pc->len = rest;
    }
    if (pc->len == LINE_MAX_BYTES)
        emit (pc); /* a very long line: in pieces */
}

static void exit_cb (uv_process_t *h, int64_t exit_status, int term_signal)
{
    struct proc *p = h->data;

    p->exited = true;
    /* strays of the shell's group (its tasks) go with it */
    (void)kill (-p->pid, SIGKILL);
    uv_close ((uv_handle_t *)&p->process, process_close_cb);
    if (p->exit_cb && !p->destroyed)
        p->exit_cb (p, proc_wait_status (exit_status, term_signal), p->arg);
}

static int pipe_init (uv_loop_t *loop, struct proc *p, struct pipe_ctx *pc,
                      const char *name)
{
    int e;

    pc->p = p;
    pc->name = name;
    if ((e = uv_pipe_init (loop, &pc->pipe, 0)) < 0) {
        errno = -e;
        return -1;
    }
    pc->pipe.data = pc;
    pc->open = true;
    return 0;
}

struct proc *proc_spawn (uv_loop_t *loop, char **argv, char **env,
                         proc_exit_f exit_cb_fn, proc_line_f line_cb, void *arg,
                         flux_error_t *error)
{
    struct proc *p;
    uv_process_options_t opts = {0};
    uv_stdio_container_t stdio[3];
    int e;

    if (!(p = calloc (1, sizeof (*p)))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    p->exit_cb = exit_cb_fn;
    p->line_cb = line_cb;
    p->arg = arg;
    if (pipe_init (loop, p, &p->out, "stdout") < 0
        || pipe_init (loop, p, &p->err, "stderr") < 0) {
        errprintf (error, "pipe: %s", strerror (errno));
        goto error;
    }
    stdio[0].flags = UV_IGNORE; /* /dev/null */
    stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[1].data.stream = (uv_stream_t *)&p->out.pipe;
    stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[2].data.stream = (uv_stream_t *)&p->err.pipe;
    opts.file = argv[0];
    opts.args = argv;
    opts.env = env;
    opts.cwd = "/";
    opts.stdio = stdio;
    opts.stdio_count = 3;
    opts.exit_cb = exit_cb;
    opts.flags = UV_PROCESS_DETACHED; /* setsid: leader of its own group */
    p->process.data = p;
    if ((e = uv_spawn (loop, &p->process, &opts)) < 0) {
        errno = -e;
        errprintf (error, "%s: %s", argv[0], uv_strerror (e));
        /* libuv wants the handle closed even after a failed spawn */
        p->process_open = true;
        goto error;
    }
    p->process_open = true;
    p->pid = p->process.pid;
    if ((e = uv_read_start ((uv_stream_t *)&p->out.pipe, alloc_cb, read_cb)) < 0
        || (e = uv_read_start ((uv_stream_t *)&p->err.pipe, alloc_cb, read_cb))
               < 0) {
        /* the shell runs: it is reported normally, its output is lost */
        pipe_shut (&p->out);
        pipe_shut (&p->err);
    }
    return p;
error : {
    int saved_errno = errno;
    p->destroyed = true;
    pipe_shut (&p->out);
    pipe_shut (&p->err);
    if (p->process_open)
        uv_close ((uv_handle_t *)&p->process, process_close_cb);
    maybe_free (p);
    errno = saved_errno;
}
    return NULL;
}

void proc_destroy (struct proc *p)
{
    if (p) {
        int saved_errno = errno;
        p->destroyed = true;
        pipe_shut (&p->out);
        pipe_shut (&p->err);
        if (p->process_open && !p->exited
            && !uv_is_closing ((uv_handle_t *)&p->process)) {
            /* the owner is going (unload): the job goes with it */
            (void)kill (-p->pid, SIGKILL);
            uv_close ((uv_handle_t *)&p->process, process_close_cb);
        }
        maybe_free (p);
        errno = saved_errno;
    }
}

int proc_kill (struct proc *p, int signum, bool pgrp)
{
    if (p->exited) {
        errno = ESRCH;
        return -1;
    }
    return kill (pgrp ? -p->pid : p->pid, signum);
}

pid_t proc_pid (const struct proc *p)
{
    return p->pid;
}

bool proc_exited (const struct proc *p)
{
    return p->exited;
}
