/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* state.c - the broker state machine (PROTOCOLS.md 3).
 *
 * join (wait for the parent) -> init (load the modules of broker.modules
 * in order, then the rc1 script if any) -> quorum (wait for every child's
 * subtree) -> run (rank 0 runs the initial program) -> cleanup ->
 * shutdown (unload the modules in reverse order, one at a time: a default
 * module reloaded by hand keeps its place) ->
 * finalize (wait for the children to leave) -> goodbye -> exit.
 * Leaves leave first, rank 0 last, so nothing is left behind.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "broker.h"
#include "hostlist_share.h"
#include "parent.h"
#include "libidset/idset.h"
#include "module.h"
#include "overlay/overlay.h"
#include "overlay/topology.h"

static const char *state_names[] = {
    "load-builtins", "join",    "config-sync",     "init",
    "quorum",        "run",     "cleanup",         "shutdown",
    "finalize",      "goodbye", "unload-builtins", "exit",
};

const char *state_name (enum broker_state s)
{
    return (s >= 0 && s <= STATE_EXIT) ? state_names[s] : "unknown";
}

/* ---- child processes: rc1 and the initial program ---- */

/* Signal the child process: its whole process group when it has one of
 * its own (not interactive), so what it started in the background goes
 * too. */
static void proc_signal (struct broker *b, int signum)
{
    if (b->init_pgrp)
        kill (-b->init_proc->pid, signum);
    else
        uv_process_kill (b->init_proc, signum);
}

static void initial_exit_cb (uv_process_t *p, int64_t status, int sig)
{
    struct broker *b = p->data;
    int rc = sig ? 128 + sig : (int)status;

    if (b->init_pgrp) /* leave nothing of it behind */
        kill (-p->pid, SIGTERM);

    b->init_proc = NULL;
    flux_uv_close_free ((uv_handle_t *)p);
    if (b->state == STATE_INIT) { /* rc1 */
        if (rc != 0) {
            brokerlog_msg (b->log, LOG_ERR, "rc1 exited with status %d", rc);
            broker_shutdown (b, rc);
            return;
        }
        state_enter (b, STATE_QUORUM);
        return;
    }
    if (rc != 0)
        brokerlog_msg (b->log, LOG_INFO, "initial program exited with %d", rc);
    broker_shutdown (b, rc);
}

static int spawn (struct broker *b, char **argv)
{
    uv_process_options_t opts = {0};
    uv_stdio_container_t stdio[3];
    int i, rc;

    if (!(b->init_proc = calloc (1, sizeof (*b->init_proc))))
        return -1;
    for (i = 0; i < 3; i++) {
        stdio[i].flags = UV_INHERIT_FD;
        stdio[i].data.fd = i;
    }
    opts.file = argv[0];
    opts.args = argv;
    opts.exit_cb = initial_exit_cb;
    opts.stdio = stdio;
    opts.stdio_count = 3;
    /* A non-interactive program gets a process group of its own (a new
     * session) so that shutdown reaches everything it started; an
     * interactive shell keeps the terminal and handles its own jobs. */
    b->init_pgrp = !isatty (STDIN_FILENO);
    if (b->init_pgrp)
        opts.flags |= UV_PROCESS_DETACHED;
    b->init_proc->data = b;
    if ((rc = uv_spawn (b->loop, b->init_proc, &opts)) < 0) {
        fprintf (stderr, "flux-broker: %s: %s\n", argv[0], uv_strerror (rc));
        flux_uv_close_free ((uv_handle_t *)b->init_proc);
        b->init_proc = NULL;
        errno = -rc;
        return -1;
    }
    return 0;
}

/* ---- the default modules (broker.modules) ----
 * A comma-separated list of entries "NAME[@IDSET] [ARG...]": the module
 * NAME (or a path to one), loaded only on the ranks in IDSET (default all),
 * with the blank-separated ARGs as its argv. */

