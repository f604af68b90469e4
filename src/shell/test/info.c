/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/info.c - decoding exec-agent.shell-info: tasks per shell, taskmap
 * schemes, this shell's cores and GPUs, malformed answers; size strings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libjob/jobspec.h"
#include "src/shell/info.h"
#include "tap.h"

static json_t *jobspec (int ntasks, int nnodes, json_t *options)
{
    char *argv[] = {"hostname", NULL};
    json_t *js
        = jobspec_from_command (1, argv, ntasks, nnodes, 1, 0, 0, 0., NULL);
    if (js && options)
        json_object_set_new (
            json_object_get (json_object_get (js, "attributes"), "system"),
            "shell", json_pack ("{s:o}", "options", options));
    return js;
}

/* R with nnodes ranks 0.., cores "0-<ncores-1>" each, gpus (or NULL) */
static json_t *make_R (int nnodes, int ncores, const char *gpus)
{
    char ranks[32], cores[32];

    snprintf (ranks, sizeof (ranks), nnodes > 1 ? "0-%d" : "%d",
              nnodes > 1 ? nnodes - 1 : 0);
    snprintf (cores, sizeof (cores), ncores > 1 ? "0-%d" : "%d",
              ncores > 1 ? ncores - 1 : 0);
    json_t *children = json_pack ("{s:s}", "core", cores);
    if (gpus)
        json_object_set_new (children, "gpu", json_string (gpus));
    return json_pack ("{s:i s:{s:[{s:s s:o}]}}", "version", 1, "execution",
                      "R_lite", "rank", ranks, "children", children);
}

static struct shell_info *make (int rank, int nnodes, json_t *R, json_t *js,
                                flux_error_t *error)
{
    char ranks[32];
    snprintf (ranks, sizeof (ranks), nnodes > 1 ? "0-%d" : "%d",
              nnodes > 1 ? nnodes - 1 : 0);
    json_t *o
        = json_pack ("{s:I s:i s:i s:i s:s s:o s:o s:{}}", "id",
                     (json_int_t)1234, "userid", 100, "rank", rank, "size",
                     nnodes, "ranks", ranks, "R", R, "jobspec", js, "opts");
    struct shell_info *info = shell_info_create (o, error);
    json_decref (o);
    return info;
}

static char *ids (struct idset *s)
{
    static char buf[128];
    char *p = idset_encode (s, IDSET_FLAG_RANGE);
    snprintf (buf, sizeof (buf), "%s", p ? p : "(null)");
    free (p);
    return buf;
}

static char *map (struct shell_info *info)
{
    static char buf[256];
    char *p = taskmap_encode (info->map, 0);
    snprintf (buf, sizeof (buf), "%s", p ? p : "(null)");
    free (p);
    return buf;
}

static void test_block (void)
{
    flux_error_t error = {.text = ""};
    struct shell_info *info;

    info = make (1, 2, make_R (2, 4, "0-1"), jobspec (8, 2, NULL), &error);
    ok (info != NULL, "8 tasks on 2 nodes of 4 cores: %s", error.text);
    if (!info)
        return;
    ok (info->id == 1234 && info->userid == 100 && info->shell_rank == 1
            && info->shell_size == 2,
        "id, userid, rank, size");
    ok (info->total_ntasks == 8 && info->local_ntasks == 4, "4 tasks here");
    is (ids (info->taskids), "4-7", "block: tasks 4-7 on shell rank 1");
    is (map (info), "[[0,2,4,1]]", "taskmap");
    is (ids (info->cores), "0-3", "cores");
    is (ids (info->gpus), "0-1", "gpus");
    is (info->name, "hostname", "job name");
    ok (json_is_array (info->command), "command");
    shell_info_destroy (info);
}

/* An exclusive -N2 -n2 gets every core of its nodes: still one task per
 * node, as the jobspec's node level says (not two on the first). */
static void test_exclusive (void)
{
    flux_error_t error = {.text = ""};
    struct shell_info *info;

    info = make (1, 2, make_R (2, 4, NULL), jobspec (2, 2, NULL), &error);
    ok (info != NULL, "2 tasks on 2 nodes given 4 cores each: %s", error.text);
    if (info) {
        ok (info->local_ntasks == 1, "one task on shell rank 1");
        is (ids (info->taskids), "1", "task 1 there");
        is (map (info), "[[0,2,1,1]]", "taskmap: one per node");
    }
    shell_info_destroy (info);
}

