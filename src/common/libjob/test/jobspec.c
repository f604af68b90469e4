/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/jobspec.c - jobspec v1 validation: the corpus in t/jobspec
 * (every invalid/NAME.json fails with the one-line error whose substring
 * is in NAME.err; every valid/ file passes), the summary of each accepted
 * shape, YAML to JSON, and jobspec_from_command.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libjob/jobspec.h"
#include "tap.h"

static char *read_file (const char *path)
{
    FILE *f = fopen (path, "r");
    char *buf = NULL;
    size_t size = 0;

    if (!f)
        BAIL_OUT ("%s: %s", path, strerror (errno));
    if (getdelim (&buf, &size, '\0', f) < 0) {
        free (buf);
        buf = strdup ("");
    }
    fclose (f);
    return buf;
}

static int ends_with (const char *s, const char *suffix)
{
    size_t n = strlen (s), m = strlen (suffix);
    return n >= m && !strcmp (s + n - m, suffix);
}

static int names_cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

/* Sorted file names in dir ending in one of the suffixes. */
static int list_dir (const char *dir, const char *s1, const char *s2,
                     char ***names)
{
    DIR *d = opendir (dir);
    struct dirent *ent;
    int n = 0;

    if (!d)
        BAIL_OUT ("%s: %s", dir, strerror (errno));
    *names = NULL;
    while ((ent = readdir (d))) {
        if (ends_with (ent->d_name, s1)
            || (s2 && ends_with (ent->d_name, s2))) {
            *names = realloc (*names, sizeof (char *) * (n + 1));
            (*names)[n++] = strdup (ent->d_name);
        }
    }
    closedir (d);
    qsort (*names, n, sizeof (char *), names_cmp);
    return n;
}

static void test_corpus_invalid (void)
{
    char **names, path[1024];
    int n = list_dir (JOBSPEC_CORPUS "/invalid", ".json", NULL, &names);

    ok (n >= 30, "the invalid corpus has %d >= 30 jobspecs", n);
    for (int i = 0; i < n; i++) {
        char *text, *expect, *nl;
        flux_error_t error = {.text = ""};
        struct jobspec *js;

        snprintf (path, sizeof (path), "%s/invalid/%s", JOBSPEC_CORPUS,
                  names[i]);
        text = read_file (path);
        strcpy (path + strlen (path) - 5, ".err");
        expect = read_file (path);
        if ((nl = strchr (expect, '\n')))
            *nl = '\0';
        errno = 0;
        js = jobspec_parse (text, &error);
        ok (js == NULL && errno == EINVAL && strstr (error.text, expect)
                && !strchr (error.text, '\n') && expect[0] != '\0',
            "invalid/%s: %s", names[i], error.text);
        if (js || !strstr (error.text, expect))
            diag ("expected '%s'", expect);
        jobspec_destroy (js);
        free (text);
        free (expect);
        free (names[i]);
    }
    free (names);
}

static void test_corpus_valid (void)
{
    char **names, path[1024];
    int n = list_dir (JOBSPEC_CORPUS "/valid", ".json", ".yaml", &names);

    ok (n >= 5, "the valid corpus has %d jobspecs", n);
    for (int i = 0; i < n; i++) {
        flux_error_t error = {.text = ""};
        struct jobspec *js;
        char *text;

        snprintf (path, sizeof (path), "%s/valid/%s", JOBSPEC_CORPUS, names[i]);
        text = read_file (path);
        js = jobspec_parse (text, &error);
        ok (js != NULL, "valid/%s passes", names[i]);
        if (!js)
            diag ("%s", error.text);
        jobspec_destroy (js);
        free (text);
        free (names[i]);
    }
    free (names);
}

static struct jobspec *parse_file (const char *name)
{
    char path[1024], *text;
    struct jobspec *js;
    flux_error_t error;

    snprintf (path, sizeof (path), "%s/valid/%s", JOBSPEC_CORPUS, name);
    text = read_file (path);
    if (!(js = jobspec_parse (text, &error)))
        BAIL_OUT ("%s: %s", name, error.text);
    free (text);
    return js;
}

