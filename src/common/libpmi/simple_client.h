/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_PMI_SIMPLE_CLIENT_H
#define FLUX_PMI_SIMPLE_CLIENT_H

/* Client side of the PMI-1 "simple" wire protocol (RFC 13).
 *
 * A PMI-1 launcher (MPICH hydra, Slurm's pmi2 plugin, `flux start`, the
 * job shell) pre-connects a file descriptor and exports PMI_FD, PMI_RANK,
 * PMI_SIZE and, for dynamically spawned programs, PMI_SPAWNED.  Create a
 * client from those strings, call pmi_simple_client_init(), then use the
 * KVS and barrier, then finalize:
 *
 *     pmi = pmi_simple_client_create_fd (getenv ("PMI_FD"),
 *                                        getenv ("PMI_RANK"),
 *                                        getenv ("PMI_SIZE"),
 *                                        getenv ("PMI_SPAWNED"));
 *     pmi_simple_client_init (pmi);
 *     pmi_simple_client_kvs_get_my_name (pmi, kvsname, sizeof (kvsname));
 *     pmi_simple_client_kvs_put (pmi, kvsname, "key0", "value");
 *     pmi_simple_client_kvs_commit (pmi, kvsname);
 *     pmi_simple_client_barrier (pmi);
 *     pmi_simple_client_kvs_get (pmi, kvsname, "key1", buf, sizeof (buf));
 *     pmi_simple_client_finalize (pmi);
 *     pmi_simple_client_destroy (pmi);
 *
 * Every call that talks to the server sends one request line and blocks
 * reading one reply line (the protocol is lock-step).  Replies are parsed
 * with keyval (see keyval.h): keys may come in any order and unknown keys
 * are ignored, so hydra's "cmd=response_to_init pmi_version=1
 * pmi_subversion=1 rc=0" and Slurm's "cmd=response_to_init rc=0
 * pmi_version=1 pmi_subversion=1" are both fine.  A missing "rc" means
 * success.
 *
 * Errors: functions return -1 (or NULL) with errno set.
 *   EINVAL        bad argument, or a request before pmi_simple_client_init()
 *                 succeeded (init itself and abort excepted)
 *   EOVERFLOW     a result does not fit the caller's buffer, or a request
 *                 would not fit in PMI_SIMPLE_LINE_MAX
 *   EPROTO        the server sent something that is not the expected reply:
 *                 malformed, too long, wrong "cmd=", a required key missing
 *   EPROTONOSUPPORT  the server chose a PMI version other than 1
 *   ECONNRESET    the server closed the connection
 *   ENOTCONN      an earlier call failed with EPROTO, EPROTONOSUPPORT or an
 *                 I/O error, after which the connection was closed (RFC 13:
 *                 a protocol error ends the conversation)
 *   other         from read(2)/write(2)
 * When the server replies with rc != 0, errno is derived from rc:
 *   PMI_FAIL (-1)             EIO, but ENOENT for kvs_get
 *   INVALID_KEY (4)           EINVAL, but ENOENT for kvs_get
 *   NOMEM (2)                 ENOMEM
 *   INVALID_KEY_LENGTH (5)    ENAMETOOLONG
 *   INVALID_VAL_LENGTH (7)    EOVERFLOW
 *   INVALID_LENGTH (8)        EOVERFLOW
 *   other known codes         EINVAL
 *   unknown codes             EIO
 * and pmi_simple_client_last_error() returns the server's "msg" text.
 *
 * A client is not thread-safe; use it from one thread at a time.
 */
#include <stddef.h>

#include "keyval.h" /* PMI_SIMPLE_LINE_MAX */

