/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_PMISERV_H
#define FLUX_CMD_PMISERV_H

/* The PMI-1 server of `flux start`: one simple-protocol engine
 * (libpmi/simple_server.h) serving 'size' local processes, ranks
 * 0..size-1, with an in-memory KVS and a barrier that completes once all
 * of them entered it (they all run on this machine).
 *
 * The owner moves bytes: it feeds whatever it reads from rank R's socket
 * to pmiserv_recv(), which splits the stream into protocol lines, and it
 * writes the replies that arrive through the send callback.  No I/O and
 * no event loop here, so tests can drive whole PMI conversations.
 */
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write one reply line (ending in '\n') to rank.  0, or -1 with errno. */
typedef int (*pmiserv_send_f) (int rank, const char *line, void *arg);
/* rank sent cmd=abort with exit_code and message msg ("" if none). */
typedef void (*pmiserv_abort_f) (int rank, int exit_code, const char *msg,
                                 void *arg);

enum {
    PMISERV_TRACE = 1, /* print every request and reply on stderr */
};

struct pmiserv;

/* Create a server for size (>= 1) processes, KVS name kvsname (a PMI
 * word shorter than 64 bytes).  send_cb is required, abort_cb optional.
 * Returns NULL with errno EINVAL or ENOMEM.
 */
struct pmiserv *pmiserv_create (int size, const char *kvsname,
                                pmiserv_send_f send_cb,
                                pmiserv_abort_f abort_cb, void *arg, int flags);

/* Free the server.  NULL-safe, preserves errno. */
void pmiserv_destroy (struct pmiserv *ps);

/* Feed len bytes received from rank.  Complete lines are handled at
 * once; a partial line waits for the rest.  Returns 0, or 1 once the
 * client finalized or aborted (bytes after that line are ignored and the
 * caller should close the connection after pmiserv_disconnect()), or -1
 * with errno: EINVAL (bad rank or arguments), EPIPE (rank already
 * finished or disconnected), EPROTO (a line longer than the protocol
 * allows, a NUL byte, or a line the engine rejects: the caller should
 * close the connection), ENOMEM, or the send callback's errno.
 */
int pmiserv_recv (struct pmiserv *ps, int rank, const void *buf, size_t len);

/* Forget rank's connection (pending get, barrier entry, partial line).
 * Further pmiserv_recv() for rank fail with EPIPE.
 */
void pmiserv_disconnect (struct pmiserv *ps, int rank);

/* KVS inspection (for tests and tracing): the value of key, or NULL;
 * the number of keys stored.
 */
const char *pmiserv_kvs_lookup (struct pmiserv *ps, const char *key);
int pmiserv_kvs_count (struct pmiserv *ps);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_CMD_PMISERV_H */
