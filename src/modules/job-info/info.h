/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* info.h - the job-info service (RFC 41 as PROTOCOLS.md 5.3 summarizes
 * it): job data in the KVS, for the instance owner and the job's user.
 *
 *   job-info.lookup {id:I, keys:[s], flags:i} -> {id:I, <key>:value...}
 *       flags JSON_DECODE (1): jobspec and R as objects; CURRENT (2):
 *       jobspec-update / resource-update events applied to them
 *   job-info.eventlog-watch {id:I, path:s, flags:i} (streaming)
 *       -> {event:"<one RFC 18 line>\n"} per event; flags WAITCREATE (1),
 *       INITIAL_SENTINEL (2: one response without payload once the
 *       current events are sent); the main eventlog's stream ends with
 *       ENODATA after "clean"; cancel with eventlog-watch-cancel
 *   job-info.update-watch {id:I, key:"R"|"jobspec", flags:0} (streaming)
 *       -> {<key>:o} now and after each update event; ENODATA once the
 *       job is inactive; cancel with update-watch-cancel
 *   job-info.update-lookup: the same, one response
 *
 * Paths are relative to the job's KVS directory (RFC 16): "eventlog",
 * "jobspec", "R", "J", and guest.<key> (e.g. guest.exec.eventlog,
 * guest.output): job.<id>.guest is the job's guest namespace job-<id>
 * (a symlink) while the job runs, its final content once the exec
 * service is done with it.  A lookup reads through the link.  A watch of
 * a guest path (guest.c) waits for the job's "start" event, follows the
 * key in the guest namespace, then the copy in the primary namespace
 * when the namespace is removed, without losing or repeating a line, and
 * ends with ENODATA (also when the job becomes inactive without ever
 * starting).
 *
 * Guests may only see jobs they submitted (the userid of the submit
 * event), else EPERM.  Like the kvs-watch engine, it never registers
 * handlers: main.c feeds it requests.
 */
#ifndef JOB_INFO_INFO_H
#define JOB_INFO_INFO_H

#include <jansson.h>
#include <stdbool.h>
#include <syslog.h>
#include <stdint.h>

#include "libflux/flux.h"
#include "libflux/list.h"
#include "libjob/job.h"

enum {
    INFO_LOOKUP_JSON_DECODE = 1,
    INFO_LOOKUP_CURRENT = 2,
    INFO_WATCH_WAITCREATE = 1,
    INFO_WATCH_INITIAL_SENTINEL = 2,
};

struct info {
    flux_t *h;
    uint32_t rank;
    struct list_node lookups;  /* struct lookup */
    struct list_node watchers; /* struct watcher */
    struct list_node guests;   /* struct gwatch: watchers of guest.* */
    struct list_node updates;  /* struct update */
    unsigned long nlookups, nwatches, nupdates, responses;
};

struct info *info_create (flux_t *h, uint32_t rank);
/* End everything in flight with ENOSYS and free.  NULL-safe. */
void info_destroy (struct info *ctx);

void info_lookup (struct info *ctx, const flux_msg_t *msg);
void info_eventlog_watch (struct info *ctx, const flux_msg_t *msg);
void info_eventlog_watch_cancel (struct info *ctx, const flux_msg_t *msg);
void info_update_watch (struct info *ctx, const flux_msg_t *msg);
void info_update_watch_cancel (struct info *ctx, const flux_msg_t *msg);
void info_disconnect (struct info *ctx, const flux_msg_t *msg);
json_t *info_stats (struct info *ctx);

/* Shared by lookup.c, watch.c and update.c */
/* A line in the broker log (log.append; PRI = severity << 3 | facility,
 * PROTOCOLS.md 3). */
void info_log (struct info *ctx, int severity, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void info_respond_error (struct info *ctx, const flux_msg_t *msg, int errnum,
                         const char *text);
int info_job_key (char *buf, size_t size, flux_jobid_t id, const char *path);
/* Is req from the sender disconnect message disc names (first route),
 * and may disc's credentials end it (its user or the owner)? */
bool info_disconnect_matches (const flux_msg_t *req, const flux_msg_t *disc);
bool info_cancel_matches (const flux_msg_t *req, const flux_msg_t *cancel,
                          uint32_t matchtag);
/* sender NULL: end all with ENOSYS; else drop those of sender. */
void info_lookup_destroy_all (struct info *ctx, const flux_msg_t *sender);
void info_watch_destroy_all (struct info *ctx, const flux_msg_t *sender);
void info_update_destroy_all (struct info *ctx, const flux_msg_t *sender);

/* guest.c: watches of guest.<key> paths (path includes "guest."). */
void info_guest_watch (struct info *ctx, const flux_msg_t *msg, flux_jobid_t id,
                       const char *path, int flags);
void info_guest_cancel (struct info *ctx, const flux_msg_t *msg,
                        uint32_t matchtag);
void info_guest_destroy_all (struct info *ctx, const flux_msg_t *sender);

#endif /* !JOB_INFO_INFO_H */