static void test_summaries (void)
{
    struct jobspec *js;

    js = parse_file ("slot-core.json");
    ok (js->nnodes == 0 && js->nslots == 1 && js->slots_per_node == -1
            && js->cores_per_slot == 1 && js->gpus_per_slot == 0
            && js->ntasks == 1 && js->exclusive == 0 && js->duration == 0,
        "slot>core: 1 slot of 1 core, 1 task, no node level");
    is (js->name, "hostname", "name defaults to command[0]");
    ok (js->cwd == NULL && js->queue == NULL && js->environment == NULL
            && js->dependencies == NULL,
        "absent attributes are NULL");
    jobspec_destroy (js);

    js = parse_file ("example1.yaml");
    ok (js->nnodes == 4 && js->slots_per_node == 1 && js->nslots == 4
            && js->cores_per_slot == 2 && js->ntasks == 4
            && js->duration == 3600.,
        "node>slot>core: 4 nodes of 1 slot of 2 cores, 4 tasks, 1h");
    is (js->cwd, "/home/flux", "cwd");
    ok (json_object_size (js->environment) == 1, "environment");
    jobspec_destroy (js);

    js = parse_file ("use_case_2.1.yaml");
    ok (js->nnodes == 4 && js->nslots == 8 && js->ntasks == 5,
        "total: 5 tasks on 8 slots of 4 nodes");
    jobspec_destroy (js);

    js = parse_file ("use_case_2.3.yaml");
    ok (js->nslots == 10 && js->cores_per_slot == 2 && js->gpus_per_slot == 1
            && js->ntasks == 10,
        "slot>(core,gpu): 10 slots of 2 cores and 1 gpu");
    jobspec_destroy (js);

    js = parse_file ("use_case_2.4.json");
    ok (js->nnodes == 4 && js->nslots == 16 && js->gpus_per_slot == 1
            && js->cores_per_slot == 1 && js->exclusive == 1
            && js->duration == 1500,
        "node>slot>(gpu,core), exclusive, gpu listed first");
    jobspec_destroy (js);

    js = parse_file ("attributes.json");
    is (js->name, "my job", "job.name overrides command[0]");
    is (js->queue, "batch", "queue");
    is (js->cwd, "/tmp", "cwd");
    ok (json_array_size (js->dependencies) == 2, "2 dependencies");
    ok (json_array_size (js->command) == 3, "command has 3 words");
    ok (json_is_object (js->attributes)
            && json_object_get (js->attributes, "user"),
        "attributes object");
    ok (json_is_object (js->jobspec), "whole jobspec kept");
    jobspec_destroy (js);

    js = parse_file ("yaml-scalars.yaml");
    {
        json_t *cmd = js->command;
        json_t *types = json_object_get (
            json_object_get (js->attributes, "user"), "types");
        ok (json_array_size (cmd) == 5
                && !strcmp (json_string_value (json_array_get (cmd, 1)), "1")
                && !strcmp (json_string_value (json_array_get (cmd, 3)), "3")
                && !strcmp (json_string_value (json_array_get (cmd, 4)),
                            "true"),
            "quoted and !!str scalars are strings");
        ok (js->nslots == 3 && js->cores_per_slot == 2 && js->duration == 15,
            "0o3, +2 and 1.5e+1 are numbers");
        ok (json_real_value (json_array_get (types, 0)) == 4.5
                && json_integer_value (json_array_get (types, 1)) == -7
                && json_is_true (json_array_get (types, 2))
                && json_is_false (json_array_get (types, 3))
                && json_is_null (json_array_get (types, 4))
                && json_is_null (json_array_get (types, 5))
                && json_is_string (json_array_get (types, 6))
                && json_integer_value (json_array_get (types, 7)) == 12
                && json_real_value (json_array_get (types, 8)) == 0.5,
            "plain scalars resolve to float, int, bool, null");
        is (js->name, "multi\nline\n", "block scalar");
        ok (json_is_null (json_object_get (
                json_object_get (js->attributes, "user"), "empty")),
            "an empty value is null");
    }
    jobspec_destroy (js);
}

static void test_yaml (void)
{
    static const struct {
        const char *text, *err;
    } bad[] = {
        {"a: &x [1]\nb: *x\n", "YAML: aliases are not supported at line 2"},
        {"a: 1\na: 2\n", "YAML: duplicate mapping key at line 2"},
        {"a: 1\n---\nb: 2\n", "YAML: a jobspec must be a single document"},
        {"? [1]\n: x\n", "YAML: mapping keys must be scalars"},
        {"a: [1, 2\n", "YAML: did not find expected ',' or ']'"},
        {"a: .inf\n", "YAML: infinite or NaN numbers cannot be expressed"},
        {"a: -.Inf\n", "YAML: infinite or NaN"},
        {"a: .nan\n", "YAML: infinite or NaN"},
        {"a: 99999999999999999999\n", "YAML: integer out of range"},
        {"a: 1e999\n", "YAML: number out of range"},
        {"", "YAML: the document is empty"},
        {"a:\tb: c\n", "YAML:"},
    };
    flux_error_t error;
    json_t *o;
    char deep[400];

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        error.text[0] = '\0';
        errno = 0;
        o = jobspec_yaml_to_json (bad[i].text, &error);
        ok (o == NULL && errno == EINVAL && strstr (error.text, bad[i].err)
                && !strchr (error.text, '\n'),
            "bad YAML %zu: %s", i, error.text);
        json_decref (o);
    }
    memset (deep, '[', 100);
    deep[100] = '\0';
    ok (jobspec_yaml_to_json (deep, &error) == NULL
            && strstr (error.text, "nesting is too deep"),
        "deep nesting is refused: %s", error.text);
    o = jobspec_yaml_to_json ("{\"a\": [1, \"x\", {\"b\": null}]}", &error);
    ok (o && json_is_object (o)
            && json_integer_value (json_array_get (json_object_get (o, "a"), 0))
                   == 1,
        "JSON is YAML");
    json_decref (o);
    o = jobspec_yaml_to_json ("1: one\ntrue: yes\n", &error);
    ok (o && json_is_string (json_object_get (o, "1"))
            && !strcmp (json_string_value (json_object_get (o, "true")), "yes"),
        "scalar keys become strings; yes stays a string (YAML 1.2)");
    json_decref (o);
    o = jobspec_yaml_to_json ("- 1\n- 2\n", &error);
    ok (json_is_array (o) && json_array_size (o) == 2, "a top-level list");
    json_decref (o);
    o = jobspec_yaml_to_json ("\"\xff\"\n", &error);
    ok (o == NULL, "invalid UTF-8 is refused: %s", error.text);
    ok (jobspec_parse ("- 1\n", &error) == NULL
            && !strcmp (error.text, "jobspec must be an object"),
        "YAML that is not a mapping is not a jobspec");
    ok (jobspec_parse (NULL, &error) == NULL && errno == EINVAL,
        "jobspec_parse NULL fails");
    ok (jobspec_parse_json (NULL, &error) == NULL && errno == EINVAL,
        "jobspec_parse_json NULL fails");
}

