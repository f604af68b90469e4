/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobspec.c - validate jobspec version 1 (RFC 14 as RFC 25 restricts it)
 * and reduce it to struct jobspec.
 *
 * Policy where the RFCs leave room: unknown keys are errors at every
 * level we define (top level, resource vertices, the task, attributes),
 * except inside attributes.system, whose unknown words RFC 14 says
 * SHALL trigger no more than a warning, and attributes.user, which is
 * free-form.  Each error is one line naming the path of what is wrong.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec.h"
#include "libutil/fsd.h"

#define COUNT_MAX INT_MAX

/* One resource vertex, checked for its own keys. */
struct vertex {
    const char *type;
    int count;
    const char *label;
    json_t *with; /* NULL if absent */
    bool exclusive;
};

static int check_keys (json_t *o, const char *const allowed[], const char *what,
                       flux_error_t *error)
{
    const char *key;
    json_t *v;

    json_object_foreach (o, key, v)
    {
        int i;
        for (i = 0; allowed[i]; i++)
            if (!strcmp (key, allowed[i]))
                break;
        if (!allowed[i])
            return errprintf (error, "%s has unknown key '%.40s'", what, key);
    }
    return 0;
}

static int get_count (json_t *v, json_int_t max, json_int_t *n)
{
    if (!json_is_integer (v) || json_integer_value (v) < 1
        || json_integer_value (v) > max)
        return -1;
    *n = json_integer_value (v);
    return 0;
}

static int vertex_parse (json_t *v, struct vertex *vx, flux_error_t *error)
{
    static const char *const keys[]
        = {"type", "count", "unit", "with", "label", "exclusive", NULL};
    json_t *o;
    json_int_t n;

    memset (vx, 0, sizeof (*vx));
    if (!json_is_object (v))
        return errprintf (error, "resources: each resource must be an object");
    if (!(o = json_object_get (v, "type")) || !json_is_string (o))
        return errprintf (error, "resources: resource type must be a string");
    vx->type = json_string_value (o);
    if (strcmp (vx->type, "node") && strcmp (vx->type, "slot")
        && strcmp (vx->type, "core") && strcmp (vx->type, "gpu"))
        return errprintf (error,
                          "resources: unknown resource type '%.40s' (version 1 "
                          "allows node, slot, core and gpu)",
                          vx->type);
    if (check_keys (v, keys, "resources: resource", error) < 0)
        return -1;
    if (!(o = json_object_get (v, "count")))
        return errprintf (error, "resources: %s has no count", vx->type);
    if (get_count (o, COUNT_MAX, &n) < 0)
        return errprintf (
            error, "resources: %s count must be an integer >= 1%s", vx->type,
            json_is_integer (o) && json_integer_value (o) > 1 ? " and < 2^31"
                                                              : "");
    vx->count = (int)n;
    if ((o = json_object_get (v, "unit")) && !json_is_string (o))
        return errprintf (error, "resources: %s unit must be a string",
                          vx->type);
    if ((o = json_object_get (v, "label"))) {
        if (!json_is_string (o) || json_string_length (o) == 0)
            return errprintf (error,
                              "resources: %s label must be a non-empty string",
                              vx->type);
        vx->label = json_string_value (o);
    }
    if ((o = json_object_get (v, "exclusive"))) {
        if (strcmp (vx->type, "node") != 0)
            return errprintf (error,
                              "resources: exclusive is allowed only on node, "
                              "not on %s",
                              vx->type);
        if (!json_is_boolean (o))
            return errprintf (error, "resources: node exclusive must be a "
                                     "boolean");
        vx->exclusive = json_is_true (o);
    }
    if ((o = json_object_get (v, "with"))) {
        if (!json_is_array (o) || json_array_size (o) == 0)
            return errprintf (error,
                              "resources: %s 'with' must be a non-empty array",
                              vx->type);
        vx->with = o;
    }
    return 0;
}

