/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* submit_attrs.c - environment rules, --setattr, --dependency and {cc}
 * substitution for `flux submit` (see submit_attrs.h).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "libflux/base64.h"
#include "libutil/strsubst.h"
#include "libutil/utf8.h"
#include "submit_attrs.h"

static int env_copy_matching (json_t *env, char **envp, const char *pattern,
                              flux_error_t *error)
{
    for (int i = 0; envp && envp[i]; i++) {
        const char *eq = strchr (envp[i], '=');
        char name[1024];
        size_t n;

        if (!eq || (n = eq - envp[i]) == 0 || n >= sizeof (name))
            continue;
        memcpy (name, envp[i], n);
        name[n] = '\0';
        if (fnmatch (pattern, name, 0) == 0
            && json_object_set_new (env, name, json_string (eq + 1)) < 0)
            return errprintf (error,
                              "environment variable %s is not valid "
                              "UTF-8",
                              name);
    }
    return 0;
}

/* The value of variable name (len bytes): the job's environment as built
 * so far, else envp.  NULL if neither has it. */
static const char *env_lookup (json_t *env, char **envp, const char *name,
                               size_t len)
{
    char key[1024];
    const char *v;

    if (len >= sizeof (key))
        return NULL;
    memcpy (key, name, len);
    key[len] = '\0';
    if ((v = json_string_value (json_object_get (env, key))))
        return v;
    for (int i = 0; envp && envp[i]; i++)
        if (!strncmp (envp[i], key, len) && envp[i][len] == '=')
            return envp[i] + len + 1;
    return NULL;
}

static size_t name_len (const char *s)
{
    size_t n = 0;

    while ((s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= 'a' && s[n] <= 'z')
           || s[n] == '_' || (n > 0 && s[n] >= '0' && s[n] <= '9'))
        n++;
    return n;
}

/* VALUE of a NAME=VALUE rule with $NAME and ${NAME} replaced, $$ a $ (as
 * flux-core's --env).  NULL with error. */
static char *env_expand (json_t *env, char **envp, const char *rule,
                         const char *value, flux_error_t *error)
{
    size_t cap = strlen (value) + 1, len = 0;
    char *out = malloc (cap);

    if (!out)
        goto nomem;
    for (const char *p = value; *p;) {
        const char *add = p;
        size_t n = 1;

        if (p[0] != '$')
            p++;
        else if (p[1] == '$')
            p += 2; /* $$: one $ */
        else {
            bool brace = p[1] == '{';
            const char *name = p + 1 + brace;
            size_t nlen = name_len (name);
            if (nlen == 0 || (brace && name[nlen] != '}')) {
                errprintf (error,
                           "--env=%s: a $ must start $NAME, ${NAME} or $$",
                           rule);
                goto error;
            }
            if (!(add = env_lookup (env, envp, name, nlen))) {
                errprintf (error, "--env=%s: variable %.*s is not set", rule,
                           (int)nlen, name);
                goto error;
            }
            n = strlen (add);
            p = name + nlen + brace;
        }
        if (len + n + 1 > cap) {
            char *o;
            while (len + n + 1 > cap)
                cap *= 2;
            if (!(o = realloc (out, cap)))
                goto nomem;
            out = o;
        }
        memcpy (out + len, add, n);
        len += n;
    }
    out[len] = '\0';
    return out;
nomem:
    errprintf (error, "out of memory");
error:
    free (out);
    return NULL;
}

static int env_rule (json_t *env, char **envp, const char *rule, int depth,
                     flux_error_t *error);

/* ^FILE: the rules of FILE, one per line (blank lines and # comments
 * skipped), nested at most 8 deep. */
