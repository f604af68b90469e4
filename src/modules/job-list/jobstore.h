/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobstore.h - every job job-list knows, indexed and ordered.
 *
 * Jobs are found by id in a hash, and listed from three ordered lists:
 *   pending   (DEPEND, PRIORITY, SCHED): priority, highest first, then
 *             id (oldest first)
 *   running   (RUN, CLEANUP): t_run, most recent first
 *   inactive  (INACTIVE): t_inactive, most recent first
 * NEW jobs are in the hash only.  Applying an event is O(log n) (a job
 * moves between lists or within one when its state or sort key
 * changes); counts per state and result, overall and per queue, are
 * kept up to date on each change, so job-stats is O(queues).
 *
 * Journal resynchronization: when a new journal stream starts (after
 * job-manager was reloaded), jobstore_resync_begin() opens a new
 * generation; a job whose backlog arrives is rebuilt from it, and
 * jobstore_resync_end() drops the jobs the backlog did not mention.
 */
#ifndef JOB_LIST_JOBSTORE_H
#define JOB_LIST_JOBSTORE_H

#include <jansson.h>

#include "job.h"
#include "ordlist.h"

typedef struct jobstore jobstore_t;

enum { LIST_NONE = 0, LIST_PENDING, LIST_RUNNING, LIST_INACTIVE };

/* Called after a job changed (job set) or was dropped (job NULL). */
typedef void (*jobstore_notify_f) (flux_jobid_t id, struct job *job, void *arg);

jobstore_t *jobstore_create (void);
void jobstore_destroy (jobstore_t *js); /* NULL-safe, keeps errno */

void jobstore_set_notify (jobstore_t *js, jobstore_notify_f cb, void *arg);

/* Apply one journal response {id:I, events:[entries], jobspec?:o, R?:o}
 * (PROTOCOLS.md 5.2).  Events of a job not seen before are ignored
 * unless the first is "submit".  A malformed event is skipped and the
 * others applied; the first problem is returned as -1 with errno
 * EPROTO and error text (the caller logs it).  ENOMEM.
 */
int jobstore_apply (jobstore_t *js, json_t *resp, flux_error_t *error);

struct job *jobstore_lookup (jobstore_t *js, flux_jobid_t id);

/* An inactive job was purged by job-manager (job-purge-inactive):
 * drop it and count it in inactive_purged.  ENOENT if unknown, EINVAL
 * if it is not inactive here yet: the event overtook the job's journal
 * entries (events and responses take different paths), so the id is
 * remembered and the job purged once an entry makes it inactive; the
 * next resynchronization forgets what no backlog entry claimed.
 */
int jobstore_purge (jobstore_t *js, flux_jobid_t id);

void jobstore_resync_begin (jobstore_t *js);
void jobstore_resync_end (jobstore_t *js);

/* The ordered list LIST_PENDING, LIST_RUNNING or LIST_INACTIVE. */
const ordlist_t *jobstore_list (jobstore_t *js, int which);

size_t jobstore_count (jobstore_t *js); /* jobs in the hash */

/* job-list.job-stats response (PROTOCOLS.md 5.4), a new reference:
 * {job_states:{depend,priority,sched,run,cleanup,inactive,total},
 *  successful, failed, canceled, timeout, inactive_purged,
 *  queues:[{same, name}]}.  NULL with ENOMEM.
 */
json_t *jobstore_stats (jobstore_t *js);

/* The pool strings of jobs are interned in (for tests). */
strpool_t *jobstore_strpool (jobstore_t *js);

#endif /* !JOB_LIST_JOBSTORE_H */
