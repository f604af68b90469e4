/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* command.c - flux_cmd_t: a command and its RFC 42 JSON form.
 *
 * The command is kept as the JSON pieces it travels as (argv and
 * channels arrays, env and opts objects), so encoding is a copy and
 * decoding a check.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "subprocess.h"

struct flux_cmd {
    json_t *argv;     /* [s] */
    json_t *env;      /* {s:s} */
    json_t *opts;     /* {s:s} */
    json_t *channels; /* [s] */
    json_t *msgchan;  /* [{name, uri}], carried only */
    char *cwd;
    char *label;
};

void flux_cmd_destroy (flux_cmd_t *cmd)
{
    if (cmd) {
        int saved_errno = errno;
        json_decref (cmd->argv);
        json_decref (cmd->env);
        json_decref (cmd->opts);
        json_decref (cmd->channels);
        json_decref (cmd->msgchan);
        free (cmd->cwd);
        free (cmd->label);
        free (cmd);
        errno = saved_errno;
    }
}

static flux_cmd_t *cmd_alloc (void)
{
    flux_cmd_t *cmd;

    if (!(cmd = calloc (1, sizeof (*cmd))) || !(cmd->argv = json_array ())
        || !(cmd->env = json_object ()) || !(cmd->opts = json_object ())
        || !(cmd->channels = json_array ())
        || !(cmd->msgchan = json_array ())) {
        flux_cmd_destroy (cmd);
        errno = ENOMEM;
        return NULL;
    }
    return cmd;
}

flux_cmd_t *flux_cmd_create (int argc, char *const argv[], char *const env[])
{
    flux_cmd_t *cmd;

    if (argc < 0 || (argc > 0 && !argv)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(cmd = cmd_alloc ()))
        return NULL;
    for (int i = 0; i < argc; i++) {
        if (flux_cmd_argv_append (cmd, argv[i]) < 0)
            goto error;
    }
    for (int i = 0; env && env[i]; i++) {
        const char *eq = strchr (env[i], '=');
        char *name;
        int rc;
        if (!eq || eq == env[i])
            continue; /* not NAME=VALUE: not passed on */
        if (!(name = strndup (env[i], eq - env[i])))
            goto error;
        rc = flux_cmd_setenv (cmd, name, eq + 1, true);
        free (name);
        if (rc < 0)
            goto error;
    }
    return cmd;
error:
    flux_cmd_destroy (cmd);
    return NULL;
}

flux_cmd_t *flux_cmd_copy (const flux_cmd_t *src)
{
    flux_cmd_t *cmd;

    if (!src) {
        errno = EINVAL;
        return NULL;
    }
    if (!(cmd = cmd_alloc ()))
        return NULL;
    json_decref (cmd->argv);
    json_decref (cmd->env);
    json_decref (cmd->opts);
    json_decref (cmd->channels);
    json_decref (cmd->msgchan);
    cmd->argv = json_deep_copy (src->argv);
    cmd->env = json_deep_copy (src->env);
    cmd->opts = json_deep_copy (src->opts);
    cmd->channels = json_deep_copy (src->channels);
    cmd->msgchan = json_deep_copy (src->msgchan);
    if (!cmd->argv || !cmd->env || !cmd->opts || !cmd->channels || !cmd->msgchan
        || (src->cwd && !(cmd->cwd = strdup (src->cwd)))
        || (src->label && !(cmd->label = strdup (src->label)))) {
        flux_cmd_destroy (cmd);
        cmd = NULL;
        errno = ENOMEM;
    }
    return cmd;
}