static void test_schemes (void)
{
    flux_error_t error = {.text = ""};
    struct shell_info *info;

    info = make (
        0, 2, make_R (2, 2, NULL),
        jobspec (4, 2, json_pack ("{s:{s:s}}", "taskmap", "scheme", "cyclic")),
        &error);
    ok (info != NULL, "cyclic: %s", error.text);
    if (info) {
        is (map (info), "[[0,2,1,2]]", "cyclic taskmap");
        is (ids (info->taskids), "0,2", "cyclic: tasks 0,2 on shell rank 0");
        ok (idset_count (info->gpus) == 0, "no gpus");
    }
    shell_info_destroy (info);

    info = make (
        1, 2, make_R (2, 2, NULL),
        jobspec (4, 2,
                 json_pack ("{s:{s:s s:s}}", "taskmap", "scheme", "manual",
                            "value", "[[1,1,2,1],[0,1,2,1]]")),
        &error);
    ok (info != NULL, "manual: %s", error.text);
    if (info)
        is (ids (info->taskids), "0-1", "manual: tasks 0-1 on shell rank 1");
    shell_info_destroy (info);

    error.text[0] = '\0';
    info = make (0, 2, make_R (2, 2, NULL),
                 jobspec (4, 2,
                          json_pack ("{s:{s:s s:s}}", "taskmap", "scheme",
                                     "manual", "value", "[[0,2,1,1]]")),
                 &error);
    ok (info == NULL && errno == EINVAL && strstr (error.text, "match"),
        "manual map with other counts fails: %s", error.text);

    info = make (
        0, 2, make_R (2, 2, NULL),
        jobspec (4, 2,
                 json_pack ("{s:{s:s}}", "taskmap", "scheme", "hostfile")),
        &error);
    ok (info == NULL && errno == EINVAL, "unknown scheme fails: %s",
        error.text);

    info = make (0, 2, make_R (2, 2, NULL),
                 jobspec (4, 2,
                          json_pack ("{s:{s:s s:s}}", "taskmap", "scheme",
                                     "cyclic", "value", "0")),
                 &error);
    ok (info == NULL && errno == EINVAL, "cyclic stride 0 fails: %s",
        error.text);
}

static void test_distribute (void)
{
    flux_error_t error = {.text = ""};
    struct shell_info *info;

    /* 3 tasks, no node level, R of 2 nodes x 2 cores: 2 + 1 */
    info = make (1, 2, make_R (2, 2, NULL), jobspec (3, 0, NULL), &error);
    ok (info != NULL, "3 tasks on 2 nodes: %s", error.text);
    if (info)
        ok (info->local_ntasks == 1 && info->total_ntasks == 3,
            "shell rank 1 gets the last task");
    shell_info_destroy (info);

    /* more tasks than cores: tasks go round again */
    info = make (0, 1, make_R (1, 1, NULL), jobspec (1, 0, NULL), &error);
    ok (info && info->local_ntasks == 1, "1 task on 1 core");
    shell_info_destroy (info);
}

static void test_malformed (void)
{
    flux_error_t error;
    json_t *o;
    struct shell_info *info;

    o = json_pack ("{s:s}", "id", "x");
    errno = 0;
    ok (shell_info_create (o, &error) == NULL && errno == EPROTO,
        "malformed answer: EPROTO: %s", error.text);
    json_decref (o);

    errno = 0;
    info = make (2, 2, make_R (2, 1, NULL), jobspec (2, 2, NULL), &error);
    ok (info == NULL && errno == EPROTO, "rank out of range: %s", error.text);

    o = json_pack ("{s:{s:[{s:s s:{s:s}}]}}", "execution", "R_lite", "rank",
                   "5", "children", "core", "0");
    errno = 0;
    info = make (0, 1, o, jobspec (1, 0, NULL), &error);
    ok (info == NULL && errno == EPROTO, "R rank not in ranks: %s", error.text);

    o = json_pack ("{s:{s:[{s:s s:{s:s}}]}}", "execution", "R_lite", "rank",
                   "0", "children", "core", "x");
    errno = 0;
    info = make (0, 1, o, jobspec (1, 0, NULL), &error);
    ok (info == NULL && errno == EPROTO, "bad core idset: %s", error.text);

    errno = 0;
    info = make (0, 1, json_object (), jobspec (1, 0, NULL), &error);
    ok (info == NULL && errno == EPROTO, "R without R_lite: %s", error.text);
}

/* A shell-info answer of a 1-core job with the agent's optional field
 * key set to v (taken), given to shell_info_create(). */
