/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/hostlist.c - RFC 29 hostlists: codec, cursor, find, delete, sort */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "tap.h"

static struct hostlist *mklist (const char *s)
{
    struct hostlist *hl = hostlist_decode (s);
    if (!hl)
        BAIL_OUT ("hostlist_decode (\"%s\") failed: %s", s, strerror (errno));
    return hl;
}

/* Every host of 'hl', comma separated, via first/next.  Caller frees.
 */
static char *expand (struct hostlist *hl)
{
    size_t size = 1;
    char *s;

    for (const char *h = hostlist_first (hl); h; h = hostlist_next (hl))
        size += strlen (h) + 1;
    if (!(s = calloc (1, size)))
        BAIL_OUT ("out of memory");
    for (const char *h = hostlist_first (hl); h; h = hostlist_next (hl)) {
        if (*s)
            strcat (s, ",");
        strcat (s, h);
    }
    return s;
}

static bool enc_is (const struct hostlist *hl, const char *expected)
{
    char *s = hostlist_encode (hl);
    bool match = s && !strcmp (s, expected);
    if (!match)
        diag ("encoded '%s', expected '%s'", s ? s : "(null)", expected);
    free (s);
    return match;
}

static bool exp_is (struct hostlist *hl, const char *expected)
{
    char *s = expand (hl);
    bool match = !strcmp (s, expected);
    if (!match)
        diag ("expanded '%s', expected '%s'", s, expected);
    free (s);
    return match;
}

static void test_basic (void)
{
    struct hostlist *hl = hostlist_create ();

    ok (hl != NULL, "hostlist_create works");
    cmp_ok (hostlist_count (hl), "==", 0, "new list is empty");
    ok (enc_is (hl, ""), "empty list encodes as \"\"");
    errno = 0;
    ok (hostlist_first (hl) == NULL && errno == ENOENT,
        "first on an empty list: NULL, ENOENT");
    errno = 0;
    ok (hostlist_last (hl) == NULL && errno == ENOENT,
        "last on an empty list: NULL, ENOENT");
    errno = 0;
    ok (hostlist_next (hl) == NULL && errno == ENOENT,
        "next on an empty list: NULL, ENOENT");
    errno = 0;
    ok (hostlist_current (hl) == NULL && errno == ENOENT,
        "current on an empty list: NULL, ENOENT");
    errno = 0;
    ok (hostlist_nth (hl, 0) == NULL && errno == ENOENT,
        "nth (0) on an empty list: NULL, ENOENT");
    ok (hostlist_sort (hl) == 0 && hostlist_uniq (hl) == 0
            && hostlist_count (hl) == 0,
        "sort and uniq of an empty list work");
    ok (hostlist_append (hl, "") == 0 && hostlist_count (hl) == 0,
        "append \"\" adds nothing");
    ok (hostlist_delete (hl, "foo") == 0, "delete from an empty list is 0");
    hostlist_destroy (hl);
}

static void test_einval (void)
{
    struct hostlist *hl = hostlist_create ();

    errno = 0;
    ok (hostlist_append (NULL, "foo") < 0 && errno == EINVAL,
        "append (NULL, ...): EINVAL");
    errno = 0;
    ok (hostlist_append (hl, NULL) < 0 && errno == EINVAL,
        "append (hl, NULL): EINVAL");
    errno = 0;
    ok (hostlist_append_list (NULL, hl) < 0 && errno == EINVAL,
        "append_list (NULL, hl): EINVAL");
    errno = 0;
    ok (hostlist_append_list (hl, NULL) < 0 && errno == EINVAL,
        "append_list (hl, NULL): EINVAL");
    errno = 0;
    ok (hostlist_decode (NULL) == NULL && errno == EINVAL,
        "decode (NULL): EINVAL");
    errno = 0;
    ok (hostlist_encode (NULL) == NULL && errno == EINVAL,
        "encode (NULL): EINVAL");
    errno = 0;
    ok (hostlist_copy (NULL) == NULL && errno == EINVAL, "copy (NULL): EINVAL");
    errno = 0;
    ok (hostlist_nth (NULL, 0) == NULL && errno == EINVAL,
        "nth (NULL, 0): EINVAL");
    errno = 0;
    ok (hostlist_nth (hl, -1) == NULL && errno == EINVAL,
        "nth (hl, -1): EINVAL");
    errno = 0;
    ok (hostlist_find (NULL, "foo") < 0 && errno == EINVAL,
        "find (NULL, ...): EINVAL");
    errno = 0;
    ok (hostlist_find (hl, NULL) < 0 && errno == EINVAL,
        "find (hl, NULL): EINVAL");
    errno = 0;
    ok (hostlist_delete (NULL, "foo") < 0 && errno == EINVAL,
        "delete (NULL, ...): EINVAL");
    errno = 0;
    ok (hostlist_delete (hl, NULL) < 0 && errno == EINVAL,
        "delete (hl, NULL): EINVAL");
    errno = 0;
    ok (hostlist_sort (NULL) < 0 && errno == EINVAL, "sort (NULL): EINVAL");
    errno = 0;
    ok (hostlist_uniq (NULL) < 0 && errno == EINVAL, "uniq (NULL): EINVAL");
    errno = 0;
    ok (hostlist_first (NULL) == NULL && errno == EINVAL,
        "first (NULL): EINVAL");
    errno = 0;
    ok (hostlist_last (NULL) == NULL && errno == EINVAL, "last (NULL): EINVAL");
    errno = 0;
    ok (hostlist_next (NULL) == NULL && errno == EINVAL, "next (NULL): EINVAL");
    errno = 0;
    ok (hostlist_current (NULL) == NULL && errno == EINVAL,
        "current (NULL): EINVAL");
    cmp_ok (hostlist_count (NULL), "==", 0, "count (NULL) is 0");
    hostlist_destroy (hl);
}