#ifdef __cplusplus
extern "C" {
#endif

struct pmi_simple_client;

/* Create a client from the launcher's environment strings.  pmi_fd,
 * pmi_rank and pmi_size are required decimal integers (no sign, no
 * blanks) with pmi_fd an open descriptor, size >= 1, 0 <= rank < size.
 * pmi_spawned may be NULL (not spawned) or a decimal integer, nonzero
 * meaning spawned.  Nothing is sent.
 * On success the client owns the descriptor: it is set close-on-exec and
 * pmi_simple_client_destroy() closes it.
 * Returns the client, or NULL with errno EINVAL (missing or malformed
 * string), EBADF (pmi_fd is not open) or ENOMEM.
 */
struct pmi_simple_client *pmi_simple_client_create_fd (const char *pmi_fd,
                                                       const char *pmi_rank,
                                                       const char *pmi_size,
                                                       const char *pmi_spawned);

/* Close the descriptor and free the client.  Does not send finalize.
 * NULL is a no-op; errno is preserved.
 */
void pmi_simple_client_destroy (struct pmi_simple_client *pmi);

/* Rank, size and spawned flag (0 or 1) from pmi_simple_client_create_fd(),
 * or -1 with errno EINVAL if pmi is NULL.
 */
int pmi_simple_client_rank (struct pmi_simple_client *pmi);
int pmi_simple_client_size (struct pmi_simple_client *pmi);
int pmi_simple_client_spawned (struct pmi_simple_client *pmi);

/* Negotiate the protocol: send "cmd=init pmi_version=1 pmi_subversion=1"
 * and expect "cmd=response_to_init" with rc 0 and, if present,
 * pmi_version=1 (any subversion).  Must succeed before the requests
 * below.  Returns 0 or -1 with errno (EPROTONOSUPPORT: server answered
 * with another PMI version).
 */
int pmi_simple_client_init (struct pmi_simple_client *pmi);

/* Send "cmd=finalize" and wait for "cmd=finalize_ack".  Afterwards the
 * client is uninitialized again (the descriptor stays open until
 * destroy).  Returns 0 or -1 with errno.
 */
int pmi_simple_client_finalize (struct pmi_simple_client *pmi);

/* Ask the server's limits: the longest KVS name, key and value, each
 * counting the terminating NUL (RFC 13).  Any output pointer may be NULL.
 * Returns 0 or -1 with errno (EPROTO if the reply lacks one of the three
 * or one is not a non-negative integer).
 */
int pmi_simple_client_get_maxes (struct pmi_simple_client *pmi,
                                 int *kvsname_max, int *keylen_max,
                                 int *vallen_max);

/* The application number (which executable of an MPMD launch, >= 0).
 * Returns 0, or -1 with errno (EPROTO for a missing or negative value).
 */
int pmi_simple_client_get_appnum (struct pmi_simple_client *pmi, int *appnum);

/* The universe size (the number of processes the program may grow to),
 * or -1 if the launcher does not know (MPICH hydra says size=-1 unless
 * mpiexec was given -usize).  Returns 0, or -1 with errno (EPROTO for a
 * missing value or one below -1).
 */
int pmi_simple_client_get_universe_size (struct pmi_simple_client *pmi,
                                         int *universe_size);

/* Copy the name of this program's KVS to buf (len bytes, NUL included).
 * Returns 0 or -1 with errno (EOVERFLOW: buf too small).
 */
int pmi_simple_client_kvs_get_my_name (struct pmi_simple_client *pmi, char *buf,
                                       size_t len);

/* Store key=value in KVS kvsname.  kvsname and key must be valid words
 * and value a valid value (keyval.h): no blanks or control characters,
 * no '=' in kvsname or key; value may be empty.  Length limits are the
 * server's to enforce (see pmi_simple_client_get_maxes()).  Other ranks
 * may read the value after a barrier.  Returns 0 or -1 with errno.
 */
int pmi_simple_client_kvs_put (struct pmi_simple_client *pmi,
                               const char *kvsname, const char *key,
                               const char *value);

/* PMI_KVS_Commit().  The wire protocol has no commit, so this only
 * checks its arguments and state.  Returns 0 or -1 with errno EINVAL.
 */
int pmi_simple_client_kvs_commit (struct pmi_simple_client *pmi,
                                  const char *kvsname);

/* Block until all processes of the program have entered the barrier.
 * Returns 0 or -1 with errno.
 */
int pmi_simple_client_barrier (struct pmi_simple_client *pmi);

/* Copy the value of key in KVS kvsname to buf (len bytes, NUL included).
 * Returns 0 or -1 with errno (ENOENT: no such key; EOVERFLOW: buf too
 * small).
 */
int pmi_simple_client_kvs_get (struct pmi_simple_client *pmi,
                               const char *kvsname, const char *key, char *buf,
                               size_t len);

/* Ask the server to abort the whole program: send "cmd=abort
 * exitcode=<exit_code> error_msg=<msg>" (the message is the rest of the
 * line; control characters in msg become spaces, msg NULL or empty omits
 * it, an over-long msg is truncated).  Does not wait for a reply (RFC 13
 * defines none) and does not exit: the caller should print msg and
 * exit(exit_code).  Allowed whether or not init succeeded.
 * Returns 0 once sent, or -1 with errno.
 */
int pmi_simple_client_abort (struct pmi_simple_client *pmi, int exit_code,
                             const char *msg);

/* The error text of the last failed call: the server's "msg" (or "rc=N"
 * if it sent none) after a PMI error reply, a description after a local
 * failure, "" after a success.  Owned by pmi, valid until the next call.
 * Returns "" if pmi is NULL.
 */
const char *pmi_simple_client_last_error (struct pmi_simple_client *pmi);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_PMI_SIMPLE_CLIENT_H */