static struct jobspec *from_cmd (int ntasks, int nnodes, int cores, int gpus,
                                 int excl, double duration)
{
    char *argv[] = {"/bin/sleep", "1", NULL};
    flux_error_t error;
    json_t *o = jobspec_from_command (2, argv, ntasks, nnodes, cores, gpus,
                                      excl, duration, &error);
    struct jobspec *js;

    if (!o) {
        diag ("%s", error.text);
        return NULL;
    }
    js = jobspec_parse_json (o, &error);
    if (!js)
        diag ("%s", error.text);
    json_decref (o);
    return js;
}

static void test_from_command (void)
{
    struct jobspec *js;
    flux_error_t error;
    char *argv[] = {"true", NULL};
    json_t *o;

    js = from_cmd (4, 0, 1, 0, 0, 0);
    ok (js && js->nnodes == 0 && js->nslots == 4 && js->ntasks == 4
            && js->cores_per_slot == 1 && !strcmp (js->name, "sleep"),
        "-n4: 4 slots of 1 core, name sleep");
    jobspec_destroy (js);
    js = from_cmd (3, 2, 2, 1, 0, 60);
    ok (js && js->nnodes == 2 && js->slots_per_node == 2 && js->nslots == 4
            && js->ntasks == 3 && js->cores_per_slot == 2
            && js->gpus_per_slot == 1 && js->duration == 60,
        "-N2 -n3 -c2 -g1 -t1m: 2 slots per node, total 3");
    jobspec_destroy (js);
    js = from_cmd (0, 3, 1, 0, 1, 0);
    ok (js && js->nnodes == 3 && js->ntasks == 3 && js->exclusive,
        "-N3 -x: 3 tasks, exclusive");
    jobspec_destroy (js);
    js = from_cmd (8, 4, 1, 0, 0, 0);
    ok (js && js->slots_per_node == 2 && js->ntasks == 8
            && json_object_get (
                json_object_get (
                    json_array_get (json_object_get (js->jobspec, "tasks"), 0),
                    "count"),
                "per_slot"),
        "-N4 -n8: per_slot");
    jobspec_destroy (js);
    ok (jobspec_from_command (1, argv, 2, 3, 1, 0, 0, 0, &error) == NULL
            && errno == EINVAL && strstr (error.text, "exceeds"),
        "more nodes than tasks: %s", error.text);
    ok (jobspec_from_command (1, argv, 2, 0, 1, 0, 1, 0, &error) == NULL
            && errno == EINVAL,
        "exclusive without nodes: %s", error.text);
    ok (jobspec_from_command (1, argv, 1, 0, 0, 0, 0, 0, &error) == NULL
            && errno == EINVAL,
        "0 cores: %s", error.text);
    ok (jobspec_from_command (1, argv, 1, 0, 1, 0, 0, -1, &error) == NULL
            && errno == EINVAL,
        "negative duration: %s", error.text);
    ok (jobspec_from_command (0, argv, 1, 0, 1, 0, 0, 0, &error) == NULL
            && errno == EINVAL,
        "no command: %s", error.text);
    o = jobspec_from_command (1, argv, 1, 0, 1, 0, 0, 0, &error);
    ok (o && json_object_size (o) == 4
            && json_integer_value (json_object_get (o, "version")) == 1,
        "the result has the four keys of version 1");
    json_decref (o);
}

int main (int argc, char **argv)
{
    test_corpus_invalid ();
    test_corpus_valid ();
    test_summaries ();
    test_yaml ();
    test_from_command ();
    done_testing ();
    return 0;
}
