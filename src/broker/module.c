/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* module.c - load a broker module DSO and run it in its own thread (or
 * as a task of the module group's, module.h).
 * The broker side lives on the broker's loop (a uv_poll on the pipe's
 * eventfd); the module side is the thread function module_thread().
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "libflux/coop.h"
#include "libflux/msgpipe.h"
#include "libutil/modname.h"
#include "methods.h"
#include "module.h"

#define RECV_BATCH 64

typedef int (*mod_main_f) (flux_t *h, int argc, char **argv);

struct module {
    char *name;
    char *path;
    char uuid[40];
    void *dso;
    mod_main_f mod_main;
    json_t *welcome; /* the welcome request payload */

    struct flux_msgpipe *pipe; /* broker end 0, module end 1 */
    pthread_t thread;
    int thread_started;
    bool grouped;   /* runs as a task of the module group */
    bool task_done; /* ... and that task has returned (group.lock) */

    uv_poll_t *poll;
    /* seconds (uv_hrtime) of the last message from the module: set by
     * the broker's thread, and by the module's on the fast path */
    _Atomic double last_seen;
    atomic_int slow_pending; /* sent to the broker's thread, not routed */
    module_fast_f fast_cb;
    uint32_t owner;

    int status;
    int errnum;
    /* abandoned: the broker no longer waits for the thread (module_abandon);
     * zombie: module_destroy() was called before the thread had exited,
     * which frees everything once it reports EXITED; thread_exited: it
     * has (its last status message has arrived). */
    atomic_bool abandoned;
    bool zombie;
    bool thread_exited;
    module_recv_f recv_cb;
    module_status_f status_cb;
    void *arg;
    void *aux;
};

char *module_find (const char *searchpath, const char *name)
{
    char *copy, *dir, *save = NULL, *result = NULL;

    if (!searchpath || !name || !(copy = strdup (searchpath)))
        return NULL;
    for (dir = strtok_r (copy, ":", &save); dir;
         dir = strtok_r (NULL, ":", &save)) {
        char path[4096];
        snprintf (path, sizeof (path), "%s/%s.so", dir, name);
        if (access (path, R_OK) == 0) {
            result = strdup (path);
            break;
        }
    }
    free (copy);
    if (!result)
        errno = ENOENT;
    return result;
}

/* ---- module thread (the loader) ---- */

static void status_send (flux_t *h, int status, int errnum, bool wait)
{
    flux_future_t *f;

    f = flux_rpc_pack (h, "module.status", FLUX_NODEID_ANY,
                       wait ? 0 : FLUX_RPC_NORESPONSE, "{s:i s:i}", "status",
                       status, "errnum", errnum);
    if (f && wait)
        (void)flux_future_get (f, NULL);
    flux_future_destroy (f);
}

static void running_cb (uv_prepare_t *w)
{
    flux_t *h = w->data;
    status_send (h, MODSTATE_RUNNING, 0, false);
    uv_prepare_stop (w);
}

static void shutdown_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    flux_reactor_stop (flux_get_reactor (h));
}

static void ping_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct module *m = arg;
    uint32_t rank = 0;

    (void)flux_get_rank (h, &rank);
    method_ping_respond (h, msg, m->uuid, rank);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    method_stats_respond (h, msg);
}

static void rusage_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct rusage ru;
    const char *who = "thread";
    int w;

    if (flux_request_unpack (msg, NULL, "{s?s}", "who", &who) < 0
        && flux_msg_has_payload (msg)) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (!strcmp (who, "self"))
        w = RUSAGE_SELF;
    else if (!strcmp (who, "children"))
        w = RUSAGE_CHILDREN;
    else if (!strcmp (who, "thread"))
        w = RUSAGE_THREAD;
    else {
        flux_respond_error (h, msg, EINVAL, "unknown 'who'");
        return;
    }
    getrusage (w, &ru);
    flux_respond_pack (
        h, msg, "{s:f s:f s:i s:i s:i s:i s:i s:i s:i s:i s:i s:i s:i s:i}",
        "utime", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6, "stime",
        ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6, "maxrss",
        (int)ru.ru_maxrss, "ixrss", (int)ru.ru_ixrss, "idrss", (int)ru.ru_idrss,
        "isrss", (int)ru.ru_isrss, "minflt", (int)ru.ru_minflt, "majflt",
        (int)ru.ru_majflt, "nswap", (int)ru.ru_nswap, "inblock",
        (int)ru.ru_inblock, "oublock", (int)ru.ru_oublock, "msgsnd",
        (int)ru.ru_msgsnd, "msgrcv", (int)ru.ru_msgrcv, "nsignals",
        (int)ru.ru_nsignals);
}

