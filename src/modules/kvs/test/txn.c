/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* txn unit tests: validation of commit ops */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libkvs/kvs.h"
#include "libkvs/treeobj.h"
#include "tap.h"

#include "../txn.h"

static int try (const char *ops, int flags, bool guest, flux_error_t *error)
{
    json_error_t jerr;
    json_t *o = json_loads (ops, 0, &jerr);
    struct txn *t;
    int rc = 0;

    if (!o)
        BAIL_OUT ("bad test json %s: %s", ops, jerr.text);
    if (!(t = txn_create (o, flags, guest, error)))
        rc = errno;
    txn_destroy (t);
    json_decref (o);
    return rc;
}

#define VAL "{\"ver\":1,\"type\":\"val\",\"data\":\"eA==\"}"
#define DIR "{\"ver\":1,\"type\":\"dir\",\"data\":{}}"
#define FULLDIR "{\"ver\":1,\"type\":\"dir\",\"data\":{\"a\":" VAL "}}"
#define LINK "{\"ver\":1,\"type\":\"symlink\",\"data\":{\"target\":\"a\"}}"
#define DIRREF                                         \
    "{\"ver\":1,\"type\":\"dirref\",\"data\":[\"sha1-" \
    "c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91\"]}"

static void check (const char *ops, int flags, bool guest, int expect,
                   const char *what)
{
    flux_error_t error = {{0}};
    int rc = try (ops, flags, guest, &error);
    ok (rc == expect, "%s: %s", what, expect ? strerror (expect) : "ok");
    if (rc != expect)
        diag ("got %s (%s)", strerror (rc), error.text);
    else if (expect)
        ok (strlen (error.text) > 0, "with a message: %s", error.text);
}

int main (void)
{
    json_t *ops;
    struct txn *t;
    const struct txn_op *op;

    plan (NO_PLAN);
    ops = json_loads ("[{\"key\":\"..a..b.\",\"flags\":0,\"dirent\":" VAL "},"
                      "{\"key\":\"c\",\"flags\":32,\"dirent\":" VAL "},"
                      "{\"key\":\"d\",\"flags\":0,\"dirent\":null}]",
                      0, NULL);
    t = txn_create (ops, FLUX_KVS_NO_MERGE, false, NULL);
    ok (t && txn_count (t) == 3, "a valid txn of 3 ops");
    op = txn_op (t, 0);
    ok (op && !strcmp (op->key, "a.b") && op->flags == 0 && op->dirent
            && treeobj_is_val (op->dirent),
        "keys are normalized");
    op = txn_op (t, 1);
    ok (op && op->flags == FLUX_KVS_APPEND, "append flag kept");
    op = txn_op (t, 2);
    ok (op && op->dirent == NULL, "null dirent is an unlink");
    ok (txn_op (t, 3) == NULL && txn_op (t, -1) == NULL,
        "txn_op out of range is NULL");
    ok (txn_flags (t) == FLUX_KVS_NO_MERGE && txn_ops (t) == ops,
        "flags and ops kept");
    txn_destroy (t);
    json_decref (ops);

    check ("[]", 0, false, 0, "empty ops (a sync)");
    check ("[]", FLUX_KVS_SYNC | FLUX_KVS_TXN_COMPACT, false, 0,
           "SYNC and TXN_COMPACT flags");
    check ("[]", FLUX_KVS_LAZY | FLUX_KVS_NO_MERGE, false, 0,
           "LAZY and NO_MERGE flags");
    check ("[]", FLUX_KVS_LAZY | FLUX_KVS_SYNC, false, EINVAL,
           "SYNC and LAZY together");
    check ("[]", 16, false, EPROTO, "unknown commit flag");
    check ("{}", 0, false, EPROTO, "ops not an array");
    check ("[1]", 0, false, EPROTO, "op not an object");
    check ("[{\"key\":\"a\",\"flags\":0}]", 0, false, EPROTO, "op w/o dirent");
    check ("[{\"key\":1,\"flags\":0,\"dirent\":null}]", 0, false, EPROTO,
           "key not a string");
    check ("[{\"key\":\"a\",\"flags\":0,\"dirent\":null,\"x\":1}]", 0, false,
           EPROTO, "extra key in op");
    check ("[{\"key\":\"a\",\"flags\":1,\"dirent\":null}]", 0, false, EPROTO,
           "op flags not 0 or APPEND");
    check ("[{\"key\":\"a\",\"flags\":0,\"dirent\":{\"ver\":2}}]", 0, false,
           EPROTO, "invalid treeobj");
    check ("[{\"key\":\"a\",\"flags\":0,\"dirent\":\"x\"}]", 0, false, EPROTO,
           "dirent a string");
    check ("[{\"key\":\"a\",\"flags\":32,\"dirent\":" DIR "}]", 0, false,
           EPROTO, "append of a dir");
    check ("[{\"key\":\"a\",\"flags\":32,\"dirent\":null}]", 0, false, EPROTO,
           "append of null");
    check ("[{\"key\":\".\",\"flags\":0,\"dirent\":" VAL "}]", 0, false, EINVAL,
           "writing the root");
    check ("[{\"key\":\"...\",\"flags\":0,\"dirent\":null}]", 0, false, EINVAL,
           "unlinking the root");
    check ("[{\"key\":\"a\",\"flags\":0,\"dirent\":" LINK "},"
           "{\"key\":\"b\",\"flags\":0,\"dirent\":" DIRREF "},"
           "{\"key\":\"c\",\"flags\":0,\"dirent\":" FULLDIR "}]",
           0, false, 0, "the owner may write any treeobj");
    check ("[{\"key\":\"a\",\"flags\":0,\"dirent\":" VAL "},"
           "{\"key\":\"b\",\"flags\":0,\"dirent\":" DIR "},"
           "{\"key\":\"c\",\"flags\":32,\"dirent\":" VAL "},"
           "{\"key\":\"d\",\"flags\":0,\"dirent\":null}]",
           0, true, 0, "a guest may write vals, empty dirs, unlink");
    check ("[{\"key\":\"a\",\"flags\":0,\"dirent\":" LINK "}]", 0, true, EPERM,
           "a guest may not write a symlink");
    check ("[{\"key\":\"a\",\"flags\":0,\"dirent\":" DIRREF "}]", 0, true,
           EPERM, "a guest may not write a dirref");
    check ("[{\"key\":\"a\",\"flags\":0,\"dirent\":" FULLDIR "}]", 0, true,
           EPERM, "a guest may not write a non-empty dir");
    ok (txn_create (NULL, 0, false, NULL) == NULL && errno == EPROTO,
        "NULL ops: EPROTO");
    done_testing ();
    return 0;
}
