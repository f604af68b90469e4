/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SUBPROCESS_H
#define FLUX_SUBPROCESS_H

/* libsubprocess: the subprocess server protocol of RFC 42, as flux-core
 * speaks it (PROTOCOLS-exec.md section 1), in three parts.
 *
 *  1. flux_cmd_t: a command (argv, env, cwd, opts, channels, label) and
 *     its JSON form, the "cmd" object of an exec request.
 *
 *  2. subprocess_server_t: a server attached to any flux_t handle under a
 *     service name (the broker's "rexec" module, later a job shell's
 *     "<uid>-shell-<id>.rexec").  It answers SERVICE.exec, .write, .kill,
 *     .list, .wait, .attach and .disconnect, spawns children with libuv on
 *     the handle's reactor, and streams their output back.
 *
 *  3. flux_subprocess_t: the client side of one remote process: send
 *     exec to a rank and service, get callbacks for started / output /
 *     finished / completion or error, write stdin, signal.  `flux exec`
 *     uses it; job-exec and the shell can too.
 *
 * The wire, in short (RFC 42 has the rest):
 *   exec   {cmd:o, flags:i, local_flags?:i}   streaming => foreground:
 *          add-credit (write-credit flag only), started {pid}, output
 *          {pid, io:{stream, rank, data?, encoding?, eof?}} (one per line
 *          when line buffered), finished {status} (raw wait status), then
 *          ENODATA once finished and every forwarded stream's EOF were
 *          sent.  A spawn failure is one error response with its errno.
 *          Not streaming => background: one response, started {pid}.
 *   write  {matchtag:i, io:o}  NORESPONSE; found by sender + matchtag.
 *   kill   {pid:i, signum:i, label?:s} -> {}     ESRCH, EINVAL
 *   list   {} -> {rank:i, procs:[{pid, cmd, label, state:"R"|"Z", bg:b,
 *          waitable:b, attached:b}]}
 *   wait   {pid:i, label?:s} -> {status:i, output?:[io...]}
 *   attach {pid:i, label?:s, flags:i}  streaming: attached {pid, cmd},
 *          then as exec.
 *   disconnect: SIGKILL to the sender's foreground processes.
 *
 * What is not done: "stopped" responses (libuv reports no stops),
 * message channels (msgchan is carried, not served), signed requests
 * (RFC 42 "Request Authentication": a request with a signature is
 * refused EPERM, as RFC 42 says a server without flux-security does).
 *
 * Errors follow the project's convention: -1 or NULL with errno set; text
 * in a flux_error_t where one is taken.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "libflux/flux.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- exec flags (RFC 42) ---- */
enum {
    SUBPROCESS_REXEC_STDOUT = 1,
    SUBPROCESS_REXEC_STDERR = 2,
    SUBPROCESS_REXEC_CHANNEL = 4,
    SUBPROCESS_REXEC_WRITE_CREDIT = 8,
    SUBPROCESS_REXEC_WAITABLE = 16,
    /* not in flux-core: the client credits the output it consumed
     * (<service>.output-credit), see SUBPROCESS_OUTPUT_WINDOW */
    SUBPROCESS_REXEC_OUTPUT_CREDIT = 32,
};
/* With OUTPUT_CREDIT (streaming exec only), the server stops reading the
 * process's output once SUBPROCESS_OUTPUT_WINDOW bytes of output
 * responses were not credited back by the client (each response costs
 * SUBPROCESS_OUTPUT_COST of its data's length: a line of 2 bytes takes
 * a broker more than 2 bytes to hold), with
 * `<service>.output-credit {matchtag:i, bytes:I}` (NORESPONSE; matchtag
 * of the exec request, from its sender): the process then blocks on its
 * full pipe instead of the brokers holding what it writes.  This
 * library's client sets it whenever it forwards output and credits each
 * piece once on_output returned, in quarter-window batches.  A client
 * without it (flux-core's) is sent everything as it comes, as
 * flux-core's server does. */
#define SUBPROCESS_OUTPUT_WINDOW (256 * 1024)
#define SUBPROCESS_OUTPUT_COST(len) ((size_t)(len) + 128)
/* local_flags on the wire */
enum {
    SUBPROCESS_LOCAL_STDIO_FALLTHROUGH = 1,
    SUBPROCESS_LOCAL_NO_SETPGRP = 2,
    SUBPROCESS_LOCAL_FORK_EXEC = 4,
};

/* Default per-stream buffer size (opts "<stream>_BUFSIZE"). */
#define SUBPROCESS_DEFAULT_BUFSIZE 4194304

/* ================= 1. the command ================= */