static void test_destroy (void)
{
    struct hostlist *hl = hostlist_create ();

    errno = 42;
    hostlist_destroy (NULL);
    ok (errno == 42, "destroy (NULL) is a no-op preserving errno");
    errno = 43;
    hostlist_destroy (hl);
    ok (errno == 43, "destroy preserves errno");
}

/* RFC 29 "Test Vectors", verbatim: each side expands to the same list.
 */
static const char *rfc29[][2] = {
    {"", ""},
    {"foox,fooy,fooz", "foox,fooy,fooz"},
    {"[1-3,5-6]", "1,2,3,5,6"},
    {"foo[1-5]", "foo1,foo2,foo3,foo4,foo5"},
    {"foo[0-4]-eth2", "foo0-eth2,foo1-eth2,foo2-eth2,foo3-eth2,foo4-eth2"},
    {"foo1,foo1,foo1", "foo1,foo1,foo1"},
    {"[00-02]", "00,01,02"},
    {"[00-2]", "00,01,02"},
    {"foo[1,1,2,1]", "foo1,foo1,foo2,foo1"},
    /* and from the RFC text */
    {"host[0-10,12]", "host0,host1,host2,host3,host4,host5,host6,host7,"
                      "host8,host9,host10,host12"},
    {"[5,4,10,11,12,13]", "5,4,10,11,12,13"},
    {"[5,4,11-13]", "5,4,11,12,13"},
    {"[005,4,11-13]", "005,004,011,012,013"},
    {"[2,2,2]", "2,2,2"},
};

static void test_rfc29 (void)
{
    for (size_t i = 0; i < sizeof (rfc29) / sizeof (rfc29[0]); i++) {
        struct hostlist *a = mklist (rfc29[i][0]);
        struct hostlist *b = mklist (rfc29[i][1]);
        char *ea = hostlist_encode (a);
        char *eb = hostlist_encode (b);

        ok (exp_is (a, rfc29[i][1]), "\"%s\" expands to \"%s\"", rfc29[i][0],
            rfc29[i][1]);
        cmp_ok (hostlist_count (a), "==", hostlist_count (b),
                "\"%s\" and its expansion have the same count", rfc29[i][0]);
        ok (ea && eb && !strcmp (ea, eb),
            "\"%s\" and its expansion encode alike: \"%s\"", rfc29[i][0],
            ea ? ea : "(null)");
        free (ea);
        free (eb);
        hostlist_destroy (a);
        hostlist_destroy (b);
    }
}

struct codec {
    const char *in;
    const char *out;
    int count;
};

static const struct codec codec[] = {
    {"foo1,foo2,foo3", "foo[1-3]", 3},
    {"foo-1a-2,foo-1a-3", "foo-1a-[2-3]", 2},
    {"foo1,foo2,foo3,fooi", "foo[1-3],fooi", 4},
    {"foo1,fooi,foo2,foo3", "foo1,fooi,foo[2-3]", 4},
    {"fooi,foo1,foo2,foo3,foo5,foo7,foo8", "fooi,foo[1-3,5,7-8]", 7},
    {"1,2,3,4,5,9", "[1-5,9]", 6},
    {",1,2,3,4,5,9,", "[1-5,9]", 6},
    {"a,,b", "a,b", 2},
    {",,,", "", 0},
    {"[1-5]", "[1-5]", 5},
    {"14636", "14636", 1},
    {"node9,node10", "node[9-10]", 2},
    {"node09,node10", "node[09-10]", 2},
    {"node9,node010", "node9,node010", 2},
    {"node8,node09", "node8,node09", 2},
    {"node10,node09", "node10,node09", 2},
    {"node[01-10]", "node[01-10]", 10},
    {"node[8-10]", "node[8-10]", 3},
    {"node[08-10]", "node[08-10]", 3},
    {"node[098-101]", "node[098-101]", 4},
    {"node[09-10],node11", "node[09-11]", 3},
    {"node[09-10],node011", "node[09-10],node011", 3},
    {"node[10-11],node[12-13]", "node[10-13]", 4},
    {"node[10-11],node[012-013]", "node[10-11],node[012-013]", 4},
    {"[00-02]", "[00-02]", 3},
    {"[00-2]", "[00-02]", 3},
    {"p[00-3]p", "p[00-03]p", 4},
    {"[005,4,11-13]", "[005,004,011-013]", 5},
    {"[1,02]", "[1-2]", 2},
    {"foo1,foo1,foo1", "foo[1,1,1]", 3},
    {"foo[1,1,2,1]", "foo[1,1-2,1]", 4},
    {"foo[3,1]", "foo[3,1]", 2},
    {"foo[5-6],foo3,foo4", "foo[5-6,3-4]", 4},
    {"foo[1-3],foo[4-6]", "foo[1-6]", 6},
    {"foo[3-3]", "foo3", 1},
    {"a[1-3],b[1-3]", "a[1-3],b[1-3]", 6},
    {"foo[0-4]-eth2", "foo0-eth2,foo1-eth2,foo2-eth2,foo3-eth2,foo4-eth2", 5},
    {"foo[1,3]-bar", "foo[1,3]-bar", 2},
    {"node[1-3]-ib", "node[1-3]-ib", 3},
    {"node1-ib,node2-ib,node3", "node[1-2]-ib,node3", 3},
    {"rack1-node[1-2]", "rack1-node[1-2]", 2},
    {"rack[1-2]-node[1-2]", "rack1-node[1-2],rack2-node[1-2]", 4},
    {"r[1-2]n[1-2]x", "r1n[1-2]x,r2n[1-2]x", 4},
    {"[1-2][3-4]", "[13-14,23-24]", 4},
    {"a[1,3]b[1-2]c[5]", "a1b1c5,a1b2c5,a3b1c5,a3b2c5", 4},
    {"foo1[2-3]", "foo[12-13]", 2},
    {"f00[7-8]", "f[007-008]", 2},
    {"login", "login", 1},
    {"login,login", "login,login", 2},
    {"node99999999999", "node99999999999", 1},
    {"node99999999999,node99999999998", "node99999999999,node99999999998", 2},
    {"x[4294967293-4294967294]", "x[4294967293-4294967294]", 2},
    {"x4294967294,x4294967295", "x4294967294,x4294967295", 2},
    {"n[0000000000000000000000000000001-2]",
     "n[0000000000000000000000000000001-0000000000000000000000000000002]", 2},
    {"a-b_c.d:e@f+g", "a-b_c.d:e@f+g", 1},
    {"mcr[336-359,488-550,553,556,559,561,567,569-571,573-575,578,581]",
     "mcr[336-359,488-550,553,556,559,561,567,569-571,573-575,578,581]", 100},
};

