/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/jobs_format.c - flux jobs output formats: parsing, field values,
 * Python-style formatting, "?:" columns, the header, --json.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobs_format.h"
#include "libjob/job.h"
#include "tap.h"

#define NOW 1700000100.0

/* a pending, a running and two inactive jobs of user 4242 */
static const char *jobs_text
    = "["
      "{\"id\":1,\"userid\":4242,\"state\":8,\"name\":\"sleep\","
      "\"ntasks\":2,\"priority\":16,\"urgency\":16,\"t_submit\":1700000000.5,"
      "\"duration\":60.0,\"annotations\":{\"sched\":{\"reason_pending\":"
      "\"no cores\"}}},"
      "{\"id\":2,\"userid\":4242,\"state\":16,\"name\":"
      "\"averyveryverylongname\","
      "\"ntasks\":4,\"nnodes\":2,\"nodelist\":\"node[0-1]\",\"ranks\":\"[0-1]"
      "\","
      "\"t_submit\":1700000001.0,\"t_run\":1700000040.0,"
      "\"expiration\":1700000400.0,\"queue\":\"batch\"},"
      "{\"id\":3,\"userid\":4242,\"state\":64,\"name\":\"hostname\","
      "\"ntasks\":1,\"nnodes\":1,\"nodelist\":\"node0\",\"result\":1,"
      "\"success\":true,\"waitstatus\":0,\"t_submit\":1700000002.0,"
      "\"t_run\":1700000003.0,\"t_cleanup\":1700000004.5,"
      "\"t_inactive\":1700000005.0,\"exception_occurred\":false},"
      "{\"id\":4,\"userid\":4242,\"state\":64,\"name\":\"false\","
      "\"ntasks\":1,\"result\":4,\"success\":false,\"t_submit\":1700000006.0,"
      "\"t_cleanup\":1700000007.0,\"t_inactive\":1700000008.0,"
      "\"exception_occurred\":true,\"exception_type\":\"cancel\","
      "\"exception_severity\":0,\"exception_note\":\"by you\"}"
      "]";

static json_t *jobs;
static struct jobs_list *list;

/* The output of fmt over the jobs (or only job index i if i >= 0). */
static char *run (const char *fmt, int i, int header)
{
    static char text[4096];
    struct jobs_format *f;
    flux_error_t error;
    struct textbuf out = {0};
    struct jobs_list *l = list;

    if (!(f = jobs_format_create (fmt, &error))) {
        snprintf (text, sizeof (text), "ERROR: %s", error.text);
        return text;
    }
    if (i >= 0) {
        json_t *o = json_pack ("{s:[O]}", "jobs", json_array_get (jobs, i));
        char *s = json_dumps (o, 0);
        if (!s || !(l = jobs_list_parse (s, strlen (s))))
            BAIL_OUT ("jobs_list_parse");
        free (s);
        json_decref (o);
    }
    if (jobs_format_run (f, l, NOW, header, &out) < 0)
        BAIL_OUT ("jobs_format_run failed");
    snprintf (text, sizeof (text), "%s", out.data ? out.data : "");
    free (out.data);
    if (i >= 0)
        jobs_list_destroy (l);
    jobs_format_destroy (f);
    return text;
}

static void test_helpers (void)
{
    char buf[64];
    struct {
        double secs;
        const char *fsd, *hms;
    } t[] = {
        {0., "0s", "0:00:00"},
        {0.0004, "0s", "0:00:01"},
        {1.5, "1.500s", "0:00:02"},
        {12.5, "12.5s", "0:00:12"},
        {150., "2.5m", "0:02:30"},
        {7200., "2h", "2:00:00"},
        {90000., "1.042d", "1 day, 1:00:00"},
        {200000., "2.315d", "2 days, 7:33:20"},
    };
    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++) {
        jobs_fsd (t[i].secs, buf, sizeof (buf));
        is (buf, t[i].fsd, "fsd (%g) = %s", t[i].secs, t[i].fsd);
        jobs_hms (t[i].secs, buf, sizeof (buf));
        is (buf, t[i].hms, "hms (%g) = %s", t[i].secs, t[i].hms);
    }
}

