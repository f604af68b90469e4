/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* conf.c - config.path read into one object, and the config service
 * (conf.h).
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "libjob/jobspec.h"
#include "libutil/toml.h"

#include "attr.h"
#include "broker.h"
#include "conf.h"

#define MAX_DEPTH 32 /* of the key path of a merge conflict */

static bool ends_with (const char *s, const char *suffix)
{
    size_t n = strlen (s), m = strlen (suffix);
    return n >= m && !strcmp (s + n - m, suffix);
}

/* The whole of a regular file, NUL-terminated, or NULL with an error. */
static char *read_file (const char *path, size_t *lenp, flux_error_t *error)
{
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    int fd;

    if ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0) {
        errprintf (error, "%s: %s", path, strerror (errno));
        return NULL;
    }
    if (fstat (fd, &st) < 0) {
        errprintf (error, "%s: %s", path, strerror (errno));
        goto fail;
    }
    if (!S_ISREG (st.st_mode)) {
        errprintf (error, "%s: not a regular file", path);
        goto fail_einval;
    }
    if ((size_t)st.st_size > CONF_MAX_FILE) {
        errprintf (error, "%s: bigger than %zu MiB", path, CONF_MAX_FILE >> 20);
        goto fail_einval;
    }
    if (!(buf = malloc ((size_t)st.st_size + 1))) {
        errprintf (error, "%s: out of memory", path);
        goto fail;
    }
    while (len <= (size_t)st.st_size) { /* one more: it may have grown */
        ssize_t n = read (fd, buf + len, (size_t)st.st_size + 1 - len);
        if (n < 0) {
            errprintf (error, "%s: %s", path, strerror (errno));
            goto fail;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (len > (size_t)st.st_size) {
        errprintf (error, "%s: changed while read", path);
        goto fail_einval;
    }
    buf[len] = '\0';
    close (fd);
    *lenp = len;
    return buf;
fail_einval:
    errno = EINVAL;
fail : {
    int e = errno;
    free (buf);
    close (fd);
    errno = e;
    return NULL;
}
}

/* True if text has no YAML content: blank and comment lines only. */
static bool yaml_blank (const char *text)
{
    const char *p = text;

    while (*p) {
        p += strspn (p, " \t\r");
        if (*p == '#')
            p += strcspn (p, "\n");
        if (*p == '\n')
            p++;
        else if (*p)
            return false;
    }
    return true;
}

/* One file's object. */
static json_t *load_file (const char *path, flux_error_t *error)
{
    json_t *o = NULL;
    json_error_t jerr;
    flux_error_t yerr;
    size_t len;
    char *text;

    if (!(text = read_file (path, &len, error)))
        return NULL;
    if (ends_with (path, ".json")) {
        if (!(o = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr)))
            errprintf (error, "%s:%d:%d: %s", path, jerr.line, jerr.column,
                       jerr.text);
    }
    else if (ends_with (path, ".toml")) {
        toml_error_t terr;
        if (!(o = toml_parse (text, len, &terr))) {
            if (errno == ENOMEM)
                errprintf (error, "%s: out of memory", path);
            else
                errprintf (error, "%s:%d:%d: %s", path, terr.line, terr.column,
                           terr.text);
        }
    }
    else if (memchr (text, '\0', len))
        errprintf (error, "%s: not a text file (a NUL byte)", path);
    else if (yaml_blank (text))
        o = json_object ();
    else if (!(o = jobspec_yaml_to_json (text, &yerr)))
        errprintf (error, "%s: %s", path, yerr.text);
    free (text);
    if (!o) {
        errno = EINVAL;
        return NULL;
    }
    if (json_is_null (o)) { /* a null document ("~", "null"): empty too */
        json_decref (o);
        o = json_object ();
    }
    else if (!json_is_object (o)) {
        errprintf (error, "%s: expected a table (an object) at the top", path);
        json_decref (o);
        errno = EINVAL;
        return NULL;
    }
    return o;
}

/* Merge src into dst: tables merge, any other key set in both is a
 * conflict, whose key path is left in keys[0..*depth-1]. */