/* slot -> core [, gpu] */
static int slot_parse (json_t *v, struct jobspec *js, const char **label,
                       flux_error_t *error)
{
    struct vertex slot, child;
    bool have_core = false, have_gpu = false;
    size_t i;
    json_t *c;

    if (vertex_parse (v, &slot, error) < 0)
        return -1;
    if (strcmp (slot.type, "slot") != 0)
        return errprintf (error, "resources: node must contain a slot, not %s",
                          slot.type);
    if (!slot.label)
        return errprintf (error, "resources: slot must have a label");
    if (!slot.with)
        return errprintf (error, "resources: slot must contain a core");
    json_array_foreach (slot.with, i, c)
    {
        if (vertex_parse (c, &child, error) < 0)
            return -1;
        if (!strcmp (child.type, "core") && !have_core) {
            have_core = true;
            js->cores_per_slot = child.count;
        }
        else if (!strcmp (child.type, "gpu") && !have_gpu) {
            have_gpu = true;
            js->gpus_per_slot = child.count;
        }
        else if (!strcmp (child.type, "core") || !strcmp (child.type, "gpu"))
            return errprintf (
                error, "resources: slot contains more than one %s", child.type);
        else
            return errprintf (error,
                              "resources: slot may contain only core and gpu, "
                              "not %s",
                              child.type);
        if (child.with)
            return errprintf (error, "resources: %s must not have 'with'",
                              child.type);
    }
    if (!have_core)
        return errprintf (error, "resources: slot must contain a core");
    *label = slot.label;
    return slot.count;
}

static int resources_parse (json_t *res, struct jobspec *js, const char **label,
                            flux_error_t *error)
{
    struct vertex top;
    int nslot;

    if (!json_is_array (res) || json_array_size (res) != 1)
        return errprintf (error, "resources must be an array of exactly one "
                                 "resource (node or slot)");
    if (vertex_parse (json_array_get (res, 0), &top, error) < 0)
        return -1;
    if (!strcmp (top.type, "node")) {
        if (!top.with || json_array_size (top.with) != 1)
            return errprintf (error, "resources: node must contain exactly one "
                                     "slot");
        if ((nslot
             = slot_parse (json_array_get (top.with, 0), js, label, error))
            < 0)
            return -1;
        js->nnodes = top.count;
        js->slots_per_node = nslot;
        js->exclusive = top.exclusive;
        if ((long long)nslot * top.count > COUNT_MAX)
            return errprintf (error, "resources: total slot count is too "
                                     "large");
        js->nslots = nslot * top.count;
    }
    else if (!strcmp (top.type, "slot")) {
        if ((nslot = slot_parse (json_array_get (res, 0), js, label, error))
            < 0)
            return -1;
        js->nnodes = 0;
        js->slots_per_node = -1;
        js->nslots = nslot;
    }
    else
        return errprintf (error,
                          "resources: the first resource must be node or slot, "
                          "not %s",
                          top.type);
    return 0;
}

static int count_parse (json_t *count, struct jobspec *js, flux_error_t *error)
{
    json_t *per_slot, *total;
    json_int_t n;

    if (!json_is_object (count))
        return errprintf (error, "tasks[0].count must be an object");
    if (json_object_get (count, "per_resource"))
        return errprintf (error, "tasks[0].count.per_resource is not supported "
                                 "in version 1");
    per_slot = json_object_get (count, "per_slot");
    total = json_object_get (count, "total");
    if (json_object_size (count) != 1 || (!per_slot && !total))
        return errprintf (error, "tasks[0].count must have exactly one key, "
                                 "per_slot or total");
    if (per_slot) {
        if (!json_is_integer (per_slot) || json_integer_value (per_slot) != 1)
            return errprintf (error, "tasks[0].count.per_slot must be 1");
        js->ntasks = js->nslots;
        return 0;
    }
    if (get_count (total, COUNT_MAX, &n) < 0)
        return errprintf (error, "tasks[0].count.total must be an integer >= "
                                 "1");
    if (n > js->nslots)
        return errprintf (error,
                          "tasks[0].count.total %lld exceeds the %d slots",
                          (long long)n, js->nslots);
    if (n < js->nnodes)
        return errprintf (error,
                          "tasks[0].count.total %lld is less than the %d nodes",
                          (long long)n, js->nnodes);
    js->ntasks = (int)n;
    return 0;
}

