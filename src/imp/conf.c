/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* conf.c - flux-imp configuration: YAML/JSON files, merged and checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "conf.h"

#define YAML_DEPTH_MAX 32

/* Build a JSON value from the YAML event stream (one node). */
static json_t *yaml_node (yaml_parser_t *p, yaml_event_t *ev, int depth,
                          const char *name, struct imp_err *e);

static json_t *yaml_scalar (yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;

    if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        if (!strcmp (v, "true"))
            return json_true ();
        if (!strcmp (v, "false"))
            return json_false ();
        if (len > 0 && len < 19
            && strspn (v + (v[0] == '-'), "0123456789") == len - (v[0] == '-')
            && len > (size_t)(v[0] == '-'))
            return json_integer (strtoll (v, NULL, 10));
    }
    return json_stringn (v, len);
}

static int next (yaml_parser_t *p, yaml_event_t *ev, const char *name,
                 struct imp_err *e)
{
    if (!yaml_parser_parse (p, ev))
        return imp_errf (e, "%s: YAML: %s at line %zu", name,
                         p->problem ? p->problem : "error",
                         (size_t)p->problem_mark.line + 1);
    if (ev->type == YAML_ALIAS_EVENT
        || ((ev->type == YAML_SCALAR_EVENT && ev->data.scalar.anchor)
            || (ev->type == YAML_MAPPING_START_EVENT
                && ev->data.mapping_start.anchor)
            || (ev->type == YAML_SEQUENCE_START_EVENT
                && ev->data.sequence_start.anchor))) {
        yaml_event_delete (ev);
        return imp_errf (e, "%s: YAML anchors and aliases are not allowed",
                         name);
    }
    return 0;
}

static json_t *yaml_node (yaml_parser_t *p, yaml_event_t *ev, int depth,
                          const char *name, struct imp_err *e)
{
    json_t *o = NULL;

    if (depth > YAML_DEPTH_MAX) {
        imp_errf (e, "%s: YAML nested too deeply", name);
        return NULL;
    }
    switch (ev->type) {
        case YAML_SCALAR_EVENT:
            if (!(o = yaml_scalar (ev)))
                imp_errf (e, "%s: not UTF-8 text", name);
            return o;
        case YAML_SEQUENCE_START_EVENT:
            if (!(o = json_array ()))
                goto nomem;
            for (;;) {
                yaml_event_t c;
                json_t *v;
                if (next (p, &c, name, e) < 0)
                    goto error;
                if (c.type == YAML_SEQUENCE_END_EVENT) {
                    yaml_event_delete (&c);
                    return o;
                }
                v = yaml_node (p, &c, depth + 1, name, e);
                yaml_event_delete (&c);
                if (!v || json_array_append_new (o, v) < 0)
                    goto error;
            }
        case YAML_MAPPING_START_EVENT:
            if (!(o = json_object ()))
                goto nomem;
            for (;;) {
                yaml_event_t k, c;
                json_t *v;
                char *key;
                if (next (p, &k, name, e) < 0)
                    goto error;
                if (k.type == YAML_MAPPING_END_EVENT) {
                    yaml_event_delete (&k);
                    return o;
                }
                if (k.type != YAML_SCALAR_EVENT) {
                    yaml_event_delete (&k);
                    imp_errf (e, "%s: YAML keys must be scalars", name);
                    goto error;
                }
                key = strndup ((char *)k.data.scalar.value,
                               k.data.scalar.length);
                yaml_event_delete (&k);
                if (!key)
                    goto nomem;
                if (strlen (key) == 0 || json_object_get (o, key)) {
                    imp_errf (e, "%s: YAML key '%.32s' is empty or repeated",
                              name, key);
                    free (key);
                    goto error;
                }
                if (next (p, &c, name, e) < 0) {
                    free (key);
                    goto error;
                }
                v = yaml_node (p, &c, depth + 1, name, e);
                yaml_event_delete (&c);
                if (!v || json_object_set_new (o, key, v) < 0) {
                    free (key);
                    goto error;
                }
                free (key);
            }
        default:
            imp_errf (e, "%s: unexpected YAML event", name);
            return NULL;
    }
nomem:
    imp_errf (e, "out of memory");
error:
    json_decref (o);
    return NULL;
}