static void test_codec (void)
{
    for (size_t i = 0; i < sizeof (codec) / sizeof (codec[0]); i++) {
        const struct codec *t = &codec[i];
        struct hostlist *hl = hostlist_decode (t->in);
        struct hostlist *again, *copy;
        char *s;

        ok (hl != NULL, "decode \"%s\" works", t->in);
        if (!hl)
            continue;
        cmp_ok (hostlist_count (hl), "==", t->count, "\"%s\" has %d hosts",
                t->in, t->count);
        ok (enc_is (hl, t->out), "\"%s\" encodes as \"%s\"", t->in, t->out);
        s = hostlist_encode (hl);
        again = s ? hostlist_decode (s) : NULL;
        ok (again && enc_is (again, s), "\"%s\" survives a round trip", t->in);
        copy = hostlist_copy (hl);
        ok (copy && enc_is (copy, t->out) && hostlist_count (copy) == t->count,
            "a copy of \"%s\" encodes alike", t->in);
        free (s);
        hostlist_destroy (copy);
        hostlist_destroy (again);
        hostlist_destroy (hl);
    }
}

static void test_expansion (void)
{
    struct hostlist *hl;

    hl = mklist ("node[08-10],node[8-10],node[098-100]");
    ok (exp_is (hl, "node08,node09,node10,node8,node9,node10,node098,"
                    "node099,node100"),
        "widths are kept per idlist");
    hostlist_destroy (hl);
    hl = mklist ("rack[1-2]-node[1-2]");
    ok (exp_is (hl, "rack1-node1,rack1-node2,rack2-node1,rack2-node2"),
        "several idlists expand leftmost outermost");
    hostlist_destroy (hl);
    hl = mklist ("a[2,1]b[02,1]");
    ok (exp_is (hl, "a2b02,a2b01,a1b02,a1b01"),
        "several idlists keep their order and widths");
    hostlist_destroy (hl);
    hl = mklist ("[1-2][3-4]");
    ok (exp_is (hl, "13,14,23,24"), "adjacent idlists concatenate");
    hostlist_destroy (hl);
}

struct bad {
    const char *in;
    int errnum;
};

static const struct bad bad[] = {
    {"foo[1-", EINVAL},
    {"foo[3-1]", EINVAL},
    {"foo[]", EINVAL},
    {"[]", EINVAL},
    {"[1-2]x[", EINVAL},
    {"foo[", EINVAL},
    {"foo]", EINVAL},
    {"]", EINVAL},
    {"foo[1,3", EINVAL},
    {"foo[[1]]", EINVAL},
    {"foo[1]]", EINVAL},
    {"foo[1[2]]", EINVAL},
    {"foo]1[", EINVAL},
    {"foo[x-y]", EINVAL},
    {"foo[1a]", EINVAL},
    {"foo[0-1,2--5]", EINVAL},
    {"foo[-1]", EINVAL},
    {"foo[1-]", EINVAL},
    {"foo[1,]", EINVAL},
    {"foo[,1]", EINVAL},
    {"foo[1,,2]", EINVAL},
    {"foo[1-2-3]", EINVAL},
    {"foo[ 1]", EINVAL},
    {"foo[+1]", EINVAL},
    {"foo bar", EINVAL},
    {" foo", EINVAL},
    {"foo,bar ", EINVAL},
    {"foo\tbar", EINVAL},
    {"foo\nbar", EINVAL},
    {"caf\xc3\xa9", EINVAL},
    {"foo\x7f", EINVAL},
    {"foo[4294967295]", EINVAL},
    {"foo[99999999999]", EINVAL},
    {"foo[1-4294967295]", EINVAL},
    {"foo[000000000000000000000000000000001]", EINVAL},
    {"foo[0-1048576]", ERANGE},
    {"foo[0-4294967294]", ERANGE},
    {"foo[0-524287,0-524288]", ERANGE},
    {"a[0-1024]b[0-1023]", ERANGE},
    {"a[0-1023]b[0-1023]c[1-2]", ERANGE},
};