/* Parse an entry "NAME[@IDSET] [ARG...]": the name is copied into name[],
 * *applies says whether it is for this rank, and *args (when it applies and
 * there are arguments) is a new JSON array of the ARGs, split on blanks.
 * -1 if the entry is malformed. */
static int modlist_entry (struct broker *b, char *entry, char *name,
                          size_t size, bool *applies, json_t **args)
{
    char *save = NULL, *tok, *first = strtok_r (entry, " \t", &save);
    char *at = first ? strchr (first, '@') : NULL;
    size_t len;
    struct idset *ids;

    *args = NULL;
    if (!first)
        return -1;
    len = at ? (size_t)(at - first) : strlen (first);
    if (len == 0 || len >= size)
        return -1;
    memcpy (name, first, len);
    name[len] = '\0';
    *applies = true;
    if (at) {
        if (!(ids = idset_decode (at + 1)))
            return -1;
        *applies = idset_test (ids, b->rank);
        idset_destroy (ids);
    }
    while (*applies && (tok = strtok_r (NULL, " \t", &save))) {
        if ((!*args && !(*args = json_array ()))
            || json_array_append_new (*args, json_string (tok)) < 0) {
            json_decref (*args);
            *args = NULL;
            return -1;
        }
    }
    return 0;
}

/* Where the module called name belongs in the shutdown order: the index
 * of its entry in broker.modules (an entry naming it, or a path whose
 * module name is name), or SIZE_MAX for a module that is not a default
 * one.  Modules are kept sorted by it (then by load order), and stopped
 * from the last: a default module reloaded by hand keeps its place, so
 * the kvs still outlives the job manager that writes to it. */
size_t state_module_rank (struct broker *b, const char *name)
{
    const char *p = attr_get (b->attrs, "broker.modules", NULL);
    size_t index = 0;

    while (p && *p) {
        size_t len = strcspn (p, ",");
        const char *first = p + strspn (p, " \t");
        if (first < p + len) { /* not a blank entry */
            /* the entry's NAME, a module name or a path to one, named as
             * the broker names a module (modname.h) */
            size_t nlen = strcspn (first, "@ \t,");
            const char *slash = memrchr (first, '/', nlen);
            const char *base = slash ? slash + 1 : first;
            nlen = strcspn (base, ".@ \t,");
            if (nlen == strlen (name) && !strncmp (base, name, nlen))
                return index;
            index++;
        }
        p += len + (p[len] == ',');
    }
    return SIZE_MAX;
}

/* Load the next module of broker.modules that applies to this rank.
 * Returns 1 if one is loading (its RUNNING status continues the walk),
 * 0 when the list is done, -1 on error (logged). */
static int modlist_next (struct broker *b)
{
    const char *list = attr_get (b->attrs, "broker.modules", NULL);
    char entry[1024], name[256];
    flux_error_t error = {{0}};
    bool applies;
    json_t *args;
    struct module *m;

    while (list && list[b->modlist_pos]) {
        const char *p = list + b->modlist_pos;
        size_t len = strcspn (p, ",");

        b->modlist_pos += len + (p[len] == ',');
        if (len == 0 || strspn (p, " \t") >= len)
            continue;
        if (len >= sizeof (entry)
            || (memcpy (entry, p, len), entry[len] = '\0',
                modlist_entry (b, entry, name, sizeof (name), &applies, &args)
                    < 0)) {
            brokerlog_msg (b->log, LOG_ERR, "broker.modules: bad entry '%.*s'",
                           (int)len, p);
            return -1;
        }
        if (!applies)
            continue;
        m = broker_module_load (b, name, NULL, args, NULL, &error);
        json_decref (args);
        if (!m) {
            brokerlog_msg (b->log, LOG_ERR, "loading %s: %s", name,
                           error.text[0] ? error.text : strerror (errno));
            return -1;
        }
        b->modlist_loading = m;
        return 1;
    }
    return 0;
}