static int env_file (json_t *env, char **envp, const char *path, int depth,
                     flux_error_t *error)
{
    FILE *fp;
    char *line = NULL;
    size_t size = 0;
    ssize_t n;
    int rc = 0;

    if (depth >= 8)
        return errprintf (error, "--env-file=%s: nested too deep", path);
    if (!(fp = fopen (path, "r")))
        return errprintf (error, "--env-file=%s: %s", path, strerror (errno));
    while (rc == 0 && (n = getline (&line, &size, fp)) >= 0) {
        char *r = line, *end = line + n;
        while (end > r
               && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        while (*r == ' ' || *r == '\t')
            r++;
        if (*r && *r != '#')
            rc = env_rule (env, envp, r, depth + 1, error);
    }
    free (line);
    fclose (fp);
    return rc;
}

static int env_rule (json_t *env, char **envp, const char *rule, int depth,
                     flux_error_t *error)
{
    const char *eq = strchr (rule, '=');

    if (rule[0] == '^')
        return env_file (env, envp, rule + 1, depth, error);
    if (rule[0] == '-') {
        const char *key;
        json_t *v;
        void *tmp;
        if (rule[1] == '\0')
            return errprintf (error, "--env=-: missing pattern");
        json_object_foreach_safe (env, tmp, key, v)
        {
            if (fnmatch (rule + 1, key, 0) == 0)
                json_object_del (env, key);
        }
        return 0;
    }
    if (eq) {
        char *name = strndup (rule, eq - rule);
        char *value = NULL;
        int rc = -1;
        if (name && name[0]
            && (value = env_expand (env, envp, rule, eq + 1, error)))
            rc = json_object_set_new (env, name, json_string (value));
        else if (name && name[0])
            rc = -2; /* error set */
        free (name);
        free (value);
        if (rc == -1)
            return errprintf (error, "--env=%s: bad NAME=VALUE", rule);
        return rc < 0 ? -1 : 0;
    }
    if (rule[0] == '\0')
        return errprintf (error, "--env: empty rule");
    return env_copy_matching (env, envp, rule, error);
}

json_t *submit_env_create (char **envp, char **rules, int nrules,
                           flux_error_t *error)
{
    json_t *env = json_object ();

    if (!env) {
        errprintf (error, "out of memory");
        return NULL;
    }
    if (env_copy_matching (env, envp, "*", error) < 0)
        goto error;
    for (int i = 0; i < nrules; i++)
        if (env_rule (env, envp, rules[i], 0, error) < 0)
            goto error;
    return env;
error:
    json_decref (env);
    return NULL;
}

/* Walk/create objects along the dotted path in o; return the object
 * that should hold the last component, and point *last at it.
 */
static json_t *walk (json_t *o, char *path, char **last, flux_error_t *error)
{
    char *dot;

    while ((dot = strchr (path, '.'))) {
        json_t *next;
        *dot = '\0';
        if (path[0] == '\0')
            return errprintf (error, "empty key component"), NULL;
        if (!(next = json_object_get (o, path))) {
            if (json_object_set_new (o, path, (next = json_object ())) < 0)
                return errprintf (error, "out of memory"), NULL;
        }
        else if (!json_is_object (next))
            return errprintf (error, "%s is not an object", path), NULL;
        o = next;
        path = dot + 1;
    }
    if (path[0] == '\0')
        return errprintf (error, "empty key component"), NULL;
    *last = path;
    return o;
}

static json_t *parse_value (const char *val)
{
    json_t *v;

    if (!val)
        return json_integer (1);
    if ((v = json_loads (val, JSON_DECODE_ANY, NULL)))
        return v;
    return json_string (val);
}

/* Set root.PATH to v (stolen, may be NULL: not valid UTF-8). */
static int set_path_json (json_t *root, const char *path, json_t *v,
                          flux_error_t *error)
{
    char *cpy = strdup (path), *last;
    json_t *parent;
    int rc = -1;

    if (!cpy) {
        json_decref (v);
        return errprintf (error, "out of memory");
    }
    if (!(parent = walk (root, cpy, &last, error)))
        goto done;
    if (!v) {
        errprintf (error, "%s: value is not valid UTF-8", path);
        goto done;
    }
    if (json_object_set (parent, last, v) < 0) {
        errprintf (error, "%s: cannot set", path);
        goto done;
    }
    rc = 0;
done:
    json_decref (v);
    free (cpy);
    return rc;
}

static int set_path (json_t *root, const char *path, const char *val,
                     flux_error_t *error)
{
    return set_path_json (root, path, parse_value (val), error);
}

static json_t *attributes (json_t *jobspec, flux_error_t *error)
{
    json_t *a = json_object_get (jobspec, "attributes");

    if (!a
        && json_object_set_new (jobspec, "attributes", a = json_object ()) < 0)
        return errprintf (error, "out of memory"), NULL;
    return a;
}

int submit_setattr (json_t *jobspec, const char *key, const char *val,
                    flux_error_t *error)
{
    char path[1024];
    flux_error_t e;
    json_t *a;

    if (!key || !key[0])
        return errprintf (error, "--setattr: missing KEY");
    if (!(a = attributes (jobspec, error)))
        return -1;
    if (key[0] == '.')
        snprintf (path, sizeof (path), "%s", key + 1);
    else if (!strncmp (key, "system.", 7) || !strncmp (key, "user.", 5))
        snprintf (path, sizeof (path), "%s", key);
    else
        snprintf (path, sizeof (path), "system.%s", key);
    if (set_path (a, path, val, &e) < 0)
        return errprintf (error, "--setattr=%s: %s", key, e.text);
    return 0;
}

int submit_setattr_under (json_t *jobspec, const char *path, const char *key,
                          const char *val, flux_error_t *error)
{
    char full[1024];
    json_t *a;

    if (!key || !key[0])
        return errprintf (error, "missing KEY");
    if (!(a = attributes (jobspec, error)))
        return -1;
    snprintf (full, sizeof (full), "system.%s.%s", path, key);
    return set_path (a, full, val, error);
}

int submit_setattr_json (json_t *jobspec, const char *path, json_t *value,
                         flux_error_t *error)
{
    char full[1024];
    json_t *a;

    if (!(a = attributes (jobspec, error))) {
        json_decref (value);
        return -1;
    }
    snprintf (full, sizeof (full), "system.%s", path);
    return set_path_json (a, full, value, error);
}

int submit_add_dependency (json_t *jobspec, const char *uri,
                           flux_error_t *error)
{
    char *cpy = strdup (uri), *colon, *query, *save = NULL, *kv;
    json_t *dep = NULL, *a, *sys, *deps;
    int rc = -1;

    if (!cpy)
        return errprintf (error, "out of memory");
    if (!(colon = strchr (cpy, ':')) || colon == cpy || colon[1] == '\0') {
        errprintf (error, "--dependency=%s: expected SCHEME:VALUE", uri);
        goto done;
    }
    *colon = '\0';
    if ((query = strchr (colon + 1, '?')))
        *query++ = '\0';
    if (colon[1] == '\0') {
        errprintf (error, "--dependency=%s: empty VALUE", uri);
        goto done;
    }
    if (!(dep = json_pack ("{s:s s:s}", "scheme", cpy, "value", colon + 1))) {
        errprintf (error, "--dependency=%s: not valid UTF-8", uri);
        goto done;
    }
    for (kv = query ? strtok_r (query, "&;", &save) : NULL; kv;
         kv = strtok_r (NULL, "&;", &save)) {
        char *eq = strchr (kv, '=');
        if (!eq || eq == kv || !strcmp (kv, "scheme")
            || !strcmp (kv, "value")) {
            errprintf (error, "--dependency=%s: bad option '%s'", uri, kv);
            goto done;
        }
        *eq = '\0';
        if (json_object_set_new (dep, kv, json_string (eq + 1)) < 0) {
            errprintf (error, "--dependency=%s: bad option", uri);
            goto done;
        }
    }
    if (!(a = attributes (jobspec, error)))
        goto done;
    if (!(sys = json_object_get (a, "system"))
        && json_object_set_new (a, "system", sys = json_object ()) < 0)
        goto nomem;
    if (!(deps = json_object_get (sys, "dependencies"))
        && json_object_set_new (sys, "dependencies", deps = json_array ()) < 0)
        goto nomem;
    if (!json_is_array (deps) || json_array_append (deps, dep) < 0)
        goto nomem;
    rc = 0;
    goto done;
nomem:
    errprintf (error, "--dependency=%s: cannot add", uri);
done:
    json_decref (dep);
    free (cpy);
    return rc;
}

/* The command array of the jobspec's first task (borrowed), or NULL. */
static json_t *command_of (json_t *jobspec)
{
    return json_object_get (
        json_array_get (json_object_get (jobspec, "tasks"), 0), "command");
}

bool submit_has_cc (json_t *jobspec)
{
    json_t *arg;
    size_t i;

    json_array_foreach (command_of (jobspec), i, arg)
    {
        const char *s = json_string_value (arg);
        if (s && strstr (s, "{cc}"))
            return true;
    }
    return false;
}

int submit_subst_cc (json_t *jobspec, unsigned int id)
{
    json_t *cmd = command_of (jobspec);
    char num[32];
    json_t *arg;
    size_t i;

    snprintf (num, sizeof (num), "%u", id);
    json_array_foreach (cmd, i, arg)
    {
        const char *s = json_string_value (arg);
        char *r;
        if (!s || !strstr (s, "{cc}"))
            continue;
        if (!(r = strsubst (s, "{cc}", num)))
            return -1;
        json_array_set_new (cmd, i, json_string (r));
        free (r);
    }
    return 0;
}

json_t *submit_file_entry (const char *data, size_t len, int mode)
{
    char *b;
    json_t *o;

    if (utf8_valid (data, len) && !memchr (data, '\0', len))
        return json_pack ("{s:s% s:i s:s}", "data", data, len, "mode", mode,
                          "encoding", "utf-8");
    if (!(b = malloc (base64_encoded_size (len) + 1))
        || base64_encode (b, base64_encoded_size (len) + 1, data, len) < 0) {
        free (b);
        return NULL;
    }
    o = json_pack ("{s:s s:i s:s}", "data", b, "mode", mode, "encoding",
                   "base64");
    free (b);
    return o;
}

/* The contents of path, at most max bytes, in *buf (*len bytes), and
 * its permission bits in *mode. */
static int read_file (const char *path, size_t max, char **buf, size_t *len,
                      int *mode, flux_error_t *error)
{
    struct stat sb;
    /* non-blocking: opening a FIFO would wait for a writer */
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    size_t n = 0;
    char *b;

    if (fd < 0 || fstat (fd, &sb) < 0) {
        errprintf (error, "--add-file: %s: %s", path, strerror (errno));
        goto error;
    }
    if (!S_ISREG (sb.st_mode) || (size_t)sb.st_size > max) {
        errprintf (error, "--add-file: %s: %s", path,
                   S_ISREG (sb.st_mode) ? "too large for a jobspec (10 MB)"
                                        : "not a regular file");
        goto error;
    }
    if (!(b = malloc ((size_t)sb.st_size + 1))) {
        errprintf (error, "out of memory");
        goto error;
    }
    while (n < (size_t)sb.st_size) {
        ssize_t r = read (fd, b + n, (size_t)sb.st_size - n);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            errprintf (error, "--add-file: %s: %s", path,
                       r < 0 ? strerror (errno) : "it shrank while read");
            free (b);
            goto error;
        }
        n += (size_t)r;
    }
    close (fd);
    *buf = b;
    *len = n;
    *mode = (int)(sb.st_mode & 0777);
    return 0;
error:
    if (fd >= 0)
        close (fd);
    return -1;
}

