/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rlimits.h - the names of the resource limits of getrlimit(2) as jobs
 * carry them (the job shell's option rlimit, flux run --rlimit):
 * RLIMIT_ dropped, in lower case.  Header only, like fnv.h.
 */
#ifndef FLUX_UTIL_RLIMITS_H
#define FLUX_UTIL_RLIMITS_H

#include <string.h>
#include <sys/resource.h>

static const struct rlimit_name {
    const char *name;
    int resource;
} rlimit_names[] = {
    {"as", RLIMIT_AS},
    {"core", RLIMIT_CORE},
    {"cpu", RLIMIT_CPU},
    {"data", RLIMIT_DATA},
    {"fsize", RLIMIT_FSIZE},
    {"locks", RLIMIT_LOCKS},
    {"memlock", RLIMIT_MEMLOCK},
    {"msgqueue", RLIMIT_MSGQUEUE},
    {"nice", RLIMIT_NICE},
    {"nofile", RLIMIT_NOFILE},
    {"nproc", RLIMIT_NPROC},
    {"rss", RLIMIT_RSS},
    {"rtprio", RLIMIT_RTPRIO},
    {"rttime", RLIMIT_RTTIME},
    {"sigpending", RLIMIT_SIGPENDING},
    {"stack", RLIMIT_STACK},
};
#define RLIMIT_NAMES_COUNT (sizeof (rlimit_names) / sizeof (rlimit_names[0]))

/* The index of name (len bytes) in rlimit_names, or -1. */
static inline int rlimit_lookup (const char *name, size_t len)
{
    for (size_t i = 0; i < RLIMIT_NAMES_COUNT; i++)
        if (strlen (rlimit_names[i].name) == len
            && !strncmp (rlimit_names[i].name, name, len))
            return (int)i;
    return -1;
}

#endif /* !FLUX_UTIL_RLIMITS_H */
