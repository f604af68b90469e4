/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_BROKER_H
#define BROKER_BROKER_H

/* The broker context shared by its rooms: router (broker.c), built-in
 * services (builtin.c), state machine and boot (main.c, boot.c).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <uv.h>

#include "libflux/flux.h"
#include "libflux/msgpipe.h"

#include "attr.h"
#include "log.h"

struct usock_server;
struct overlay;
struct module;
struct peer;
struct service;

/* Broker states (PROTOCOLS.md 3, enum order 0-11). */
enum broker_state {
    STATE_LOAD_BUILTINS = 0,
    STATE_JOIN,
    STATE_CONFIG_SYNC,
    STATE_INIT,
    STATE_QUORUM,
    STATE_RUN,
    STATE_CLEANUP,
    STATE_SHUTDOWN,
    STATE_FINALIZE,
    STATE_GOODBYE,
    STATE_UNLOAD_BUILTINS,
    STATE_EXIT,
};

struct broker {
    uv_loop_t *loop;
    flux_reactor_t *reactor;
    uint32_t rank;
    uint32_t size;
    struct topology *topo;        /* the tree (tbon.topo), for everyone */
    struct boot_config *bootconf; /* config-file bootstrap, or NULL */
    uint32_t owner;               /* instance owner uid */
    char rankstr[16];
    char uuid[40]; /* route id of the broker's own services */
    double starttime;

    struct attr *attrs;
    struct brokerlog *log;

    /* the broker's own services run on h, an end of self_pipe; both
     * ends are served by this thread, without eventfd signals: the
     * router looks at its end before the loop would block */
    struct flux_msgpipe *self_pipe;
    flux_t *h;
    uv_prepare_t self_prep;
    uv_check_t self_check;
    uv_idle_t self_idle;

    struct usock_server *usock;
    struct msgcount *msgcount;  /* FLUX_BROKER_MSGCOUNT (msgcount.h) */
    struct evroute *evroute;    /* who below wants kvs.namespace- events */
    size_t module_queue_limit;  /* broker.module-queue-limit (bytes) */
    size_t module_recvq_limit;  /* broker.module-recvq-limit (bytes) */
    double modq_logged;         /* when a refusal was last logged */
    double modq_drop_logged;    /* when a drop was last logged */
    double selfq_logged;        /* when a refusal by the broker was logged */
    unsigned long modq_dropped; /* drops not yet logged */

    /* responses clients sent to requests they were not given */
    double unasked_logged;         /* when one was last logged */
    unsigned long unasked_dropped; /* drops not yet logged */

    /* requests for client services past broker.client-pending-limit */
    size_t client_pending_limit;   /* notes per client (0: none) */
    size_t client_inflight_limit;  /* open requests per client (0: none) */
    struct strmap *user_inflight;  /* guest uid -> its open requests */
    double pending_logged;         /* when a refusal was last logged */
    unsigned long pending_refused; /* refusals not yet logged */