static void test_parse (void)
{
    is (run ("{foo}", 0, 0), "ERROR: Unknown format field: foo",
        "unknown field");
    is (run ("{id", 0, 0), "ERROR: format: unmatched '{'", "unmatched {");
    is (run ("x}y", 0, 0), "ERROR: format: single '}' encountered", "single }");
    is (run ("{id!X}", 0, 0), "ERROR: Unknown conversion specifier 'X'",
        "bad conversion");
    is (run ("{id:<5q}", 0, 0), "ERROR: Invalid format specifier '<5q' for id",
        "bad spec");
    is (run ("{{{id.dec}}} text", 0, 0), "{1} text\n",
        "braces and literal text");
    /* a width that would write gigabytes (or overflow an int) */
    is (run ("{id:>99999999999}", 0, 0),
        "ERROR: id: field width 99999999999 is above 1000", "huge width");
    is (run ("{id:>1001}", 0, 0), "ERROR: id: field width 1001 is above 1000",
        "width 1001");
    is (run ("{t_submit:.99999999999f}", 0, 0),
        "ERROR: t_submit: precision 99999999999 is above 1000",
        "huge precision");
    ok (strlen (run ("{id:>1000}", 0, 0)) == 1001, "width 1000 is fine");
}

static void test_fields (void)
{
    char expect[128];

    is (run ("{id.dec} {id.hex} {userid} {username}", 0, 0),
        "1 0x1 4242 4242\n", "id forms, userid, username (unknown uid)");
    /* {id} is a JobID as flux-core formats it: F58 as a string, a number
     * with a spec (run() returns a static buffer: copy the first) */
    snprintf (expect, sizeof (expect), "%s", run ("{id.f58}|{id.f58}", 0, 0));
    is (run ("{id}|{id:h}", 0, 0), expect, "{id} and {id:h} are F58");
    is (run ("{id:>3}|{id:<3}|", 0, 0), "  1|1  |\n",
        "{id} with a spec is a number");
    snprintf (expect, sizeof (expect), "%s|%s\n", "SCHED", "S");
    is (run ("{state}|{state_single}", 0, 0), expect, "state names");
    is (run ("{status}|{status_abbrev}|{result}|{result_abbrev}", 0, 0),
        "SCHED|S||\n", "pending: status is the state, no result");
    is (run ("{status}|{status_abbrev}|{result}|{result_abbrev}", 3, 0),
        "CANCELED|CA|CANCELED|CA\n", "inactive: status is the result");
    is (run ("{ntasks:>6}|{nnodes:>6h}|{nnodes:>6}|", 0, 0),
        "     2|     -|      |\n", "numbers right-aligned; h makes a hyphen");
    is (run ("{name:<10.10+}|{name:<10.10}|{name:^9}|{name:*>8}", 1, 0),
        "averyvery+|averyveryv|averyveryverylongname|averyveryverylongname\n",
        "truncation with and without +");
    is (run ("{name:^9}|{name:*>8}|{name:.3}", 2, 0),
        "hostname |hostname|hos\n", "centered, fill character, precision");
    is (run ("{runtime!F}|{runtime!H}|{runtime:.1f}", 1, 0),
        "1m|0:01:00|60.0\n", "running: runtime = now - t_run");
    is (run ("{runtime!F}|{contextual_time!F:>8h}", 2, 0), "1.500s|  1.500s\n",
        "inactive: runtime = t_cleanup - t_run");
    is (run ("{contextual_time!F:>8h}|{contextual_info}", 0, 0), "      1m|\n",
        "pending: time is the duration, no info");
    is (run ("{contextual_info}|{nodelist:h}", 1, 0), "node[0-1]|node[0-1]\n",
        "running: info is the nodelist");
    is (run ("{contextual_time!F:>8h}", 3, 0), "       -\n",
        "canceled before running: no time");
    is (run ("{t_remaining!F}|{expiration!D}", 1, 0),
        "5m|2023-11-14T22:20:00\n", "t_remaining and a date (TZ=UTC)");
    is (run ("{t_run!d:%H:%M:%S}|{t_run!d:%H:%M::>10}|{t_depend!d:%H::h}|"
             "{t_depend!D:h}",
             1, 0),
        "22:14:00|     22:14|-|-\n", "strftime dates, width after ::");
    is (run ("{t_submit}|{t_submit:.2f}|{duration}", 0, 0),
        "1700000000.5|1700000000.50|60.0\n", "reals as Python prints them");
    is (run ("{success}|{exception.occurred}|{returncode}|{waitstatus}", 2, 0),
        "True|False|0|0\n", "booleans and return code");
    is (run ("{exception.type}:{exception.note}|{returncode}|"
             "{inactive_reason}",
             3, 0),
        "cancel:by you|-128|Canceled: by you\n",
        "exception fields; canceled returncode -128");
    is (run ("{sched.reason_pending}|{annotations.sched.reason_pending}|"
             "{user.x}|{annotations}",
             0, 0),
        "no cores|no cores||{\"sched\":{\"reason_pending\":\"no cores\"}}\n",
        "annotations by path, missing paths empty");
    is (run ("{queue:<8.8}|{ranks}|{priority}|{urgency}", 1, 0),
        "batch   |[0-1]||\n", "queue, ranks; unset priority is empty");
}