static void init_continue (struct broker *b)
{
    const char *rc1;
    int rc;

    if ((rc = modlist_next (b)) < 0) {
        broker_shutdown (b, 1);
        return;
    }
    if (rc > 0)
        return;
    rc1 = attr_get (b->attrs, "broker.rc1_path", NULL);
    if (rc1 && *rc1) {
        char *argv[] = {(char *)rc1, NULL};
        if (spawn (b, argv) < 0)
            broker_shutdown (b, 1);
    }
    else
        state_enter (b, STATE_QUORUM);
}

void state_module_status (struct broker *b, struct module *m, int status)
{
    if (m != b->modlist_loading)
        return;
    if (status == MODSTATE_RUNNING) {
        b->modlist_loading = NULL;
        if (b->state == STATE_INIT)
            init_continue (b);
    }
    else if (status == MODSTATE_EXITED) {
        b->modlist_loading = NULL;
        brokerlog_msg (b->log, LOG_ERR, "module %s failed to start: %s",
                       module_name (m), strerror (module_errnum (m)));
        broker_shutdown (b, 1);
    }
}

/* Shutdown: stop the last module of b->modules (modules not in
 * broker.modules first, newest first, then the default ones in the
 * reverse of their order there: state_module_rank), and the next one
 * only once it has gone (the job manager writes its last events before
 * the kvs stops, the kvs flushes to content before content stops). */
static void module_stop_timer_cb (uv_timer_t *w)
{
    struct broker *b = w->data;
    struct module *m = b->modlist_stopping;
    char why[96];

    if (b->state != STATE_SHUTDOWN || !m || b->nmodules == 0
        || b->modules[b->nmodules - 1] != m)
        return;
    snprintf (why, sizeof (why), "did not stop within %gs of the shutdown",
              b->module_stop_timeout);
    broker_module_abandon (b, m, LOG_ERR, why);
}

static void modules_unload_next (struct broker *b)
{
    struct module *last;

    if (b->nmodules == 0) {
        uv_timer_stop (&b->module_stop_timer);
        state_enter (b, STATE_FINALIZE);
        return;
    }
    last = b->modules[b->nmodules - 1];
    if (last != b->modlist_stopping) {
        b->modlist_stopping = last;
        if (b->rank == 0)
            brokerlog_msg (b->log, LOG_DEBUG, "shutdown: unloading %s",
                           module_name (last));
        (void)module_stop (last);
        if (b->module_stop_timeout > 0)
            uv_timer_start (&b->module_stop_timer, module_stop_timer_cb,
                            (uint64_t)(b->module_stop_timeout * 1000.), 0);
    }
}

/* Emergency paths (signal on rank > 0, parent lost): everything at once. */
void state_stop_all_modules (struct broker *b)
{
    size_t i;
    for (i = b->nmodules; i > 0; i--)
        (void)module_stop (b->modules[i - 1]);
}

/* ---- state machine ---- */

static void send_ready (struct broker *b)
{
    int64_t parent = topology_parent (b->topo, b->rank);
    flux_future_t *f;

    f = flux_rpc_pack (b->h, "broker.ready", (uint32_t)parent,
                       FLUX_RPC_NORESPONSE, "{s:i}", "rank", (int)b->rank);
    flux_future_destroy (f);
}

/* broker.ready {rank} from a child broker (sent with no response
 * expected): anything else is answered with an error (dropped for a
 * no-response request) and not counted. */
static void ready_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct broker *b = arg;
    int rank;

    if (flux_request_unpack (msg, NULL, "{s:i}", "rank", &rank) < 0 || rank <= 0
        || (uint32_t)rank >= b->size
        || topology_parent (b->topo, (uint32_t)rank) != (int64_t)b->rank) {
        flux_respond_error (h, msg, EPROTO,
                            "broker.ready: expected {rank} of a child");
        return;
    }
    if (!flux_msg_is_noresponse (msg)) {
        flux_respond_error (h, msg, EPROTO,
                            "broker.ready is for child brokers only");
        return;
    }
    /* counted once per child (one that rejoins says ready again) */
    int idx = topology_child_index (b->topo, b->rank, (uint32_t)rank);
    if (b->child_ready && idx >= 0 && !b->child_ready[idx]) {
        b->child_ready[idx] = true;
        b->children_ready++;
    }
    if (b->state == STATE_QUORUM && b->children_ready >= b->nchildren)
        state_enter (b, STATE_RUN);
}

