/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/textbuf.c - the growable text buffer. */
#include <string.h>

#include "tap.h"
#include "textbuf.h"

int main (int argc, char **argv)
{
    struct textbuf tb = {0};
    char big[10000];

    textbuf_reset (&tb, 1024);
    ok (tb.len == 0 && tb.data == NULL, "reset of an empty buffer");
    ok (textbuf_printf (&tb, "%s-%d", "a", 1) == 0 && !strcmp (tb.data, "a-1")
            && tb.len == 3,
        "printf into an empty buffer");
    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    ok (textbuf_printf (&tb, "[%s]", big) == 0 && tb.len == 3 + 10001
            && tb.data[3] == '[' && tb.data[tb.len - 1] == ']'
            && tb.data[tb.len] == '\0',
        "printf that must grow the buffer");
    ok (textbuf_append (&tb, "yz", 2) == 0
            && !strcmp (tb.data + tb.len - 2, "yz"),
        "append");
    textbuf_reset (&tb, 1 << 20);
    ok (tb.len == 0 && tb.data && tb.data[0] == '\0' && tb.size >= 10000,
        "reset keeps memory below max");
    ok (textbuf_reserve (&tb, 5000) == 0 && tb.size >= 5001 && tb.len == 0,
        "reserve makes room for n bytes and the NUL");
    ok (textbuf_append (&tb, "", 0) == 0 && tb.len == 0 && tb.data[0] == '\0',
        "appending nothing");
    textbuf_reset (&tb, 100);
    ok (tb.data == NULL && tb.size == 0, "reset frees memory above max");
    textbuf_free (&tb);
    done_testing ();
    return 0;
}