static json_t *parse_yaml (const char *text, size_t len, const char *name,
                           struct imp_err *e)
{
    yaml_parser_t p;
    yaml_event_t ev;
    json_t *o = NULL;
    int state = 0; /* 0 stream start, 1 doc start, 2 root, 3 doc end */

    if (!yaml_parser_initialize (&p)) {
        imp_errf (e, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string (&p, (const unsigned char *)text, len);
    for (;;) {
        if (next (&p, &ev, name, e) < 0)
            goto error;
        if (ev.type == YAML_STREAM_END_EVENT) {
            yaml_event_delete (&ev);
            break;
        }
        if (state == 0 && ev.type == YAML_STREAM_START_EVENT)
            state = 1;
        else if (state == 1 && ev.type == YAML_DOCUMENT_START_EVENT)
            state = 2;
        else if (state == 2) {
            if (ev.type != YAML_MAPPING_START_EVENT) {
                yaml_event_delete (&ev);
                imp_errf (e, "%s: the document must be a mapping", name);
                goto error;
            }
            o = yaml_node (&p, &ev, 0, name, e);
            if (!o) {
                yaml_event_delete (&ev);
                goto error;
            }
            state = 3;
        }
        else if (state == 3 && ev.type == YAML_DOCUMENT_END_EVENT)
            state = 4;
        else {
            yaml_event_delete (&ev);
            imp_errf (e, "%s: YAML must hold exactly one document", name);
            goto error;
        }
        yaml_event_delete (&ev);
    }
    yaml_parser_delete (&p);
    if (!o)
        return json_object (); /* empty file */
    return o;
error:
    json_decref (o);
    yaml_parser_delete (&p);
    return NULL;
}

json_t *imp_conf_parse_text (const char *text, size_t len, bool yaml,
                             const char *name, struct imp_err *e)
{
    json_t *o;
    json_error_t jerr;

    if (len > IMP_CONF_FILE_MAX) {
        imp_errf (e, "%s: larger than %d bytes", name, IMP_CONF_FILE_MAX);
        return NULL;
    }
    if (yaml)
        return parse_yaml (text, len, name, e);
    if (!(o = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr))) {
        imp_errf (e, "%s: JSON: %s at line %d", name, jerr.text, jerr.line);
        return NULL;
    }
    if (!json_is_object (o)) {
        json_decref (o);
        imp_errf (e, "%s: JSON must be an object", name);
        return NULL;
    }
    return o;
}

int imp_conf_merge (json_t *dst, json_t *src, const char *name,
                    struct imp_err *e)
{
    const char *key;
    json_t *v;