static const char *visible (const char *s)
{
    static char buf[128];
    size_t len = 0;

    for (; *s && len < sizeof (buf) - 5; s++) {
        unsigned char c = *s;
        if (c < 0x20 || c >= 0x7f)
            len += snprintf (buf + len, sizeof (buf) - len, "\\x%02x", c);
        else
            buf[len++] = c;
    }
    buf[len] = '\0';
    return buf;
}

static void test_bad (void)
{
    struct hostlist *hl = mklist ("keep[1-3]");

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        const struct bad *t = &bad[i];
        struct hostlist *r;

        errno = 0;
        r = hostlist_decode (t->in);
        ok (r == NULL && errno == t->errnum, "decode \"%s\" fails with %s",
            visible (t->in), t->errnum == EINVAL ? "EINVAL" : "ERANGE");
        hostlist_destroy (r);
        errno = 0;
        ok (hostlist_append (hl, t->in) < 0 && errno == t->errnum,
            "append \"%s\" fails with the same errno", visible (t->in));
        errno = 0;
        ok (hostlist_delete (hl, t->in) < 0 && errno == t->errnum,
            "delete \"%s\" fails with the same errno", visible (t->in));
    }
    ok (enc_is (hl, "keep[1-3]"), "failed calls left the list unchanged");
    hostlist_destroy (hl);

    /* the limits themselves are fine */
    hl = hostlist_decode ("foo[0-1048575]");
    ok (hl && hostlist_count (hl) == HOSTLIST_MAX_EXPAND,
        "an expression of exactly HOSTLIST_MAX_EXPAND hosts is accepted");
    hostlist_destroy (hl);
    hl = hostlist_decode ("a[0-1023]b[0-1023]");
    ok (hl && hostlist_count (hl) == HOSTLIST_MAX_EXPAND,
        "so is a product of idlists reaching it");
    hostlist_destroy (hl);
}

static void test_append (void)
{
    struct hostlist *hl = hostlist_create ();
    struct hostlist *hl2;
    int errors = 0;
    char name[64];

    ok (hostlist_append (hl, "foo12") == 1, "append foo12 returns 1");
    ok (hostlist_append (hl, "foo[4,1-2]") == 3, "append foo[4,1-2] returns 3");
    ok (enc_is (hl, "foo[12,4,1-2]"), "list is foo[12,4,1-2]");
    hl2 = mklist ("bar[26-30]");
    ok (hostlist_append_list (hl, hl2) == 5, "append_list returns 5");
    ok (enc_is (hl, "foo[12,4,1-2],bar[26-30]") && hostlist_count (hl) == 9,
        "list is foo[12,4,1-2],bar[26-30]");
    ok (enc_is (hl2, "bar[26-30]"), "the appended list is unchanged");
    ok (hostlist_append (hl, "bar31") == 1
            && enc_is (hl, "foo[12,4,1-2],bar[26-31]"),
        "appending bar31 extends the last range");
    ok (hostlist_append_list (hl2, hl2) == 5
            && enc_is (hl2, "bar[26-30,26-30]"),
        "append_list of a list to itself doubles it");
    hostlist_destroy (hl);
    hostlist_destroy (hl2);

    /* 10,000 hosts, one by one */
    const char *fmts[] = {"node%d", "node%05d", "rack1-node%d-ib"};
    const char *expect[]
        = {"node[1-10000]", "node[00001-10000]", "rack1-node[1-10000]-ib"};
    for (int f = 0; f < 3; f++) {
        hl = hostlist_create ();
        errors = 0;
        for (int i = 1; i <= 10000; i++) {
            snprintf (name, sizeof (name), fmts[f], i);
            if (hostlist_append (hl, name) != 1)
                errors++;
        }
        ok (errors == 0 && hostlist_count (hl) == 10000,
            "appended 10,000 hosts %s one by one", fmts[f]);
        ok (enc_is (hl, expect[f]), "they compress to %s", expect[f]);
        errors = 0;
        for (int i = 0; i < 10000; i++) {
            const char *h = hostlist_nth (hl, i);
            snprintf (name, sizeof (name), fmts[f], i + 1);
            if (!h || strcmp (h, name) != 0)
                errors++;
        }
        ok (errors == 0, "nth returns each of them");
        hostlist_destroy (hl);
    }

    /* the INT_MAX limit */
    hl = hostlist_create ();
    errors = 0;
    for (int i = 0; i < 2047; i++)
        if (hostlist_append (hl, "x[0-1048575]") != 1048576)
            errors++;
    ok (errors == 0 && hostlist_count (hl) == 2047 * 1048576,
        "a list of 2047 * 2^20 hosts can be built");
    errno = 0;
    ok (hostlist_append (hl, "x[0-1048575]") < 0 && errno == ERANGE,
        "appending past INT_MAX hosts fails with ERANGE");
    ok (hostlist_count (hl) == 2047 * 1048576, "and changes nothing");
    ok (hostlist_append (hl, "x[0-1048574]") == 1048575
            && hostlist_count (hl) == INT_MAX,
        "exactly INT_MAX hosts is fine");
    ok (hostlist_nth (hl, INT_MAX - 1) != NULL
            && !strcmp (hostlist_current (hl), "x1048574"),
        "nth (INT_MAX - 1) works");
    errno = 0;
    ok (hostlist_append_list (hl, hl) < 0 && errno == ERANGE,
        "append_list past INT_MAX hosts fails with ERANGE");
    hostlist_destroy (hl);
}