static int default_handlers (struct module *m, flux_t *h,
                             flux_msg_handler_t **mh, int max)
{
    struct {
        const char *method;
        flux_msg_handler_f cb;
        uint32_t rolemask;
    } tab[] = {
        {"shutdown", shutdown_cb, 0},
        {"ping", ping_cb, FLUX_ROLE_USER},
        {"stats-get", stats_cb, FLUX_ROLE_ALL},
        {"rusage", rusage_cb, FLUX_ROLE_USER},
    };
    int i;

    for (i = 0; i < (int)(sizeof (tab) / sizeof (tab[0])) && i < max; i++) {
        char topic[256];
        struct flux_match match = FLUX_MATCH_REQUEST;
        snprintf (topic, sizeof (topic), "%s.%s", m->name, tab[i].method);
        match.topic_glob = topic;
        if (!(mh[i] = flux_msg_handler_create (h, match, tab[i].cb, m)))
            return -1;
        flux_msg_handler_allow_rolemask (mh[i], tab[i].rolemask);
        flux_msg_handler_start (mh[i]);
    }
    return 0;
}

/* Answer ENOSYS to whatever requests are still queued for the module. */
static void drain_requests (flux_t *h)
{
    flux_msg_t *msg;

    while ((msg = flux_recv (h, FLUX_O_NONBLOCK))) {
        int type = 0;
        (void)flux_msg_get_type (msg, &type);
        if (type == FLUX_MSGTYPE_REQUEST)
            flux_respond_error (h, msg, ENOSYS, NULL);
        flux_msg_decref (msg);
    }
}

static void cache_attrs (flux_t *h, json_t *attrs)
{
    const char *key;
    json_t *val;

    json_object_foreach (attrs, key, val)
    {
        if (json_is_string (val))
            (void)flux_attr_set_cacheonly (h, key, json_string_value (val));
    }
}

static int send_hook (struct flux_msgpipe *p, int end, flux_msg_t *msg,
                      void *arg);

static void *module_thread (void *arg)
{
    struct module *m = arg;
    flux_msg_handler_t *mh[4] = {0};
    flux_t *h = NULL;
    uv_prepare_t prep;
    json_t *args = json_object_get (m->welcome, "args");
    int argc = (int)json_array_size (args), i, rc = -1, errnum = 0;
    char **argv = calloc (argc + 1, sizeof (char *));
    char tname[16];

    /* name the thread after the module (15 chars), so top -H, perf and
     * gdb tell the modules apart */
    snprintf (tname, sizeof (tname), "%s", m->name);
    if (!m->grouped)
        (void)pthread_setname_np (pthread_self (), tname);
    if (!argv || !(h = flux_msgpipe_open (m->pipe, 1, 0))) {
        errnum = errno;
        goto done;
    }
    for (i = 0; i < argc; i++)
        argv[i] = (char *)json_string_value (json_array_get (args, i));
    cache_attrs (h, json_object_get (m->welcome, "attrs"));
    flux_aux_set (h, "flux::name", m->name, NULL);
    flux_aux_set (h, "flux::uuid", m->uuid, NULL);
    if (default_handlers (m, h, mh, 4) < 0 || !flux_get_reactor (h)) {
        errnum = errno;
        goto done;
    }
    uv_prepare_init (flux_reactor_uv (flux_get_reactor (h)), &prep);
    prep.data = h;
    uv_prepare_start (&prep, running_cb);
    uv_unref ((uv_handle_t *)&prep);
    rc = m->mod_main (h, argc, argv);
    errnum = rc < 0 ? (errno ? errno : ECONNRESET) : 0;
    uv_close ((uv_handle_t *)&prep, NULL);
    status_send (h, MODSTATE_FINALIZING, 0, true);
    /* Close the module's end to new messages before the last drain: a
     * request queued after it (by the broker, or another module's fast
     * path, until the broker has seen EXITED) would never be answered.
     * Senders now get EPIPE and answer ENOSYS themselves; our own sends
     * (answers, EXITED) still go. */
    flux_msgpipe_close (m->pipe, 1);
    drain_requests (h);
done:
    for (i = 0; i < 4; i++)
        flux_msg_handler_destroy (mh[i]);
    if (h)
        status_send (h, MODSTATE_EXITED, errnum, false);
    else {
        /* no handle: tell the broker directly */
        flux_msg_t *msg = flux_request_encode ("module.status", NULL);
        if (msg
            && flux_msg_pack (msg, "{s:i s:i}", "status", MODSTATE_EXITED,
                              "errnum", errnum ? errnum : EINVAL)
                   == 0
            && flux_msg_set_noresponse (msg) == 0
            && send_hook (m->pipe, 1, msg, m) == 0)
            msg = NULL;
        flux_msg_decref (msg);
    }
    flux_close (h);
    free (argv);
    return NULL;
}