    json_object_foreach (src, key, v)
    {
        json_t *d = json_object_get (dst, key);
        if (!d) {
            if (json_object_set (dst, key, v) < 0)
                return imp_errf (e, "out of memory");
        }
        else if (json_is_object (d) && json_is_object (v)) {
            if (imp_conf_merge (d, v, name, e) < 0)
                return -1;
        }
        else
            return imp_errf (e, "%s: key '%.64s' is set twice", name, key);
    }
    return 0;
}

static void strv_free (char **v)
{
    if (v) {
        for (char **p = v; *p; p++)
            free (*p);
        free (v);
    }
}

bool imp_strv_has (char *const *v, const char *s)
{
    if (v && s)
        for (; *v; v++)
            if (!strcmp (*v, s))
                return true;
    return false;
}

/* An array of strings (or absent: empty) into a NULL-terminated vector. */
static int strv_get (json_t *o, const char *key, const char *what, bool abspath,
                     char ***out, struct imp_err *e)
{
    json_t *a = json_object_get (o, key);
    size_t i, n = a ? json_array_size (a) : 0;
    json_t *v;
    char **strv;

    if (a && !json_is_array (a))
        return imp_errf (e, "config: %s.%s must be an array", what, key);
    if (!(strv = calloc (n + 1, sizeof (*strv))))
        return imp_errf (e, "out of memory");
    json_array_foreach (a, i, v)
    {
        const char *s = json_string_value (v);
        if (!s || !*s || strlen (s) != json_string_length (v)) {
            strv_free (strv);
            return imp_errf (e, "config: %s.%s must hold non-empty strings",
                             what, key);
        }
        if (abspath && s[0] != '/') {
            strv_free (strv);
            return imp_errf (e, "config: %s.%s: %.64s is not an absolute path",
                             what, key, s);
        }
        if (!(strv[i] = strdup (s))) {
            strv_free (strv);
            return imp_errf (e, "out of memory");
        }
    }
    *out = strv;
    return 0;
}

static int bool_get (json_t *o, const char *key, const char *what, bool *b,
                     struct imp_err *e)
{
    json_t *v = json_object_get (o, key);
    if (!v)
        return 0;
    if (!json_is_boolean (v))
        return imp_errf (e, "config: %s.%s must be a boolean", what, key);
    *b = json_is_true (v);
    return 0;
}

/* Every key of o must be one of keys[]. */
static int known (json_t *o, const char *what, const char *const keys[],
                  struct imp_err *e)
{
    const char *key;
    json_t *v;