static void test_cursor (void)
{
    struct hostlist *hl = mklist ("foo[1-2,4,5],bar");

    ok (!strcmp (hostlist_next (hl), "foo1"),
        "next on a new list returns the first host");
    errno = 0;
    ok (hostlist_nth (hl, 5) == NULL && errno == ENOENT,
        "nth (count) fails with ENOENT");
    is (hostlist_current (hl), "foo1", "and leaves the cursor alone");
    is (hostlist_nth (hl, 4), "bar", "nth (4) is bar");
    is (hostlist_current (hl), "bar", "nth moves the cursor");
    is (hostlist_nth (hl, 2), "foo4", "nth (2) is foo4 (backwards)");
    is (hostlist_next (hl), "foo5", "next after nth (2) is foo5");
    is (hostlist_last (hl), "bar", "last is bar");
    errno = 0;
    ok (hostlist_next (hl) == NULL && errno == ENOENT,
        "next after the last host: NULL, ENOENT");
    errno = 0;
    ok (hostlist_current (hl) == NULL && errno == ENOENT,
        "current past the end: NULL, ENOENT");
    errno = 0;
    ok (hostlist_next (hl) == NULL && errno == ENOENT, "next stays at the end");
    hostlist_append (hl, "baz,qux");
    is (hostlist_next (hl), "baz", "hosts appended at the end come next");
    is (hostlist_next (hl), "qux", "then qux");
    is (hostlist_first (hl), "foo1", "first resets to foo1");
    is (hostlist_current (hl), "foo1", "current is foo1");
    hostlist_append (hl, "zzz");
    is (hostlist_current (hl), "foo1", "append does not move the cursor");
    hostlist_sort (hl);
    errno = 0;
    ok (hostlist_current (hl) == NULL && errno == ENOENT,
        "after sort the cursor is before the first host");
    is (hostlist_next (hl), "bar", "so next returns the first host");
    hostlist_destroy (hl);

    /* iterate, rebuild, compare */
    const char *inputs[] = {
        "mcr[336-359,488-550,553,556,559,561,567,569-571,573-575,578,581]",
        "really-long-hostname-prefix[10101,55,35,2]",
        "one,two,three,four,five",
        "node[09-11],node[9-11]-ib,login[1,1,1],x",
    };
    for (size_t i = 0; i < sizeof (inputs) / sizeof (inputs[0]); i++) {
        struct hostlist *nl = hostlist_create ();
        int n = 0;
        hl = mklist (inputs[i]);
        for (const char *h = hostlist_first (hl); h; h = hostlist_next (hl)) {
            hostlist_append (nl, hostlist_current (hl));
            n++;
        }
        ok (n == hostlist_count (hl) && enc_is (nl, inputs[i]),
            "first/next/current visit %d hosts of %s in order", n, inputs[i]);
        hostlist_destroy (nl);
        hostlist_destroy (hl);
    }
}

struct find {
    const char *in;
    const char *host;
    int index;
};

static const struct find finds[] = {
    {"tst0", "tst", -1},
    {"tst0,tst", "tst", 1},
    {"tst,tst0", "tst", 0},
    {"tst", "tst0", -1},
    {"foo[1-5]-eth0", "foo3-eth0", 2},
    {"foo[1-5]", "foo3-eth0", -1},
    {"node[1-5]-ib", "node4-ib", 3},
    {"node[1-5]-ib", "node4", -1},
    {"[0-5]", "3", 3},
    {"[0-5]i", "0", -1},
    {"i[0-5]", "i00", -1},
    {"i[00-05]", "i0", -1},
    {"i[00-05]", "i00", 0},
    {"i[00-05]", "i04", 4},
    {"node[8-10]", "node09", -1},
    {"node[8-10]", "node9", 1},
    {"node[08-10]", "node10", 2},
    {"node[08-10]", "node010", -1},
    {"f00[7-8]", "f007", 0},
    {"f00[7-8,10]", "f0010", 2},
    {"f0010001[07-08]", "f001000108", 1},
    {"foo[1-3],foo[1-3]", "foo2", 1},
    {"bar,foo[1-3],foo[1-3]", "foo3", 3},
    {"cornp2", "corn", -1},
    {"cornp2", "corn2", -1},
    {"corn1-p2", "corn2", -1},
    {"node99999999999", "node99999999999", 0},
};

static void test_find (void)
{
    for (size_t i = 0; i < sizeof (finds) / sizeof (finds[0]); i++) {
        const struct find *t = &finds[i];
        struct hostlist *hl = mklist (t->in);
        int rc;

        hostlist_first (hl);
        errno = 0;
        rc = hostlist_find (hl, t->host);
        if (t->index >= 0) {
            ok (rc == t->index, "find (%s, %s) is %d", t->in, t->host,
                t->index);
            is (hostlist_current (hl), t->host, "find leaves the cursor on %s",
                t->host);
        }
        else {
            ok (rc < 0 && errno == ENOENT, "find (%s, %s) fails with ENOENT",
                t->in, t->host);
            ok (hostlist_current (hl) && hostlist_nth (hl, 0)
                    && !strcmp (hostlist_current (hl), hostlist_nth (hl, 0)),
                "a failed find does not move the cursor");
        }
        hostlist_destroy (hl);
    }
    struct hostlist *hl = mklist ("foo[1-3]");
    const char *invalid[] = {"", "foo[1]", "foo 1", "foo,bar"};
    for (size_t i = 0; i < sizeof (invalid) / sizeof (invalid[0]); i++) {
        errno = 0;
        ok (hostlist_find (hl, invalid[i]) < 0 && errno == EINVAL,
            "find of invalid name \"%s\" fails with EINVAL", invalid[i]);
    }
    hostlist_destroy (hl);
}

