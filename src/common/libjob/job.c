/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job.c - job state and result names (RFC 21), job id strings (RFC 19,
 * through libutil/fluid) and the KVS names of a job (RFC 16).
 */
#include <errno.h>
#include <langinfo.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "job.h"
#include "libutil/fluid.h"

static const struct {
    int state;
    const char *name;
    const char *letter;
} states[] = {
    {FLUX_JOB_STATE_NEW, "NEW", "N"},
    {FLUX_JOB_STATE_DEPEND, "DEPEND", "D"},
    {FLUX_JOB_STATE_PRIORITY, "PRIORITY", "P"},
    {FLUX_JOB_STATE_SCHED, "SCHED", "S"},
    {FLUX_JOB_STATE_RUN, "RUN", "R"},
    {FLUX_JOB_STATE_CLEANUP, "CLEANUP", "C"},
    {FLUX_JOB_STATE_INACTIVE, "INACTIVE", "I"},
};
#define NSTATES (sizeof (states) / sizeof (states[0]))

static const struct {
    int result;
    const char *name;
    const char *abbrev;
} results[] = {
    {FLUX_JOB_RESULT_COMPLETED, "COMPLETED", "CD"},
    {FLUX_JOB_RESULT_FAILED, "FAILED", "F"},
    {FLUX_JOB_RESULT_CANCELED, "CANCELED", "CA"},
    {FLUX_JOB_RESULT_TIMEOUT, "TIMEOUT", "TO"},
};
#define NRESULTS (sizeof (results) / sizeof (results[0]))

const char *flux_job_statetostr (int state, int single_char)
{
    for (size_t i = 0; i < NSTATES; i++) {
        if (states[i].state == state)
            return single_char ? states[i].letter : states[i].name;
    }
    return "?";
}

int flux_job_strtostate (const char *s, int *state)
{
    if (s && state) {
        for (size_t i = 0; i < NSTATES; i++) {
            if (!strcasecmp (s, states[i].name)
                || !strcasecmp (s, states[i].letter)) {
                *state = states[i].state;
                return 0;
            }
        }
    }
    errno = EINVAL;
    return -1;
}

const char *flux_job_resulttostr (int result, int abbrev)
{
    for (size_t i = 0; i < NRESULTS; i++) {
        if (results[i].result == result)
            return abbrev ? results[i].abbrev : results[i].name;
    }
    return "?";
}

int flux_job_strtoresult (const char *s, int *result)
{
    if (s && result) {
        for (size_t i = 0; i < NRESULTS; i++) {
            if (!strcasecmp (s, results[i].name)
                || !strcasecmp (s, results[i].abbrev)) {
                *result = results[i].result;
                return 0;
            }
        }
    }
    errno = EINVAL;
    return -1;
}

/* The "ƒ" prefix only under a UTF-8 locale (the program must have called
 * setlocale) and when FLUX_F58_FORCE_ASCII is unset, as flux-core does.
 */
static bool f58_ascii (void)
{
    const char *codeset;

    if (getenv ("FLUX_F58_FORCE_ASCII"))
        return true;
    codeset = nl_langinfo (CODESET);
    return !codeset || strcasecmp (codeset, "UTF-8") != 0;
}

int flux_job_id_encode (flux_jobid_t id, const char *encoding, char *buf,
                        size_t bufsz)
{
    static const struct {
        const char *name;
        enum fluid_string_type type;
    } encodings[] = {
        {"dec", FLUID_STRING_DEC},       {"hex", FLUID_STRING_HEX},
        {"dothex", FLUID_STRING_DOTHEX}, {"kvs", FLUID_STRING_KVS},
        {"f58", FLUID_STRING_F58},       {"f58plain", FLUID_STRING_F58_PLAIN},
    };
    enum fluid_string_type type = 0;

    if (!buf || bufsz == 0) {
        errno = EINVAL;
        return -1;
    }
    if (!encoding)
        encoding = "f58";
    for (size_t i = 0; i < sizeof (encodings) / sizeof (encodings[0]); i++) {
        if (!strcmp (encoding, encodings[i].name))
            type = encodings[i].type;
    }
    if (type == 0) {
        errno = EINVAL;
        return -1;
    }
    if (type == FLUID_STRING_F58 && f58_ascii ())
        type = FLUID_STRING_F58_PLAIN;
    if (bufsz > INT32_MAX)
        bufsz = INT32_MAX;
    return fluid_encode (buf, (int)bufsz, id, type);
}

int flux_job_id_parse (const char *s, flux_jobid_t *id)
{
    fluid_t v;

    if (!s || !id || fluid_parse (s, &v) < 0) {
        errno = EINVAL;
        return -1;
    }
    *id = v;
    return 0;
}

int flux_job_kvs_key (char *buf, int bufsz, flux_jobid_t id, const char *key)
{
    char dir[FLUID_STRING_MAX];
    int n;

    if (!buf || bufsz <= 0) {
        errno = EINVAL;
        return -1;
    }
    if (fluid_encode (dir, sizeof (dir), id, FLUID_STRING_KVS) < 0)
        return -1;
    if (key)
        n = snprintf (buf, bufsz, "%s.%s", dir, key);
    else
        n = snprintf (buf, bufsz, "%s", dir);
    if (n >= bufsz) {
        errno = EOVERFLOW;
        return -1;
    }
    return 0;
}

int flux_job_kvs_namespace (char *buf, int bufsz, flux_jobid_t id)
{
    if (!buf || bufsz <= 0) {
        errno = EINVAL;
        return -1;
    }
    if (snprintf (buf, bufsz, "job-%ju", (uintmax_t)id) >= bufsz) {
        errno = EOVERFLOW;
        return -1;
    }
    return 0;
}
