/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/input.c - the exec input and the privsep message. */
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "tap.h"

static void test_input (void)
{
    struct imp_err e = {{0}};
    const char *bad[] = {"",
                         "[]",
                         "{}",
                         "{\"J\":1}",
                         "{\"J\":\"x\",\"J\":\"y\"}",
                         "{\"J\":\"x\",\"options\":[]}",
                         "{\"J\":\"x\",\"other\":1}",
                         "{\"J\":\"a\\u0000b\"}",
                         "{\"J\":"};
    char *J;

    J = imp_input_decode ("{\"J\":\"a.b.c\"}", 13, &e);
    is (J, "a.b.c", "input: J alone");
    free (J);
    J = imp_input_decode (
        "{\"J\":\"a.b.c\",\"options\":{\"DevicePolicy\":\"x\"}}", 44, &e);
    is (J, "a.b.c", "input: J with options");
    free (J);
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        J = imp_input_decode (bad[i], strlen (bad[i]), &e);
        ok (J == NULL, "input refuses %s: %s", bad[i], e.text);
        free (J);
    }
}

static void test_msg (void)
{
    struct imp_err e = {{0}};
    struct imp_msg m;
    char *args[] = {"/bin/shell", "123", NULL};
    char *s = imp_msg_encode (1001, "/bin/shell", args);
    const char *bad[] = {
        "{}",
        "{\"cmd\":\"run\",\"uid\":1,\"shell\":\"/x\",\"args\":[\"/x\"]}",
        "{\"cmd\":\"exec\",\"uid\":-1,\"shell\":\"/x\",\"args\":[\"/x\"]}",
        "{\"cmd\":\"exec\",\"uid\":4294967296,\"shell\":\"/x\",\"args\":[\"/"
        "x\"]}",
        "{\"cmd\":\"exec\",\"uid\":1,\"shell\":\"/x\",\"args\":[]}",
        "{\"cmd\":\"exec\",\"uid\":1,\"shell\":\"/x\",\"args\":[1]}",
        "{\"cmd\":\"exec\",\"uid\":1,\"shell\":\"/x\",\"args\":[\"/"
        "x\"],\"y\":1}",
    };

    ok (s && imp_msg_decode (s, strlen (s), &m, &e) == 0 && m.uid == 1001
            && !strcmp (m.shell, "/bin/shell")
            && !strcmp (m.args[0], "/bin/shell") && !strcmp (m.args[1], "123")
            && m.args[2] == NULL,
        "msg: encode then decode round trips");
    imp_msg_clear (&m);
    free (s);
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++)
        ok (imp_msg_decode (bad[i], strlen (bad[i]), &m, &e) < 0,
            "msg refuses %s", bad[i]);
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    test_input ();
    test_msg ();
    done_testing ();
    return 0;
}