/* ---- the module group (module_group_set) ---- */

/* The modules named share one thread: each runs module_thread() as a
 * task of a coop (libflux/coop.h), whose loops yield where they would
 * block.  The thread runs while a task does. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t task_done; /* a task returned (module.task_done) */
    char *names;              /* ",a,b,c," */
    flux_coop_t *coop;
    bool running;
} group
    = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, false};

int module_group_set (const char *names)
{
    char *s = NULL;

    if (names && *names) {
        size_t len = strlen (names);
        if (!(s = malloc (len + 3)))
            return -1;
        s[0] = ',';
        memcpy (s + 1, names, len);
        s[len + 1] = ',';
        s[len + 2] = '\0';
    }
    pthread_mutex_lock (&group.lock);
    free (group.names);
    group.names = s;
    pthread_mutex_unlock (&group.lock);
    return 0;
}

static bool modgroup_member (const char *name)
{
    char key[256];
    bool member;

    if (snprintf (key, sizeof (key), ",%s,", name) >= (int)sizeof (key))
        return false;
    pthread_mutex_lock (&group.lock);
    member = group.names && strstr (group.names, key);
    pthread_mutex_unlock (&group.lock);
    return member;
}

static void *modgroup_thread (void *arg)
{
    (void)pthread_setname_np (pthread_self (), "modgroup");
    for (;;) {
        (void)flux_coop_run (group.coop);
        pthread_mutex_lock (&group.lock);
        if (flux_coop_count (group.coop) == 0) {
            group.running = false;
            pthread_mutex_unlock (&group.lock);
            break;
        }
        pthread_mutex_unlock (&group.lock);
    }
    return NULL;
}

static void modgroup_task (void *arg)
{
    struct module *m = arg;
    (void)module_thread (m);
    /* m may be freed as soon as the lock is released */
    pthread_mutex_lock (&group.lock);
    m->task_done = true;
    pthread_cond_broadcast (&group.task_done);
    pthread_mutex_unlock (&group.lock);
}

static int modgroup_spawn (struct module *m)
{
    pthread_t t;
    int rc = -1;

    pthread_mutex_lock (&group.lock);
    if (!group.coop && !(group.coop = flux_coop_create ()))
        goto done;
    if (!group.running) {
        /* the thread first: a task spawned could otherwise be left
         * pending, never run, while its module is freed */
        if ((errno = pthread_create (&t, NULL, modgroup_thread, NULL)) != 0)
            goto done;
        pthread_detach (t);
        group.running = true;
    }
    rc = flux_coop_spawn (group.coop, modgroup_task, m, 0);
done:
    pthread_mutex_unlock (&group.lock);
    return rc;
}

/* Wait for a grouped module's task to return, until *deadline
 * (CLOCK_REALTIME; NULL: for ever). */
static bool modgroup_join (struct module *m, const struct timespec *deadline)
{
    bool done;
    int rc = 0;

    pthread_mutex_lock (&group.lock);
    while (!m->task_done && rc != ETIMEDOUT)
        rc = deadline ? pthread_cond_timedwait (&group.task_done, &group.lock,
                                                deadline)
                      : pthread_cond_wait (&group.task_done, &group.lock);
    done = m->task_done;
    pthread_mutex_unlock (&group.lock);
    return done;
}

/* ---- broker side ---- */

static void set_status (struct module *m, int status, int errnum)
{
    int prev = m->status;

    if (status <= prev)
        return;
    m->status = status;
    if (errnum)
        m->errnum = errnum;
    if (m->status_cb)
        m->status_cb (m, prev, m->arg);
}