static struct shell_info *make_with (const char *key, json_t *v,
                                     flux_error_t *error)
{
    json_t *o = json_pack ("{s:I s:i s:i s:i s:s s:o s:o s:{}}", "id",
                           (json_int_t)1234, "userid", 100, "rank", 0, "size",
                           1, "ranks", "0", "R", make_R (1, 1, NULL), "jobspec",
                           jobspec (1, 1, NULL), "opts");
    struct shell_info *info;

    if (!o || !v || json_object_set_new (o, key, v) < 0)
        BAIL_OUT ("json_pack failed");
    errno = 0;
    info = shell_info_create (o, error);
    json_decref (o);
    return info;
}

/* The agent's broker rank and rundir: optional, checked when given. */
static void test_broker (void)
{
    flux_error_t error = {.text = ""};
    struct shell_info *info;

    info = make (0, 1, make_R (1, 1, NULL), jobspec (1, 1, NULL), &error);
    ok (info && info->broker_rank == -1 && info->rundir == NULL,
        "without broker-rank and rundir: -1 and NULL");
    shell_info_destroy (info);

    info = make_with ("broker-rank", json_integer (7), &error);
    ok (info && info->broker_rank == 7, "broker-rank is read");
    shell_info_destroy (info);
    info = make_with ("rundir", json_string ("/run/x"), &error);
    ok (info && info->rundir && !strcmp (info->rundir, "/run/x"),
        "rundir is read");
    shell_info_destroy (info);

    ok (make_with ("broker-rank", json_integer (-5), &error) == NULL
            && errno == EPROTO,
        "negative broker-rank: EPROTO: %s", error.text);
    ok (make_with ("broker-rank", json_string ("0"), &error) == NULL
            && errno == EPROTO,
        "broker-rank not an integer: EPROTO: %s", error.text);
}

/* The CPUs of the shell's cores from the agent: optional, an object. */
static void test_cpus (void)
{
    flux_error_t error = {.text = ""};
    struct shell_info *info;

    info = make (0, 1, make_R (1, 1, NULL), jobspec (1, 1, NULL), &error);
    ok (info && info->cpus == NULL, "without cpus: NULL");
    shell_info_destroy (info);

    info = make_with ("cpus", json_pack ("{s:s}", "0", "0x00000001"), &error);
    ok (info && json_is_object (info->cpus)
            && json_object_size (info->cpus) == 1,
        "cpus are kept");
    shell_info_destroy (info);

    ok (make_with ("cpus", json_string ("0x1"), &error) == NULL
            && errno == EPROTO,
        "cpus not an object: EPROTO: %s", error.text);
}

static void test_size (void)
{
    ok (shell_parse_size ("10M") == 10 * 1024 * 1024, "10M");
    ok (shell_parse_size ("1G") == 1024 * 1024 * 1024, "1G");
    ok (shell_parse_size ("512k") == 512 * 1024, "512k");
    ok (shell_parse_size ("4096") == 4096, "4096");
    ok (shell_parse_size ("0") == 0, "0");
    errno = 0;
    ok (shell_parse_size ("10MB") < 0 && errno == EINVAL, "10MB: EINVAL");
    ok (shell_parse_size ("-1") < 0, "-1: EINVAL");
    ok (shell_parse_size ("") < 0, "empty: EINVAL");
    ok (shell_parse_size ("99999999999999999999") < 0, "overflow: EINVAL");
    ok (shell_parse_size ("9999999999T") < 0, "too big: EINVAL");
}

static void test_duration (void)
{
    json_t *o;
    struct {
        json_t *v;
        double want;
        const char *what;
    } cases[] = {
        {json_real (0.5), 0.5, "0.5 (a number)"},
        {json_integer (30), 30., "30 (an integer)"},
        {json_string ("2m"), 120., "\"2m\""},
        {json_string ("1.5s"), 1.5, "\"1.5s\""},
        {json_string ("soon"), -1., "\"soon\": -1"},
        {json_integer (-1), -1., "-1: -1"},
        {json_true (), -1., "true: -1"},
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        o = cases[i].v;
        ok (shell_parse_duration (o) == cases[i].want, "duration %s",
            cases[i].what);
        json_decref (o);
    }
}

int main (void)
{
    plan (NO_PLAN);
    test_block ();
    test_exclusive ();
    test_schemes ();
    test_distribute ();
    test_malformed ();
    test_broker ();
    test_cpus ();
    test_size ();
    test_duration ();
    done_testing ();
}
