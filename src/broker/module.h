/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_MODULE_H
#define BROKER_MODULE_H

/* Broker modules (RFC 5): a DSO exporting mod_main(), run in its own
 * thread with its own reactor, talking to the broker only through a
 * msgpipe wrapped as its flux_t.
 *
 * The module thread (the "loader") handles the welcome request, caches
 * the attributes it carries, registers default methods (NAME.shutdown,
 * NAME.ping, NAME.stats-get, NAME.rusage), reports RUNNING once the
 * reactor runs, calls mod_main, then FINALIZING (requests still queued get
 * ENOSYS) and EXITED with mod_main's errno.
 *
 * The broker side receives everything the module sends through the
 * recv callback (module.status requests are handled here and not passed
 * on) and sends to the module with module_send().
 *
 * Fast path: each message the module sends is first offered to the fast
 * callback, in the module's own thread, which may deliver it straight to
 * another module (without waking the broker's thread).  It is offered
 * only while nothing the module sent before is still waiting for, or
 * being routed by, the broker's thread, so a module's messages keep
 * their order.
 *
 * The module group: the modules named by module_group_set() (the
 * broker.module-group attribute) share one thread instead, named
 * "modgroup", each as a task of a coop (libflux/coop.h): a module's loop
 * yields where it would block, so a message between two of them wakes
 * no other thread.  Everything else is the same: the loader above runs
 * in the task, the module's handle, loop and stack are its own.  A module
 * that blocks outside its loop (a system call, a long computation)
 * delays the whole group, so one that may (content-sqlite's fsync) is
 * left out of it.
 */
#include <stdbool.h>

#include <jansson.h>
#include <uv.h>

#include "libflux/flux.h"

enum {
    MODSTATE_INIT = 0,
    MODSTATE_RUNNING = 1,
    MODSTATE_FINALIZING = 2,
    MODSTATE_EXITED = 3,
};

struct module;

/* A message from the module (callback owns msg). */
typedef void (*module_recv_f) (struct module *m, flux_msg_t *msg, void *arg);
/* The module's state changed (RUNNING, FINALIZING, EXITED). */
typedef void (*module_status_f) (struct module *m, int prev, void *arg);
/* Called in the module's thread: true if it delivered msg (and took the
 * reference), false to let the broker's thread route it. */
typedef bool (*module_fast_f) (struct module *m, flux_msg_t *msg, void *arg);

/* The names (comma separated; NULL or "": none) of the modules that
 * module_create() runs in the group from now on.  -1 with ENOMEM. */
int module_group_set (const char *names);

/* Load the DSO at path and start its thread (or its task in the group).  name
 * NULL: derived from the file name (up to the first '.').  args: JSON array of
 * strings (borrowed).  attrs: JSON object of cacheable attributes for the
 * welcome (borrowed).  fast_cb may be NULL.  Errors: ENOENT (no file), EINVAL
 * (no mod_main), with text.
 */
struct module *module_create (uv_loop_t *loop, const char *path,
                              const char *name, json_t *args, json_t *attrs,
                              uint32_t owner, module_recv_f recv_cb,
                              module_fast_f fast_cb, module_status_f status_cb,
                              void *arg, flux_error_t *error);

/* Stamp the instance owner's credentials where msg has none (what the
 * broker does to everything a module sends). */
void module_stamp (struct module *m, flux_msg_t *msg);

/* Join the thread (it must have exited, or be told to with a shutdown
 * request first) and free everything.  NULL-safe.  An abandoned module
 * whose thread still runs is not joined: it is freed when the thread
 * reports EXITED, or never if the broker exits first. */
void module_destroy (struct module *m);

/* module_destroy(), waiting at most timeout seconds (< 0: for ever) for
 * the thread.  false if it has not exited by then: it is left running,
 * and m is not freed (the broker is about to exit). */
bool module_destroy_wait (struct module *m, double timeout);

/* Stop waiting for a module that does not stop (flux module remove
 * --cancel): its status becomes EXITED (errnum ECANCELED) at once, so
 * the broker can unregister it, while its thread goes on in the
 * background.  What the thread sends afterwards: responses are still
 * routed (a late answer reaches its requester), requests get ENOSYS,
 * events are dropped, and nothing takes the fast path.  A thread blocked
 * forever stays blocked; its memory is not reclaimed.  0, or -1 EINVAL. */
int module_abandon (struct module *m);

/* Ask the module to stop (NAME.shutdown, no response expected). */
int module_stop (struct module *m);

/* Send a message to the module (takes a new reference). EPIPE if gone. */
int module_send (struct module *m, const flux_msg_t *msg);

/* The same, refused with EAGAIN while what waits for the module weighs
 * over max_bytes with msg (flux_msgpipe_send_bounded): for requests, so a
 * module that stopped reading cannot make the broker hold them without
 * bound. */
int module_send_bounded (struct module *m, const flux_msg_t *msg,
                         size_t max_bytes);

/* Bound what the module sends and the broker's thread has not read yet
 * to max_bytes (broker.module-recvq-limit; 0: none): past it the module's
 * thread waits in its send until the broker has read half of it
 * (flux_msgpipe_set_limit).  Nothing the module sends is dropped. */
void module_set_recv_limit (struct module *m, size_t max_bytes);

/* The most that has waited for the broker from the module, in bytes, and
 * how many of the module's sends had to wait. */
void module_recv_stats (struct module *m, size_t *bytes_max, uint64_t *waits);

/* What waits for the module, in bytes (flux_msgpipe_bytes). */
size_t module_queued_bytes (struct module *m);

const char *module_name (struct module *m);
const char *module_path (struct module *m);
const char *module_uuid (struct module *m);
int module_status (struct module *m);
int module_errnum (struct module *m);
double module_idle (struct module *m); /* seconds since last message */
/* Messages queued to the module (not yet read by it) and from it (not
 * yet routed by the broker). */
void module_queue_counts (struct module *m, size_t *sendq, size_t *recvq);

/* Per-module slot for the broker (e.g. the pending load request). */
void module_set_aux (struct module *m, void *aux);
void *module_get_aux (struct module *m);

/* Find the DSO for a module name in a colon-separated search path:
 * NAME.so in each directory.  Caller frees. */
char *module_find (const char *searchpath, const char *name);

#endif /* !BROKER_MODULE_H */
