/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* shellcmd.c - argv and environment of a job shell (see shellcmd.h). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/killsig.h"
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

/* Set here, or only by the IMP (SHELL_IMP_TMPDIR_FD_ENV: an inherited
 * one would have a shell write to and close a descriptor of its own) */
static int replaced (const char *s)
{
    return !strncmp (s, "FLUX_URI=", 9)
           || !strncmp (s, "FLUX_KVS_NAMESPACE=", 19)
           || !strncmp (s, "FLUX_IMP_EXEC_HELPER=", 21)
           || !strncmp (s, SHELL_INFO_ENV "=", sizeof (SHELL_INFO_ENV))
           || !strncmp (s, SHELL_IMP_TMPDIR_FD_ENV "=",
                        sizeof (SHELL_IMP_TMPDIR_FD_ENV));
}

static char **make_env (char **env, const char *uri, uint64_t id,
                        const char *helper, const char *info)
{
    size_t n = 0, k = 0;
    const char **a;
    char **v = NULL;
    char *u, *hp = NULL, *ip = NULL, ns[64];

    if (!uri) {
        errno = EINVAL;
        return NULL;
    }
    while (env && env[n])
        n++;
    if (!(a = calloc (n + 5, sizeof (*a))))
        return NULL;
    if (!(u = malloc (strlen (uri) + 10))) {
        free (a);
        return NULL;
    }
    sprintf (u, "FLUX_URI=%s", uri);
    snprintf (ns, sizeof (ns), "FLUX_KVS_NAMESPACE=job-%" PRIu64, id);
    if (helper
        && asprintf (&hp, "FLUX_IMP_EXEC_HELPER=%s %" PRIu64, helper, id) < 0) {
        hp = NULL;
        errno = ENOMEM;
        goto done;
    }
    if (info && asprintf (&ip, "%s=%s", SHELL_INFO_ENV, info) < 0) {
        ip = NULL;
        errno = ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (!replaced (env[i]))
            a[k++] = env[i];
    }
    a[k++] = u;
    a[k++] = ns;
    if (hp)
        a[k++] = hp;
    if (ip)
        a[k++] = ip;
    v = vector (a, k);
done:
    free (ip);
    free (hp);
    free (u);
    free (a);
    return v;
}

char **shellcmd_env (char **env, const char *uri, uint64_t id)
{
    return make_env (env, uri, id, NULL, NULL);
}

char **shellcmd_env_info (char **env, const char *uri, uint64_t id,
                          const char *info)
{
    if (!info) {
        errno = EINVAL;
        return NULL;
    }
    return make_env (env, uri, id, NULL, info);
}

char **shellcmd_imp_env (char **env, const char *uri, uint64_t id,
                         const char *helper)
{
    if (!helper || !*helper) {
        errno = EINVAL;
        return NULL;
    }
    return make_env (env, uri, id, helper, NULL);
}