/* The ranks quorum still waits for: the subtrees of the direct children
 * not ready yet.  O(size log fanout), only when the warning is due.
 * A new string, or NULL on ENOMEM. */
static char *quorum_missing (struct broker *b)
{
    struct idset *ids = idset_create (b->size, 0);
    char *s = NULL;

    for (uint32_t r = 0; ids && b->child_ready && r < b->size; r++) {
        int64_t c = topology_child_toward (b->topo, b->rank, r);
        int idx
            = c < 0 ? -1 : topology_child_index (b->topo, b->rank, (uint32_t)c);
        if (idx >= 0 && !b->child_ready[idx] && idset_set (ids, r) < 0)
            goto done;
    }
    if (ids)
        s = idset_encode (ids, IDSET_FLAG_RANGE);
done:
    idset_destroy (ids);
    return s;
}

/* Quorum is slow: say whom it waits for (again every quorum_warn). */
static void quorum_timer_cb (uv_timer_t *w)
{
    struct broker *b = w->data;
    char *s;

    if (b->state != STATE_QUORUM)
        return;
    s = quorum_missing (b);
    brokerlog_msg (b->log, LOG_ERR,
                   "quorum delayed: after %.0fs, still waiting for rank(s) %s",
                   (uv_now (b->loop) / 1000.) - b->state_time, s ? s : "?");
    free (s);
}

/* The direct children whose link is up (ONLINE or TORPID), read from the
 * overlay's own state: a count kept from status reports would count a
 * child twice when it goes TORPID -> ONLINE, and finalize would wait for
 * it for ever. */
int state_children_up (struct broker *b)
{
    int n = 0;

    for (int i = 0; b->overlay && i < b->nchildren; i++) {
        enum overlay_peer_status s
            = overlay_child_status (b->overlay, b->children[i], NULL);
        if (s == OVERLAY_PEER_ONLINE || s == OVERLAY_PEER_TORPID)
            n++;
    }
    return n;
}

/* Finalize waits for the children to leave, at most finalize_timeout: a
 * child that is stopped (SIGSTOP, a hung host with lost_max=0) would
 * otherwise hold its parent, and so the whole instance, for ever. */
static void finalize_timer_cb (uv_timer_t *w)
{
    struct broker *b = w->data;
    struct idset *ids;
    char *s = NULL;

    if (b->state != STATE_FINALIZE)
        return;
    if ((ids = idset_create (0, IDSET_FLAG_AUTOGROW))) {
        for (int i = 0; b->overlay && i < b->nchildren; i++) {
            enum overlay_peer_status st
                = overlay_child_status (b->overlay, b->children[i], NULL);
            if (st == OVERLAY_PEER_ONLINE || st == OVERLAY_PEER_TORPID)
                (void)idset_set (ids, b->children[i]);
        }
        s = idset_encode (ids, IDSET_FLAG_RANGE);
        idset_destroy (ids);
    }
    brokerlog_msg (b->log, LOG_ERR,
                   "finalize: rank%s %s did not leave within %gs: leaving "
                   "without %s",
                   s && strpbrk (s, ",-") ? "s" : "", s ? s : "?",
                   b->finalize_timeout, s && strpbrk (s, ",-") ? "them" : "it");
    free (s);
    state_enter (b, STATE_GOODBYE);
}

static void finalize_check (struct broker *b)
{
    if (b->state != STATE_FINALIZE)
        return;
    if (state_children_up (b) == 0) {
        uv_timer_stop (&b->finalize_timer);
        state_enter (b, STATE_GOODBYE);
    }
    else if (b->finalize_timeout > 0
             && !uv_is_active ((uv_handle_t *)&b->finalize_timer))
        uv_timer_start (&b->finalize_timer, finalize_timer_cb,
                        (uint64_t)(b->finalize_timeout * 1000.), 0);
}

