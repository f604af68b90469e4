/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_PMI_SIMPLE_SERVER_H
#define FLUX_PMI_SIMPLE_SERVER_H

/* Server side of the PMI-1 "simple" wire protocol (RFC 13), as a protocol
 * engine that owns no sockets and no event loop.
 *
 * The owner (`flux start`, the job shell, a test) connects each local
 * process, reads its requests one line at a time (at most
 * PMI_SIMPLE_LINE_MAX bytes, see keyval.h) and hands every line to
 * pmi_simple_server_request() together with an opaque 'client' pointer
 * that names the connection and the process's rank.  The engine parses
 * the request and answers through ops->response_send (client, line), or
 * asks the owner for what it cannot answer alone:
 *
 *   kvs_put (arg, kvsname, key, val)
 *       store a validated KVS entry.  Return 0, or -1 with errno to make
 *       the client's put fail (e.g. EEXIST for a key put twice).
 *   kvs_get (arg, client, kvsname, key)
 *       look up a key for 'client'.  The owner answers, now from inside
 *       the callback or later, with pmi_simple_server_kvs_get_complete()
 *       (value, or NULL for "no such key").  Return 0, or -1 with errno
 *       if the lookup cannot even start (the client then gets an error
 *       reply, unless the owner already completed it).
 *   barrier_enter (arg)
 *       called once all local_procs clients have sent barrier_in.  The
 *       owner synchronizes with the rest of the program (its own KVS
 *       fence, other nodes...) and then, now or later, calls
 *       pmi_simple_server_barrier_complete(), which answers every waiting
 *       client.  Return 0, or -1 to fail the barrier at once (every
 *       waiting client gets rc=-1).
 *   response_send (client, buf)
 *       write 'buf' (one line, ending in '\n') to the client.  Return 0,
 *       or -1 with errno; the error is passed back to the caller of the
 *       engine function that was replying.
 *   debug_trace (client, line)       optional, called only with the
 *       PMI_SIMPLE_SERVER_TRACE flag, for each request received and each
 *       reply sent, as "<rank>: C: <line>" or "<rank>: S: <line>" without
 *       newline.
 *   abort (arg, client, exit_code, msg)    optional, called when a client
 *       sends cmd=abort; msg is the client's message ("" if none).
 *
 * Protocol as served:
 *   init          answered with pmi_version=1 pmi_subversion=1 (or 0 if the
 *                 client asked for 1.0); a client asking for a version
 *                 below 1 gets rc=-1, one asking for 2 or more is offered
 *                 1.1 and decides.  Requests before init are accepted
 *                 (RFC 13 back compatibility).
 *   get_maxes     PMI_SIMPLE_KVSNAME_MAX, _KEYLEN_MAX, _VALLEN_MAX
 *   get_appnum, get_universe_size, get_my_kvsname   from create()
 *   put, get      kvsname must equal the server's; key and value are
 *                 checked against the maxima (which count the NUL) and
 *                 the character rules of keyval.h; a violation gets an
 *                 error reply (INVALID_ARG/_KEY/_KEY_LENGTH/_VAL_LENGTH,
 *                 INVALID_NUM_ARGS for a missing field), never a call to
 *                 the owner.  A missing key gets rc=-1 msg=key_not_found.
 *   barrier_in    see barrier_enter above
 *   finalize      answered with finalize_ack; request() returns 1
 *   abort         "cmd=abort exitcode=N [error_msg=TEXT | message=TEXT]"
 *                 (TEXT may contain blanks); no reply; request() returns 1
 *   publish_name, unpublish_name, lookup_name   rc=-1 (unsupported)
 *   mcmd=spawn    lines are swallowed up to the last "endcmd" (per
 *                 totspawns/spawnssofar), then spawn_result rc=-1
 *   other cmd     "cmd=error rc=-1 msg=unsupported_command:<cmd>"
 * Error replies carry "msg=" text without blanks.
 *
 * The protocol is lock-step: a client that sends a request while its get
 * or barrier is still pending is in error (EPROTO).  Lines that are not
 * PMI requests at all are EPROTO too; the caller should then close the
 * client.  Nothing a client sends makes the engine crash or abort.
 *
 * Lifetime: 'client' pointers are the owner's.  When a connection goes
 * away, call pmi_simple_server_disconnect() before freeing what 'client'
 * points to, so that no pending get or barrier refers to it.  None of the
 * engine's functions may be called from the debug_trace callback, and
 * pmi_simple_server_destroy() may not be called from any callback.
 */