static int append_string (json_t *a, const char *s)
{
    json_t *v;

    if (!s) {
        errno = EINVAL;
        return -1;
    }
    if (!(v = json_string (s))) {
        errno = EINVAL; /* not UTF-8 */
        return -1;
    }
    if (json_array_append_new (a, v) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

int flux_cmd_argv_append (flux_cmd_t *cmd, const char *arg)
{
    if (!cmd) {
        errno = EINVAL;
        return -1;
    }
    return append_string (cmd->argv, arg);
}

int flux_cmd_argc (const flux_cmd_t *cmd)
{
    return cmd ? (int)json_array_size (cmd->argv) : 0;
}

const char *flux_cmd_arg (const flux_cmd_t *cmd, int n)
{
    if (!cmd || n < 0)
        return NULL;
    return json_string_value (json_array_get (cmd->argv, n));
}

static int set_string (json_t *o, const char *name, const char *value,
                       bool overwrite)
{
    json_t *v;

    if (!name || !*name || !value) {
        errno = EINVAL;
        return -1;
    }
    if (!overwrite && json_object_get (o, name))
        return 0;
    if (!(v = json_string (value)) || json_object_set_new (o, name, v) < 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int flux_cmd_setenv (flux_cmd_t *cmd, const char *name, const char *value,
                     bool overwrite)
{
    if (!cmd || (name && strchr (name, '='))) {
        errno = EINVAL;
        return -1;
    }
    return set_string (cmd->env, name, value, overwrite);
}

void flux_cmd_unsetenv (flux_cmd_t *cmd, const char *name)
{
    if (cmd && name)
        (void)json_object_del (cmd->env, name);
}

const char *flux_cmd_getenv (const flux_cmd_t *cmd, const char *name)
{
    if (!cmd || !name)
        return NULL;
    return json_string_value (json_object_get (cmd->env, name));
}

int flux_cmd_env_count (const flux_cmd_t *cmd)
{
    return cmd ? (int)json_object_size (cmd->env) : 0;
}

void flux_cmd_env_free (char **env)
{
    if (env) {
        int saved_errno = errno;
        for (int i = 0; env[i]; i++)
            free (env[i]);
        free (env);
        errno = saved_errno;
    }
}

char **flux_cmd_env_expand (const flux_cmd_t *cmd)
{
    size_t n = cmd ? json_object_size (cmd->env) : 0;
    const char *name;
    json_t *v;
    char **env;
    size_t i = 0;

    if (!(env = calloc (n + 1, sizeof (*env))))
        return NULL;
    if (!cmd)
        return env;
    json_object_foreach (cmd->env, name, v)
    {
        if (asprintf (&env[i], "%s=%s", name, json_string_value (v)) < 0) {
            env[i] = NULL;
            flux_cmd_env_free (env);
            errno = ENOMEM;
            return NULL;
        }
        i++;
    }
    return env;
}

static int set_str (char **dst, const char *s)
{
    char *cpy = NULL;

    if (s && !(cpy = strdup (s)))
        return -1;
    free (*dst);
    *dst = cpy;
    return 0;
}

int flux_cmd_setcwd (flux_cmd_t *cmd, const char *cwd)
{
    if (!cmd) {
        errno = EINVAL;
        return -1;
    }
    return set_str (&cmd->cwd, cwd);
}

const char *flux_cmd_getcwd (const flux_cmd_t *cmd)
{
    return cmd ? cmd->cwd : NULL;
}

int flux_cmd_add_channel (flux_cmd_t *cmd, const char *name)
{
    size_t i;
    json_t *v;

    if (!cmd || !name || !*name || strchr (name, '=')) {
        errno = EINVAL;
        return -1;
    }
    json_array_foreach (cmd->channels, i, v)
    {
        if (!strcmp (json_string_value (v), name)) {
            errno = EEXIST;
            return -1;
        }
    }
    return append_string (cmd->channels, name);
}

int flux_cmd_channel_count (const flux_cmd_t *cmd)
{
    return cmd ? (int)json_array_size (cmd->channels) : 0;
}

const char *flux_cmd_channel (const flux_cmd_t *cmd, int n)
{
    if (!cmd || n < 0)
        return NULL;
    return json_string_value (json_array_get (cmd->channels, n));
}

int flux_cmd_setopt (flux_cmd_t *cmd, const char *name, const char *value)
{
    if (!cmd) {
        errno = EINVAL;
        return -1;
    }
    return set_string (cmd->opts, name, value, true);
}

const char *flux_cmd_getopt (const flux_cmd_t *cmd, const char *name)
{
    if (!cmd || !name)
        return NULL;
    return json_string_value (json_object_get (cmd->opts, name));
}

int flux_cmd_set_label (flux_cmd_t *cmd, const char *label)
{
    if (!cmd || (label && !*label)) {
        errno = EINVAL;
        return -1;
    }
    return set_str (&cmd->label, label);
}

const char *flux_cmd_get_label (const flux_cmd_t *cmd)
{
    return cmd ? cmd->label : NULL;
}

json_t *flux_cmd_tojson (const flux_cmd_t *cmd)
{
    json_t *o;

    if (!cmd) {
        errno = EINVAL;
        return NULL;
    }
    if (!(o = json_pack ("{s:O s:O s:O}", "opts", cmd->opts, "channels",
                         cmd->channels, "msgchan", cmd->msgchan)))
        goto nomem;
    if (json_array_size (cmd->argv) > 0
        && json_object_set (o, "cmdline", cmd->argv) < 0)
        goto nomem;
    if (json_object_size (cmd->env) > 0
        && json_object_set (o, "env", cmd->env) < 0)
        goto nomem;
    if (cmd->cwd && json_object_set_new (o, "cwd", json_string (cmd->cwd)) < 0)
        goto nomem;
    if (cmd->label
        && json_object_set_new (o, "label", json_string (cmd->label)) < 0)
        goto nomem;
    return o;
nomem:
    json_decref (o);
    errno = ENOMEM;
    return NULL;
}

static bool is_string_array (const json_t *a)
{
    size_t i;
    json_t *v;

    if (!json_is_array (a))
        return false;
    json_array_foreach (a, i, v)
    {
        if (!json_is_string (v))
            return false;
    }
    return true;
}

static bool is_string_object (const json_t *o)
{
    const char *k;
    json_t *v;

    if (!json_is_object (o))
        return false;
    json_object_foreach ((json_t *)o, k, v)
    {
        if (!json_is_string (v))
            return false;
    }
    return true;
}

static bool is_msgchan (const json_t *a)
{
    size_t i;
    json_t *v;

    if (!json_is_array (a))
        return false;
    json_array_foreach (a, i, v)
    {
        const char *name, *uri;
        if (json_unpack ((json_t *)v, "{s:s s:s}", "name", &name, "uri", &uri)
            < 0)
            return false;
    }
    return true;
}

/* Channel names become environment names: no '=', not empty, unique. */
static bool channels_valid (const json_t *a)
{
    size_t i, j;
    json_t *v, *w;

    json_array_foreach (a, i, v)
    {
        const char *s = json_string_value (v);
        if (!*s || strchr (s, '=') || strlen (s) != json_string_length (v))
            return false;
        json_array_foreach (a, j, w)
        {
            if (j >= i)
                break;
            if (!strcmp (s, json_string_value (w)))
                return false;
        }
    }
    return true;
}

flux_cmd_t *flux_cmd_fromjson (const json_t *o, flux_error_t *error)
{
    json_t *argv, *env, *opts, *channels, *msgchan = NULL;
    const char *cwd = NULL, *label = NULL;
    flux_cmd_t *cmd;

    if (!o
        || json_unpack ((json_t *)o, "{s:o s:o s:o s:o s?s s?s s?o}", "cmdline",
                        &argv, "env", &env, "opts", &opts, "channels",
                        &channels, "cwd", &cwd, "label", &label, "msgchan",
                        &msgchan)
               < 0
        || !is_string_array (argv) || !is_string_object (env)
        || !is_string_object (opts) || !is_string_array (channels)
        || !channels_valid (channels) || (msgchan && !is_msgchan (msgchan))
        || (label && !*label)) {
        errprintf (error, "error parsing command string");
        errno = EPROTO;
        return NULL;
    }
    if (json_array_size (argv) == 0) {
        errprintf (error, "command string is empty");
        errno = EPROTO;
        return NULL;
    }
    if (!(cmd = cmd_alloc ()))
        goto nomem;
    json_decref (cmd->argv);
    json_decref (cmd->env);
    json_decref (cmd->opts);
    json_decref (cmd->channels);
    json_decref (cmd->msgchan);
    cmd->argv = json_deep_copy (argv);
    cmd->env = json_deep_copy (env);
    cmd->opts = json_deep_copy (opts);
    cmd->channels = json_deep_copy (channels);
    cmd->msgchan = msgchan ? json_deep_copy (msgchan) : json_array ();
    if (!cmd->argv || !cmd->env || !cmd->opts || !cmd->channels || !cmd->msgchan
        || set_str (&cmd->cwd, cwd) < 0 || set_str (&cmd->label, label) < 0)
        goto nomem;
    return cmd;
nomem:
    flux_cmd_destroy (cmd);
    errprintf (error, "out of memory");
    errno = ENOMEM;
    return NULL;
}

int subprocess_cmd_bufsize (const flux_cmd_t *cmd, const char *stream,
                            int *size, flux_error_t *error)
{
    char name[128];
    const char *s;
    char *end;
    unsigned long long v;

    snprintf (name, sizeof (name), "%s_BUFSIZE", stream);
    if (!(s = flux_cmd_getopt (cmd, name))) {
        *size = SUBPROCESS_DEFAULT_BUFSIZE;
        return 0;
    }
    errno = 0;
    if (*s < '0' || *s > '9')
        goto inval;
    v = strtoull (s, &end, 10);
    if (errno == ERANGE)
        goto overflow;
    switch (*end) {
        case 'k':
        case 'K':
            v = v > (ULLONG_MAX >> 10) ? ULLONG_MAX : v << 10;
            end++;
            break;
        case 'm':
        case 'M':
            v = v > (ULLONG_MAX >> 20) ? ULLONG_MAX : v << 20;
            end++;
            break;
        case 'g':
        case 'G':
            v = v > (ULLONG_MAX >> 30) ? ULLONG_MAX : v << 30;
            end++;
            break;
    }
    if (*end != '\0')
        goto inval;
    if (v == 0)
        goto inval;
    if (v > INT_MAX)
        goto overflow;
    *size = (int)v;
    return 0;
inval:
    errprintf (error, "invalid buffer size %s=%s", name, s);
    errno = EINVAL;
    return -1;
overflow:
    errprintf (error, "buffer size too large %s=%s", name, s);
    errno = EOVERFLOW;
    return -1;
}

int subprocess_cmd_line_buffer (const flux_cmd_t *cmd, const char *stream,
                                bool *line, flux_error_t *error)
{
    char name[128];
    const char *s;

    snprintf (name, sizeof (name), "%s_LINE_BUFFER", stream);
    if (!(s = flux_cmd_getopt (cmd, name)) || !strcmp (s, "true"))
        *line = true;
    else if (!strcmp (s, "false"))
        *line = false;
    else {
        errprintf (error, "invalid value %s=%s", name, s);
        errno = EINVAL;
        return -1;
    }
    return 0;
}
