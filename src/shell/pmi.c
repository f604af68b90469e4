/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* pmi.c - choose the PMI servers from the `pmi` option and fan the task
 * hooks out to them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmi.h"
#include "shell.h"

static const struct shell_pmi_server *servers[] = {
    &shell_pmi_simple,
    /* PMIx goes here */
};
#define NSERVERS (sizeof (servers) / sizeof (servers[0]))

struct shell_pmi {
    const struct shell_pmi_server *srv[NSERVERS];
    void *impl[NSERVERS];
    int count;
};

/* Is name in the list (comma separated string or array of strings)? */
static int listed (json_t *o, const char *name, flux_error_t *error)
{
    if (json_is_string (o)) {
        const char *s = json_string_value (o);
        size_t len = strlen (name);
        while (*s) {
            size_t n = strcspn (s, ",");
            if (n == len && !strncmp (s, name, n))
                return 1;
            s += n;
            if (*s == ',')
                s++;
        }
        return 0;
    }
    if (json_is_array (o)) {
        size_t i;
        json_t *v;
        json_array_foreach (o, i, v)
        {
            if (!json_is_string (v))
                break;
            if (!strcmp (json_string_value (v), name))
                return 1;
        }
        if (i == json_array_size (o))
            return 0;
    }
    errno = EINVAL;
    return errprintf (error, "shell option pmi must be a string or an array "
                             "of strings");
}

struct shell_pmi *shell_pmi_create (struct shell *shell, flux_error_t *error)
{
    json_t *opt = json_object_get (shell->info->options, "pmi");
    struct shell_pmi *pmi = calloc (1, sizeof (*pmi));

    if (!pmi)
        return NULL;
    for (size_t i = 0; i < NSERVERS; i++) {
        const char *name = servers[i]->name;
        int on;
        if (!opt)
            on = !strcmp (name, "simple");
        else if ((on = listed (opt, name, error)) < 0)
            goto error;
        if (!on && !strcmp (name, "simple") && opt) {
            /* flux-core's aliases of the simple server */
            if ((on = listed (opt, "pmi1", error)) < 0
                || (!on && (on = listed (opt, "pmi2", error)) < 0))
                goto error;
        }
        if (!on)
            continue;
        if (!(pmi->impl[pmi->count] = servers[i]->create (shell, error)))
            goto error;
        pmi->srv[pmi->count++] = servers[i];
    }
    return pmi;
error:
    shell_pmi_destroy (pmi);
    return NULL;
}

void shell_pmi_destroy (struct shell_pmi *pmi)
{
    if (pmi) {
        int saved_errno = errno;
        for (int i = 0; i < pmi->count; i++)
            pmi->srv[i]->destroy (pmi->impl[i]);
        free (pmi);
        errno = saved_errno;
    }
}

int shell_pmi_task_setup (struct shell_pmi *pmi, struct task *t,
                          struct env *env, flux_error_t *error)
{
    for (int i = 0; i < pmi->count; i++) {
        if (pmi->srv[i]->task_setup (pmi->impl[i], t, env, error) < 0)
            return -1;
    }
    return 0;
}

void shell_pmi_task_started (struct shell_pmi *pmi, struct task *t)
{
    for (int i = 0; i < pmi->count; i++)
        pmi->srv[i]->task_started (pmi->impl[i], t);
}