static int tasks_parse (json_t *tasks, struct jobspec *js, const char *label,
                        flux_error_t *error)
{
    static const char *const keys[]
        = {"command", "slot", "count", "attributes", "distribution", NULL};
    json_t *task, *o, *arg;
    size_t i;

    if (!json_is_array (tasks) || json_array_size (tasks) != 1)
        return errprintf (error, "tasks must be an array of exactly one task");
    task = json_array_get (tasks, 0);
    if (!json_is_object (task))
        return errprintf (error, "tasks[0] must be an object");
    if (check_keys (task, keys, "tasks[0]", error) < 0)
        return -1;
    o = json_object_get (task, "command");
    if (!json_is_array (o) || json_array_size (o) == 0)
        return errprintf (error, "tasks[0].command must be a non-empty array "
                                 "of strings");
    json_array_foreach (o, i, arg)
    {
        if (!json_is_string (arg))
            return errprintf (error, "tasks[0].command[%zu] must be a string",
                              i);
    }
    if (json_string_length (json_array_get (o, 0)) == 0)
        return errprintf (error, "tasks[0].command[0] must not be empty");
    js->command = o;
    if (!(o = json_object_get (task, "slot")) || !json_is_string (o))
        return errprintf (error, "tasks[0].slot must be a string");
    if (strcmp (json_string_value (o), label) != 0)
        return errprintf (error,
                          "tasks[0].slot '%.40s' does not match the slot label "
                          "'%.40s'",
                          json_string_value (o), label);
    if (!(o = json_object_get (task, "count")))
        return errprintf (error, "tasks[0] has no count");
    if (count_parse (o, js, error) < 0)
        return -1;
    if ((o = json_object_get (task, "attributes")) && !json_is_object (o))
        return errprintf (error, "tasks[0].attributes must be an object");
    if ((o = json_object_get (task, "distribution")) && !json_is_string (o))
        return errprintf (error, "tasks[0].distribution must be a string");
    return 0;
}

static bool is_duration (json_t *o, double *d)
{
    if (!json_is_number (o))
        return false;
    *d = json_number_value (o);
    return isfinite (*d) && *d >= 0;
}

static int object_of_strings (json_t *o, const char *path, bool null_ok,
                              flux_error_t *error)
{
    const char *key;
    json_t *v;

    if (!json_is_object (o))
        return errprintf (error, "%s must be an object", path);
    json_object_foreach (o, key, v)
    {
        if (!json_is_string (v) && !(null_ok && json_is_null (v)))
            return errprintf (error, "%s.%.40s must be a string", path, key);
    }
    return 0;
}

static int dependencies_parse (json_t *deps, flux_error_t *error)
{
    const char *path = "attributes.system.dependencies";
    json_t *dep, *o;
    size_t i;

    if (!json_is_array (deps) || json_array_size (deps) == 0)
        return errprintf (error, "%s must be a non-empty array", path);
    json_array_foreach (deps, i, dep)
    {
        if (!json_is_object (dep))
            return errprintf (error, "%s[%zu] must be an object", path, i);
        o = json_object_get (dep, "scheme");
        if (!json_is_string (o) || json_string_length (o) == 0)
            return errprintf (
                error, "%s[%zu].scheme must be a non-empty string", path, i);
        if (!json_is_string (json_object_get (dep, "value")))
            return errprintf (error, "%s[%zu].value must be a string", path, i);
    }
    return 0;
}

/* attributes.system.exec: the simulated execution test attribute. */
static int exec_parse (json_t *exec, flux_error_t *error)
{
    json_t *test, *rd;
    double d;

    if (!json_is_object (exec))
        return errprintf (error, "attributes.system.exec must be an object");
    if (!(test = json_object_get (exec, "test")))
        return 0;
    if (!json_is_object (test))
        return errprintf (error, "attributes.system.exec.test must be an "
                                 "object");
    if ((rd = json_object_get (test, "run_duration")) && !is_duration (rd, &d)
        && !(json_is_string (rd)
             && fsd_parse_duration (json_string_value (rd), &d) == 0))
        return errprintf (error,
                          "attributes.system.exec.test.run_duration must be a "
                          "number >= 0 or a duration like \"0.5s\"");
    return 0;
}