struct del {
    const char *in;
    const char *del;
    int count;
    const char *out;
};

static const struct del dels[] = {
    {"foo[2-5]", "foo6", 0, "foo[2-5]"},
    {"foo[2-5]", "foo3", 1, "foo[2,4-5]"},
    {"foo[2-5],fooi", "fooi", 1, "foo[2-5]"},
    {"foo[2-5],fooi", "foo3", 1, "foo[2,4-5],fooi"},
    {"foo[2-5],fooi", "foo[1-2]", 1, "foo[3-5],fooi"},
    {"foo[0-7]", "foo[1,0,2-7]", 8, ""},
    {"foo[2-4]-eth2", "foo3-eth2", 1, "foo2-eth2,foo4-eth2"},
    {"node[1-9]-ib", "node[2-8]-ib", 7, "node[1,9]-ib"},
    {"foo[1,1,2,1]", "foo1", 3, "foo2"},
    {"login,node1,login", "login", 2, "node1"},
    {"foo[1-10],bar,foo[5-15]", "foo[4-12],bar", 16, "foo[1-3,13-15]"},
    {"foo[1-10]", "foo[1-3],foo[2-6],foo4", 6, "foo[7-10]"},
    {"node[08-11]", "node10", 1, "node[08-09,11]"},
    {"node[08-11]", "node9", 0, "node[08-11]"},
    {"node[08-11]", "node[09-10]", 2, "node[08,11]"},
    {"node[8-11],node[08-11]", "node[08-09]", 2, "node[8-11,10-11]"},
    {"node[98-101]", "node[098-100]", 1, "node[98-99,101]"},
    {"a[1-3],b[1-3]", "", 0, "a[1-3],b[1-3]"},
    {"a[1-3],b[1-3]", "b2,a2", 2, "a[1,3],b[1,3]"},
    {"a[1-3],b[1-3]", "c[1-3]", 0, "a[1-3],b[1-3]"},
};

static void test_delete (void)
{
    for (size_t i = 0; i < sizeof (dels) / sizeof (dels[0]); i++) {
        const struct del *t = &dels[i];
        struct hostlist *hl = mklist (t->in);
        int n = hostlist_count (hl);
        int rc = hostlist_delete (hl, t->del);

        ok (rc == t->count, "delete (%s, %s) removes %d", t->in, t->del,
            t->count);
        ok (enc_is (hl, t->out) && hostlist_count (hl) == n - t->count,
            "leaving \"%s\"", t->out);
        hostlist_destroy (hl);
    }
}

struct cursor_del {
    const char *in;
    int n; /* cursor on host n */
    const char *del;
    const char *current; /* NULL: cursor left in a gap */
    const char *next;
};

static const struct cursor_del cursor_dels[] = {
    {"foo[0-7]", 1, "foo1", NULL, "foo2"},
    {"foo[0-7]", 4, "foo1", "foo4", "foo5"},
    {"foo[0,2,4-5]", 1, "foo2", NULL, "foo4"},
    {"foo[0,2,4-5]", 2, "foo2", "foo4", "foo5"},
    {"foo[0-15]", 0, "foo0", NULL, "foo1"},
    {"foo[0-15]", 7, "foo[0-15]", NULL, NULL},
    {"foo[0-100]", 50, "foo0", "foo50", "foo51"},
    {"foo[0-100]", 50, "foo[40-60]", NULL, "foo61"},
    {"foo[0-100]", 50, "foo[60-70]", "foo50", "foo51"},
    {"foo[0-3],bar,foo[0-3]", 5, "foo0", NULL, "foo1"},
};

static void test_cursor_delete (void)
{
    for (size_t i = 0; i < sizeof (cursor_dels) / sizeof (cursor_dels[0]);
         i++) {
        const struct cursor_del *t = &cursor_dels[i];
        struct hostlist *hl = mklist (t->in);
        const char *h;

        hostlist_nth (hl, t->n);
        hostlist_delete (hl, t->del);
        h = hostlist_current (hl);
        if (t->current)
            ok (h && !strcmp (h, t->current),
                "%s: cursor on #%d, delete %s: still on %s", t->in, t->n,
                t->del, t->current);
        else
            ok (h == NULL && errno == ENOENT,
                "%s: cursor on #%d, delete %s: cursor is in a gap", t->in, t->n,
                t->del);
        h = hostlist_next (hl);
        if (t->next)
            ok (h && !strcmp (h, t->next), "next is %s", t->next);
        else
            ok (h == NULL, "next is NULL");
        hostlist_destroy (hl);
    }
}

struct sortuniq {
    const char *in;
    const char *sorted;
    const char *uniq;
};