    json_object_foreach (o, key, v)
    {
        int i;
        for (i = 0; keys[i]; i++)
            if (!strcmp (key, keys[i]))
                break;
        if (!keys[i])
            return imp_errf (e, "config: unknown key %s%s%.64s", what,
                             *what ? "." : "", key);
    }
    return 0;
}

static int table (json_t *o, const char *key, json_t **t, struct imp_err *e)
{
    *t = json_object_get (o, key);
    if (*t && !json_is_object (*t))
        return imp_errf (e, "config: %s must be a table", key);
    return 0;
}

static bool valid_name (const char *s)
{
    return *s && strlen (s) <= 64
           && strspn (s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789-_")
                  == strlen (s);
}

int imp_conf_from_json (json_t *o, struct imp_conf *c, struct imp_err *e)
{
    static const char *const top[]
        = {"exec", "run", "sign", "allow-sudo", "log-level", NULL};
    static const char *const exec[]
        = {"allowed-users", "allowed-shells", "allow-unprivileged-exec",
           "pam-support", NULL};
    static const char *const sign[]
        = {"max-ttl", "allowed-types", "default-type", "munge", NULL};
    static const char *const munge[] = {"socket-path", NULL};
    static const char *const run[]
        = {"path", "allowed-users", "allowed-environment", NULL};
    json_t *t, *v;
    bool b = false;
    const char *key;

    memset (c, 0, sizeof (*c));
    c->max_ttl = 300;
    c->allow_munge = true;
    if (!json_is_object (o)) {
        imp_errf (e, "config: not a table");
        goto error;
    }
    if (known (o, "", top, e) < 0 || bool_get (o, "allow-sudo", "", &b, e) < 0)
        goto error;
    if ((v = json_object_get (o, "log-level")) && !json_is_string (v)) {
        imp_errf (e, "config: log-level must be a string");
        goto error;
    }
    /* exec */
    if (table (o, "exec", &t, e) < 0)
        goto error;
    if (!t)
        t = json_object ();
    else
        json_incref (t);
    b = false;
    if (known (t, "exec", exec, e) < 0
        || strv_get (t, "allowed-users", "exec", false, &c->exec_users, e) < 0
        || strv_get (t, "allowed-shells", "exec", true, &c->exec_shells, e) < 0
        || bool_get (t, "allow-unprivileged-exec", "exec",
                     &c->allow_unprivileged_exec, e)
               < 0
        || bool_get (t, "pam-support", "exec", &b, e) < 0) {
        json_decref (t);
        goto error;
    }
    json_decref (t);
    if (b) {
        imp_errf (e, "config: exec.pam-support is not supported");
        goto error;
    }
    /* sign */
    if (table (o, "sign", &t, e) < 0)
        goto error;
    if (t) {
        json_t *a, *m;
        size_t i;
        if (known (t, "sign", sign, e) < 0)
            goto error;
        if ((v = json_object_get (t, "max-ttl"))) {
            if (!json_is_integer (v) || json_integer_value (v) <= 0
                || json_integer_value (v) > 86400 * 366) {
                imp_errf (e, "config: sign.max-ttl must be a positive integer");
                goto error;
            }
            c->max_ttl = (int)json_integer_value (v);
        }
        if ((v = json_object_get (t, "default-type")) && !json_is_string (v)) {
            imp_errf (e, "config: sign.default-type must be a string");
            goto error;
        }
        if ((a = json_object_get (t, "allowed-types"))) {
            if (!json_is_array (a) || json_array_size (a) == 0) {
                imp_errf (
                    e, "config: sign.allowed-types must be a non-empty array");
                goto error;
            }
            c->allow_munge = false;
            json_array_foreach (a, i, v)
            {
                const char *s = json_string_value (v);
                if (s && !strcmp (s, "munge"))
                    c->allow_munge = true;
                else if (s && !strcmp (s, "none"))
                    c->allow_none = true;
                else {
                    imp_errf (e, "config: sign.allowed-types: only munge and "
                                 "none are supported");
                    goto error;
                }
            }
        }
        if (table (t, "munge", &m, e) < 0)
            goto error;
        if (m) {
            if (known (m, "sign.munge", munge, e) < 0)
                goto error;
            if ((v = json_object_get (m, "socket-path"))) {
                const char *s = json_string_value (v);
                if (!s || s[0] != '/') {
                    imp_errf (e, "config: sign.munge.socket-path must be an "
                                 "absolute path");
                    goto error;
                }
                if (!(c->munge_socket = strdup (s))) {
                    imp_errf (e, "out of memory");
                    goto error;
                }
            }
        }
    }
    /* run */
    if (table (o, "run", &t, e) < 0)
        goto error;
    if (t && json_object_size (t) > 0) {
        if (!(c->run = calloc (json_object_size (t), sizeof (*c->run)))) {
            imp_errf (e, "out of memory");
            goto error;
        }
        json_object_foreach (t, key, v)
        {
            struct imp_run *r = &c->run[c->nrun];
            json_t *p;
            char what[80];
            if (!valid_name (key)) {
                imp_errf (e, "config: run.%.64s: not a valid name", key);
                goto error;
            }
            snprintf (what, sizeof (what), "run.%s", key);
            if (!json_is_object (v)) {
                imp_errf (e, "config: %s must be a table", what);
                goto error;
            }
            if (!(r->name = strdup (key))) {
                imp_errf (e, "out of memory");
                goto error;
            }
            c->nrun++;
            if (known (v, what, run, e) < 0
                || strv_get (v, "allowed-users", what, false, &r->users, e) < 0
                || strv_get (v, "allowed-environment", what, false, &r->environ,
                             e)
                       < 0)
                goto error;
            if (!(p = json_object_get (v, "path")) || !json_is_string (p)
                || json_string_value (p)[0] != '/') {
                imp_errf (e, "config: %s.path must be an absolute path", what);
                goto error;
            }
            if (!(r->path = strdup (json_string_value (p)))) {
                imp_errf (e, "out of memory");
                goto error;
            }
        }
    }
    else if (t) {
        ; /* empty run table */
    }
    return 0;
error:
    imp_conf_clear (c);
    return -1;
}

void imp_conf_clear (struct imp_conf *c)
{
    if (c) {
        strv_free (c->exec_users);
        strv_free (c->exec_shells);
        free (c->munge_socket);
        for (size_t i = 0; i < c->nrun; i++) {
            free (c->run[i].name);
            free (c->run[i].path);
            strv_free (c->run[i].users);
            strv_free (c->run[i].environ);
        }
        free (c->run);
        memset (c, 0, sizeof (*c));
    }
}

const struct imp_run *imp_conf_run (const struct imp_conf *c, const char *name)
{
    for (size_t i = 0; i < c->nrun; i++)
        if (!strcmp (c->run[i].name, name))
            return &c->run[i];
    return NULL;
}

static bool owner_ok (const struct stat *st, bool secure, uid_t other)
{
    if (secure)
        return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
    return (st->st_uid == 0 || st->st_uid == other) && !(st->st_mode & S_IWOTH);
}

static const char *suffix (const char *path)
{
    const char *dot = strrchr (path, '.');
    const char *slash = strrchr (path, '/');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

static int load_file (const char *path, bool secure, uid_t other, json_t *all,
                      struct imp_err *e)
{
    const char *ext = suffix (path);
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    ssize_t n;
    json_t *o;
    int fd, rc;

    if (strcmp (ext, "json") && strcmp (ext, "yaml") && strcmp (ext, "yml")) {
        if (!strcmp (ext, "toml"))
            return imp_errf (e, "config: %s: TOML is not supported yet", path);
        return 0; /* other files (README, *.bak) are skipped */
    }
    if ((fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return imp_errf (e, "config: %s: %s", path, strerror (errno));
    if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)) {
        close (fd);
        return imp_errf (e, "config: %s: not a regular file", path);
    }
    if (!owner_ok (&st, secure, other)) {
        close (fd);
        return imp_errf (
            e, "config: %s: must be owned by root and writable by no one else",
            path);
    }
    if (st.st_size > IMP_CONF_FILE_MAX) {
        close (fd);
        return imp_errf (e, "config: %s: larger than %d bytes", path,
                         IMP_CONF_FILE_MAX);
    }
    if (!(buf = malloc (st.st_size + 1))) {
        close (fd);
        return imp_errf (e, "out of memory");
    }
    while (len < (size_t)st.st_size
           && (n = read (fd, buf + len, st.st_size - len)) > 0)
        len += n;
    close (fd);
    buf[len] = '\0';
    o = imp_conf_parse_text (buf, len, ext[0] == 'y', path, e);
    free (buf);
    if (!o)
        return -1;
    rc = imp_conf_merge (all, o, path, e);
    json_decref (o);
    return rc;
}

int imp_conf_load (const char *pattern, bool secure, uid_t other,
                   struct imp_conf *c, struct imp_err *e)
{
    glob_t g;
    json_t *all;
    char *dir;
    struct stat st;
    int rc, nfiles = 0;

    memset (c, 0, sizeof (*c));
    if (!(dir = strdup (pattern)))
        return imp_errf (e, "out of memory");
    rc = lstat (dirname (dir), &st);
    if (rc < 0 || !S_ISDIR (st.st_mode) || !owner_ok (&st, secure, other)) {
        rc = imp_errf (
            e, "config: %s: %s", dir,
            rc < 0 ? strerror (errno)
            : !S_ISDIR (st.st_mode)
                ? "not a directory"
                : "must be owned by root and writable by no one else");
        free (dir);
        return rc;
    }
    free (dir);
    rc = glob (pattern, GLOB_ERR, NULL, &g);
    if (rc == GLOB_NOMATCH)
        return imp_errf (e, "config: no file matches %s", pattern);
    if (rc != 0)
        return imp_errf (e, "config: %s: cannot read", pattern);
    if (!(all = json_object ())) {
        globfree (&g);
        return imp_errf (e, "out of memory");
    }
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *ext = suffix (g.gl_pathv[i]);
        if (load_file (g.gl_pathv[i], secure, other, all, e) < 0) {
            globfree (&g);
            json_decref (all);
            return -1;
        }
        if (!strcmp (ext, "json") || !strcmp (ext, "yaml")
            || !strcmp (ext, "yml"))
            nfiles++;
    }
    globfree (&g);
    if (nfiles == 0) {
        json_decref (all);
        return imp_errf (
            e, "config: no *.json, *.yaml or *.yml file matches %s", pattern);
    }
    rc = imp_conf_from_json (all, c, e);
    json_decref (all);
    return rc;
}
