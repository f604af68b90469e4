/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef LIBSUBPROCESS_PROC_H
#define LIBSUBPROCESS_PROC_H

/* Internal to libsubprocess: the server and its processes. */
#include <uv.h>

#include "libflux/list.h"
#include "subprocess.h"

struct subprocess_server {
    flux_t *h;
    char *service;
    char *local_uri;
    uint32_t rank;
    char rankstr[16];
    flux_msg_handler_t **handlers;
    struct proc *procs; /* doubly linked, newest first */
    bool shutting_down;
    subprocess_server_auth_f auth_cb;
    void *auth_arg;
    subprocess_server_disconnect_f disconnect_cb;
    void *disconnect_arg;
    bool allow_user; /* requests from allow_uid with the user role too */
    uint32_t allow_uid;
    int started, failed, exited;
    int devnull; /* /dev/null, opened at the first need (-1 until then) */
    char *rbuf;  /* reads of streams that hold nothing go here (alloc_cb) */
    sigset_t rt_reset; /* real-time signals a child resets (not default) */
    bool rt_known;     /* rt_reset was filled (at the first spawn) */
    /* processes resumed with output held: flushed on the next loop turn
     * (proc_pause), not inside the caller of the resume */
    uv_idle_t *resume_idle;
    struct list_node resume_list;
};

enum stream_kind { STREAM_STDIN, STREAM_OUTPUT, STREAM_CHANNEL };

struct stream {
    struct proc *p;
    const char *name; /* "stdin", "stdout", "stderr" or the channel's */
    enum stream_kind kind;
    int flag; /* the exec flag that forwards it: STDOUT, STDERR, CHANNEL */
    uv_pipe_t pipe;
    bool open;     /* pipe initialized and not yet closed */
    bool reading;  /* an output side exists and has not reached EOF */
    bool read_eof; /* no output side, or it reached EOF */
    bool writable; /* an input side exists, EOF not yet asked for */
    bool shutdown; /* uv_shutdown issued */
    bool eof_held; /* output: EOF read while paused, what it holds waits */
    /* output: what was read and not yet sent (line buffering) */
    char *buf;
    size_t len, cap;
    bool line;
    /* input: bytes handed to libuv and not yet written */
    size_t wpending;
    int bufsize;
    uv_shutdown_t shutdown_req;
};

struct proc {
    subprocess_server_t *s;
    flux_cmd_t *cmd;
    const flux_msg_t
        *exec_msg;            /* foreground: the exec request (write lookup) */
    const flux_msg_t *client; /* the request responses go to, or NULL */
    /* a process of the server's own user (subprocess_server_spawn):
     * what a client would be answered goes to sink while sink_open */
    subprocess_server_sink_f sink;
    void *sink_arg;
    bool sink_open;
    const flux_msg_t *wait_msg; /* a pending wait */
    int flags;                  /* forwarding flags of the client */
    int local_flags;
    bool background, waitable, waited;
    uv_poll_t process; /* on pidfd: readable once the child exited */
    int pidfd;         /* -1 if none */
    bool process_open; /* process handle initialized, not yet closed */
    pid_t pid;
    bool exited;
    int status;
    bool finished_sent;
    int nstreams;
    struct stream *streams;
    int handles; /* libuv handles not yet closed */
    bool released;
    bool paused;             /* output not read nor sent (proc_pause) */
    struct list_node resume; /* on the server's resume_list, or detached */
    size_t out_inflight;     /* OUTPUT_CREDIT: data sent, not yet credited */
    json_t *output; /* waitable: the newest io objects, ~8 KiB of data */
    size_t output_bytes;
    struct proc *next, *prev;
};

/* Spawn cmd (owned from here on, also on failure) for the exec request
 * msg and answer it (started, or the error).  NULL if nothing runs. */
struct proc *proc_spawn (subprocess_server_t *s, const flux_msg_t *msg,
                         flux_cmd_t *cmd, int flags, int local_flags,
                         bool background);
/* Spawn cmd (owned from here on) in the foreground for sink instead of
 * a request: started, output and finished go to sink, then its end.
 * NULL with errno and error set (sink not called) if nothing runs. */
struct proc *proc_spawn_sink (subprocess_server_t *s, flux_cmd_t *cmd,
                              int flags, subprocess_server_sink_f sink,
                              void *arg, flux_error_t *error);
int proc_signal (struct proc *p, int signum);
/* Stop reading and sending the output streams (pause: a line-buffered
 * stream stops at the line in hand), or resume: what they held is sent
 * on the next loop turn (never from inside this call), then they are
 * read again. */
void proc_pause (struct proc *p, bool pause);
/* The client credits bytes of output (OUTPUT_CREDIT). */
void proc_output_credit (struct proc *p, size_t bytes);
/* The client went: nothing is held back for it any more. */
void proc_client_gone (struct proc *p);
void proc_write (struct proc *p, const char *stream, const char *data,
                 size_t len, bool eof);
void proc_attach (struct proc *p, const flux_msg_t *msg, int flags);
/* End the stream / the process's life if it is over. */
void proc_check_done (struct proc *p);
/* Unlink from the server, close handles, free once they are closed. */
void proc_release (struct proc *p);

struct proc *server_find (subprocess_server_t *s, pid_t pid, const char *label);
/* Close the server's resume handle (freed once closed). */
void proc_resume_fini (subprocess_server_t *s);
void server_unlink (subprocess_server_t *s, struct proc *p);

#endif /* !LIBSUBPROCESS_PROC_H */