/* Stamp the instance owner's credentials where unset (RFC 12). */
void module_stamp (struct module *m, flux_msg_t *msg)
{
    struct flux_msg_cred cred;

    if (flux_msg_get_cred (msg, &cred) < 0)
        return;
    if (cred.userid == FLUX_USERID_UNKNOWN)
        cred.userid = m->owner;
    if (cred.rolemask == FLUX_ROLE_NONE)
        cred.rolemask = FLUX_ROLE_OWNER | FLUX_ROLE_LOCAL;
    (void)flux_msg_set_cred (msg, cred);
}

static bool handle_status (struct module *m, flux_msg_t *msg)
{
    const char *topic;
    int status, errnum = 0;

    if (flux_msg_get_topic (msg, &topic) < 0
        || strcmp (topic, "module.status") != 0)
        return false;
    if (flux_msg_unpack (msg, "{s:i s?i}", "status", &status, "errnum", &errnum)
        < 0)
        return true; /* malformed from our own loader: drop */
    if (!flux_msg_is_noresponse (msg)) {
        flux_msg_t *rsp = flux_response_derive (msg, 0);
        if (rsp) {
            module_send (m, rsp);
            flux_msg_decref (rsp);
        }
    }
    if (status == MODSTATE_EXITED)
        m->thread_exited = true;
    set_status (m, status, errnum);
    return true;
}

/* An abandoned module still talks: its answers reach whoever still waits
 * for them; its requests get ENOSYS, as if it were gone; its events and
 * anything else are dropped. */
static void abandoned_msg (struct module *m, flux_msg_t *msg, int type)
{
    if (type == FLUX_MSGTYPE_RESPONSE) {
        m->recv_cb (m, msg, m->arg);
        return;
    }
    if (type == FLUX_MSGTYPE_REQUEST && !flux_msg_is_noresponse (msg)) {
        flux_msg_t *rsp = flux_response_derive (msg, ENOSYS);
        if (rsp)
            (void)module_send (m, rsp);
        flux_msg_decref (rsp);
    }
    flux_msg_decref (msg);
}

static void zombie_free (struct module *m);

static void zombie_close_cb (uv_handle_t *h)
{
    struct module *m = h->data;

    free (h);
    zombie_free (m);
}

static void pipe_cb (uv_poll_t *w, int status, int events)
{
    struct module *m = w->data;
    int n;

    atomic_store (&m->last_seen, uv_hrtime () * 1e-9);
    for (n = 0; n < RECV_BATCH; n++) {
        flux_msg_t *msg = flux_msgpipe_recv (m->pipe, 0);
        int type = 0;
        if (!msg)
            break;
        module_stamp (m, msg);
        (void)flux_msg_get_type (msg, &type);
        if (type == FLUX_MSGTYPE_REQUEST && handle_status (m, msg)) {
            flux_msg_decref (msg);
            atomic_fetch_sub (&m->slow_pending, 1);
            if (!m->poll)
                return; /* destroyed from the status callback */
            if (m->zombie && m->thread_exited) {
                /* the abandoned thread finished after all: free it all,
                 * once the poll handle is closed */
                uv_close ((uv_handle_t *)m->poll, zombie_close_cb);
                m->poll = NULL;
                return;
            }
            continue;
        }
        if (atomic_load (&m->abandoned)) {
            abandoned_msg (m, msg, type);
            atomic_fetch_sub (&m->slow_pending, 1);
            continue;
        }
        if (type == FLUX_MSGTYPE_REQUEST
            && flux_msg_route_push (msg, m->uuid) < 0) {
            flux_msg_decref (msg);
            atomic_fetch_sub (&m->slow_pending, 1);
            continue;
        }
        m->recv_cb (m, msg, m->arg);
        /* routed: where it went, it is queued already */
        atomic_fetch_sub (&m->slow_pending, 1);
        if (!m->poll)
            return;
    }
}

/* How the module's handle sends (in the module's thread): straight to
 * another module when the fast path can, else to the broker's thread. */
static int send_hook (struct flux_msgpipe *p, int end, flux_msg_t *msg,
                      void *arg)
{
    struct module *m = arg;

    if (m->fast_cb && atomic_load (&m->slow_pending) == 0
        && !atomic_load (&m->abandoned) && m->fast_cb (m, msg, m->arg)) {
        atomic_store (&m->last_seen, uv_hrtime () * 1e-9);
        return 0;
    }
    atomic_fetch_add (&m->slow_pending, 1);
    if (flux_msgpipe_send (p, end, msg) < 0) {
        atomic_fetch_sub (&m->slow_pending, 1);
        return -1;
    }
    return 0;
}

