/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* info.c - decode the exec-agent.shell-info answer and derive the task
 * counts, this shell's resources and the task map from it.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "libjob/jobspec.h"
#include "libutil/fsd.h"

#include "info.h"

void shell_info_destroy (struct shell_info *info)
{
    if (info) {
        int saved_errno = errno;
        idset_destroy (info->ranks);
        free (info->brokers);
        json_decref (info->R);
        json_decref (info->jobspec);
        json_decref (info->opts);
        json_decref (info->cpus);
        free (info->rundir);
        json_decref (info->options);
        idset_destroy (info->cores);
        idset_destroy (info->gpus);
        taskmap_destroy (info->map);
        idset_destroy (info->taskids);
        free (info);
        errno = saved_errno;
    }
}

int64_t shell_parse_size (const char *s)
{
    char *end;
    unsigned long long v;
    int shift = 0;

    if (!s || !isdigit ((unsigned char)*s))
        goto inval;
    errno = 0;
    v = strtoull (s, &end, 10);
    if (errno != 0)
        goto inval;
    switch (*end) {
        case '\0':
            break;
        case 'k':
        case 'K':
            shift = 10;
            break;
        case 'M':
            shift = 20;
            break;
        case 'G':
            shift = 30;
            break;
        case 'T':
            shift = 40;
            break;
        default:
            goto inval;
    }
    if (*end && end[1] != '\0')
        goto inval;
    if (v > (unsigned long long)(INT64_MAX / 2) >> shift)
        goto inval;
    return (int64_t)(v << shift);
inval:
    errno = EINVAL;
    return -1;
}

