/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOB_EXEC_TIMERQ_H
#define JOB_EXEC_TIMERQ_H

/* timerq - many one-shot deadlines over a single timerfd.
 *
 * Each running job needs a timer or two (end of a simulated run, R
 * expiration).  Instead of one uv_timer_t per job (which must be closed
 * asynchronously before its memory is freed), a job embeds a struct
 * tq_entry and the queue keeps the entries in a binary min-heap ordered
 * by (deadline, arming order); one timerfd, watched by the loop, is
 * armed for the earliest.
 * Arm, re-arm and disarm are O(log n) and allocate nothing once the heap
 * array has grown to the number of armed entries.  An entry may be freed
 * as soon as it is disarmed (or has fired).
 *
 * Deadlines are in nanoseconds of the monotonic clock (uv_hrtime), and a
 * delay counts from the call: libuv's own timers count whole
 * milliseconds from the loop's cached clock, so all that were armed in
 * the same millisecond fire together (1 ms simulated jobs started 0.3 ms
 * apart finished together, and their successors queued behind each
 * other for resources and commits).
 *
 * Callbacks run from the timerfd's callback, earliest first, ties in the
 * order they were armed.  An entry is disarmed before its callback runs,
 * so the callback may re-arm it, arm or disarm others, or free the
 * object holding it.  Entries armed from a callback wait for the next
 * pass even if they are due, so a callback re-arming itself with delay 0
 * cannot starve the loop.  A callback must not destroy the queue.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct timerq timerq_t;
struct tq_entry;
typedef void (*tq_entry_f) (struct tq_entry *e);

struct tq_entry {
    uint64_t deadline; /* uv_hrtime() nanoseconds */
    uint64_t seq;      /* arming order, breaks ties */
    size_t index;      /* heap slot, TQ_UNARMED if not in the heap */
    tq_entry_f cb;
};
#define TQ_UNARMED ((size_t)-1)

/* Create a queue on loop.  NULL with errno ENOMEM. */
timerq_t *timerq_create (uv_loop_t *loop);

/* Disarm every entry (their callbacks never run) and close the watcher
 * (closed asynchronously: the loop must run once more, or be closed, for
 * libuv to finish; the queue's memory is freed by the close callback).
 * NULL-safe, keeps errno.
 */
void timerq_destroy (timerq_t *tq);

/* Prepare an entry (unarmed) with its callback. */
void tq_entry_init (struct tq_entry *e, tq_entry_f cb);

/* Arm e to fire after 'seconds' (>= 0, finite, at most 1e12; rounded up
 * to whole nanoseconds).  Re-arming an armed entry moves it.  -1 with errno
 * EINVAL (bad arguments) or ENOMEM; on failure e is unchanged.
 */
int timerq_arm (timerq_t *tq, struct tq_entry *e, double seconds);

/* Disarm e (no-op if it is not armed). */
void timerq_disarm (timerq_t *tq, struct tq_entry *e);

static inline bool tq_entry_armed (const struct tq_entry *e)
{
    return e->index != TQ_UNARMED;
}

/* Number of armed entries. */
size_t timerq_count (const timerq_t *tq);

#endif /* !JOB_EXEC_TIMERQ_H */