static json_t *welcome_create (struct module *m, json_t *args, json_t *attrs)
{
    return json_pack ("{s:O s:O s:{} s:s s:s}", "args", args, "attrs", attrs,
                      "conf", "name", m->name, "uuid", m->uuid);
}

static char *name_from_path (const char *path)
{
    const char *base;
    size_t len = module_name_of_path (path, &base);
    return strndup (base, len);
}

struct module *module_create (uv_loop_t *loop, const char *path,
                              const char *name, json_t *args, json_t *attrs,
                              uint32_t owner, module_recv_f recv_cb,
                              module_fast_f fast_cb, module_status_f status_cb,
                              void *arg, flux_error_t *error)
{
    struct module *m;
    json_t *empty = NULL;

    if (!loop || !path || !recv_cb) {
        errno = EINVAL;
        return NULL;
    }
    if (!(m = calloc (1, sizeof (*m))))
        return NULL;
    m->owner = owner;
    m->recv_cb = recv_cb;
    m->fast_cb = fast_cb;
    m->status_cb = status_cb;
    m->arg = arg;
    if (method_uuid (m->uuid, sizeof (m->uuid)) < 0) {
        errprintf (error, "cannot generate a module UUID");
        goto error;
    }
    if (!(m->path = strdup (path))
        || !(m->name = name ? strdup (name) : name_from_path (path)))
        goto error;
    if (!(m->dso = dlopen (path, RTLD_NOW | RTLD_LOCAL))) {
        errprintf (error, "%s", dlerror ());
        errno = ENOENT;
        goto error;
    }
    if (!(m->mod_main = (mod_main_f)dlsym (m->dso, "mod_main"))) {
        errprintf (error, "%s: module does not define mod_main()", path);
        errno = EINVAL;
        goto error;
    }
    if (!args)
        args = empty = json_array ();
    if (!(m->welcome
          = welcome_create (m, args, attrs ? attrs : json_object ())))
        goto nomem;
    json_decref (empty);
    empty = NULL;
    if (!(m->pipe = flux_msgpipe_create ())
        || !(m->poll = calloc (1, sizeof (*m->poll))))
        goto nomem;
    flux_msgpipe_set_send_hook (m->pipe, 1, send_hook, m);
    if (uv_poll_init (loop, m->poll, flux_msgpipe_pollfd (m->pipe, 0)) < 0) {
        free (m->poll);
        m->poll = NULL;
        goto nomem;
    }
    m->poll->data = m;
    uv_poll_start (m->poll, UV_READABLE, pipe_cb);
    atomic_store (&m->last_seen, uv_hrtime () * 1e-9);
    if ((m->grouped = modgroup_member (m->name))) {
        if (modgroup_spawn (m) < 0) {
            errprintf (error, "module group: %s", strerror (errno));
            goto error;
        }
    }
    else if ((errno = pthread_create (&m->thread, NULL, module_thread, m))
             != 0) {
        errprintf (error, "pthread_create: %s", strerror (errno));
        goto error;
    }
    m->thread_started = 1;
    return m;
nomem:
    errprintf (error, "out of memory");
    errno = ENOMEM;
error:
    json_decref (empty);
    module_destroy (m);
    return NULL;
}

/* Free what is left once the thread is gone (joined, or never started). */
static void module_free (struct module *m)
{
    flux_msgpipe_decref (m->pipe);
    json_decref (m->welcome);
    if (m->dso)
        dlclose (m->dso);
    free (m->name);
    free (m->path);
    free (m);
}

static bool join_thread (struct module *m, double timeout);

static void zombie_free (struct module *m)
{
    if (m->pipe)
        flux_msgpipe_close (m->pipe, 0);
    (void)join_thread (m, -1.); /* it has sent its last message */
    module_free (m);
}

