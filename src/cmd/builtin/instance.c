/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* instance.c - jobspec and URI of a Flux instance run as a job
 * (instance.h). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libeventlog/eventlog.h"

#include "cmdutil.h"
#include "instance.h"

#define FLAG_INITIAL_SENTINEL 2

json_t *instance_build_jobspec (int argc, char **argv, struct submit_opts *o)
{
    int nnodes = o->nnodes ? o->nnodes : 1;
    int ntasks = o->ntasks ? o->ntasks : nnodes;
    char **cmd = calloc (argc + o->nbroker_opts + 3, sizeof (char *));
    struct submit_opts so = *o;
    json_t *js;
    int n = 0;

    if (!cmd)
        cmd_die ("out of memory");
    if (o->nnodes > 0 && o->ntasks > 0 && o->nnodes > o->ntasks)
        cmd_usage_error ("--nodes=%d is more than --ntasks=%d", o->nnodes,
                         o->ntasks);
    cmd[n++] = "flux";
    cmd[n++] = "broker";
    for (int i = 0; i < o->nbroker_opts; i++)
        cmd[n++] = o->broker_opts[i];
    for (int i = 0; i < argc; i++)
        cmd[n++] = argv[i];
    so.nnodes = nnodes;
    so.ntasks = nnodes; /* one broker per node */
    so.cores = o->cores * ((ntasks + nnodes - 1) / nnodes);
    js = submit_build_jobspec (n, cmd, &so);
    free (cmd);
    return js;
}

/* Cancel a streaming watch and drain it to its end. */
static void watch_cancel (flux_t *h, flux_future_t *f)
{
    flux_future_t *cf
        = flux_rpc_pack (h, "job-info.eventlog-watch-cancel", FLUX_NODEID_ANY,
                         FLUX_RPC_NORESPONSE, "{s:i}", "matchtag",
                         (int)flux_rpc_get_matchtag (f));
    flux_future_destroy (cf);
    while (flux_future_wait_for (f, 10.) == 0 && flux_rpc_get (f, NULL) == 0)
        flux_future_reset (f);
}

char *instance_job_uri (flux_t *h, flux_jobid_t id, bool wait,
                        flux_error_t *error)
{
    char idstr[64];
    flux_future_t *f;
    char *uri = NULL;
    bool running = false;

    (void)flux_job_id_encode (id, "f58", idstr, sizeof (idstr));
    if (!(f = flux_rpc_pack (h, "job-info.eventlog-watch", FLUX_NODEID_ANY,
                             FLUX_RPC_STREAMING, "{s:I s:s s:i}", "id",
                             (json_int_t)id, "path", "eventlog", "flags",
                             wait ? 0 : FLAG_INITIAL_SENTINEL))) {
        errprintf (error, "job-info.eventlog-watch: %s", strerror (errno));
        return NULL;
    }
    for (;;) {
        const char *payload = NULL, *line = NULL, *name, *u;
        json_t *entry, *context = NULL;

        if (flux_rpc_get (f, &payload) < 0) {
            int e = errno;
            if (e == ENODATA)
                errprintf (error, "job %s has ended", idstr);
            else if (e == ENOENT)
                errprintf (error, "job %s not found", idstr);
            else
                errprintf (error, "job %s: %s", idstr, future_strerror (f, e));
            flux_future_destroy (f);
            return NULL;
        }
        if (!payload) { /* the sentinel: every event so far is read */
            errprintf (error,
                       running ? "job %s has no URI (is it a Flux instance?)"
                               : "job %s is not running",
                       idstr);
            break;
        }
        if (flux_rpc_get_unpack (f, "{s:s}", "event", &line) < 0) {
            errprintf (error, "job %s: malformed eventlog-watch response",
                       idstr);
            break;
        }
        if (!(entry = eventlog_entry_decode (line))
            || eventlog_entry_parse (entry, NULL, &name, &context) < 0) {
            json_decref (entry);
            errprintf (error, "job %s: bad eventlog entry", idstr);
            break;
        }
        if (!strcmp (name, "alloc"))
            running = true;
        if (!strcmp (name, "memo") && context
            && json_unpack (context, "{s:s}", "uri", &u) == 0) {
            uri = strdup (u);
            json_decref (entry);
            if (!uri)
                errprintf (error, "out of memory");
            break;
        }
        if (!strcmp (name, "finish") || !strcmp (name, "clean")
            || (!strcmp (name, "exception") && context
                && json_integer_value (json_object_get (context, "severity"))
                       == 0)) {
            errprintf (error, "job %s has ended", idstr);
            json_decref (entry);
            break;
        }
        json_decref (entry);
        flux_future_reset (f);
    }
    watch_cancel (h, f);
    flux_future_destroy (f);
    return uri;
}

char *instance_resolve (flux_t *h, const char *target, bool wait,
                        flux_error_t *error)
{
    char *path, *tok, *save = NULL, *uri = NULL;
    flux_t *cur = h;

    if (strstr (target, "://"))
        return strdup (target);
    if (!(path = strdup (target))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    for (tok = strtok_r (path, "/", &save); tok;
         tok = strtok_r (NULL, "/", &save)) {
        flux_jobid_t id;
        char *local;

        if (!strncmp (tok, "jobid:", 6))
            tok += 6;
        if (flux_job_id_parse (tok, &id) < 0) {
            errprintf (error, "%s: not a job id", tok);
            goto error;
        }
        if (uri) {
            if (!(local = instance_uri_local (uri))) {
                errprintf (error, "out of memory");
                goto error;
            }
            if (cur != h)
                flux_close (cur);
            cur = flux_open (local, 0);
            if (!cur) {
                errprintf (error, "%s: %s", local, strerror (errno));
                free (local);
                goto error;
            }
            free (local);
            free (uri);
        }
        if (!(uri = instance_job_uri (cur, id, wait, error)))
            goto error;
    }
    if (!uri)
        errprintf (error, "%s: empty job id path", target);
    if (cur != h)
        flux_close (cur);
    free (path);
    return uri;
error:
    if (cur != h)
        flux_close (cur);
    free (path);
    free (uri);
    return NULL;
}

char *instance_uri_local (const char *uri)
{
    char host[256], *cpy, *h, *slash, *at, *out = NULL;
    size_t len;

    if (strncmp (uri, "ssh://", 6) != 0 || !(cpy = strdup (uri)))
        return strdup (uri);
    h = cpy + 6;
    if (!(slash = strchr (h, '/'))) {
        free (cpy);
        return strdup (uri);
    }
    *slash = '\0';
    if (gethostname (host, sizeof (host)) < 0)
        host[0] = '\0';
    host[sizeof (host) - 1] = '\0';
    if ((at = strchr (h, '@'))) /* [user@]host[:port] */
        h = at + 1;
    len = strcspn (h, ":");
    if ((strlen (host) == len && !strncmp (h, host, len))
        || (len == 9 && !strncmp (h, "localhost", 9))) {
        *slash = '/';
        if (asprintf (&out, "local://%s", slash) < 0)
            out = NULL;
    }
    else
        out = strdup (uri);
    free (cpy);
    return out;
}
