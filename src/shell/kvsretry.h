/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef SHELL_KVSRETRY_H
#define SHELL_KVSRETRY_H

/* kvsretry - the shell's KVS commits, sent again while the kvs is away.
 *
 * `flux module reload kvs` while a job runs: a commit sent meanwhile
 * fails with ENOSYS (the kvs applied nothing of it), and once the kvs is
 * back the job's guest namespace is missing (ENOTSUP) until job-exec
 * has created it again (guestns.h).  Such a commit is sent again after
 * 10, 20, 40 ... 640 ms, then every second, until KVSRETRY_SECONDS have
 * passed since the first send; any other result, or either error after
 * that, is the commit's result.  The commits of one shell may then land
 * in another order than they were sent, which matters only to appends
 * to one key: the shell's callers keep one such commit in flight at a
 * time where order matters (output.c) and the rest are independent
 * events.
 */
#include "libflux/flux.h"
#include "libkvs/kvs.h"

#define KVSRETRY_SECONDS 60.

/* Like flux_kvs_commit (h, NULL, flags, txn) (txn may be destroyed once
 * this returns).  Use flux_future_then() and flux_future_get(), or
 * kvsretry_wait() before flux_future_get() to block. */
flux_future_t *kvsretry_commit (flux_t *h, int flags, flux_kvs_txn_t *txn);

/* Block until f, from kvsretry_commit(), is ready (sending again in
 * this call, with the delays above, if needed); then flux_future_get (f)
 * gives its result.  0, or -1 with errno (EINVAL: not such a future). */
int kvsretry_wait (flux_future_t *f);

/* Commits sent again, in this process (for tests and the log). */
unsigned long kvsretry_count (void);

#endif /* !SHELL_KVSRETRY_H */
