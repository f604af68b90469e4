/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/eventlog.c - RFC 18 eventlogs */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libeventlog/eventlog.h"
#include "tap.h"

/* RFC 18 "Example", verbatim: line 2 has an unquoted key, so the example
 * as printed is not valid JSON Lines.
 */
static const char *rfc_lines[] = {
    "{\"timestamp\":1552593348.073045,\"name\":\"submit\",\"context\":"
    "{\"urgency\":16,\"userid\":5588,\"flags\":0}}\n",
    "{\"timestamp\":1552593547.411336,\"name\":\"urgency\",\"context\":"
    "{\"urgency\":0,\"userid\":5588}}\n",
    "{\"timestamp\":1552593348.088391,\"name\":\"alloc\",context:"
    "{\"note\":\"rank0/core[0-1]\"}}\n",
    "{\"timestamp\":1552593348.093541,\"name\":\"free\"}\n",
    "{\"timestamp\":1552593348.089787,\"name\":\"start\"}\n",
    "{\"timestamp\":1552593348.092830,\"name\":\"release\",\"context\":"
    "{\"ranks\":\"all\",\"final\":true}}\n",
    "{\"timestamp\":1552593348.090927,\"name\":\"finish\",\"context\":"
    "{\"status\":0}}\n",
    "{\"timestamp\":1552593348.104432,\"name\":\"clean\"}\n",
};
#define RFC_NLINES 8
static const char *rfc_alloc_fixed
    = "{\"timestamp\":1552593348.088391,\"name\":\"alloc\",\"context\":"
      "{\"note\":\"rank0/core[0-1]\"}}\n";
static const char *rfc_names[] = {"submit", "urgency", "alloc",  "free",
                                  "start",  "release", "finish", "clean"};

/* The RFC example, concatenated; with fixed = 1, line 2 quoted. */
static char *rfc_log (int fixed)
{
    size_t len = 0;
    char *s;

    for (int i = 0; i < RFC_NLINES; i++)
        len += strlen (rfc_lines[i]) + 2;
    if (!(s = calloc (1, len + 1)))
        BAIL_OUT ("out of memory");
    for (int i = 0; i < RFC_NLINES; i++)
        strcat (s, fixed && i == 2 ? rfc_alloc_fixed : rfc_lines[i]);
    return s;
}

static void test_rfc_example (void)
{
    json_t *log, *entry, *context;
    double t;
    const char *name;
    char *s;

    for (int i = 0; i < RFC_NLINES; i++) {
        errno = 0;
        entry = eventlog_entry_decode (rfc_lines[i]);
        if (i == 2)
            ok (!entry && errno == EPROTO,
                "RFC example line 2 (unquoted key context) fails with "
                "EPROTO");
        else
            ok (entry && eventlog_entry_parse (entry, NULL, &name, NULL) == 0
                    && !strcmp (name, rfc_names[i]),
                "RFC example line %d (%s) decodes", i, rfc_names[i]);
        json_decref (entry);
    }

    s = rfc_log (0);
    errno = 0;
    ok (eventlog_decode (s) == NULL && errno == EPROTO,
        "the RFC example log as printed fails with EPROTO");
    free (s);

    s = rfc_log (1);
    log = eventlog_decode (s);
    free (s);
    ok (log && json_array_size (log) == RFC_NLINES,
        "the RFC example log with line 2 fixed decodes to 8 entries");
    int bad = 0;
    for (int i = 0; i < RFC_NLINES; i++) {
        entry = json_array_get (log, i);
        if (eventlog_entry_parse (entry, &t, &name, &context) < 0
            || strcmp (name, rfc_names[i]) != 0)
            bad++;
    }
    ok (bad == 0, "its entries have the RFC's names, in order");

    entry = json_array_get (log, 0);
    ok (eventlog_entry_parse (entry, &t, &name, &context) == 0
            && t == 1552593348.073045 && json_is_object (context)
            && json_integer_value (json_object_get (context, "urgency")) == 16
            && json_integer_value (json_object_get (context, "userid")) == 5588,
        "submit: timestamp and context as in the RFC");
    ok (eventlog_entry_parse (json_array_get (log, 1), &t, NULL, NULL) == 0
            && t == 1552593547.411336,
        "urgency: out of order timestamp is accepted");
    ok (eventlog_entry_parse (json_array_get (log, 2), NULL, NULL, &context)
                == 0
            && !strcmp (json_string_value (json_object_get (context, "note")),
                        "rank0/core[0-1]"),
        "alloc: context note");
    context = (json_t *)1;
    ok (eventlog_entry_parse (json_array_get (log, 3), NULL, NULL, &context)
                == 0
            && context == NULL,
        "free: no context gives NULL");
    ok (eventlog_entry_parse (json_array_get (log, 5), NULL, NULL, &context)
                == 0
            && json_is_true (json_object_get (context, "final")),
        "release: context final is true");

    /* round trip: encode then decode gives the same log */
    s = eventlog_encode (log);
    json_t *log2 = s ? eventlog_decode (s) : NULL;
    ok (log2 && json_equal (log, log2),
        "the RFC log round trips through encode and decode");
    char *s2 = log2 ? eventlog_encode (log2) : NULL;
    ok (s && s2 && !strcmp (s, s2), "and re-encodes to the same text");
    free (s);
    free (s2);
    json_decref (log2);
    json_decref (log);
}