typedef struct flux_cmd flux_cmd_t;

/* Create a command from argc words of argv (argc may be 0) and env, a
 * NULL-terminated "NAME=VALUE" array (NULL: empty environment, which the
 * server replaces by its own).  NULL with ENOMEM / EINVAL.
 */
flux_cmd_t *flux_cmd_create (int argc, char *const argv[], char *const env[]);
void flux_cmd_destroy (flux_cmd_t *cmd); /* NULL-safe, keeps errno */
flux_cmd_t *flux_cmd_copy (const flux_cmd_t *cmd);

int flux_cmd_argv_append (flux_cmd_t *cmd, const char *arg);
int flux_cmd_argc (const flux_cmd_t *cmd);
const char *flux_cmd_arg (const flux_cmd_t *cmd, int n); /* NULL past end */

/* Environment: set (overwrite false keeps an existing value), unset, get
 * (NULL if unset), and the whole as a NULL-terminated array the caller
 * frees with flux_cmd_env_free().
 */
int flux_cmd_setenv (flux_cmd_t *cmd, const char *name, const char *value,
                     bool overwrite);
void flux_cmd_unsetenv (flux_cmd_t *cmd, const char *name);
const char *flux_cmd_getenv (const flux_cmd_t *cmd, const char *name);
int flux_cmd_env_count (const flux_cmd_t *cmd);
char **flux_cmd_env_expand (const flux_cmd_t *cmd);
void flux_cmd_env_free (char **env);

/* cwd: NULL unsets (the server's directory is used). */
int flux_cmd_setcwd (flux_cmd_t *cmd, const char *cwd);
const char *flux_cmd_getcwd (const flux_cmd_t *cmd);

/* Channels: a socketpair each; the child sees NAME=<fd number>. */
int flux_cmd_add_channel (flux_cmd_t *cmd, const char *name);
int flux_cmd_channel_count (const flux_cmd_t *cmd);
const char *flux_cmd_channel (const flux_cmd_t *cmd, int n);

/* Options: string values (e.g. "stdout_LINE_BUFFER" = "false"). */
int flux_cmd_setopt (flux_cmd_t *cmd, const char *name, const char *value);
const char *flux_cmd_getopt (const flux_cmd_t *cmd, const char *name);

/* Label (NULL unsets; an empty label is EINVAL, as RFC 42 says). */
int flux_cmd_set_label (flux_cmd_t *cmd, const char *label);
const char *flux_cmd_get_label (const flux_cmd_t *cmd);

/* JSON.  The encoder emits what flux-core's does: cmdline and env only
 * when not empty, opts, channels and msgchan always, cwd and label when
 * set.  The decoder requires cmdline:[s], env:{s:s}, opts:{s:s},
 * channels:[s] and accepts cwd:s, label:s (not empty), msgchan:[{name:s,
 * uri:s}]; anything else fails EPROTO with "error parsing command string",
 * an empty cmdline with "command string is empty".  Unknown keys are
 * ignored.  tojson returns a new reference.
 */
json_t *flux_cmd_tojson (const flux_cmd_t *cmd);
flux_cmd_t *flux_cmd_fromjson (const json_t *o, flux_error_t *error);

/* Parse the size of opts "<stream>_BUFSIZE" ("4096", "64k", "4M", "1G":
 * powers of 1024).  0 is EINVAL, above INT_MAX EOVERFLOW, garbage EINVAL.
 * *size is SUBPROCESS_DEFAULT_BUFSIZE when the option is not set.
 */
int subprocess_cmd_bufsize (const flux_cmd_t *cmd, const char *stream,
                            int *size, flux_error_t *error);
/* "<stream>_LINE_BUFFER": true (default) or false; else EINVAL. */
int subprocess_cmd_line_buffer (const flux_cmd_t *cmd, const char *stream,
                                bool *line, flux_error_t *error);

/* ---- I/O objects (RFC 42 / RFC 24 data events) ---- */

/* Encode {stream, rank, data?, encoding?, eof?}: data (len bytes, may be
 * NULL with len 0) goes as a string if it is valid UTF-8, else base64
 * with encoding "base64".  New reference, NULL with ENOMEM.
 */
json_t *subprocess_io_encode (const char *stream, const char *rank,
                              const void *data, size_t len, bool eof);
/* Decode: *stream, *rank borrowed from o; *data malloc'd (NULL if none;
 * caller frees), *len, *eof.  EPROTO if o is malformed (missing stream or
 * rank, data not a string, encoding other than UTF-8/base64, bad base64).
 */
int subprocess_io_decode (const json_t *o, const char **stream,
                          const char **rank, char **data, size_t *len,
                          bool *eof);
