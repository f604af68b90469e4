/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/env.c - task environments */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/shell/env.h"
#include "tap.h"

int main (void)
{
    struct env *e, *c;
    json_t *o;
    char **v;
    int n = 0;

    plan (NO_PLAN);
    ok ((e = env_create ()) != NULL, "env_create");
    o = json_pack ("{s:s s:s s:i s:s}", "A", "1", "B", "two", "C", 3, "X=Y",
                   "bad");
    ok (env_load_json (e, o) == 0, "env_load_json");
    json_decref (o);
    is (env_get (e, "A"), "1", "A=1");
    is (env_get (e, "B"), "two", "B=two");
    ok (env_get (e, "C") == NULL, "non-string values are skipped");
    ok (env_get (e, "X") == NULL, "names with = are skipped");
    ok (env_set (e, "A", "one") == 0 && !strcmp (env_get (e, "A"), "one"),
        "env_set replaces");
    ok (env_setf (e, "N", "%d", 42) == 0 && !strcmp (env_get (e, "N"), "42"),
        "env_setf");
    env_unset (e, "B");
    ok (env_get (e, "B") == NULL, "env_unset");
    env_unset (e, "nope");
    for (v = env_vector (e); *v; v++)
        n++;
    ok (n == 2, "vector holds 2 entries");
    errno = 0;
    ok (env_set (e, "a=b", "x") < 0 && errno == EINVAL, "bad name: EINVAL");
    ok (env_set (e, "", "x") < 0 && errno == EINVAL, "empty name: EINVAL");
    c = env_copy (e);
    ok (c && !strcmp (env_get (c, "A"), "one")
            && !strcmp (env_get (c, "N"), "42"),
        "env_copy");
    env_set (c, "A", "changed");
    is (env_get (e, "A"), "one", "the copy is independent");
    for (int i = 0; i < 100; i++)
        env_setf (c, "V", "%d", i), env_setf (c, "W", "%d", i);
    is (env_get (c, "W"), "99", "many sets");
    {
        /* into a non-empty env, a loaded name replaces the one there */
        json_t *o2 = json_pack ("{s:s s:s}", "A", "json", "Z", "zed");
        struct env *d = env_copy (e);
        char **v;
        int n2 = 0;
        ok (o2 && d && env_load_json (d, o2) == 0
                && !strcmp (env_get (d, "A"), "json")
                && !strcmp (env_get (d, "Z"), "zed"),
            "env_load_json into a non-empty env replaces and adds");
        for (v = env_vector (d); *v; v++)
            n2 += !strncmp (*v, "A=", 2);
        ok (n2 == 1, "a replaced name is there once");
        env_destroy (d);
        json_decref (o2);
    }
    env_destroy (c);
    env_destroy (e);
    env_destroy (NULL);
    done_testing ();
}
