/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* txn.h - a validated commit: the ops of a kvs.commit or kvs.relaycommit
 * request (PROTOCOLS.md 4), checked once, with normalized keys.
 */
#ifndef KVS_TXN_H
#define KVS_TXN_H

#include <jansson.h>
#include <stdbool.h>

#include "libflux/flux.h"

struct txn_op {
    const char *key; /* normalized, never "." */
    int flags;       /* 0 or FLUX_KVS_APPEND */
    json_t *dirent;  /* borrowed from the txn; NULL: unlink */
};

struct txn;

/* Validate ops (the "ops" array of a commit) and commit flags.  Each op
 * must be exactly {key:s, flags:i, dirent:treeobj|null}; flags 0 or
 * APPEND; an APPEND dirent must be a val; commit flags only NO_MERGE,
 * TXN_COMPACT, SYNC and LAZY, not both of the last two (EINVAL).  guest: only
 * null, val and empty dir dirents are allowed.  Errors (text in error): EPROTO
 * (malformed), EPERM (a guest's forbidden dirent), EINVAL (the root "." as a
 * key), ENOMEM.  The txn keeps a reference to ops.
 */
struct txn *txn_create (json_t *ops, int flags, bool guest,
                        flux_error_t *error);

/* NULL-safe, preserves errno. */
void txn_destroy (struct txn *t);

int txn_count (const struct txn *t);
const struct txn_op *txn_op (const struct txn *t, int index);
int txn_flags (const struct txn *t);
json_t *txn_ops (const struct txn *t); /* borrowed */

#endif /* !KVS_TXN_H */
