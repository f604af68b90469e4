/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/shellcmd.c - the job shell's argv and environment. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shellcmd.h"
#include "tap.h"

int main (int argc, char **argv)
{
    char **v;
    char *env[] = {"A=1", "FLUX_URI=old", "B=2", "FLUX_KVS_NAMESPACE=x", NULL};
    int n;

    plan (NO_PLAN);
    v = shellcmd_argv ("/x/flux-shell", 1234);
    ok (v && !strcmp (v[0], "/x/flux-shell") && !strcmp (v[1], "1234")
            && v[2] == NULL,
        "argv: shell, decimal id");
    free (v);
    ok (shellcmd_argv ("", 1) == NULL && errno == EINVAL,
        "an empty shell: EINVAL");
    v = shellcmd_imp_argv ("/imp", "/sh", 18446744073709551615ULL);
    ok (v && !strcmp (v[0], "/imp") && !strcmp (v[1], "exec")
            && !strcmp (v[2], "/sh") && !strcmp (v[3], "18446744073709551615")
            && v[4] == NULL,
        "imp argv: imp exec shell id");
    free (v);
    v = shellcmd_env (env, "local:///tmp/s", 42);
    for (n = 0; v && v[n]; n++)
        ;
    ok (v && n == 4 && !strcmp (v[0], "A=1") && !strcmp (v[1], "B=2")
            && !strcmp (v[2], "FLUX_URI=local:///tmp/s")
            && !strcmp (v[3], "FLUX_KVS_NAMESPACE=job-42"),
        "env: FLUX_URI and FLUX_KVS_NAMESPACE replaced");
    free (v);
    v = shellcmd_env (NULL, "u", 1);
    ok (v && v[2] == NULL, "env from nothing: the two variables");
    free (v);
    ok (shellcmd_env (env, NULL, 1) == NULL && errno == EINVAL,
        "no uri: EINVAL");
    {
        char *env2[] = {"A=1", "FLUX_IMP_EXEC_HELPER=old 1",
                        "FLUX_IMP_TMPDIR_FD=5", NULL};
        v = shellcmd_imp_env (env2, "local:///s", 42,
                              "/bin/flux imp_exec_helper");
        for (n = 0; v && v[n]; n++)
            ;
        ok (v && n == 4 && !strcmp (v[0], "A=1")
                && !strcmp (v[1], "FLUX_URI=local:///s")
                && !strcmp (v[2], "FLUX_KVS_NAMESPACE=job-42")
                && !strcmp (
                    v[3], "FLUX_IMP_EXEC_HELPER=/bin/flux imp_exec_helper 42"),
            "imp env: FLUX_IMP_EXEC_HELPER names the helper and the id, once");
        free (v);
        errno = 0;
        ok (shellcmd_imp_env (env2, "u", 1, NULL) == NULL && errno == EINVAL,
            "imp env without a helper: EINVAL");
        v = shellcmd_env (env2, "u", 1);
        ok (v && v[0] && !strcmp (v[0], "A=1") && v[3] == NULL,
            "the owner's env drops an inherited FLUX_IMP_EXEC_HELPER and "
            "FLUX_IMP_TMPDIR_FD");
        free (v);
    }
    {
        char *env3[] = {"A=1", "FLUX_SHELL_INFO={\"stale\":1}", NULL};
        v = shellcmd_env (env3, "u", 7);
        ok (v && !strcmp (v[0], "A=1") && v[3] == NULL,
            "env drops an inherited FLUX_SHELL_INFO");
        free (v);
        v = shellcmd_env_info (env3, "u", 7, "{\"id\":7}");
        for (n = 0; v && v[n]; n++)
            ;
        ok (v && n == 4 && !strcmp (v[0], "A=1")
                && !strcmp (v[3], "FLUX_SHELL_INFO={\"id\":7}"),
            "env_info: FLUX_SHELL_INFO is the given text, once");
        free (v);
        errno = 0;
        ok (shellcmd_env_info (env3, "u", 7, NULL) == NULL && errno == EINVAL,
            "env_info without the text: EINVAL");
    }
    done_testing ();
    return 0;
}