static void test_columns (void)
{
    const char *dflt = "{id:>5} ?:{queue:<8.8} {username:<8.8} "
                       "{name:<10.10+} {status_abbrev:>2.2} {ntasks:>6} "
                       "{nnodes:>6h} {contextual_time!F:>8h} {contextual_info}";

    is (run (dflt, 0, 1),
        "JOBID USER     NAME       ST NTASKS NNODES     TIME INFO\n"
        "    1 4242     sleep       S      2      -       1m \n",
        "no job with a queue: the QUEUE column is left out");
    is (run (dflt, -1, 1),
        "JOBID QUEUE    USER     NAME       ST NTASKS NNODES     TIME INFO\n"
        "    1          4242     sleep       S      2      -       1m \n"
        "    2 batch    4242     averyvery+  R      4      2       1m "
        "node[0-1]\n"
        "    3          4242     hostname   CD      1      1   1.500s node0\n"
        "    4          4242     false      CA      1      -        - \n",
        "one job with a queue: the column is there");
}

static void test_attrs (void)
{
    struct jobs_format *f = jobs_format_create (
        "{id.f58} {username} {contextual_time!F} {sched.x}", NULL);
    json_t *a = f ? jobs_format_attrs (f) : NULL;
    char *s = a ? json_dumps (a, JSON_COMPACT) : NULL;

    is (s,
        "[\"userid\",\"state\",\"t_run\",\"t_cleanup\",\"duration\","
        "\"annotations\"]",
        "attributes asked of job-list, each once");
    free (s);
    json_decref (a);
    jobs_format_destroy (f);
}

static void test_json (void)
{
    json_t *o = jobs_format_json (list, 3, NOW);
    json_t *p = jobs_format_json (list, 0, NOW);

    ok (o
            && !strcmp (json_string_value (json_object_get (o, "state")),
                        "INACTIVE")
            && !strcmp (json_string_value (json_object_get (o, "result")),
                        "CANCELED")
            && json_integer_value (json_object_get (o, "returncode")) == -128
            && json_is_true (
                json_object_get (json_object_get (o, "exception"), "occurred"))
            && !json_object_get (o, "t_run") && !json_object_get (o, "runtime"),
        "--json: state and result names, returncode, exception object");
    ok (p
            && json_is_false (
                json_object_get (json_object_get (p, "exception"), "occurred"))
            && !json_object_get (p, "result")
            && !strcmp (json_string_value (json_object_get (p, "status")),
                        "SCHED")
            && json_object_get (p, "annotations"),
        "--json of a pending job: no result, exception occurred false");
    json_decref (o);
    json_decref (p);
}

static void test_parser (void)
{
    const char *text
        = "{\"jobs\":[{\"id\":5,\"s\":\"a\\\"b\\u00e9\\ud83d\\ude00\\n\","
          "\"r\":1.5e3,\"b\":false,\"n\":null,\"o\":{\"x\":[1,\"]\"]}},"
          "{}],\"extra\":[1,2]}";
    struct jobs_list *l = jobs_list_parse (text, strlen (text));
    const struct jobs_field *f;

    ok (l && l->njobs == 2, "jobs_list_parse: two jobs, other keys skipped");
    f = l ? jobs_get (l, 0, "s") : NULL;
    ok (f && f->type == JF_STR
            && !strcmp (f->s, "a\"b\xc3\xa9\xf0\x9f\x98\x80\n"),
        "strings are unescaped, \\u escapes and surrogate pairs to UTF-8");
    f = l ? jobs_get (l, 0, "r") : NULL;
    ok (f && f->type == JF_REAL && f->d == 1500., "reals");
    ok (l && jobs_get (l, 0, "b")->type == JF_BOOL
            && jobs_get (l, 0, "n")->type == JF_NULL
            && jobs_get (l, 0, "id")->type == JF_INT
            && jobs_get (l, 0, "id")->i == 5,
        "booleans, null, integers");
    f = l ? jobs_get (l, 0, "o") : NULL;
    ok (f && f->type == JF_JSON
            && json_array_size (json_object_get (f->json, "x")) == 2,
        "nested values are jansson objects (a bracket in a string is ok)");
    ok (l && jobs_get (l, 1, "id") == NULL, "an empty job has no fields");
    jobs_list_destroy (l);
    errno = 0;
    ok (jobs_list_parse ("{\"jobs\":[{\"id\":}]}", 17) == NULL
            && errno == EPROTO,
        "a malformed response is EPROTO");
    ok (jobs_list_parse ("{\"jobs\":[{\"id\":1]}", 16) == NULL,
        "a missing brace is EPROTO");
    {
        /* reals read exactly as strtod reads them */
        char buf[128];
        int bad = 0;
        srand (11);
        for (int i = 0; i < 20000; i++) {
            char num[48];
            double d;
            snprintf (num, sizeof (num), "%s%d.%0*d%s", i % 5 ? "" : "-",
                      rand () % (i % 3 ? 2000000000 : 100), 1 + rand () % 9,
                      rand () % 1000000000, i % 7 ? "" : "e-3");
            snprintf (buf, sizeof (buf), "{\"jobs\":[{\"t\":%s}]}", num);
            l = jobs_list_parse (buf, strlen (buf));
            d = strtod (num, NULL);
            if (!l || jobs_get (l, 0, "t")->d != d)
                bad++;
            jobs_list_destroy (l);
        }
        ok (bad == 0, "20000 random reals parse as strtod does (%d differ)",
            bad);
    }
}