/* True if the len bytes of s are valid UTF-8 (no overlongs, no
 * surrogates, nothing above U+10FFFF). */
bool subprocess_utf8_valid (const void *s, size_t len);

/* ================= 2. the server ================= */

typedef struct subprocess_server subprocess_server_t;

/* Attach a server to h under service (its handlers "SERVICE.exec" ...
 * are registered on h; registering the service name with the broker, if
 * needed, is the caller's job).  local_uri is what children get as
 * FLUX_URI; rank is the broker rank sent in io "rank".  Handlers are
 * owner only.  NULL with errno on failure.
 * The process must ignore SIGPIPE (the broker does): writing to the
 * stdin of a child that exited would otherwise kill it.
 */
subprocess_server_t *subprocess_server_create (flux_t *h, const char *service,
                                               const char *local_uri,
                                               uint32_t rank,
                                               flux_error_t *error);

/* An extra check of every request (after the owner-only role check):
 * return 0 to let it through, or -1 with errno set and, optionally, text
 * in error to refuse it (the requester gets that errno; a write, which
 * has no response, is dropped).  cb NULL removes the check.
 */
typedef int (*subprocess_server_auth_f) (const flux_msg_t *msg, void *arg,
                                         flux_error_t *error);
void subprocess_server_set_auth_cb (subprocess_server_t *s,
                                    subprocess_server_auth_f cb, void *arg);

/* Let one user who is not the instance owner use the server too: a
 * request with the user role is then accepted when its userid is uid (a
 * job shell's server: the job's user), any other guest gets EPERM.  The
 * owner keeps access.  -1 with errno EINVAL on a NULL server.
 */
int subprocess_server_allow_user (subprocess_server_t *s, uint32_t uid);

/* Refuse new processes (exec answers ENOSYS) and send signum to every
 * running child's process group.  Returns the number of running
 * children signalled.
 */
int subprocess_server_terminate (subprocess_server_t *s, int signum);

/* Children not yet reaped. */
int subprocess_server_running (subprocess_server_t *s);

/* True if pid is a child this server spawned and has not yet reaped
 * (its exit is waited for here: a caller reaping other children must
 * leave it alone). */
bool subprocess_server_owns (subprocess_server_t *s, pid_t pid);

/* Processes of the server's own user (the rexec module's bulk exec),
 * spawned with no request: what an exec client would be answered goes to
 * a sink instead.  sink gets each response (borrowed: started, output,
 * add-credit, finished, as on the wire), then once resp NULL and errnum
 * ENODATA: the stream is over (after the finished and the EOF of each
 * forwarded stream, as RFC 42 orders them) and the process is no longer
 * the server's.  flags as an exec's (foreground); no local flags; stdin
 * is /dev/null.
 * Returns the pid, or -1 with errno and error set (sink never called).
 */
typedef void (*subprocess_server_sink_f) (const json_t *resp, int errnum,
                                          void *arg);
pid_t subprocess_server_spawn (subprocess_server_t *s, flux_cmd_t *cmd,
                               int flags, subprocess_server_sink_f sink,
                               void *arg, flux_error_t *error);

/* Write to stream of the server's process pid (EOF: data NULL, len 0,
 * eof true); -1 with ESRCH if pid is not a process of the server. */
int subprocess_server_write (subprocess_server_t *s, pid_t pid,
                             const char *stream, const char *data, size_t len,
                             bool eof);

/* Send signum to the server's process pid (its process group unless it
 * was spawned no-setpgrp); -1 with ESRCH if pid is not running. */
int subprocess_server_kill (subprocess_server_t *s, pid_t pid, int signum);

/* Stop reading the output of the server's process pid (pause true), or
 * read it again (what was held goes to the sink on the next loop turn,
 * not from inside this call): a paused process blocks once its pipes
 * are full, and its end waits for its output to be read.  Output is
 * line-buffered per read for a sink: the complete lines of one read are one
 * response. -1 with ESRCH if pid is not a sink process of the server. */
int subprocess_server_pause (subprocess_server_t *s, pid_t pid, bool pause);

/* The sink of pid is no longer called: the process gets SIGKILL if it
 * still runs and is reaped as a client-less one. */
void subprocess_server_forget (subprocess_server_t *s, pid_t pid);

/* Called once a client's disconnect request was handled (msg: the
 * disconnect, whose sender is the client that went), for the server's
 * user to drop what it holds for that client.  cb NULL: none. */
typedef void (*subprocess_server_disconnect_f) (const flux_msg_t *msg,
                                                void *arg);