/* Attribute broker.rc2_none (flux-core's name) set to anything but 0. */
static bool rc2_none (struct broker *b)
{
    const char *s = attr_get (b->attrs, "broker.rc2_none", NULL);

    return s && strcmp (s, "0") != 0;
}

static void run_initial_program (struct broker *b)
{
    char *shell_argv[] = {getenv ("SHELL"), NULL};

    if (b->rank != 0)
        return;
    if (rc2_none (b)) {
        /* a system instance: no initial program; the instance runs until
         * flux shutdown or a signal (etc/flux.service) */
        brokerlog_msg (b->log, LOG_INFO, "broker.rc2_none: no initial program");
        return;
    }
    if (!b->initial_program) {
        if (!shell_argv[0])
            shell_argv[0] = "/bin/sh";
        if (spawn (b, shell_argv) < 0)
            broker_shutdown (b, 1);
        return;
    }
    if (spawn (b, b->initial_program) < 0)
        broker_shutdown (b, 127);
}

/* CLEANUP is over (a sub-instance's jobs are canceled and ended). */
static void cleanup_done (struct broker *b)
{
    if (b->state != STATE_CLEANUP)
        return;
    if (b->rank == 0) {
        flux_msg_t *ev = flux_event_encode ("broker.shutdown", NULL);
        if (ev)
            (void)router_publish (b, ev);
    }
    state_enter (b, STATE_SHUTDOWN);
}

void state_enter (struct broker *b, enum broker_state s)
{
    double now;

    if (s <= b->state && s != STATE_LOAD_BUILTINS)
        return;
    now = uv_now (b->loop) / 1000.;
    if (s > STATE_LOAD_BUILTINS)
        brokerlog_msg (
            b->log, s >= STATE_CLEANUP ? LOG_INFO : LOG_DEBUG,
            "%s: %s->%s %.3fs", s >= STATE_CLEANUP ? "shutdown" : "start",
            state_name (b->state), state_name (s), now - b->state_time);
    b->state = s;
    b->state_time = now;
    if (s > STATE_QUORUM)
        uv_timer_stop (&b->quorum_timer);
    builtin_state_changed (b);
    if (s == STATE_GOODBYE || s == STATE_EXIT)
        builtin_shutdown_done (b);
    switch (s) {
        case STATE_JOIN:
            if ((b->rank == 0 || b->parent_online) && !hostlist_share_join (b))
                state_enter (b, STATE_INIT);
            break;
        case STATE_INIT:
            b->modlist_pos = 0;
            init_continue (b);
            break;
        case STATE_QUORUM:
            if (b->children_ready >= b->nchildren)
                state_enter (b, STATE_RUN);
            else if (b->quorum_warn > 0) {
                uint64_t ms = (uint64_t)(b->quorum_warn * 1000.);
                uv_timer_start (&b->quorum_timer, quorum_timer_cb, ms, ms);
            }
            break;
        case STATE_RUN:
            if (b->rank > 0)
                send_ready (b);
            else {
                parent_post_uri (b);
                run_initial_program (b);
            }
            break;
        case STATE_CLEANUP:
            parent_cancel_jobs (b, cleanup_done);
            break;
        case STATE_SHUTDOWN:
            modules_unload_next (b);
            break;
        case STATE_FINALIZE:
            finalize_check (b);
            break;
        case STATE_GOODBYE:
            state_enter (b, STATE_EXIT);
            break;
        case STATE_EXIT:
            flux_reactor_stop (b->reactor);
            break;
        default:
            break;
    }
}

void broker_shutdown (struct broker *b, int exit_rc)
{
    if (b->shutdown_requested)
        return;
    b->shutdown_requested = 1;
    b->exit_rc = exit_rc;
    if (b->init_proc)
        proc_signal (b, SIGTERM);
    state_enter (b, STATE_CLEANUP);
}

static void shutdown_event_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    struct broker *b = arg;
    if (b->rank > 0)
        broker_shutdown (b, 0);
}