    /* what local clients sent upstream past their share of the link */
    double upq_logged[2];            /* when a refusal was last logged:
                                        [0] requests, [1] drops */
    unsigned long upq_refused[2];    /* refusals not yet logged */
    unsigned long upq_refused_total; /* requests answered EAGAIN, in all */
    unsigned long upq_dropped_total; /* events and responses dropped */
    /* requests going down past their share of the link to a child */
    double downq_logged;
    unsigned long downq_refused;
    /* events being delivered to many local clients over several loop
     * turns (broker.c, "event fan-out"), oldest first */
    struct fanout *fanout_head, *fanout_tail;
    int nfanout;
    size_t fanout_bytes;
    uint64_t fanout_id; /* the newest fan-out's */
    /* the peers events are routed to (broker.c): local clients in the
     * order they connected, with holes while fan-outs are pending, and
     * modules */
    struct peer **cpeers;
    size_t ncpeers, cpeers_size, cpeers_holes;
    struct peer **mpeers;
    size_t nmpeers, mpeers_size;
    /* loop turns (broker.c, self_prep_cb): the thread's CPU time when
     * the last began, and the most one took */
    uint64_t turn_cpu, turn_cpu_max;
    uint64_t turns;
    uint64_t turns_cleared; /* turns when the figures were last cleared */
    /* the same per phase of a turn: the prepare phase's budgeted work,
     * the I/O phase (up to the check phase), the rest (check, closing,
     * timers, idle); the CPU time the last two began at */
    uint64_t prep_cpu_max, io_cpu_max, rest_cpu_max;
    uint64_t io_cpu, rest_cpu;
    /* the input of a turn (self_prep_cb): clients are read and the
     * broker's own services take messages until input_deadline */
    uint64_t input_deadline;
    unsigned self_taken; /* messages the services took this turn */
    /* the turn each message waiting for the services was queued in, in
     * step with the self pipe's queue (router_turn_stats) */
    uint64_t *selfq_turn;
    size_t selfq_head, selfq_count, selfq_size;
    bool selfq_lost; /* out of memory: no stamps until the pipe empties */
    uint64_t self_wait_max;
    /* what the current turn did, and the longest turn's record */
    struct turn_record {
        uint64_t cpu, prep, input, io, rest; /* CPU time, ns */
        uint64_t client_reads, client_msgs, flushes, reaped, enforced;
        uint64_t self_msgs, self_routed, fanout_sends;
        uint64_t module_msgs, overlay_msgs;
    } cur, longest;
    uint64_t cur_prep, cur_input; /* this turn's budgeted work, input */
    uint64_t input_cpu_max;
    uint64_t u_reads, u_msgs, u_flushes, u_reaped, u_enforced; /* usock's */
    struct overlay *overlay;
    int parent_online;

    /* routing tables (broker.c) */
    /* Written only by the broker's thread, under route_lock; module
     * threads read them under it (router_fast_from_module). */
    pthread_rwlock_t route_lock;
    struct strmap *peers;        /* route id -> struct peer */
    struct strmap *services;     /* service name -> struct peer */
    struct peer *self;           /* the broker's own services */
    struct strmap **tracked;     /* per direct child: RPCs in flight */
    size_t tracked_limit;        /* broker.tracked-rpc-limit, per sender */
    double track_logged;         /* when a refusal was last logged */
    unsigned long track_refused; /* refusals not yet logged */
    int nchildren;
    const uint32_t *children; /* the direct children, ascending */

    uint32_t event_seq; /* rank 0: last sequence published */

    /* modules */
    struct module **modules;
    size_t nmodules, modules_cap;