#include "keyval.h" /* PMI_SIMPLE_LINE_MAX, PMI_SIMPLE_* rc codes */

#ifdef __cplusplus
extern "C" {
#endif

/* Limits reported by get_maxes and enforced by put/get, in bytes
 * including the terminating NUL (RFC 13), as MPICH hydra reports.
 */
#define PMI_SIMPLE_KVSNAME_MAX 64
#define PMI_SIMPLE_KEYLEN_MAX 64
#define PMI_SIMPLE_VALLEN_MAX 1024

/* create() flags */
enum {
    PMI_SIMPLE_SERVER_TRACE = 1, /* call ops->debug_trace */
};

struct pmi_simple_ops {
    int (*kvs_put) (void *arg, const char *kvsname, const char *key,
                    const char *val);
    int (*kvs_get) (void *arg, void *client, const char *kvsname,
                    const char *key);
    int (*barrier_enter) (void *arg);
    int (*response_send) (void *client, const char *buf);
    void (*debug_trace) (void *client, const char *line);
    void (*abort) (void *arg, void *client, int exit_code, const char *msg);
};

struct pmi_simple_server;

/* Create an engine serving 'local_procs' (>= 1) clients of a program
 * whose KVS is named 'kvsname' (a valid word, keyval.h, shorter than
 * PMI_SIMPLE_KVSNAME_MAX), with the given appnum (>= 0) and universe_size
 * (>= 1).  ops is copied; kvs_put, kvs_get, barrier_enter and
 * response_send are required.  'arg' is passed to the ops that take it.
 * Returns the engine, or NULL with errno EINVAL or ENOMEM.
 */
struct pmi_simple_server *pmi_simple_server_create (
    const struct pmi_simple_ops *ops, int appnum, int universe_size,
    int local_procs, const char *kvsname, int flags, void *arg);

/* Free the engine, forgetting pending gets and barrier entries without
 * answering them.  NULL is a no-op; errno is preserved.
 */
void pmi_simple_server_destroy (struct pmi_simple_server *s);

/* Handle one request line from 'client' (non-NULL), whose rank is 'rank'
 * (>= 0, used in traces).  'line' may or may not end in its newline.
 * Any reply is sent before this returns, unless it waits for the owner
 * (kvs_get, barrier_enter).
 * Returns 0 if handled (including error replies to bad requests), 1 if
 * the client finalized or aborted (the caller may close it, after
 * pmi_simple_server_disconnect()), or -1 with errno: EPROTO (the line is
 * not a PMI request, is too long, or breaks lock-step; no reply was
 * sent; close the client), EINVAL (bad argument), ENOMEM, or the errno
 * of a failed response_send.
 */
int pmi_simple_server_request (struct pmi_simple_server *s, const char *line,
                               void *client, int rank);

/* Answer the pending get of 'client' with 'val' (copied), or with a
 * key_not_found error if val is NULL.  May be called from inside
 * ops->kvs_get.  Returns 0, or -1 with errno: ENOENT (client has no
 * pending get), EINVAL (bad argument, or val is not a valid value or
 * not shorter than PMI_SIMPLE_VALLEN_MAX; the get stays pending, so the
 * owner should retry with NULL), or the errno of a failed response_send
 * (the get is then no longer pending).
 */
int pmi_simple_server_kvs_get_complete (struct pmi_simple_server *s,
                                        void *client, const char *val);

/* Release the barrier: answer every client waiting in it with rc=0 if
 * rc is 0, else rc=-1.  May be called from inside ops->barrier_enter.
 * Returns 0, or -1 with errno: EINVAL (no barrier was entered, or bad
 * argument), or the errno of the first failed response_send (all other
 * clients are still answered and the barrier is over).
 */
int pmi_simple_server_barrier_complete (struct pmi_simple_server *s, int rc);

/* Forget 'client': drop its pending get (a later get_complete for it
 * fails with ENOENT), its barrier entry (the barrier then waits for one
 * more client; if barrier_enter was already called, it completes without
 * it) and any half-received spawn request.  Unknown clients are ignored.
 */
void pmi_simple_server_disconnect (struct pmi_simple_server *s, void *client);

/* For an owner's response_send: write all of line to the connected stream
 * socket fd (blocking or not: while it is full, wait in poll(), 1 s at a
 * time).  A client that is gone is EPIPE, never SIGPIPE.  Returns 0, or
 * -1 with errno.
 */
int pmi_simple_server_send_line (int fd, const char *line);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_PMI_SIMPLE_SERVER_H */