static int system_parse (json_t *sys, struct jobspec *js, flux_error_t *error)
{
    static const char *const strings[] = {"bank", "project", NULL};
    static const char *const objects[] = {"constraints", "files", NULL};
    json_t *o;
    double d;

    if (!json_is_object (sys))
        return errprintf (error, "attributes.system must be an object");
    if (!(o = json_object_get (sys, "duration")))
        return errprintf (error, "attributes.system.duration is required");
    if (!is_duration (o, &js->duration))
        return errprintf (error, "attributes.system.duration must be a number "
                                 ">= 0");
    if ((o = json_object_get (sys, "preemptible-after"))
        && !is_duration (o, &d))
        return errprintf (error, "attributes.system.preemptible-after must be "
                                 "a number >= 0");
    if ((o = json_object_get (sys, "environment"))) {
        if (object_of_strings (o, "attributes.system.environment", true, error)
            < 0)
            return -1;
        js->environment = o;
    }
    if ((o = json_object_get (sys, "cwd"))) {
        if (!json_is_string (o) || json_string_value (o)[0] != '/')
            return errprintf (error, "attributes.system.cwd must be an "
                                     "absolute path");
        js->cwd = json_string_value (o);
    }
    if ((o = json_object_get (sys, "queue"))) {
        if (!json_is_string (o) || json_string_length (o) == 0)
            return errprintf (error, "attributes.system.queue must be a "
                                     "non-empty string");
        js->queue = json_string_value (o);
    }
    for (int i = 0; strings[i]; i++) {
        if ((o = json_object_get (sys, strings[i])) && !json_is_string (o))
            return errprintf (error, "attributes.system.%s must be a string",
                              strings[i]);
    }
    for (int i = 0; objects[i]; i++) {
        if ((o = json_object_get (sys, objects[i])) && !json_is_object (o))
            return errprintf (error, "attributes.system.%s must be an object",
                              objects[i]);
    }
    if ((o = json_object_get (sys, "dependencies"))) {
        if (dependencies_parse (o, error) < 0)
            return -1;
        js->dependencies = o;
    }
    if ((o = json_object_get (sys, "job"))) {
        if (object_of_strings (o, "attributes.system.job", false, error) < 0)
            return -1;
        if ((o = json_object_get (o, "name")))
            js->name = json_string_value (o);
    }
    if ((o = json_object_get (sys, "shell"))) {
        if (!json_is_object (o))
            return errprintf (error, "attributes.system.shell must be an "
                                     "object");
        if ((o = json_object_get (o, "options")) && !json_is_object (o))
            return errprintf (error, "attributes.system.shell.options must be "
                                     "an object");
    }
    if ((o = json_object_get (sys, "exec")) && exec_parse (o, error) < 0)
        return -1;
    return 0;
}

static int attributes_parse (json_t *attr, struct jobspec *js,
                             flux_error_t *error)
{
    static const char *const keys[] = {"system", "user", NULL};
    json_t *o;

    if (!json_is_object (attr))
        return errprintf (error, "attributes must be an object");
    if (check_keys (attr, keys, "attributes", error) < 0)
        return -1;
    if ((o = json_object_get (attr, "user")) && !json_is_object (o))
        return errprintf (error, "attributes.user must be an object");
    if (!(o = json_object_get (attr, "system")))
        return errprintf (error, "attributes.system is required");
    js->attributes = attr;
    return system_parse (o, js, error);
}

static const char *basename_of (const char *path)
{
    const char *p = strrchr (path, '/');
    return p && p[1] != '\0' ? p + 1 : path;
}

static int validate (json_t *o, struct jobspec *js, flux_error_t *error)
{
    static const char *const keys[]
        = {"resources", "tasks", "attributes", "version", NULL};
    const char *label = NULL;
    json_t *v;

    if (!json_is_object (o))
        return errprintf (error, "jobspec must be an object");
    if (check_keys (o, keys, "jobspec", error) < 0)
        return -1;
    if (!(v = json_object_get (o, "version")))
        return errprintf (error, "jobspec has no version");
    if (!json_is_integer (v))
        return errprintf (error, "version must be an integer");
    if (json_integer_value (v) != 1)
        return errprintf (error,
                          "version %lld is not supported (only "
                          "version 1)",
                          (long long)json_integer_value (v));
    if (!(v = json_object_get (o, "resources")))
        return errprintf (error, "jobspec has no resources");
    if (resources_parse (v, js, &label, error) < 0)
        return -1;
    if (!(v = json_object_get (o, "tasks")))
        return errprintf (error, "jobspec has no tasks");
    if (tasks_parse (v, js, label, error) < 0)
        return -1;
    if (!(v = json_object_get (o, "attributes")))
        return errprintf (error, "jobspec has no attributes");
    if (attributes_parse (v, js, error) < 0)
        return -1;
    if (!js->name)
        js->name
            = basename_of (json_string_value (json_array_get (js->command, 0)));
    return 0;
}

struct jobspec *jobspec_parse_json (json_t *o, flux_error_t *error)
{
    struct jobspec *js;