/* Join m's thread, waiting at most timeout seconds (< 0: for ever). */
static bool join_thread (struct module *m, double timeout)
{
    struct timespec ts;

    if (timeout < 0)
        return m->grouped ? modgroup_join (m, NULL)
                          : pthread_join (m->thread, NULL) == 0;
    clock_gettime (CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)timeout;
    ts.tv_nsec += (long)((timeout - (double)(time_t)timeout) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    if (m->grouped)
        return modgroup_join (m, &ts);
    return pthread_timedjoin_np (m->thread, NULL, &ts) == 0;
}

bool module_destroy_wait (struct module *m, double timeout)
{
    if (m) {
        int saved_errno = errno;
        if (atomic_load (&m->abandoned) && !m->thread_exited && m->poll) {
            /* still running: the pipe stays open and watched, and
             * pipe_cb frees everything when the thread reports EXITED
             * (if the broker exits first, the thread is left to die
             * with the process) */
            m->zombie = true;
            m->status_cb = NULL;
            errno = saved_errno;
            return true;
        }
        if (m->poll) {
            flux_uv_close_free ((uv_handle_t *)m->poll);
            m->poll = NULL;
        }
        if (m->pipe)
            flux_msgpipe_close (m->pipe, 0);
        if (m->thread_started && !join_thread (m, timeout)) {
            errno = saved_errno;
            return false; /* left running, and m with it */
        }
        module_free (m);
        errno = saved_errno;
    }
    return true;
}

void module_destroy (struct module *m)
{
    (void)module_destroy_wait (m, -1.);
}

int module_abandon (struct module *m)
{
    if (!m) {
        errno = EINVAL;
        return -1;
    }
    if (m->status == MODSTATE_EXITED)
        return 0;
    atomic_store (&m->abandoned, true);
    set_status (m, MODSTATE_EXITED, ECANCELED);
    return 0;
}

int module_stop (struct module *m)
{
    char topic[256];
    flux_msg_t *msg;
    int rc;

    snprintf (topic, sizeof (topic), "%s.shutdown", m->name);
    if (!(msg = flux_request_encode (topic, NULL)))
        return -1;
    (void)flux_msg_set_noresponse (msg);
    (void)flux_msg_set_cred (msg,
                             (struct flux_msg_cred){m->owner, FLUX_ROLE_OWNER});
    rc = module_send (m, msg);
    flux_msg_decref (msg);
    return rc;
}

int module_send_bounded (struct module *m, const flux_msg_t *msg,
                         size_t max_bytes)
{
    flux_msg_t *ref = (flux_msg_t *)flux_msg_incref (msg);

    if (flux_msgpipe_send_bounded (m->pipe, 0, ref, max_bytes) < 0) {
        flux_msg_decref (ref);
        return -1;
    }
    return 0;
}

void module_set_recv_limit (struct module *m, size_t max_bytes)
{
    if (m && m->pipe)
        (void)flux_msgpipe_set_limit (m->pipe, 0, max_bytes);
}

void module_recv_stats (struct module *m, size_t *bytes_max, uint64_t *waits)
{
    *bytes_max = 0;
    *waits = 0;
    if (m->pipe)
        flux_msgpipe_limit_stats (m->pipe, 0, bytes_max, waits);
}

size_t module_queued_bytes (struct module *m)
{
    return m->pipe ? flux_msgpipe_bytes (m->pipe, 1) : 0;
}

int module_send (struct module *m, const flux_msg_t *msg)
{
    flux_msg_t *ref = (flux_msg_t *)flux_msg_incref (msg);

    if (flux_msgpipe_send (m->pipe, 0, ref) < 0) {
        flux_msg_decref (ref);
        return -1;
    }
    return 0;
}

const char *module_name (struct module *m)
{
    return m->name;
}

const char *module_path (struct module *m)
{
    return m->path;
}

const char *module_uuid (struct module *m)
{
    return m->uuid;
}

int module_status (struct module *m)
{
    return m->status;
}

int module_errnum (struct module *m)
{
    return m->errnum;
}

void module_queue_counts (struct module *m, size_t *sendq, size_t *recvq)
{
    *sendq = m->pipe ? flux_msgpipe_count (m->pipe, 1) : 0;
    *recvq = m->pipe ? flux_msgpipe_count (m->pipe, 0) : 0;
}

double module_idle (struct module *m)
{
    double seen = atomic_load (&m->last_seen);

    return m->poll ? uv_hrtime () * 1e-9 - seen : 0;
}

void module_set_aux (struct module *m, void *aux)
{
    m->aux = aux;
}

void *module_get_aux (struct module *m)
{
    return m->aux;
}