/* instance.* fields read l->instance (jobs.c fills it); !P */
static void test_instance (void)
{
    struct jobs_format *f;
    flux_error_t error;

    if (!(list->instance = calloc (list->njobs, sizeof (json_t *)))
        || !(list->instance[1] = json_pack (
                 "{s:s s:i s:f s:f s:{s:{s:i s:i} s:{s:i s:i}}}", "stats",
                 "PD:1 R:2 CD:3 F:0", "total", 6, "progress", 0.5,
                 "utilization", 1. / 3, "resources", "all", "ncores", 8,
                 "ngpus", 0, "free", "ncores", 6, "ngpus", 0)))
        BAIL_OUT ("out of memory");
    is (run ("{instance.stats}|{instance.stats.total}|{instance.progress}", -1,
             0),
        "||\nPD:1 R:2 CD:3 F:0|6|0.5\n||\n||\n",
        "instance.stats, .total, .progress: the running instance's, else "
        "empty");
    is (run ("{instance.utilization!P:>6}|{instance.resources.all.ncores}|"
             "{instance.resources.free.ncores}",
             -1, 0),
        "      ||\n 33.3%|8|6\n      ||\n      ||\n",
        "instance.utilization!P, instance.resources.STATE.ncores");
    is (run ("{instance.stats.total} {instance.utilization}", -1, 1),
        "NJOBS CORE%\n \n6 0.3333333333333333\n \n \n",
        "headings NJOBS and CORE%%");
    is (run ("{instance.resources.bogus.ncores}", -1, 0),
        "ERROR: Unknown format field: instance.resources.bogus.ncores",
        "an unknown resource state is refused");
    is (run ("{instance.resources.up.cores}", -1, 0),
        "ERROR: Unknown format field: instance.resources.up.cores",
        "an unknown resource count is refused");
    if (!(f = jobs_format_create ("{id} {instance.progress}", &error)))
        BAIL_OUT ("jobs_format_create");
    ok (jobs_format_wants_instance (f), "an instance.* field wants instances");
    jobs_format_destroy (f);
    if (!(f = jobs_format_create ("{id} {annotations}", &error)))
        BAIL_OUT ("jobs_format_create");
    ok (!jobs_format_wants_instance (f), "other fields do not");
    jobs_format_destroy (f);
    is (run ("{ntasks!P}", 2, 0), "100%\n", "!P of 1 is 100%%");
}

int main (int argc, char **argv)
{
    setenv ("TZ", "UTC", 1);
    tzset ();
    setenv ("FLUX_F58_FORCE_ASCII", "1", 1);
    plan (NO_PLAN);
    if (!(jobs = json_loads (jobs_text, 0, NULL)))
        BAIL_OUT ("bad test jobs");
    {
        json_t *o = json_pack ("{s:O s:i}", "jobs", jobs, "version", 1);
        char *s = json_dumps (o, JSON_INDENT (1));
        if (!s || !(list = jobs_list_parse (s, strlen (s))))
            BAIL_OUT ("jobs_list_parse");
        free (s);
        json_decref (o);
    }
    test_helpers ();
    test_parse ();
    test_fields ();
    test_columns ();
    test_attrs ();
    test_json ();
    test_parser ();
    test_instance ();
    json_decref (jobs);
    jobs_list_destroy (list);
    done_testing ();
    return 0;
}