    if (!(js = calloc (1, sizeof (*js)))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    if (validate (o, js, error) < 0) {
        free (js);
        errno = EINVAL;
        return NULL;
    }
    js->jobspec = json_incref (o);
    return js;
}

struct jobspec *jobspec_parse (const char *text, flux_error_t *error)
{
    struct jobspec *js;
    json_error_t jerr;
    const char *p = text;
    json_t *o;

    if (!text) {
        errprintf (error, "no jobspec");
        errno = EINVAL;
        return NULL;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p == '{') {
        if (!(o = json_loads (text, JSON_REJECT_DUPLICATES, &jerr))) {
            errprintf (error, "invalid JSON: %s (line %d column %d)", jerr.text,
                       jerr.line, jerr.column);
            errno = EINVAL;
            return NULL;
        }
    }
    else if (!(o = jobspec_yaml_to_json (text, error)))
        return NULL;
    js = jobspec_parse_json (o, error);
    json_decref (o);
    return js;
}

void jobspec_destroy (struct jobspec *js)
{
    if (js) {
        int saved_errno = errno;
        json_decref (js->jobspec);
        free (js);
        errno = saved_errno;
    }
}

static json_t *core_slot (int count, int cores, int gpus)
{
    json_t *with;

    if (gpus > 0)
        with = json_pack ("[{s:s s:i} {s:s s:i}]", "type", "core", "count",
                          cores, "type", "gpu", "count", gpus);
    else
        with = json_pack ("[{s:s s:i}]", "type", "core", "count", cores);
    return json_pack ("{s:s s:i s:o s:s}", "type", "slot", "count", count,
                      "with", with, "label", "task");
}

json_t *jobspec_from_command (int argc, char **argv, int ntasks, int nnodes,
                              int cores_per_task, int gpus_per_task,
                              int exclusive, double duration,
                              flux_error_t *error)
{
    json_t *cmd = NULL, *res, *count, *js;

    if (nnodes > 0 && ntasks <= 0)
        ntasks = nnodes;
    if (argc < 1 || !argv || !argv[0]) {
        errprintf (error, "no command");
        goto inval;
    }
    if (ntasks < 1 || nnodes < 0 || cores_per_task < 1 || gpus_per_task < 0
        || !isfinite (duration) || duration < 0) {
        errprintf (error, "task, core and gpu counts must be >= 1 (gpus >= 0) "
                          "and the duration >= 0");
        goto inval;
    }
    if (nnodes > ntasks) {
        errprintf (error,
                   "the number of nodes (%d) exceeds the number of tasks (%d)",
                   nnodes, ntasks);
        goto inval;
    }
    if (exclusive && nnodes == 0) {
        errprintf (error, "exclusive requires a node count");
        goto inval;
    }
    if (!(cmd = json_array ()))
        goto nomem;
    for (int i = 0; i < argc; i++) {
        if (json_array_append_new (cmd, json_string (argv[i])) < 0)
            goto nomem;
    }
    if (nnodes > 0) {
        int per_node = (ntasks + nnodes - 1) / nnodes;
        res = json_pack ("[{s:s s:i s:[o]}]", "type", "node", "count", nnodes,
                         "with",
                         core_slot (per_node, cores_per_task, gpus_per_task));
        if (res && exclusive
            && json_object_set_new (json_array_get (res, 0), "exclusive",
                                    json_true ())
                   < 0) {
            json_decref (res);
            res = NULL;
        }
        if (ntasks % nnodes != 0)
            count = json_pack ("{s:i}", "total", ntasks);
        else
            count = json_pack ("{s:i}", "per_slot", 1);
    }
    else {
        res = json_pack ("[o]",
                         core_slot (ntasks, cores_per_task, gpus_per_task));
        count = json_pack ("{s:i}", "per_slot", 1);
    }
    js = json_pack ("{s:i s:o s:[{s:O s:s s:o}] s:{s:{s:f}}}", "version", 1,
                    "resources", res, "tasks", "command", cmd, "slot", "task",
                    "count", count, "attributes", "system", "duration",
                    duration);
    if (!js)
        goto nomem;
    json_decref (cmd);
    return js;
nomem:
    json_decref (cmd);
    errprintf (error, "out of memory");
    errno = ENOMEM;
    return NULL;
inval:
    errno = EINVAL;
    return NULL;
}