static void check_encode (json_t *entry, const char *expect, const char *what)
{
    char *s = entry ? eventlog_entry_encode (entry) : NULL;
    is (s, expect, "%s encodes as expected", what);
    free (s);
}

static void test_create (void)
{
    json_t *entry;
    double t;
    const char *name;
    json_t *context;

    entry = eventlog_entry_create (1.5, "start", NULL);
    check_encode (entry, "{\"timestamp\":1.5,\"name\":\"start\"}\n",
                  "create without context");
    json_decref (entry);

    entry = eventlog_entry_create (2.25, "finish", "{\"status\":0}");
    check_encode (entry,
                  "{\"timestamp\":2.25,\"name\":\"finish\","
                  "\"context\":{\"status\":0}}\n",
                  "create with context");
    json_decref (entry);

    entry = eventlog_entry_pack (3, "submit", "{s:i s:s}", "userid", 5588,
                                 "note", "a\nb\"c");
    check_encode (entry,
                  "{\"timestamp\":3.0,\"name\":\"submit\","
                  "\"context\":{\"userid\":5588,\"note\":\"a\\nb\\\"c\"}}\n",
                  "pack (newline and quote escaped)");
    json_decref (entry);

    entry = eventlog_entry_pack (4, "clean", NULL);
    check_encode (entry, "{\"timestamp\":4.0,\"name\":\"clean\"}\n",
                  "pack with NULL fmt");
    json_decref (entry);

    entry = eventlog_entry_create (1, "x", "{}");
    check_encode (entry, "{\"timestamp\":1.0,\"name\":\"x\",\"context\":{}}\n",
                  "empty context object");
    json_decref (entry);

    /* timestamp 0 means now */
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);
    entry = eventlog_entry_create (0, "now", NULL);
    ok (entry && eventlog_entry_parse (entry, &t, &name, &context) == 0
            && fabs (t - (now.tv_sec + now.tv_nsec * 1e-9)) < 5
            && !strcmp (name, "now") && context == NULL,
        "timestamp 0 is replaced by the current time");
    json_decref (entry);
    entry = eventlog_entry_pack (0, "now", "{s:b}", "x", 1);
    ok (entry && eventlog_entry_parse (entry, &t, NULL, &context) == 0
            && fabs (t - (now.tv_sec + now.tv_nsec * 1e-9)) < 5
            && json_is_true (json_object_get (context, "x")),
        "pack: timestamp 0 is the current time");
    json_decref (entry);

    /* entries keep full double precision */
    entry = eventlog_entry_create (1552593348.073045, "submit", NULL);
    char *s = eventlog_entry_encode (entry);
    json_t *e2 = s ? eventlog_entry_decode (s) : NULL;
    ok (e2 && eventlog_entry_parse (e2, &t, NULL, NULL) == 0
            && t == 1552593348.073045,
        "timestamp survives encode/decode exactly");
    free (s);
    json_decref (e2);
    json_decref (entry);
}