static int merge (json_t *dst, json_t *src, const char **keys, int *depth)
{
    const char *key;
    json_t *val;

    json_object_foreach (src, key, val)
    {
        json_t *old = json_object_get (dst, key);
        if (*depth < MAX_DEPTH)
            keys[*depth] = key;
        (*depth)++;
        if (!old) {
            if (json_object_set (dst, key, val) < 0)
                return -1;
        }
        else if (json_is_object (old) && json_is_object (val)) {
            json_t *copy;
            /* dst's tables may be shared with an earlier file's object */
            if (!(copy = json_copy (old))
                || json_object_set_new (dst, key, copy)
                || merge (copy, val, keys, depth) < 0)
                return -1;
        }
        else
            return -1;
        (*depth)--;
    }
    return 0;
}

static bool has_path (json_t *o, const char **keys, int depth)
{
    for (int i = 0; i < depth && i < MAX_DEPTH; i++)
        if (!json_is_object (o) || !(o = json_object_get (o, keys[i])))
            return false;
    return true;
}

static int cmp_names (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

/* The names of dir's config files (a NULL-terminated sorted array). */
static char **list_dir (const char *dir, size_t *countp, flux_error_t *error)
{
    DIR *d;
    struct dirent *ent;
    char **names;
    size_t n = 0;

    if (!(names = calloc (1, sizeof (*names)))) {
        errprintf (error, "%s: out of memory", dir);
        return NULL;
    }
    if (!(d = opendir (dir))) {
        errprintf (error, "%s: %s", dir, strerror (errno));
        free (names);
        return NULL;
    }
    while ((ent = readdir (d))) {
        char **v;
        if (ent->d_name[0] == '.'
            || !(ends_with (ent->d_name, ".json")
                 || ends_with (ent->d_name, ".toml")
                 || ends_with (ent->d_name, ".yaml")
                 || ends_with (ent->d_name, ".yml")))
            continue;
        if (!(v = realloc (names, (n + 2) * sizeof (*v)))
            || !(v[n] = strdup (ent->d_name))) {
            if (v)
                names = v;
            errprintf (error, "%s: out of memory", dir);
            closedir (d);
            for (size_t i = 0; i < n; i++)
                free (names[i]);
            free (names);
            errno = ENOMEM;
            return NULL;
        }
        names = v;
        names[++n] = NULL;
    }
    closedir (d);
    if (n > 0)
        qsort (names, n, sizeof (*names), cmp_names);
    *countp = n;
    return names;
}

json_t *conf_load (const char *path, flux_error_t *error)
{
    struct stat st;
    char **names;
    size_t n = 0;
    json_t **objs = NULL, *conf = NULL;
    char *file = NULL;

    if (!path || !*path) {
        errno = EINVAL;
        errprintf (error, "empty config path");
        return NULL;
    }
    if (stat (path, &st) < 0) {
        errprintf (error, "%s: %s", path, strerror (errno));
        return NULL;
    }
    if (!S_ISDIR (st.st_mode))
        return load_file (path, error);
    if (!(names = list_dir (path, &n, error)))
        return NULL;
    if (!(objs = calloc (n + 1, sizeof (*objs))) || !(conf = json_object ())) {
        errprintf (error, "%s: out of memory", path);
        errno = ENOMEM;
        goto error;
    }
    for (size_t i = 0; i < n; i++) {
        const char *keys[MAX_DEPTH];
        int depth = 0;
        free (file);
        if (asprintf (&file, "%s/%s", path, names[i]) < 0) {
            file = NULL;
            errprintf (error, "%s: out of memory", path);
            errno = ENOMEM;
            goto error;
        }
        if (!(objs[i] = load_file (file, error)))
            goto error;
        if (merge (conf, objs[i], keys, &depth) < 0) {
            char key[256] = "";
            size_t len = 0;
            const char *other = "?";
            for (int k = 0; k < depth && k < MAX_DEPTH; k++)
                len += (size_t)snprintf (
                    key + len, len < sizeof (key) ? sizeof (key) - len : 0,
                    "%s%s", k ? "." : "", keys[k]);
            for (size_t j = 0; j < i; j++)
                if (has_path (objs[j], keys, depth)) {
                    other = names[j];
                    break;
                }
            errprintf (error, "%s: %s is also set in %s", file, key, other);
            errno = EINVAL;
            goto error;
        }
    }
    goto done;
error:
    json_decref (conf);
    conf = NULL;
done : {
    int e = errno;
    for (size_t i = 0; i < n; i++) {
        json_decref (objs ? objs[i] : NULL);
        free (names[i]);
    }
    free (objs);
    free (names);
    free (file);
    errno = e;
}
    return conf;
}

/* ---- the service ---- */

int conf_init (struct broker *b)
{
    const char *path = attr_get (b->attrs, "config.path", NULL);
    flux_error_t error;

    if (!path)
        b->config = json_object ();
    else if (!(b->config = conf_load (path, &error))) {
        fprintf (stderr, "flux-broker: config: %s\n", error.text);
        return -1;
    }
    if (!b->config) {
        fprintf (stderr, "flux-broker: config: out of memory\n");
        return -1;
    }
    return 0;
}

/* Replace the configuration and tell the streaming config.get. */
static void conf_set (struct broker *b, json_t *conf)
{
    json_decref (b->config);
    b->config = conf;
    for (size_t i = 0; i < b->nconfig_watchers; i++)
        if (flux_respond_pack (b->h, b->config_watchers[i], "O", conf) < 0)
            flux_log_error (b->h, "config.get: respond");
}

static void get_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
    struct broker *b = arg;

    if (flux_msg_is_streaming (msg)) {
        const flux_msg_t **v = realloc (
            b->config_watchers, (b->nconfig_watchers + 1) * sizeof (*v));
        if (!v) {
            flux_respond_error (h, msg, ENOMEM, NULL);
            return;
        }
        b->config_watchers = v;
        b->config_watchers[b->nconfig_watchers++] = flux_msg_incref (msg);
    }
    if (flux_respond_pack (h, msg, "O", b->config) < 0)
        flux_log_error (h, "config.get: respond");
}

