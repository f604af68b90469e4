/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* shellcmd.c - argv and environment of a job shell (see shellcmd.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shellcmd.h"

/* One block: n+1 pointers, then the strings. */
static char **vector (const char **strs, size_t n)
{
    size_t size = (n + 1) * sizeof (char *);
    char **v, *p;

    for (size_t i = 0; i < n; i++)
        size += strlen (strs[i]) + 1;
    if (!(v = malloc (size)))
        return NULL;
    p = (char *)(v + n + 1);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen (strs[i]) + 1;
        memcpy (p, strs[i], len);
        v[i] = p;
        p += len;
    }
    v[n] = NULL;
    return v;
}

char **shellcmd_argv (const char *shell, uint64_t id)
{
    char idstr[32];
    const char *a[2] = {shell, idstr};

    if (!shell || !*shell) {
        errno = EINVAL;
        return NULL;
    }
    snprintf (idstr, sizeof (idstr), "%" PRIu64, id);
    return vector (a, 2);
}

char **shellcmd_imp_argv (const char *imp, const char *shell, uint64_t id)
{
    char idstr[32];
    const char *a[4] = {imp, "exec", shell, idstr};

    if (!imp || !*imp || !shell || !*shell) {
        errno = EINVAL;
        return NULL;
    }
    snprintf (idstr, sizeof (idstr), "%" PRIu64, id);
    return vector (a, 4);
}

static int replaced (const char *s)
{
    return !strncmp (s, "FLUX_URI=", 9)
           || !strncmp (s, "FLUX_KVS_NAMESPACE=", 19);
}

char **shellcmd_env (char **env, const char *uri, uint64_t id)
{
    size_t n = 0, k = 0;
    const char **a;
    char **v;
    char *u, ns[64];

    if (!uri) {
        errno = EINVAL;
        return NULL;
    }
    while (env && env[n])
        n++;
    if (!(a = calloc (n + 2, sizeof (*a))))
        return NULL;
    if (!(u = malloc (strlen (uri) + 10))) {
        free (a);
        return NULL;
    }
    sprintf (u, "FLUX_URI=%s", uri);
    snprintf (ns, sizeof (ns), "FLUX_KVS_NAMESPACE=job-%" PRIu64, id);
    for (size_t i = 0; i < n; i++) {
        if (!replaced (env[i]))
            a[k++] = env[i];
    }
    a[k++] = u;
    a[k++] = ns;
    v = vector (a, k);
    free (u);
    free (a);
    return v;
}
