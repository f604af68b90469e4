/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#include <errno.h>
#include <stdint.h>

#include "libutil/sizeparse.h"
#include "tap.h"

static void ok_size (const char *s, size_t want)
{
    size_t v = 12345;
    ok (size_parse (s, &v) == 0 && v == want, "%s is %zu", s, want);
}

static void bad_size (const char *s, int errnum)
{
    size_t v = 12345;
    errno = 0;
    ok (size_parse (s, &v) < 0 && errno == errnum && v == 12345,
        "%s fails with %s", s ? s : "NULL",
        errnum == EINVAL ? "EINVAL" : "ERANGE");
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    ok_size ("0", 0);
    ok_size ("1000", 1000);
    ok_size ("4k", 4096);
    ok_size ("4K", 4096);
    ok_size ("16M", (size_t)16 << 20);
    ok_size ("1G", (size_t)1 << 30);
    bad_size (NULL, EINVAL);
    bad_size ("", EINVAL);
    bad_size ("-1", EINVAL);
    bad_size ("+1", EINVAL);
    bad_size (" 1", EINVAL);
    bad_size ("1m", EINVAL);
    bad_size ("1KB", EINVAL);
    bad_size ("1x", EINVAL);
    bad_size ("K", EINVAL);
    bad_size ("99999999999999999999999", ERANGE);
    if (SIZE_MAX == UINT64_MAX)
        bad_size ("17179869184G", ERANGE); /* 2^34 GiB = 2^64 */
    done_testing ();
    return 0;
}