static void reload_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct broker *b = arg;
    const char *path = attr_get (b->attrs, "config.path", NULL);
    flux_error_t error;
    json_t *conf;

    if (!path)
        conf = json_object ();
    else if (!(conf = conf_load (path, &error))) {
        flux_log (h, LOG_ERR, "config.reload: %s", error.text);
        flux_respond_error (h, msg, errno == ENOMEM ? ENOMEM : EINVAL,
                            error.text);
        return;
    }
    if (!conf) {
        flux_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    conf_set (b, conf);
    flux_respond (h, msg, NULL);
}

static void load_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct broker *b = arg;
    json_t *conf;

    if (flux_request_unpack (msg, NULL, "o", &conf) < 0
        || !json_is_object (conf)) {
        flux_respond_error (h, msg, EPROTO, "config.load: expected an object");
        return;
    }
    conf_set (b, json_incref (conf));
    flux_respond (h, msg, NULL);
}

static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct broker *b = arg;

    builtin_drop_sender (b->config_watchers, &b->nconfig_watchers, msg);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "config.get", get_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "config.reload", reload_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "config.load", load_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "config.disconnect", disconnect_cb, FLUX_ROLE_ALL},
    FLUX_MSGHANDLER_TABLE_END,
};

int conf_register (struct broker *b)
{
    if (router_self_service (b, "config") < 0)
        return -1;
    return flux_msg_handler_addvec (b->h, htab, b, &b->config_handlers);
}

void conf_unregister (struct broker *b)
{
    flux_msg_handler_delvec (b->config_handlers);
    b->config_handlers = NULL;
    for (size_t i = 0; i < b->nconfig_watchers; i++)
        flux_msg_decref (b->config_watchers[i]);
    free (b->config_watchers);
    b->config_watchers = NULL;
    b->nconfig_watchers = 0;
    json_decref (b->config);
    b->config = NULL;
}