static json_t *files_of (json_t *jobspec)
{
    return json_object_get (
        json_object_get (json_object_get (jobspec, "attributes"), "system"),
        "files");
}

int submit_add_file (json_t *jobspec, const char *spec, flux_error_t *error)
{
    const char *eq = strchr (spec, '=');
    const char *arg = eq ? eq + 1 : spec;
    char name[256], *data = NULL;
    size_t len;
    int mode = 0600;
    json_t *entry, *files;

    if (eq) {
        if ((size_t)(eq - spec) >= sizeof (name))
            return errprintf (error, "--add-file=%s: the name is too long",
                              spec);
        memcpy (name, spec, eq - spec);
        name[eq - spec] = '\0';
    }
    else {
        const char *slash = strrchr (spec, '/');
        snprintf (name, sizeof (name), "%s", slash ? slash + 1 : spec);
    }
    if (!name[0] || strchr (name, '/') || !strcmp (name, ".")
        || !strcmp (name, ".."))
        return errprintf (error, "--add-file=%s: '%s' is not a file name", spec,
                          name);
    if (!strcmp (name, "script") || !strcmp (name, "conf.json"))
        return errprintf (error,
                          "--add-file=%s: the name %s is reserved "
                          "(RFC 14)",
                          spec, name);
    if (eq && strchr (arg, '\n'))
        len = strlen (arg); /* the data itself */
    else if (read_file (arg, 10 * 1024 * 1024, &data, &len, &mode, error) < 0)
        return -1;
    entry = submit_file_entry (data ? data : arg, len, mode);
    free (data);
    if (!entry)
        return errprintf (error, "out of memory");
    /* attributes.system.files made if need be (the name may hold dots: not
     * a dotted path) */
    if (!(files = files_of (jobspec))
        && (submit_setattr_json (jobspec, "files", json_object (), error) < 0
            || !(files = files_of (jobspec)))) {
        json_decref (entry);
        return -1;
    }
    if (!json_is_object (files)) {
        json_decref (entry);
        return errprintf (error, "attributes.system.files is not an object");
    }
    if (json_object_get (files, name)) {
        json_decref (entry);
        return errprintf (error, "--add-file=%s: %s is added twice", spec,
                          name);
    }
    if (json_object_set_new (files, name, entry) < 0)
        return errprintf (error, "out of memory");
    return 0;
}