    /* state machine (main.c) */
    enum broker_state state;
    int exit_rc;
    char **initial_program; /* argv, NULL-terminated, or NULL */
    uv_process_t *init_proc;
    bool init_pgrp; /* init_proc leads its own process group */
    int shutdown_requested;
    int children_ready; /* direct children that are ready */
    bool *child_ready;  /* per direct child: sent broker.ready */
    /* broker.quorum-warn (FSD, default 60s; 0 or inf: never, stored as
     * -1): how long quorum waits before logging whom it waits for */
    double quorum_warn;
    uv_timer_t quorum_timer;
    size_t modlist_pos;              /* next entry of broker.modules */
    struct module *modlist_loading;  /* waiting for it to run */
    struct module *modlist_stopping; /* shutdown: waiting for it to exit */
    uv_timer_t module_stop_timer;    /* ... at most module_stop_timeout */
    /* broker.module-stop-timeout (FSD, default 30s; 0 or inf: for ever,
     * stored as -1): how long a shutdown waits for each module before
     * abandoning it */
    double module_stop_timeout;
    uv_check_t shutdown_check;
    /* broker.finalize-timeout (FSD, default 30s; 0 or inf: for ever,
     * stored as -1): how long finalize waits for the children to leave */
    double finalize_timeout;
    uv_timer_t finalize_timer;
    uv_idle_t module_reaper;          /* destroys exited modules */
    const flux_msg_t **state_waiters; /* state-machine.wait until run */
    size_t nstate_waiters;
    struct state_monitor *state_monitors; /* state-machine.monitor */
    size_t nstate_monitors;
    double state_time;              /* when the current state was entered (s) */
    const flux_msg_t *shutdown_req; /* streaming shutdown.start */
    int shutdown_loglevel;
    const flux_msg_t **health_watchers; /* streaming overlay.health */
    size_t nhealth_watchers;
    struct trace_set *overlay_trace; /* overlay.trace requests (trace.h) */
    struct trace_set *module_trace;  /* module.trace requests */
    int module_tracing; /* module_trace is not empty: read by the modules'
                         * threads (__atomic), which then take the slow
                         * path through the broker's thread */
    /* per direct child: the status of its subtree as it last told us
     * (enum subtree_status in builtin.c), reset when its link goes */
    int *child_subtree;
    char **child_error; /* per direct child: why its link went (or NULL) */
    int subtree_sent;   /* last status told to the parent, -1 for none */
    json_t *config;     /* conf.h */
    const flux_msg_t **config_watchers; /* streaming config.get */
    size_t nconfig_watchers;
    flux_msg_handler_t **config_handlers;
    flux_msg_handler_t **state_handlers;
    flux_msg_handler_t **builtin_handlers;
    struct groups *groups;            /* groups.h */
    struct hostlist_share *hostshare; /* hostlist_share.h */
};

/* ---- router (broker.c) ---- */

int router_init (struct broker *b);
void router_fini (struct broker *b);

/* Route a message received from 'from' (NULL: from the overlay, already
 * identified by where/peer_rank in the overlay callback).  Takes
 * ownership of msg. */
void router_from_overlay (struct broker *b, flux_msg_t *msg, int where,
                          uint32_t peer_rank);
void router_request (struct broker *b, flux_msg_t *msg, struct peer *from);
void router_response (struct broker *b, flux_msg_t *msg);
/* Publish an event (rank 0 assigns the sequence). */
int router_publish (struct broker *b, flux_msg_t *msg);
/* Deliver an event with its sequence locally and to the children. */
void router_event (struct broker *b, flux_msg_t *msg);

/* Send an error response to a request that cannot be delivered. */
void router_respond_error (struct broker *b, const flux_msg_t *req, int errnum,
                           const char *errstr);

/* Modules as routing peers. */
/* The services a module registered, besides its own name (a new array,
 * NULL on ENOMEM). */
json_t *router_module_services (struct broker *b, struct module *m);
int router_module_add (struct broker *b, struct module *m);
void router_module_remove (struct broker *b, struct module *m);
void router_from_module (struct module *m, flux_msg_t *msg, void *arg);
/* The fast path (module.h), run in module m's thread: a request for a
 * service of another module, or a response whose next hop is a module,
 * goes straight to that module's queue.  Everything else (events, the
 * router's own topics, a first request to a new service prefix that
 * must be noted for disconnect, other peers) is left to router_from_module
 * in the broker's thread. */
bool router_fast_from_module (struct module *m, flux_msg_t *msg, void *arg);

/* A child peer was lost: fail the RPCs in flight through it. */
void router_parent_online (struct broker *b);
void router_child_lost (struct broker *b, uint32_t child_rank);

/* How many RPCs sent down to children are in flight (broker.stats-get
 * shows it as "tracked-rpcs"). */
size_t router_tracked_count (struct broker *b);
/* Add "upstream-dropped-clients" to o: the local clients whose raw events
 * or answers were dropped going up, with how many; only userid's unless
 * it is FLUX_USERID_UNKNOWN. */
int router_upstream_clients (struct broker *b, json_t *o, uint32_t userid);

