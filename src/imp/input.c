/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* input.c - the exec input and the privsep message. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "input.h"
#include "sign.h"

char *imp_input_decode (const char *text, size_t len, struct imp_err *e)
{
    json_t *o, *J, *opt;
    json_error_t jerr;
    const char *key;
    json_t *v;
    char *s = NULL;

    if (len > IMP_INPUT_MAX) {
        imp_errf (e, "input is larger than %d bytes", IMP_INPUT_MAX);
        return NULL;
    }
    if (!(o = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr))) {
        imp_errf (e, "input is not JSON: %s", jerr.text);
        return NULL;
    }
    if (!json_is_object (o)) {
        imp_errf (e, "input is not a JSON object");
        goto done;
    }
    json_object_foreach (o, key, v)
    {
        if (strcmp (key, "J") && strcmp (key, "options")) {
            imp_errf (e, "input has unknown key %.32s", key);
            goto done;
        }
    }
    if (!(J = json_object_get (o, "J")) || !json_is_string (J)) {
        imp_errf (e, "input has no J string");
        goto done;
    }
    if ((opt = json_object_get (o, "options")) && !json_is_object (opt)) {
        imp_errf (e, "input options is not an object");
        goto done;
    }
    if (strlen (json_string_value (J)) != json_string_length (J)) {
        imp_errf (e, "input J contains a NUL byte");
        goto done;
    }
    if (!(s = strdup (json_string_value (J))))
        imp_errf (e, "out of memory");
done:
    json_decref (o);
    return s;
}

char *imp_msg_encode (uint32_t uid, const char *shell, char *const args[])
{
    json_t *o, *a;
    char *s;

    if (!(a = json_array ()))
        return NULL;
    for (int i = 0; args[i]; i++) {
        if (json_array_append_new (a, json_string (args[i])) < 0) {
            json_decref (a);
            return NULL;
        }
    }
    if (!(o = json_pack ("{s:s s:I s:s s:o}", "cmd", "exec", "uid",
                         (json_int_t)uid, "shell", shell, "args", a)))
        return NULL;
    s = json_dumps (o, JSON_COMPACT);
    json_decref (o);
    return s;
}

void imp_msg_clear (struct imp_msg *m)
{
    if (m) {
        free (m->shell);
        if (m->args) {
            for (char **p = m->args; *p; p++)
                free (*p);
            free (m->args);
        }
        memset (m, 0, sizeof (*m));
    }
}

int imp_msg_decode (const char *text, size_t len, struct imp_msg *m,
                    struct imp_err *e)
{
    json_t *o, *a, *v;
    json_error_t jerr;
    const char *cmd, *shell;
    json_int_t uid;
    size_t i, n;

    memset (m, 0, sizeof (*m));
    if (len > IMP_INPUT_MAX + IMP_J_MAX)
        return imp_errf (e, "privsep: message too long");
    if (!(o = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr)))
        return imp_errf (e, "privsep: message is not JSON");
    if (json_unpack (o, "{s:s s:I s:s s:o !}", "cmd", &cmd, "uid", &uid,
                     "shell", &shell, "args", &a)
            < 0
        || strcmp (cmd, "exec") != 0 || uid < 0 || uid > UINT32_MAX
        || !json_is_array (a) || (n = json_array_size (a)) < 1
        || n > IMP_ARGS_MAX) {
        json_decref (o);
        return imp_errf (e, "privsep: message is not valid");
    }
    if (!(m->shell = strdup (shell))
        || !(m->args = calloc (n + 1, sizeof (char *))))
        goto nomem;
    json_array_foreach (a, i, v)
    {
        const char *s = json_string_value (v);
        if (!s || strlen (s) != json_string_length (v)) {
            json_decref (o);
            imp_msg_clear (m);
            return imp_errf (e, "privsep: message args are not strings");
        }
        if (!(m->args[i] = strdup (s)))
            goto nomem;
    }
    m->uid = (uint32_t)uid;
    json_decref (o);
    return 0;
nomem:
    json_decref (o);
    imp_msg_clear (m);
    return imp_errf (e, "out of memory");
}