static int shell_index (const struct shell_info *info, unsigned int rank)
{
    int lo = 0, hi = info->shell_size - 1;

    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (info->brokers[mid] == rank)
            return mid;
        if (info->brokers[mid] < rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static struct idset *child_set (json_t *children, const char *name,
                                flux_error_t *error)
{
    json_t *o = json_object_get (children, name);
    struct idset *ids;

    if (!o)
        return idset_create (0, IDSET_FLAG_AUTOGROW);
    if (!json_is_string (o) || !(ids = idset_decode (json_string_value (o)))) {
        errprintf (error, "R: R_lite children.%s is not an idset", name);
        errno = EPROTO;
        return NULL;
    }
    return ids;
}

/* Walk R_lite: count the cores of every shell rank into ncores[], keep
 * this shell's cores and GPUs.
 */
static int parse_R (struct shell_info *info, int *ncores, flux_error_t *error)
{
    json_t *rlite = NULL, *entry;
    size_t i;

    if (json_unpack (info->R, "{s:{s:o}}", "execution", "R_lite", &rlite) < 0
        || !json_is_array (rlite)) {
        errprintf (error, "R has no execution.R_lite array");
        errno = EPROTO;
        return -1;
    }
    if (!(info->cores = idset_create (0, IDSET_FLAG_AUTOGROW))
        || !(info->gpus = idset_create (0, IDSET_FLAG_AUTOGROW)))
        return -1;
    json_array_foreach (rlite, i, entry)
    {
        const char *rs;
        json_t *children;
        struct idset *ranks, *cores = NULL, *gpus = NULL;
        int rc = -1;

        if (json_unpack (entry, "{s:s s:o}", "rank", &rs, "children", &children)
                < 0
            || !(ranks = idset_decode (rs))) {
            errprintf (error, "R: malformed R_lite entry %zu", i);
            errno = EPROTO;
            return -1;
        }
        if (!(cores = child_set (children, "core", error))
            || !(gpus = child_set (children, "gpu", error)))
            goto next;
        for (unsigned int r = idset_first (ranks); r != IDSET_INVALID_ID;
             r = idset_next (ranks, r)) {
            int k = shell_index (info, r);
            if (k < 0) {
                errprintf (error, "R: rank %u is not in ranks", r);
                errno = EPROTO;
                goto next;
            }
            ncores[k] += idset_count (cores);
            if (k == info->shell_rank
                && (idset_add (info->cores, cores) < 0
                    || idset_add (info->gpus, gpus) < 0))
                goto next;
        }
        rc = 0;
    next:
        idset_destroy (ranks);
        idset_destroy (cores);
        idset_destroy (gpus);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Spread ntasks over the shells' slots: rounds of one task per slot, so a
 * job with one task per slot gives each shell exactly its slots.
 */
static int distribute (int ntasks, const int *nslots, int n, int *counts)
{
    long long slots = 0;
    int left = ntasks;

    for (int i = 0; i < n; i++)
        slots += nslots[i];
    if (slots == 0)
        return -1;
    while (left > 0) {
        for (int i = 0; i < n && left > 0; i++) {
            int k = nslots[i] < left ? nslots[i] : left;
            counts[i] += k;
            left -= k;
        }
    }
    return 0;
}

static int make_taskmap (struct shell_info *info, const int *counts,
                         flux_error_t *error)
{
    json_t *tm = json_object_get (info->options, "taskmap");
    const char *scheme = "block", *value = NULL;
    struct taskmap *block;

    if (!(block = taskmap_block (counts, info->shell_size)))
        return errprintf (error, "taskmap: %s", strerror (errno));
    if (tm
        && json_unpack (tm, "{s:s s?s}", "scheme", &scheme, "value", &value)
               < 0) {
        errprintf (error, "shell option taskmap must be {scheme, value?}");
        goto inval;
    }
    if (value && !*value) /* flux-core's --taskmap=SCHEME sends "" */
        value = NULL;
    if (!strcmp (scheme, "block")) {
        if (value) {
            errprintf (error, "taskmap scheme block takes no value");
            goto inval;
        }
        info->map = block;
        return 0;
    }
    if (!strcmp (scheme, "cyclic")) {
        char *end;
        long stride = value ? strtol (value, &end, 10) : 1;
        if (value && (*end || stride < 1 || stride > INT_MAX)) {
            errprintf (error, "taskmap cyclic: bad stride '%s'", value);
            goto inval;
        }
        info->map = taskmap_cyclic (counts, info->shell_size, (int)stride);
    }
    else if (!strcmp (scheme, "manual")) {
        flux_error_t e;
        if (!value) {
            errprintf (error, "taskmap manual needs a value");
            goto inval;
        }
        if (!(info->map = taskmap_decode (value, &e))) {
            errprintf (error, "taskmap manual: %s", e.text);
            goto inval;
        }
    }
    else {
        errprintf (error, "unknown taskmap scheme '%s'", scheme);
        goto inval;
    }
    if (!info->map) {
        errprintf (error, "taskmap: %s", strerror (errno));
        taskmap_destroy (block);
        return -1;
    }
    if (!taskmap_check (block, info->map)) {
        errprintf (error, "taskmap %s does not match the task counts %s",
                   scheme, "of the job");
        goto inval;
    }
    taskmap_destroy (block);
    return 0;
inval:
    taskmap_destroy (block);
    errno = EINVAL;
    return -1;
}

static int parse_jobspec (struct shell_info *info, flux_error_t *error)
{
    struct jobspec *js;
    json_t *o;

    if (!(js = jobspec_parse_json (info->jobspec, error)))
        return -1;
    info->total_ntasks = js->ntasks;
    info->command = js->command;
    info->environment = js->environment;
    info->cwd = js->cwd;
    info->name = js->name;
    o = NULL;
    (void)json_unpack (info->jobspec, "{s:{s:{s:{s:o}}}}", "attributes",
                       "system", "shell", "options", &o);
    if (o && !json_is_object (o)) {
        jobspec_destroy (js);
        errprintf (error, "attributes.system.shell.options is not an object");
        errno = EINVAL;
        return -1;
    }
    info->options = o ? json_incref (o) : json_object ();
    /* the strings above point into info->jobspec, which we hold */
    jobspec_destroy (js);
    return 0;
}

static int derive (struct shell_info *info, flux_error_t *error)
{
    int n = info->shell_size;
    int *ncores = calloc (n, sizeof (int));
    int *counts = calloc (n, sizeof (int));
    int cps = 1;
    int rc = -1;
    json_error_t jerr;
    struct jobspec *js = NULL;

    if (!ncores || !counts)
        goto out;
    if (parse_R (info, ncores, error) < 0)
        goto out;
    if (!(js = jobspec_parse_json (info->jobspec, error)))
        goto out;
    cps = js->cores_per_slot;
    /* a node level fixes the slots of each node, whatever R gave beyond
     * them (an exclusive allocation gets every core of its nodes);
     * without one, the slots are the cores R gave over cores per slot */
    for (int i = 0; i < n; i++) {
        if (js->slots_per_node > 0)
            ncores[i] = js->slots_per_node;
        else
            ncores[i] = ncores[i] / cps > 0 ? ncores[i] / cps : 1;
    }
    (void)jerr;
    if (distribute (info->total_ntasks, ncores, n, counts) < 0) {
        errprintf (error, "R has no slots");
        errno = EPROTO;
        goto out;
    }
    if (make_taskmap (info, counts, error) < 0)
        goto out;
    if (!(info->taskids = taskmap_taskids (info->map, info->shell_rank)))
        goto out;
    info->local_ntasks = idset_count (info->taskids);
    rc = 0;
out:
    jobspec_destroy (js);
    free (ncores);
    free (counts);
    return rc;
}

struct shell_info *shell_info_create (json_t *o, flux_error_t *error)
{
    struct shell_info *info;
    json_int_t id;
    const char *ranks, *rundir = NULL;
    json_t *R, *jobspec, *opts = NULL, *cpus = NULL;
    int i = 0, broker_rank = -1;

    if (json_unpack (o, "{s:I s:i s:i s:i s:s s:o s:o s?o s?o s?i s?s}", "id",
                     &id, "userid", &(int){0}, "rank", &(int){0}, "size",
                     &(int){0}, "ranks", &ranks, "R", &R, "jobspec", &jobspec,
                     "opts", &opts, "cpus", &cpus, "broker-rank", &broker_rank,
                     "rundir", &rundir)
            < 0
        || !json_is_object (R) || !json_is_object (jobspec)
        || (cpus && !json_is_object (cpus)) || broker_rank < -1) {
        errprintf (error, "malformed shell-info response");
        errno = EPROTO;
        return NULL;
    }
    if (!(info = calloc (1, sizeof (*info))))
        return NULL;
    info->id = (uint64_t)id;
    (void)json_unpack (o, "{s:i s:i s:i}", "userid", &info->userid, "rank",
                       &info->shell_rank, "size", &info->shell_size);
    info->R = json_incref (R);
    info->jobspec = json_incref (jobspec);
    info->opts = opts ? json_incref (opts) : json_object ();
    info->cpus = json_incref (cpus);
    info->broker_rank = broker_rank;
    (void)json_unpack (o, "{s:b}", "tmpdir-reuse", &info->tmpdir_reuse);
    if (rundir && !(info->rundir = strdup (rundir)))
        goto error;
    if (!(info->ranks = idset_decode (ranks))
        || (int)idset_count (info->ranks) != info->shell_size
        || info->shell_size < 1 || info->shell_rank < 0
        || info->shell_rank >= info->shell_size) {
        errprintf (error, "shell-info: rank %d, size %d, ranks '%s' disagree",
                   info->shell_rank, info->shell_size, ranks);
        errno = EPROTO;
        goto error;
    }
    if (!(info->brokers = calloc (info->shell_size, sizeof (unsigned int))))
        goto error;
    for (unsigned int r = idset_first (info->ranks); r != IDSET_INVALID_ID;
         r = idset_next (info->ranks, r))
        info->brokers[i++] = r;
    if (parse_jobspec (info, error) < 0 || derive (info, error) < 0)
        goto error;
    if (info->local_ntasks == 0) {
        errprintf (error, "no task for shell rank %d", info->shell_rank);
        errno = EINVAL;
        goto error;
    }
    return info;
error:
    shell_info_destroy (info);
    return NULL;
}

double shell_parse_duration (const json_t *o)
{
    double sec = -1.;

    if (json_is_number (o))
        sec = json_number_value (o);
    else if (!json_is_string (o)
             || fsd_parse_duration (json_string_value (o), &sec) < 0)
        return -1.;
    return sec >= 0. ? sec : -1.;
}