/* Add the loop's figures to broker.stats-get's object o (if not NULL):
 * "turns" and "turn-cpu-max" (the most CPU time one turn of the broker's
 * thread took, in seconds: what a request may wait behind, whatever the
 * machine's load), and the most each phase of a turn took:
 * "turn-prep-cpu-max" (the budgeted work), "turn-input-cpu-max" (the
 * clients that waited for their reads), "turn-io-cpu-max" (reading
 * clients, modules and peers), "turn-rest-cpu-max" (check, closing,
 * timer and idle callbacks); "turn-longest", what the longest turn did
 * (its phases' CPU time and its units of work); "self-wait-turns-max",
 * the most turns a message waited for the broker's own services, and
 * "read-wait-turns-max", the most a readable client waited for its read;
 * then start them again if clear. */
void router_turn_stats (struct broker *b, json_t *o, bool clear);

/* Register one of the broker's own service names. */
int router_self_service (struct broker *b, const char *name);

/* Attribute name as a byte count (digits, optional k/M/G/T), at least
 * min; dflt if unset (then set to it, immutable).  -1 with a message on
 * stderr if it is not one. */
int broker_bytes_attr (struct broker *b, const char *name, uint64_t dflt,
                       uint64_t min, size_t *dst);

/* Local socket server callbacks wiring (broker.c). */
int router_usock_start (struct broker *b, const char *path);

/* ---- built-in services (builtin.c) ---- */
int builtin_register (struct broker *b);
void builtin_unregister (struct broker *b);
/* Tell the built-ins the state changed (answers state-machine.wait). */
void builtin_state_changed (struct broker *b);
/* A child's status changed: streaming overlay.health requests get the
 * new health, and the parent this broker's subtree status if it changed. */
void builtin_health_changed (struct broker *b);
/* Child rank's link went (error says why) or came back (error NULL). */
void builtin_child_error (struct broker *b, uint32_t rank, const char *error);
/* The parent link came up: tell it this broker's subtree status. */
void builtin_parent_online (struct broker *b);
/* The shutdown is over: end a streaming shutdown.start (ENODATA). */
void builtin_shutdown_done (struct broker *b);
/* A client went (disconnect request msg): drop the requests of v[0..*n)
 * it sent (by their first route), without an answer; *n is updated. */
void builtin_drop_sender (const flux_msg_t **v, size_t *n,
                          const flux_msg_t *msg);
/* Load a module (name NULL: from the file name).  req, if given, is
 * answered when the module is running or has failed.  Returns the module
 * (starting), or NULL with error set. */
struct module *broker_module_load (struct broker *b, const char *target,
                                   const char *name, json_t *args,
                                   const flux_msg_t *req, flux_error_t *error);
/* Stop waiting for a module that does not stop (module_abandon), with a
 * message in the log at level that says why ("did not stop within 1.0 s"):
 * it becomes EXITED, so removes are answered and it is reaped. */
void broker_module_abandon (struct broker *b, struct module *m, int level,
                            const char *why);

/* ---- state machine (state.c) ---- */
int state_machine_init (struct broker *b);
void state_machine_fini (struct broker *b);
const char *state_name (enum broker_state s);
void state_enter (struct broker *b, enum broker_state s);
/* A module changed status (called by the module service). */
void state_module_status (struct broker *b, struct module *m, int status);
/* Exited modules were destroyed: a shutdown goes on with the next one. */
void state_modules_reaped (struct broker *b);
/* A module's place in the shutdown order: its index in broker.modules,
 * SIZE_MAX if it is not a default module (see state.c). */
size_t state_module_rank (struct broker *b, const char *name);
/* The direct children whose overlay link is up (ONLINE or TORPID). */
int state_children_up (struct broker *b);
/* Ask every module to stop at once (signals, lost parent). */
void state_stop_all_modules (struct broker *b);
/* Begin an orderly shutdown (from flux shutdown, a signal, or the end of
 * the initial program). */
void broker_shutdown (struct broker *b, int exit_rc);
/* Overlay status callback wiring (main.c). */
void broker_peer_status (struct broker *b, uint32_t peer, int status,
                         const char *error);

#endif /* !BROKER_BROKER_H */
