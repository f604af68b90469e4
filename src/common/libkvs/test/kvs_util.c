/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/kvs_util.c - key normalization table */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "libkvs/kvs_util.h"
#include "tap.h"

static const struct {
    const char *key;
    const char *exp;
    bool want_dir;
} table[] = {
    {"a", "a", false},
    {"a.b", "a.b", false},
    {"a.b.c", "a.b.c", false},
    {".", ".", false},
    {"", ".", false},
    {"..", ".", false},
    {"....", ".", false},
    {".a", "a", false},
    {"..a", "a", false},
    {"a.", "a", true},
    {"a..", "a", true},
    {"a..b", "a.b", false},
    {"a...b....c", "a.b.c", false},
    {".a.b.", "a.b", true},
    {"...a...b...", "a.b", true},
    {"a.b.c.", "a.b.c", true},
    {"abc", "abc", false},
    {"a-b_c.d e", "a-b_c.d e", false},
    {"x.", "x", true},
    {".x", "x", false},
    {NULL, NULL, false},
};

int main (void)
{
    plan (NO_PLAN);
    for (int i = 0; table[i].key; i++) {
        bool want_dir = !table[i].want_dir;
        char *s = kvs_util_normalize_key (table[i].key, &want_dir);
        is (s, table[i].exp, "\"%s\" normalizes to \"%s\"", table[i].key,
            table[i].exp);
        ok (want_dir == table[i].want_dir, "\"%s\": want_directory is %s",
            table[i].key, table[i].want_dir ? "true" : "false");
        free (s);
    }
    {
        char *s = kvs_util_normalize_key ("a..b.", NULL);
        is (s, "a.b", "want_directory may be NULL");
        free (s);
    }
    errno = 0;
    ok (kvs_util_normalize_key (NULL, NULL) == NULL && errno == EINVAL,
        "NULL key fails with EINVAL");
    done_testing ();
    return 0;
}
