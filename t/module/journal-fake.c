/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* journal-fake - a broker module that serves <name>.events-journal
 * (PROTOCOLS.md 5.2) from canned events, for the job-list tests.  Load
 * it as the job manager:
 *
 *   flux module load --name=job-manager t/module/.libs/journal-fake.so \
 *       [file=PATH] [synth=N]
 *
 * file=PATH   journal responses, one JSON object per line: the lines up
 *             to a sentinel line {"id":-1,...} are the backlog, the lines
 *             after it are sent as live events right after it (with no
 *             sentinel line, every line is backlog)
 * synth=N     N more inactive jobs in the backlog, each with the events
 *             of a job that ran (submit ... clean), a jobspec and an R
 *
 * Every request gets the backlog (sent in batches, one batch per loop
 * turn), the sentinel {id:-1, events:[]}, the live lines, then whatever
 * is posted later.  Other requests:
 *   <name>.fake-post {id, events, jobspec?, R?}  send to every listener
 *                    and keep it for later ones
 *   <name>.fake-end  end every stream with ENODATA (as an unload does)
 *   <name>.fake-stats -> {listeners:i, backlog:i, live:i}
 * Streams end with ENODATA on <name>.events-journal-cancel {matchtag},
 * are dropped on <name>.disconnect, and end with ENODATA at unload.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "libflux/flux.h"
#include "libflux/list.h"

#define BATCH 512

struct listener {
    struct list_node link;
    struct fake *fake;
    const flux_msg_t *msg;
    size_t next;  /* next backlog entry to send */
    size_t synth; /* next synthetic job to send */
    bool live;
    struct flux_deferred d;
};

struct fake {
    flux_t *h;
    json_t *backlog; /* array of responses */
    json_t *live;    /* array: live lines of the file, then posts */
    size_t nsynth;
    double t0;
    struct list_node listeners;
};

static json_t *entry (double t, const char *name, json_t *context)
{
    json_t *o = json_pack ("{s:f s:s}", "timestamp", t, "name", name);
    if (o && context)
        json_object_set_new (o, "context", context);
    return o;
}

/* The backlog response of synthetic inactive job i. */
static json_t *synth_job (struct fake *fake, size_t i)
{
    double t = fake->t0 + i * 0.001;
    uint64_t id = ((uint64_t)(i + 1) << 24) | 1; /* FLUID-like */
    json_t *events = json_pack (
        "[o o o o o o o o o o]",
        entry (t, "submit",
               json_pack ("{s:i s:i s:i s:i}", "userid", (int)getuid (),
                          "urgency", 16, "flags", 0, "version", 1)),
        entry (t + 0.0001, "validate", NULL),
        entry (t + 0.0002, "depend", NULL),
        entry (t + 0.0003, "priority", json_pack ("{s:i}", "priority", 16)),
        entry (t + 0.0004, "alloc", NULL), entry (t + 0.0005, "start", NULL),
        entry (t + 0.0006, "finish",
               json_pack ("{s:i}", "status", i % 10 == 9 ? 256 : 0)),
        entry (t + 0.0007, "release",
               json_pack ("{s:s s:b}", "ranks", "all", "final", 1)),
        entry (t + 0.0008, "free", NULL), entry (t + 0.0009, "clean", NULL));
    json_t *jobspec
        = json_pack ("{s:i s:[{s:s s:i s:[{s:s s:i}]}] s:[{s:[s] s:s s:{s:i}}] "
                     "s:{s:{s:f s:s}}}",
                     "version", 1, "resources", "type", "slot", "count", 1,
                     "with", "type", "core", "count", 1, "tasks", "command",
                     "synth", "slot", "task", "count", "per_slot", 1,
                     "attributes", "system", "duration", 0.0, "cwd", "/tmp");
    json_t *R = json_pack ("{s:i s:{s:[{s:s s:{s:s}}] s:[s] s:f s:f}}",
                           "version", 1, "execution", "R_lite", "rank", "0",
                           "children", "core", "0", "nodelist", "fakehost",
                           "starttime", t, "expiration", 0.0);

    return json_pack ("{s:I s:o s:o s:o}", "id", (json_int_t)id, "events",
                      events, "jobspec", jobspec, "R", R);
}

static void listener_destroy (struct listener *l)
{
    list_del (&l->link);
    flux_reactor_undefer (&l->d);
    flux_msg_decref (l->msg);
    free (l);
}

static void listener_end (struct listener *l, int errnum)
{
    flux_respond_error (l->fake->h, l->msg, errnum, NULL);
    listener_destroy (l);
}

/* Send one batch of backlog; then the sentinel and the live events. */
static void send_batch (struct flux_deferred *d)
{
    struct listener *l
        = (struct listener *)((char *)d - offsetof (struct listener, d));
    struct fake *fake = l->fake;
    int n = 0;

    while (n < BATCH && l->next < json_array_size (fake->backlog)) {
        flux_respond_pack (fake->h, l->msg, "O",
                           json_array_get (fake->backlog, l->next++));
        n++;
    }
    while (n < BATCH && l->synth < fake->nsynth) {
        json_t *o = synth_job (fake, l->synth++);
        if (o)
            flux_respond_pack (fake->h, l->msg, "o", o);
        n++;
    }
    if (l->next < json_array_size (fake->backlog) || l->synth < fake->nsynth) {
        flux_reactor_defer (flux_get_reactor (fake->h), &l->d);
        return;
    }
    flux_respond_pack (fake->h, l->msg, "{s:i s:[]}", "id", -1, "events");
    for (size_t i = 0; i < json_array_size (fake->live); i++)
        flux_respond_pack (fake->h, l->msg, "O",
                           json_array_get (fake->live, i));
    l->live = true;
}