static const struct sortuniq sortuniq[] = {
    {"foo,f,bar,baz", "bar,baz,f,foo", "bar,baz,f,foo"},
    {"[5-6],[3-4],[1-2,0]", "[0-6]", "[0-6]"},
    {"[0-20],12,15", "[0-12,12-15,15-20]", "[0-20]"},
    {"0,1,2,3,4,5,1,5", "[0-1,1-5,5]", "[0-5]"},
    {"[0-20],45,12,015", "[0-12,12-20,45],015", "[0-20,45],015"},
    {"bar1,bar2,foo1,foo,foo", "bar[1-2],foo,foo,foo1", "bar[1-2],foo,foo1"},
    {"foo[5-6],foo3,foo4", "foo[3-6]", "foo[3-6]"},
    {"foo[5-6],foo[4-7]", "foo[4-5,5-6,6-7]", "foo[4-7]"},
    {"foo[0-3],foo[0-3]", "foo[0,0-1,1-2,2-3,3]", "foo[0-3]"},
    {"foo[0-2],foo[0-2],foo[0-2]", "foo[0,0,0-1,1,1-2,2,2]", "foo[0-2]"},
    {"node[09-11],node10", "node[10,10-11],node09", "node[10-11],node09"},
    {"node2-ib,node1,node1-ib", "node1,node[1-2]-ib", "node1,node[1-2]-ib"},
    {"b,a,b,a", "a,a,b,b", "a,b"},
    {"n[10-1000],n[1-9]", "n[1-1000]", "n[1-1000]"},
};

static void test_sortuniq (void)
{
    for (size_t i = 0; i < sizeof (sortuniq) / sizeof (sortuniq[0]); i++) {
        const struct sortuniq *t = &sortuniq[i];
        struct hostlist *a = mklist (t->in);
        struct hostlist *b = mklist (t->in);

        ok (hostlist_sort (a) == 0 && enc_is (a, t->sorted), "sort (%s) = %s",
            t->in, t->sorted);
        ok (hostlist_uniq (b) == 0 && enc_is (b, t->uniq), "uniq (%s) = %s",
            t->in, t->uniq);
        hostlist_destroy (a);
        hostlist_destroy (b);
    }
}

/* Randomized comparison against a plain array of names.
 */
static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static unsigned int rnd (unsigned int n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state % n;
}

static void random_name (char *buf, size_t size)
{
    const char *prefixes[] = {"n", "node", "r1n", ""};
    const char *suffixes[] = {"", "", "-ib", "x"};
    unsigned int num = rnd (25) + (rnd (4) == 0 ? 90 : 0);

    if (rnd (10) == 0)
        snprintf (buf, size, "%s", rnd (2) ? "login" : "node");
    else
        snprintf (buf, size, "%s%0*u%s", prefixes[rnd (4)],
                  rnd (3) == 0 ? (int)rnd (4) : 0, num, suffixes[rnd (4)]);
}

struct model {
    char *names[64];
    int n;
};

static int cmp_strp (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

/* True if hl holds exactly the names of m (in order if 'ordered',
 * else as a multiset).
 */
static bool same_names (struct hostlist *hl, const struct model *m,
                        bool ordered)
{
    char *got[64];
    char *want[64];
    int n = 0;
    bool match = true;

    if (hostlist_count (hl) != m->n)
        return false;
    for (const char *h = hostlist_first (hl); h && n < 64;
         h = hostlist_next (hl))
        got[n++] = strdup (h);
    for (int i = 0; i < m->n; i++)
        want[i] = m->names[i];
    if (!ordered) {
        qsort (got, n, sizeof (got[0]), cmp_strp);
        qsort (want, m->n, sizeof (want[0]), cmp_strp);
    }
    for (int i = 0; i < n; i++) {
        if (i >= m->n || strcmp (got[i], want[i]) != 0)
            match = false;
        free (got[i]);
    }
    return match && n == m->n;
}

static bool check_random_list (struct hostlist *hl, struct model *m)
{
    struct hostlist *again, *sorted, *d;
    struct model keep = {.n = 0};
    char *enc = hostlist_encode (hl);
    char delstr[64 * 64] = "";
    bool chosen[64] = {false};
    int ndel = 0;
    bool good = true;

    /* round trip */
    again = enc ? hostlist_decode (enc) : NULL;
    if (!again || !same_names (again, m, true) || !enc_is (again, enc))
        good = false;
    /* find returns the first occurrence */
    for (int i = 0; i < m->n; i++) {
        int first = 0;
        while (strcmp (m->names[first], m->names[i]) != 0)
            first++;
        if (hostlist_find (hl, m->names[i]) != first)
            good = false;
    }
    /* sort keeps the multiset */
    sorted = hostlist_copy (hl);
    if (!sorted || hostlist_sort (sorted) < 0 || !same_names (sorted, m, false))
        good = false;
    /* delete a random subset of names: the rest stays, in order */
    for (int i = 0; i < m->n; i++) {
        if (rnd (3) == 0) {
            chosen[i] = true;
            if (*delstr)
                strcat (delstr, ",");
            strcat (delstr, m->names[i]);
        }
    }
    for (int i = 0; i < m->n; i++) {
        bool gone = false;
        for (int j = 0; j < m->n; j++)
            if (chosen[j] && !strcmp (m->names[j], m->names[i]))
                gone = true;
        if (gone)
            ndel++;
        else
            keep.names[keep.n++] = m->names[i];
    }
    d = hostlist_copy (hl);
    if (!d || hostlist_delete (d, delstr) != ndel
        || !same_names (d, &keep, true))
        good = false;
    hostlist_destroy (d);
    hostlist_destroy (sorted);
    hostlist_destroy (again);
    free (enc);
    return good;
}

static void test_random (void)
{
    int failures = 0;

    for (int iter = 0; iter < 300 && failures < 3; iter++) {
        struct hostlist *hl = hostlist_create ();
        struct model m = {.n = 0};
        int len = rnd (40);
        char name[64];

        for (int i = 0; i < len; i++) {
            random_name (name, sizeof (name));
            m.names[m.n++] = strdup (name);
            if (hostlist_append (hl, name) != 1)
                failures++;
        }
        if (!same_names (hl, &m, true) || !check_random_list (hl, &m)) {
            char *s = hostlist_encode (hl);
            diag ("failed on %s", s ? s : "(null)");
            free (s);
            failures++;
        }
        for (int i = 0; i < m.n; i++)
            free (m.names[i]);
        hostlist_destroy (hl);
    }
    ok (failures == 0,
        "300 random lists: round trip, find, sort, delete agree with a model");
}

/* Sorting twice gives the same list; uniq of sorted equals uniq.
 */
static void test_sort_stable (void)
{
    int failures = 0;

    for (int iter = 0; iter < 200; iter++) {
        struct hostlist *a = hostlist_create ();
        char name[64];
        char *e1, *e2, *e3;
        for (int i = rnd (30); i > 0; i--) {
            random_name (name, sizeof (name));
            hostlist_append (a, name);
        }
        struct hostlist *b = hostlist_copy (a);
        struct hostlist *c = hostlist_copy (a);
        hostlist_sort (a);
        e1 = hostlist_encode (a);
        hostlist_sort (a);
        e2 = hostlist_encode (a);
        hostlist_uniq (b);
        hostlist_sort (c);
        hostlist_uniq (c);
        e3 = hostlist_encode (c);
        if (!e1 || !e2 || !e3 || strcmp (e1, e2) != 0 || !enc_is (b, e3))
            failures++;
        free (e1);
        free (e2);
        free (e3);
        hostlist_destroy (a);
        hostlist_destroy (b);
        hostlist_destroy (c);
    }
    ok (failures == 0, "sort is idempotent and uniq (sort (x)) = uniq (x)");
}

/* Found by src/common/fuzz/parse_fuzz.c: a run or a bracket group of
 * more than HOSTLIST_MAX_EXPAND hosts was encoded as one expression,
 * which hostlist_decode() then refused (ERANGE).
 */
static void test_encode_big (void)
{
    struct {
        const char *in;
        const char *out;
    } t[] = {
        {"x[0-1048575],x1048576", "x[0-1048575],x1048576"},
        {"x[0-1048575],x[1048576-2000000]", "x[0-1048575],x[1048576-2000000]"},
        {"x[0-1048575],x[0-5]", "x[0-1048575],x[0-5]"},
        {"x[1-3],x[0-1048575],x[7-9]-y",
         "x[1-3,0-1048572],x[1048573-1048575],x[7-9]-y"},
        {"n[0000000-1048575],n1048576", "n[0000000-1048575],n1048576"},
    };

    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++) {
        struct hostlist *hl = mklist (t[i].in), *hl2;
        char *s = hostlist_encode (hl);
        is (s, t[i].out, "%.40s... encodes in brackets of at most 2^20 hosts",
            t[i].in);
        hl2 = s ? hostlist_decode (s) : NULL;
        ok (hl2 && hostlist_count (hl2) == hostlist_count (hl)
                && enc_is (hl2, t[i].out),
            "and that decodes to the same list");
        hostlist_destroy (hl2);
        hostlist_destroy (hl);
        free (s);
    }
}