void subprocess_server_set_disconnect_cb (subprocess_server_t *s,
                                          subprocess_server_disconnect_f cb,
                                          void *arg);

/* Counters for stats-get: a new object {running, zombies, started,
 * failed, exited}. */
json_t *subprocess_server_stats (subprocess_server_t *s);

/* Destroy: handlers removed, SIGKILL to the children that are still
 * running, their handles closed (they are freed on the reactor's next
 * turns).  Callers wanting a clean end call terminate() and run the
 * reactor until running() is 0 first.  NULL-safe.
 */
void subprocess_server_destroy (subprocess_server_t *s);

/* ================= 3. the client ================= */

typedef struct flux_subprocess flux_subprocess_t;

/* Callbacks, each optional.  Having on_output asks for stdout and stderr,
 * having on_credit asks for write credits.  data of on_output is the
 * decoded bytes (not NUL-terminated), NULL with eof true at the stream's
 * end.  on_finished gives the raw wait status.  on_complete runs once at
 * the end of a successful stream (ENODATA after finished); on_error once
 * instead when the exec failed (errnum is the spawn errno, EHOSTUNREACH,
 * ENOSYS...) or the stream broke (EPROTO, ECONNRESET): text may be NULL.
 * After on_complete or on_error no callback runs again.
 * flux_subprocess_destroy() may be called from any callback.
 */
struct flux_subprocess_ops {
    void (*on_started) (flux_subprocess_t *p, void *arg);
    void (*on_output) (flux_subprocess_t *p, const char *stream,
                       const char *data, size_t len, bool eof, void *arg);
    void (*on_credit) (flux_subprocess_t *p, const char *stream, int bytes,
                       void *arg);
    void (*on_finished) (flux_subprocess_t *p, int status, void *arg);
    void (*on_complete) (flux_subprocess_t *p, void *arg);
    void (*on_error) (flux_subprocess_t *p, int errnum, const char *text,
                      void *arg);
};

/* Start cmd on rank through "SERVICE.exec" (foreground, streaming).
 * The command is copied.  Returns the handle at once; callbacks run
 * from h's reactor.  NULL with errno if the request cannot be sent.
 */
flux_subprocess_t *flux_rexec (flux_t *h, const char *service, uint32_t rank,
                               const flux_cmd_t *cmd,
                               const struct flux_subprocess_ops *ops,
                               void *arg);

/* Attach to a background process of the server on rank, by pid, or by
 * label if label is not NULL ("SERVICE.attach", streaming): it then goes
 * on as for flux_rexec() (on_started when the server says "attached",
 * output from then on, finished, complete), but there is no stdin to
 * write.  A process that is not there gives on_error (ENOENT), one that
 * is foreground, attached or waited on EBUSY.  Destroying the handle
 * does not detach it: closing h does (the server's disconnect).
 */
flux_subprocess_t *flux_rexec_attach (flux_t *h, const char *service,
                                      uint32_t rank, pid_t pid,
                                      const char *label,
                                      const struct flux_subprocess_ops *ops,
                                      void *arg);

/* Write len bytes to stream ("stdin" or a channel), or with eof true
 * (data may be NULL) send the end of it.  Sent at once (NORESPONSE),
 * whether or not the process started: the server keeps the order.
 * EPIPE after EOF was sent or after the stream ended.
 */
int flux_subprocess_write (flux_subprocess_t *p, const char *stream,
                           const void *data, size_t len, bool eof);

/* Send signum.  Before the pid is known the signal is held and sent once
 * it is; after the process ended it is ESRCH.  The kill RPC's answer is
 * not reported (a process that just exited gives ESRCH there).
 */
int flux_subprocess_kill (flux_subprocess_t *p, int signum);

pid_t flux_subprocess_pid (const flux_subprocess_t *p); /* -1 before */
uint32_t flux_subprocess_rank (const flux_subprocess_t *p);
/* started / finished yet, and the raw status (valid once finished) */
bool flux_subprocess_started (const flux_subprocess_t *p);
bool flux_subprocess_finished (const flux_subprocess_t *p);
int flux_subprocess_status (const flux_subprocess_t *p);
/* true once on_complete or on_error ran */
bool flux_subprocess_done (const flux_subprocess_t *p);

void flux_subprocess_aux_set (flux_subprocess_t *p, void *aux);
void *flux_subprocess_aux_get (const flux_subprocess_t *p);

/* Destroy.  A process still running is not killed by this (the server
 * kills it when the client's connection goes away).  NULL-safe; may be
 * called from a callback of p.
 */
void flux_subprocess_destroy (flux_subprocess_t *p);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_SUBPROCESS_H */