void state_modules_reaped (struct broker *b)
{
    if (b->state == STATE_SHUTDOWN)
        modules_unload_next (b);
}

/* Modules exiting during shutdown let it proceed (checked each turn,
 * after the reaper has removed them). */
static void shutdown_check_cb (uv_check_t *w)
{
    state_modules_reaped (w->data);
}

void broker_peer_status (struct broker *b, uint32_t peer, int status,
                         const char *error)
{
    int64_t parent = topology_parent (b->topo, b->rank);

    if ((int64_t)peer == parent) {
        if (status == OVERLAY_PEER_ONLINE) {
            b->parent_online = 1;
            router_parent_online (b);
            builtin_parent_online (b);
            if (b->state == STATE_JOIN && !hostlist_share_join (b))
                state_enter (b, STATE_INIT);
        }
        else if (status == OVERLAY_PEER_LOST) {
            b->parent_online = 0;
            if (b->state < STATE_FINALIZE)
                brokerlog_msg (b->log, LOG_ERR, "parent lost: %s",
                               error ? error : "connection lost");
            /* nothing above us: leave now, children follow */
            b->exit_rc = b->shutdown_requested ? b->exit_rc : 1;
            b->shutdown_requested = 1;
            state_stop_all_modules (b);
            state_enter (b, STATE_EXIT);
        }
        return;
    }
    /* why a child is not online, for overlay.health (a clean exit: none) */
    builtin_child_error (b, peer,
                         status == OVERLAY_PEER_LOST
                             ? (error ? error : "connection lost")
                         : status == OVERLAY_PEER_OFFLINE ? error
                                                          : NULL);
    if (status == OVERLAY_PEER_LOST || status == OVERLAY_PEER_OFFLINE) {
        router_child_lost (b, peer);
        if (b->state < STATE_SHUTDOWN)
            brokerlog_msg (b->log, LOG_ERR, "broker on rank %u lost: %s", peer,
                           error ? error : "connection lost");
        finalize_check (b);
    }
    else if (status == OVERLAY_PEER_TORPID)
        brokerlog_msg (b->log, LOG_WARNING, "broker on rank %u is torpid",
                       peer);
    builtin_health_changed (b);
}

static const struct flux_msg_handler_spec state_htab[] = {
    {FLUX_MSGTYPE_REQUEST, "broker.ready", ready_cb, 0},
    {FLUX_MSGTYPE_EVENT, "broker.shutdown", shutdown_event_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

int state_machine_init (struct broker *b)
{
    if (flux_msg_handler_addvec (b->h, state_htab, b, &b->state_handlers) < 0
        || hostlist_share_init (b) < 0)
        return -1;
    uv_timer_init (b->loop, &b->module_stop_timer);
    b->module_stop_timer.data = b;
    uv_timer_init (b->loop, &b->finalize_timer);
    b->finalize_timer.data = b;
    uv_timer_init (b->loop, &b->quorum_timer);
    b->quorum_timer.data = b;
    if (b->nchildren > 0
        && !(b->child_ready = calloc (b->nchildren, sizeof (bool))))
        return -1;
    uv_check_init (b->loop, &b->shutdown_check);
    b->shutdown_check.data = b;
    uv_check_start (&b->shutdown_check, shutdown_check_cb);
    uv_unref ((uv_handle_t *)&b->shutdown_check);
    return 0;
}

void state_machine_fini (struct broker *b)
{
    /* The initial program was sent SIGTERM at shutdown, but the broker
     * does not wait for it: on a loaded machine the rest of the shutdown
     * can end before its exit is seen, and its handle was left allocated
     * (a leak that ASAN's exit code turned into a failed flux start). */
    if (b->init_proc) {
        flux_uv_close_free ((uv_handle_t *)b->init_proc);
        b->init_proc = NULL;
    }
    flux_msg_handler_delvec (b->state_handlers);
    b->state_handlers = NULL;
    hostlist_share_fini (b);
    free (b->child_ready);
    b->child_ready = NULL;
}