/* Found by src/common/fuzz/parse_fuzz.c: a few bytes whose expansion is
 * not a run ("[0-524287][0,2]": a million names each stored apart, or
 * "a1[0-999999]": a million names formatted one by one) could be
 * repeated until decoding took gigabytes or minutes.
 */
static void test_decode_budget (void)
{
    const char *one[]
        = {"[0-524287][0,2]", "a1[0-1048575]", "a[0-1023]b[0-1023]", "n[1-9]0"};
    struct hostlist *hl;
    char *s;

    for (size_t i = 0; i < sizeof (one) / sizeof (one[0]); i++) {
        ok ((hl = hostlist_decode (one[i])) != NULL, "\"%s\" alone decodes",
            one[i]);
        hostlist_destroy (hl);
    }
    for (size_t i = 0; i < 2; i++) {
        size_t len = strlen (one[i]);
        if (!(s = malloc (8 * (len + 1))))
            BAIL_OUT ("out of memory");
        for (size_t k = 0; k < 8; k++) {
            memcpy (s + k * (len + 1), one[i], len);
            s[k * (len + 1) + len] = ',';
        }
        s[8 * (len + 1) - 1] = '\0';
        errno = 0;
        ok (hostlist_decode (s) == NULL && errno == ERANGE,
            "\"%s\" 8 times fails with ERANGE", one[i]);
        hl = mklist ("keep");
        ok (hostlist_append (hl, s) < 0 && errno == ERANGE
                && hostlist_count (hl) == 1,
            "append of it fails and changes nothing");
        hostlist_destroy (hl);
        free (s);
    }
    /* text-paid ranges are free: 8 x 2^20 hosts in 8 runs */
    hl = mklist ("x[0-1048575],y[0-1048575],x[0-1048575],y[0-1048575],"
                 "x[0-1048575],y[0-1048575],x[0-1048575],y[0-1048575]");
    ok (hostlist_count (hl) == 8 << 20, "ranges in the text are not charged");
    ok (hostlist_append (hl, "[0-524287][0,2]") == 1 << 20,
        "a new decode starts with the whole budget");
    hostlist_destroy (hl);
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    test_basic ();
    test_einval ();
    test_destroy ();
    test_rfc29 ();
    test_codec ();
    test_expansion ();
    test_bad ();
    test_append ();
    test_cursor ();
    test_find ();
    test_delete ();
    test_cursor_delete ();
    test_sortuniq ();
    test_random ();
    test_sort_stable ();
    test_encode_big ();
    test_decode_budget ();
    done_testing ();
    return 0;
}