static void journal_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    struct fake *fake = arg;
    struct listener *l;

    if (flux_request_unpack (msg, NULL, "{}") < 0) {
        flux_respond_error (h, msg, EPROTO, "expected an object");
        return;
    }
    if (!flux_msg_is_streaming (msg)) {
        flux_respond_error (h, msg, EPROTO, "events-journal is streaming");
        return;
    }
    if (!(l = calloc (1, sizeof (*l)))) {
        flux_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    l->fake = fake;
    l->msg = flux_msg_incref (msg);
    flux_deferred_init (&l->d, send_batch);
    list_add_tail (&fake->listeners, &l->link);
    flux_reactor_defer (flux_get_reactor (h), &l->d);
}

static void cancel_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct fake *fake = arg;
    struct list_node *pos, *tmp;
    int matchtag;
    uint32_t tag;

    if (flux_request_unpack (msg, NULL, "{s:i}", "matchtag", &matchtag) < 0)
        return;
    list_for_each_safe (pos, tmp, &fake->listeners)
    {
        struct listener *l = list_entry (pos, struct listener, link);
        if (flux_msg_route_match_first (l->msg, msg)
            && flux_msg_get_matchtag (l->msg, &tag) == 0
            && tag == (uint32_t)matchtag)
            listener_end (l, ENODATA);
    }
}

static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct fake *fake = arg;
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &fake->listeners)
    {
        struct listener *l = list_entry (pos, struct listener, link);
        if (flux_msg_route_match_first (l->msg, msg))
            listener_destroy (l);
    }
}

static void post_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct fake *fake = arg;
    struct list_node *pos, *tmp;
    json_t *o;

    if (flux_request_unpack (msg, NULL, "o", &o) < 0) {
        flux_respond_error (h, msg, EPROTO, "expected a journal response");
        return;
    }
    json_array_append (fake->live, o);
    list_for_each_safe (pos, tmp, &fake->listeners)
    {
        struct listener *l = list_entry (pos, struct listener, link);
        if (l->live)
            flux_respond_pack (h, l->msg, "O", o);
    }
    flux_respond (h, msg, NULL);
}

static void end_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
    struct fake *fake = arg;
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &fake->listeners)
        listener_end (list_entry (pos, struct listener, link), ENODATA);
    flux_respond (h, msg, NULL);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct fake *fake = arg;
    struct list_node *pos, *tmp;
    int n = 0;

    list_for_each_safe (pos, tmp, &fake->listeners) n++;
    flux_respond_pack (h, msg, "{s:i s:i s:i}", "listeners", n, "backlog",
                       (int)(json_array_size (fake->backlog) + fake->nsynth),
                       "live", (int)json_array_size (fake->live));
}

static int load_file (struct fake *fake, const char *path)
{
    FILE *fp = fopen (path, "r");
    char *line = NULL;
    size_t size = 0;
    bool after_sentinel = false;
    json_int_t id;

    if (!fp)
        return -1;
    while (getline (&line, &size, fp) > 0) {
        json_t *o;
        if (line[strspn (line, " \t\n")] == '\0')
            continue;
        if (!(o = json_loads (line, 0, NULL))) {
            fprintf (stderr, "journal-fake: %s: bad line: %s", path, line);
            free (line);
            fclose (fp);
            errno = EINVAL;
            return -1;
        }
        if (json_unpack (o, "{s:I}", "id", &id) == 0 && id == -1) {
            after_sentinel = true;
            json_decref (o);
            continue;
        }
        json_array_append_new (after_sentinel ? fake->live : fake->backlog, o);
    }
    free (line);
    fclose (fp);
    return 0;
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct fake fake = {.h = h};
    const char *name = flux_aux_get (h, "flux::name");
    char topics[6][128];
    static const char *suffix[] = {"events-journal", "events-journal-cancel",
                                   "disconnect",     "fake-post",
                                   "fake-end",       "fake-stats"};
    flux_msg_handler_f cbs[]
        = {journal_cb, cancel_cb, disconnect_cb, post_cb, end_cb, stats_cb};
    struct flux_msg_handler_spec htab[7];
    flux_msg_handler_t **handlers = NULL;
    struct list_node *pos, *tmp;
    int rc = -1;

    list_init (&fake.listeners);
    fake.backlog = json_array ();
    fake.live = json_array ();
    fake.t0 = time (NULL) - 86400.;
    for (int i = 0; i < argc; i++) {
        if (!strncmp (argv[i], "file=", 5)) {
            if (load_file (&fake, argv[i] + 5) < 0)
                goto done;
        }
        else if (!strncmp (argv[i], "synth=", 6))
            fake.nsynth = strtoul (argv[i] + 6, NULL, 10);
        else {
            errno = EINVAL;
            goto done;
        }
    }
    for (int i = 0; i < 6; i++) {
        snprintf (topics[i], sizeof (topics[i]), "%s.%s", name, suffix[i]);
        htab[i] = (struct flux_msg_handler_spec){FLUX_MSGTYPE_REQUEST,
                                                 topics[i], cbs[i], 0};
    }
    htab[6] = (struct flux_msg_handler_spec)FLUX_MSGHANDLER_TABLE_END;
    if (flux_msg_handler_addvec (h, htab, &fake, &handlers) < 0)
        goto done;
    flux_reactor_run (flux_get_reactor (h), 0);
    rc = 0;
done:
    list_for_each_safe (pos, tmp, &fake.listeners)
        listener_end (list_entry (pos, struct listener, link), ENODATA);
    flux_msg_handler_delvec (handlers);
    json_decref (fake.backlog);
    json_decref (fake.live);
    return rc;
}