static void test_create_errors (void)
{
    struct {
        double t;
        const char *name;
        const char *context;
        const char *what;
    } bad[] = {
        {-1, "a", NULL, "negative timestamp"},
        {NAN, "a", NULL, "NaN timestamp"},
        {INFINITY, "a", NULL, "infinite timestamp"},
        {-INFINITY, "a", NULL, "-inf timestamp"},
        {1, NULL, NULL, "NULL name"},
        {1, "", NULL, "empty name"},
        {1, "\xff\xfe", NULL, "name not UTF-8"},
        {1, "a", "", "empty context text"},
        {1, "a", "not json", "context not JSON"},
        {1, "a", "[1]", "context an array"},
        {1, "a", "5", "context a number"},
        {1, "a", "null", "context null"},
        {1, "a", "{\"x\":1,\"x\":2}", "context with duplicate keys"},
        {1, "a", "{\"x\":1} {}", "context with trailing text"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        ok (eventlog_entry_create (bad[i].t, bad[i].name, bad[i].context)
                    == NULL
                && errno == EINVAL,
            "create: %s fails with EINVAL", bad[i].what);
    }
    errno = 0;
    ok (eventlog_entry_pack (1, "a", "[i]", 1) == NULL && errno == EINVAL,
        "pack: an array context fails with EINVAL");
    errno = 0;
    ok (eventlog_entry_pack (1, "a", "s", "str") == NULL && errno == EINVAL,
        "pack: a string context fails with EINVAL");
    errno = 0;
    ok (eventlog_entry_pack (1, "a", "{s:i", "x", 1) == NULL && errno == EINVAL,
        "pack: a bad format fails with EINVAL");
    errno = 0;
    ok (eventlog_entry_pack (-1, "a", "{s:i}", "x", 1) == NULL
            && errno == EINVAL,
        "pack: a bad timestamp fails with EINVAL (and frees the context)");
    errno = 0;
    ok (eventlog_entry_pack (1, "", "{s:i}", "x", 1) == NULL && errno == EINVAL,
        "pack: an empty name fails with EINVAL");
}

/* Lines that are not valid entries: every one must give EPROTO. */
static const char *bad_lines[] = {
    "", "\n", " \n", "{\"timestamp\":1,\"name\":\"a\"}", /* missing newline */
    "{\"timestamp\":1,\"name\":\"a\"}\n\n",              /* two newlines */
    "{\"timestamp\":1,\n\"name\":\"a\"}\n",              /* embedded newline */
    "{\"timestamp\":1,\"name\":\"a\"}\n{\"timestamp\":1,\"name\":\"a\"}\n",
    "{\"timestamp\":1,\"name\":\"a\"} x\n", /* trailing garbage */
    "{\"timestamp\":1,\"name\":\"a\"}{}\n",
    "x{\"timestamp\":1,\"name\":\"a\"}\n", /* leading garbage */
    "{\"timestamp\":1,\"name\":\"a\"\n",   /* truncated */
    /* from here on (FIRST_CONTENT_BAD) the line is framed correctly and
     * what is wrong is the content */
    "[1]\n", /* not an object */
    "5\n", "\"s\"\n", "null\n", "[{\"timestamp\":1,\"name\":\"a\"}]\n",
    "{\"name\":\"a\"}\n",                     /* no timestamp */
    "{\"timestamp\":\"1\",\"name\":\"a\"}\n", /* bad timestamp types */
    "{\"timestamp\":true,\"name\":\"a\"}\n",
    "{\"timestamp\":null,\"name\":\"a\"}\n",
    "{\"timestamp\":[1],\"name\":\"a\"}\n",
    "{\"timestamp\":0,\"name\":\"a\"}\n", /* not > 0 */
    "{\"timestamp\":0.0,\"name\":\"a\"}\n",
    "{\"timestamp\":-1.5,\"name\":\"a\"}\n",
    "{\"timestamp\":1e999,\"name\":\"a\"}\n",
    "{\"timestamp\":1}\n",            /* no name */
    "{\"timestamp\":1,\"name\":5}\n", /* bad name types */
    "{\"timestamp\":1,\"name\":null}\n", "{\"timestamp\":1,\"name\":{}}\n",
    "{\"timestamp\":1,\"name\":\"\"}\n",                    /* empty name */
    "{\"timestamp\":1,\"name\":\"a\\u0000b\"}\n",           /* NUL in name */
    "{\"timestamp\":1,\"name\":\"a\",\"context\":\"x\"}\n", /* bad context */
    "{\"timestamp\":1,\"name\":\"a\",\"context\":[]}\n",
    "{\"timestamp\":1,\"name\":\"a\",\"context\":5}\n",
    "{\"timestamp\":1,\"name\":\"a\",\"context\":null}\n",
    "{\"timestamp\":1,\"name\":\"a\",\"extra\":1}\n",    /* unknown key */
    "{\"timestamp\":1,\"name\":\"a\",\"name\":\"b\"}\n", /* duplicate */
    "{\"timestamp\":1,\"name\":\"a\",}\n",               /* invalid JSON */
    "{timestamp:1,\"name\":\"a\"}\n",
    "{\"timestamp\":1,\"name\":\"\xff\"}\n", /* not UTF-8 */
};
#define NBAD_LINES ((int)(sizeof (bad_lines) / sizeof (bad_lines[0])))
#define FIRST_CONTENT_BAD 11

static void test_decode_entry (void)
{
    int failures = 0;
    json_t *entry;
    double t;
    const char *name;
    json_t *context;

    for (int i = 0; i < NBAD_LINES; i++) {
        errno = 0;
        entry = eventlog_entry_decode (bad_lines[i]);
        if (entry || errno != EPROTO) {
            diag ("bad line %d not rejected with EPROTO: %s", i, bad_lines[i]);
            failures++;
        }
        json_decref (entry);
    }
    ok (failures == 0, "%d malformed lines fail entry_decode with EPROTO",
        NBAD_LINES);
    errno = 0;
    ok (eventlog_entry_decode (NULL) == NULL && errno == EINVAL,
        "entry_decode (NULL) fails with EINVAL");

    entry = eventlog_entry_decode (
        " { \"timestamp\" : 7 , \"name\" : \"a b\" , \"context\" : {} } \n");
    ok (entry && eventlog_entry_parse (entry, &t, &name, &context) == 0
            && t == 7 && !strcmp (name, "a b") && json_is_object (context),
        "whitespace inside the line and an integer timestamp are accepted");
    json_decref (entry);

    entry = eventlog_entry_decode (
        "{\"context\":{\"k\":[1,2]},\"name\":\"n\",\"timestamp\":0.5}\n");
    check_encode (entry,
                  "{\"timestamp\":0.5,\"name\":\"n\",\"context\":{\"k\":[1,2]}}"
                  "\n",
                  "keys in another order are accepted and re-encoded in RFC "
                  "order; it");
    json_decref (entry);

    entry = eventlog_entry_decode (
        "{\"timestamp\":1e-3,\"name\":\"\\u00e9\\n\"}\n");
    ok (entry && eventlog_entry_parse (entry, &t, &name, NULL) == 0
            && t == 0.001 && !strcmp (name, "\xc3\xa9\n"),
        "exponent timestamps and escaped names decode");
    char *s = entry ? eventlog_entry_encode (entry) : NULL;
    ok (s && strchr (s, '\n') == s + strlen (s) - 1,
        "an escaped newline in a name stays escaped when encoded");
    free (s);
    json_decref (entry);
}

static void test_parse_errors (void)
{
    int failures = 0;
    int tested = 0;

    /* load the bad content as JSON values and check entry_parse/encode */
    for (int i = FIRST_CONTENT_BAD; i < NBAD_LINES; i++) {
        json_t *o = json_loads (bad_lines[i],
                                JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
        double t = 42;
        const char *name = (const char *)1;
        json_t *context = (json_t *)1;
        if (!o)
            continue; /* not JSON at all */
        tested++;
        errno = 0;
        if (eventlog_entry_parse (o, &t, &name, &context) == 0
            || errno != EPROTO || t != 42 || name != (const char *)1
            || context != (json_t *)1)
            failures++;
        errno = 0;
        char *s = eventlog_entry_encode (o);
        if (s || errno != EINVAL)
            failures++;
        free (s);
        json_decref (o);
    }
    ok (failures == 0 && tested >= 20,
        "%d invalid entries fail entry_parse "
        "with EPROTO (outputs untouched) and entry_encode with EINVAL",
        tested);
    errno = 0;
    ok (eventlog_entry_parse (NULL, NULL, NULL, NULL) < 0 && errno == EINVAL,
        "entry_parse (NULL) fails with EINVAL");
    errno = 0;
    ok (eventlog_entry_encode (NULL) == NULL && errno == EINVAL,
        "entry_encode (NULL) fails with EINVAL");

    /* json_real refuses non-finite values, so build them via integers:
     * a huge integer is fine, a zero or negative one is not */
    json_t *o
        = json_pack ("{s:I s:s}", "timestamp", (json_int_t)-5, "name", "a");
    errno = 0;
    ok (eventlog_entry_parse (o, NULL, NULL, NULL) < 0 && errno == EPROTO,
        "a negative integer timestamp fails with EPROTO");
    json_decref (o);
}

static void test_decode_log (void)
{
    json_t *log;
    const char *good = "{\"timestamp\":1,\"name\":\"a\"}\n";

    log = eventlog_decode ("");
    ok (log && json_is_array (log) && json_array_size (log) == 0,
        "the empty string decodes to an empty array");
    char *s = log ? eventlog_encode (log) : NULL;
    is (s, "", "an empty array encodes as the empty string");
    free (s);
    json_decref (log);

    errno = 0;
    ok (eventlog_decode (NULL) == NULL && errno == EINVAL,
        "decode (NULL) fails with EINVAL");

    /* a bad line anywhere spoils the whole log */
    int failures = 0;
    for (int i = 0; i < NBAD_LINES; i++) {
        for (int pos = 0; pos < 3; pos++) {
            char buf[1024];
            snprintf (buf, sizeof (buf), "%s%s%s", pos == 0 ? "" : good,
                      bad_lines[i], pos == 2 ? "" : good);
            /* "" and two good lines are fine inside a log */
            if (i == 0 || i == 6)
                continue;
            errno = 0;
            log = eventlog_decode (buf);
            if (log || errno != EPROTO) {
                diag ("log with bad line %d at %d: not EPROTO", i, pos);
                failures++;
            }
            json_decref (log);
        }
    }
    ok (failures == 0, "a malformed line first, in the middle or last "
                       "fails decode with EPROTO");
    errno = 0;
    ok (eventlog_decode ("{\"timestamp\":1,\"name\":\"a\"}\n"
                         "{\"timestamp\":2,\"name\":\"b\"}")
                == NULL
            && errno == EPROTO,
        "a last line without newline fails with EPROTO");
    errno = 0;
    ok (eventlog_decode ("{\"timestamp\":1,\"name\":\"a\"}\n\n") == NULL
            && errno == EPROTO,
        "an empty line fails with EPROTO");

    errno = 0;
    json_t *arr = json_pack ("[{s:f s:s} i]", "timestamp", 1.0, "name", "a", 5);
    ok (eventlog_encode (arr) == NULL && errno == EINVAL,
        "encode of an array holding a non-entry fails with EINVAL");
    json_decref (arr);
    arr = json_pack ("[{s:f s:s}]", "timestamp", 1.0, "name", "");
    errno = 0;
    ok (eventlog_encode (arr) == NULL && errno == EINVAL,
        "encode of an array holding an invalid entry fails with EINVAL");
    json_decref (arr);
    arr = json_pack ("{s:f s:s}", "timestamp", 1.0, "name", "a");
    errno = 0;
    ok (eventlog_encode (arr) == NULL && errno == EINVAL,
        "encode of a non-array fails with EINVAL");
    json_decref (arr);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng (void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}

/* A random entry: timestamps of any magnitude, names with characters
 * that need escaping, sometimes a context.
 */
static json_t *random_entry (void)
{
    static const char chars[] = "ab \"\\\n\t/{}:,\x01";
    char name[16];
    int n = 1 + rng () % (sizeof (name) - 1);
    double t = ldexp ((double)(rng () >> 11) + 1, (int)(rng () % 80) - 60);

    for (int i = 0; i < n; i++)
        name[i] = chars[rng () % (sizeof (chars) - 1)];
    name[n] = '\0';
    if (rng () % 2)
        return eventlog_entry_create (t, name, NULL);
    return eventlog_entry_pack (t, name, "{s:I s:[s,b]}", "n",
                                (json_int_t)(rng () >> 2), "v", name, 1);
}

static void test_roundtrip (void)
{
    json_t *log = json_array ();
    int failures = 0;

    for (int i = 0; i < 2000; i++) {
        json_t *entry = random_entry ();
        char *s = entry ? eventlog_entry_encode (entry) : NULL;
        json_t *back = s ? eventlog_entry_decode (s) : NULL;
        if (!back || !json_equal (entry, back)
            || strchr (s, '\n') != s + strlen (s) - 1) {
            if (failures++ == 0)
                diag ("round trip failed: %s", s ? s : "(null)");
        }
        json_array_append (log, entry);
        json_decref (entry);
        json_decref (back);
        free (s);
    }
    ok (failures == 0, "2000 random entries round trip exactly, one line "
                       "each");

    char *s = eventlog_encode (log);
    json_t *back = s ? eventlog_decode (s) : NULL;
    ok (back && json_equal (log, back),
        "a log of 2000 random entries round trips");

    /* eventlog_append builds the same text line by line */
    char *built = NULL;
    int bad = 0;
    size_t i;
    json_t *entry;
    json_array_foreach (log, i, entry)
    {
        char *line = eventlog_entry_encode (entry);
        if (!line || eventlog_append (&built, line) < 0)
            bad++;
        free (line);
    }
    ok (bad == 0 && built && s && !strcmp (built, s),
        "eventlog_append of each encoded entry gives the encoded log");
    free (built);
    free (s);
    json_decref (back);
    json_decref (log);
}

static void test_append (void)
{
    const char *l1 = "{\"timestamp\":1,\"name\":\"a\"}\n";
    const char *l2 = "{\"timestamp\":2,\"name\":\"b\",\"context\":{}}\n";
    char *log = NULL;

    ok (eventlog_append (&log, l1) == 0 && log && !strcmp (log, l1),
        "append to NULL starts a new log");
    ok (eventlog_append (&log, l2) == 0 && log
            && !strncmp (log, l1, strlen (l1))
            && !strcmp (log + strlen (l1), l2),
        "append adds the line at the end");
    char *saved = log ? strdup (log) : NULL;
    char *before = log;
    int failures = 0;
    for (int i = 0; i < NBAD_LINES; i++) {
        errno = 0;
        if (eventlog_append (&log, bad_lines[i]) == 0 || errno != EPROTO
            || log != before || strcmp (log, saved) != 0)
            failures++;
    }
    ok (failures == 0, "appending any malformed line fails with EPROTO and "
                       "leaves the log unchanged");
    free (saved);
    free (log);

    errno = 0;
    ok (eventlog_append (NULL, l1) < 0 && errno == EINVAL,
        "append with NULL log pointer fails with EINVAL");
    log = NULL;
    errno = 0;
    ok (eventlog_append (&log, NULL) < 0 && errno == EINVAL && !log,
        "append of a NULL line fails with EINVAL");
    log = strdup ("{\"timestamp\":1,\"name\":\"a\"}");
    errno = 0;
    ok (eventlog_append (&log, l2) < 0 && errno == EINVAL,
        "append to a log not ending in a newline fails with EINVAL");
    free (log);
    log = strdup ("");
    ok (eventlog_append (&log, l1) == 0 && !strcmp (log, l1),
        "append to an empty string works");
    free (log);
}

/* Feed 'text' to a parser in chunks of 1..maxchunk bytes, taking entries
 * out after each chunk; compare with eventlog_decode().
 */
static int parse_chunked (const char *text, size_t maxchunk, int *eagain)
{
    eventlog_parser_t *p = eventlog_parser_create ();
    json_t *expect = eventlog_decode (text);
    json_t *got = json_array ();
    size_t len = strlen (text), off = 0;
    int rc = -1;

    *eagain = 0;
    if (!p || !expect || !got)
        goto done;
    while (off < len) {
        size_t n = maxchunk == 1 ? 1 : 1 + rng () % maxchunk;
        if (n > len - off)
            n = len - off;
        if (eventlog_parser_feed (p, text + off, n) < 0)
            goto done;
        off += n;
        json_t *entry;
        while ((entry = eventlog_parser_next (p)))
            json_array_append_new (got, entry);
        if (errno != EAGAIN)
            goto done;
        (*eagain)++;
    }
    if (json_equal (expect, got) && eventlog_parser_pending (p) == 0)
        rc = 0;
done:
    eventlog_parser_destroy (p);
    json_decref (expect);
    json_decref (got);
    return rc;
}

static void test_parser (void)
{
    char *text = rfc_log (1);
    int eagain;

    ok (parse_chunked (text, 1, &eagain) == 0,
        "the RFC log fed byte by byte yields its 8 entries in order");
    cmp_ok (eagain, "==", strlen (text),
            "EAGAIN after every byte once the complete lines are taken");
    int failures = 0;
    for (int i = 0; i < 200; i++)
        if (parse_chunked (text, 1 + i % 100, &eagain) < 0)
            failures++;
    ok (failures == 0, "fed in 200 random chunkings it yields the same");
    free (text);

    eventlog_parser_t *p = eventlog_parser_create ();
    ok (p != NULL, "parser created");
    errno = 0;
    ok (eventlog_parser_next (p) == NULL && errno == EAGAIN,
        "a new parser has nothing: EAGAIN");
    cmp_ok (eventlog_parser_pending (p), "==", 0, "nothing pending");

    /* good, bad, good: the bad line is reported and skipped */
    const char *mixed = "{\"timestamp\":1,\"name\":\"a\"}\n"
                        "{\"timestamp\":1,\"name\":5}\n"
                        "not json\n"
                        "{\"timestamp\":2,\"name\":\"b\"}\n"
                        "{\"timestamp\":3,";
    ok (eventlog_parser_feed (p, mixed, strlen (mixed)) == 0, "feed works");
    const char *name = NULL;
    json_t *e = eventlog_parser_next (p);
    ok (e && eventlog_entry_parse (e, NULL, &name, NULL) == 0
            && !strcmp (name, "a"),
        "first entry is a");
    json_decref (e);
    errno = 0;
    ok (eventlog_parser_next (p) == NULL && errno == EPROTO,
        "a bad entry gives EPROTO");
    errno = 0;
    ok (eventlog_parser_next (p) == NULL && errno == EPROTO,
        "a line that is not JSON gives EPROTO");
    e = eventlog_parser_next (p);
    ok (e && eventlog_entry_parse (e, NULL, &name, NULL) == 0
            && !strcmp (name, "b"),
        "the parser goes on after bad lines: b");
    json_decref (e);
    errno = 0;
    ok (eventlog_parser_next (p) == NULL && errno == EAGAIN,
        "an incomplete last line gives EAGAIN");
    cmp_ok (eventlog_parser_pending (p), "==", strlen ("{\"timestamp\":3,"),
            "its bytes are pending");
    ok (eventlog_parser_feed (p, "\"name\":\"c\"}\n", 12) == 0
            && (e = eventlog_parser_next (p))
            && eventlog_entry_parse (e, NULL, &name, NULL) == 0
            && !strcmp (name, "c"),
        "completing the line yields c");
    json_decref (e);
    cmp_ok (eventlog_parser_pending (p), "==", 0, "nothing pending after c");

    /* NUL bytes and empty lines */
    static const char nul_line[] = "{\"timestamp\":1,\"name\":\"a\0\"}\n";
    ok (eventlog_parser_feed (p, nul_line, sizeof (nul_line) - 1) == 0,
        "feed a line holding a NUL byte");
    errno = 0;
    ok (eventlog_parser_next (p) == NULL && errno == EPROTO,
        "a NUL byte in a line gives EPROTO");
    ok (eventlog_parser_feed (p, "\n", 1) == 0, "feed an empty line");
    errno = 0;
    ok (eventlog_parser_next (p) == NULL && errno == EPROTO,
        "an empty line gives EPROTO");
    errno = 0;
    ok (eventlog_parser_next (p) == NULL && errno == EAGAIN,
        "then nothing: EAGAIN");

    /* a long line crossing many buffer growths */
    size_t big = 200000;
    char *line = malloc (big + 64);
    if (!line)
        BAIL_OUT ("out of memory");
    int n = sprintf (line, "{\"timestamp\":1,\"name\":\"");
    memset (line + n, 'x', big);
    strcpy (line + n + big, "\"}\n");
    size_t len = strlen (line);
    int bad = 0;
    for (size_t off = 0; off < len; off += 1000) {
        size_t k = len - off < 1000 ? len - off : 1000;
        if (eventlog_parser_feed (p, line + off, k) < 0)
            bad++;
        if (off + k < len && (eventlog_parser_next (p) || errno != EAGAIN))
            bad++;
    }
    e = eventlog_parser_next (p);
    ok (!bad && e && eventlog_entry_parse (e, NULL, &name, NULL) == 0
            && strlen (name) == big,
        "a 200 KB line fed in 1000-byte chunks yields one entry");
    json_decref (e);
    free (line);

    errno = 0;
    ok (eventlog_parser_feed (NULL, "x", 1) < 0 && errno == EINVAL,
        "feed (NULL parser) fails with EINVAL");
    errno = 0;
    ok (eventlog_parser_feed (p, NULL, 1) < 0 && errno == EINVAL,
        "feed of NULL data fails with EINVAL");
    ok (eventlog_parser_feed (p, NULL, 0) == 0,
        "feed of zero bytes is a no-op");
    errno = 0;
    ok (eventlog_parser_next (NULL) == NULL && errno == EINVAL,
        "next (NULL) fails with EINVAL");
    cmp_ok (eventlog_parser_pending (NULL), "==", 0, "pending (NULL) is 0");

    errno = ENOENT;
    eventlog_parser_destroy (p);
    eventlog_parser_destroy (NULL);
    ok (errno == ENOENT, "destroy (and destroy of NULL) preserve errno");
}

/* eventlog_now() and entries made "now": whole microseconds that six
 * decimals give back exactly. */
static void test_now (void)
{
    struct timespec ts;
    double t, back, ts_entry;
    char buf[64];
    json_t *e;
    int whole = 1;

    clock_gettime (CLOCK_REALTIME, &ts);
    t = eventlog_now ();
    ok (fabs (t - (ts.tv_sec + ts.tv_nsec * 1e-9)) < 1.,
        "eventlog_now is the current time");
    for (int i = 0; i < 1000; i++) {
        t = eventlog_now ();
        snprintf (buf, sizeof (buf), "%.6f", t);
        back = strtod (buf, NULL);
        if (back != t || nearbyint (t * 1e6) / 1e6 != t)
            whole = 0;
    }
    ok (whole, "1000 times: a whole number of microseconds, %%.6f reads back");
    e = eventlog_entry_pack (0., "x", NULL);
    ok (e && eventlog_entry_parse (e, &ts_entry, NULL, NULL) == 0
            && nearbyint (ts_entry * 1e6) / 1e6 == ts_entry,
        "an entry made now has a microsecond timestamp");
    json_decref (e);
    e = eventlog_entry_pack (1552593348.0730451, "x", NULL);
    ok (e && eventlog_entry_parse (e, &ts_entry, NULL, NULL) == 0
            && ts_entry == 1552593348.0730451,
        "an explicit timestamp is kept as given");
    json_decref (e);
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);

    /* tests index bad_lines[]: check it has the expected shape */
    if (strcmp (bad_lines[0], "") != 0
        || strcmp (bad_lines[FIRST_CONTENT_BAD], "[1]\n") != 0
        || !strstr (bad_lines[6], "}\n{"))
        BAIL_OUT ("bad_lines[] was reordered");

    test_rfc_example ();
    test_create ();
    test_create_errors ();
    test_decode_entry ();
    test_parse_errors ();
    test_decode_log ();
    test_roundtrip ();
    test_append ();
    test_parser ();
    test_now ();

    done_testing ();
}
