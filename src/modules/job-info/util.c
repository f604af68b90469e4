/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* util.c - see util.h */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libeventlog/eventlog.h"
#include "util.h"

int info_submit_userid (const char *eventlog, uint32_t *userid)
{
    const char *nl;
    char *line;
    json_t *entry = NULL, *context;
    const char *name;
    json_int_t uid;
    int rc = -1;

    if (!eventlog || !(nl = strchr (eventlog, '\n')))
        goto proto;
    if (!(line = strndup (eventlog, nl - eventlog + 1)))
        return -1;
    entry = eventlog_entry_decode (line);
    free (line);
    if (!entry || eventlog_entry_parse (entry, NULL, &name, &context) < 0
        || strcmp (name, "submit") != 0 || !context
        || json_unpack (context, "{s:I}", "userid", &uid) < 0 || uid < 0
        || uid > UINT32_MAX)
        goto proto;
    *userid = (uint32_t)uid;
    rc = 0;
    goto done;
proto:
    errno = EPROTO;
done:
    json_decref (entry);
    return rc;
}

int info_allow (const flux_msg_t *msg, const char *eventlog)
{
    struct flux_msg_cred cred;
    uint32_t owner;

    if (flux_msg_get_cred (msg, &cred) < 0)
        return -1;
    if (cred.rolemask & FLUX_ROLE_OWNER)
        return 0;
    if (info_submit_userid (eventlog, &owner) < 0)
        return -1;
    if (cred.userid != owner || cred.userid == FLUX_USERID_UNKNOWN) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

int info_path_set (json_t *o, const char *path, json_t *value)
{
    char *cpy, *tok, *next, *save = NULL;
    int rc = -1;

    if (!json_is_object (o) || !path || !*path || path[0] == '.'
        || path[strlen (path) - 1] == '.' || strstr (path, "..")) {
        errno = EINVAL;
        return -1;
    }
    if (!(cpy = strdup (path)))
        return -1;
    tok = strtok_r (cpy, ".", &save);
    while (tok) {
        json_t *child;
        if (!(next = strtok_r (NULL, ".", &save))) {
            if (json_object_set (o, tok, value) < 0)
                errno = ENOMEM;
            else
                rc = 0;
            break;
        }
        if (!(child = json_object_get (o, tok))) {
            if (!(child = json_object ())
                || json_object_set_new (o, tok, child) < 0) {
                errno = ENOMEM;
                break;
            }
        }
        else if (!json_is_object (child)) {
            errno = EINVAL;
            break;
        }
        o = child;
        tok = next;
    }
    free (cpy);
    return rc;
}

/* Call cb for each event called name in the eventlog text. */
static int foreach_event (const char *eventlog, const char *name,
                          int (*cb) (json_t *target, json_t *context),
                          json_t *target)
{
    json_t *log, *entry, *context;
    const char *n;
    size_t i;
    int count = 0;

    if (!(log = eventlog_decode (eventlog)))
        return -1;
    json_array_foreach (log, i, entry)
    {
        if (eventlog_entry_parse (entry, NULL, &n, &context) == 0
            && !strcmp (n, name) && json_is_object (context)) {
            if (cb (target, context) < 0) {
                json_decref (log);
                return -1;
            }
            count++;
        }
    }
    json_decref (log);
    return count;
}

static int jobspec_update (json_t *jobspec, json_t *context)
{
    const char *key;
    json_t *value;

    json_object_foreach (context, key, value)
    {
        if (info_path_set (jobspec, key, value) < 0 && errno == ENOMEM)
            return -1; /* a key that cannot apply is skipped */
    }
    return 0;
}

static int R_update (json_t *R, json_t *context)
{
    json_t *exp = json_object_get (context, "expiration");
    json_t *execution = json_object_get (R, "execution");

    if (json_is_number (exp) && json_is_object (execution)
        && json_object_set (execution, "expiration", exp) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

int info_apply_jobspec_updates (json_t *jobspec, const char *eventlog)
{
    return foreach_event (eventlog, "jobspec-update", jobspec_update, jobspec);
}

int info_apply_R_updates (json_t *R, const char *eventlog)
{
    return foreach_event (eventlog, "resource-update", R_update, R);
}

void info_lines_init (struct info_lines *l)
{
    memset (l, 0, sizeof (*l));
}

void info_lines_free (struct info_lines *l)
{
    textbuf_free (&l->t);
    info_lines_init (l);
}

int info_lines_feed (struct info_lines *l, const char *data, size_t len)
{
    if (l->pos > 0) { /* drop what was consumed */
        memmove (l->t.data, l->t.data + l->pos, l->t.len - l->pos);
        l->t.len -= l->pos;
        l->pos = 0;
    }
    return textbuf_append (&l->t, data, len);
}

const char *info_lines_next (struct info_lines *l, size_t *len)
{
    char *start, *nl;

    if (l->pos >= l->t.len)
        return NULL;
    start = l->t.data + l->pos;
    if (!(nl = memchr (start, '\n', l->t.len - l->pos)))
        return NULL;
    *len = nl - start + 1;
    l->pos += *len;
    return start;
}

const char *info_line_name (const char *line, size_t len, char *buf,
                            size_t size)
{
    char *cpy;
    json_t *entry;
    const char *name, *result = NULL;

    if (!(cpy = strndup (line, len)))
        return NULL;
    if ((entry = eventlog_entry_decode (cpy))
        && eventlog_entry_parse (entry, NULL, &name, NULL) == 0
        && strlen (name) < size) {
        strcpy (buf, name);
        result = buf;
    }
    json_decref (entry);
    free (cpy);
    return result;
}
