/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* testmod - a broker module for the tests: "<name>.hello" answers
 * {"name":<module name>,"args":[...]}; "<name>.fail" makes mod_main return
 * -1 (EIO).  With the argument "fail-init", mod_main fails before running.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "libflux/flux.h"

struct ctx {
    int argc;
    char **argv;
    const char *name;
    int failed;
};

static void hello_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct ctx *c = arg;
    json_t *args = json_array ();
    int i;

    for (i = 0; args && i < c->argc; i++)
        json_array_append_new (args, json_string (c->argv[i]));
    flux_respond_pack (h, msg, "{s:s s:o}", "name", c->name, "args", args);
}

static void fail_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct ctx *c = arg;
    c->failed = 1;
    flux_respond (h, msg, NULL);
    flux_reactor_stop (flux_get_reactor (h));
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct ctx c = {.argc = argc, .argv = argv};
    char hello[128], fail[128];
    struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, hello, hello_cb, FLUX_ROLE_USER},
        {FLUX_MSGTYPE_REQUEST, fail, fail_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers;

    if (argc > 0 && !strcmp (argv[0], "fail-init")) {
        errno = EINVAL;
        return -1;
    }
    c.name = flux_aux_get (h, "flux::name");
    snprintf (hello, sizeof (hello), "%s.hello", c.name);
    snprintf (fail, sizeof (fail), "%s.fail", c.name);
    if (flux_msg_handler_addvec (h, htab, &c, &handlers) < 0)
        return -1;
    flux_reactor_run (flux_get_reactor (h), 0);
    flux_msg_handler_delvec (handlers);
    if (c.failed) {
        errno = EIO;
        return -1;
    }
    return 0;
}
