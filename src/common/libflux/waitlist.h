/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_WAITLIST_H
#define FLUX_WAITLIST_H

/* Internal: work that a reloading service refused, kept and sent again
 * when the service is back.
 *
 * While a module such as the kvs unloads, it refuses requests with ENOSYS
 * having done nothing, and the broker does the same while no module
 * serves the name; the new module announces itself with an event
 * ("kvs.online", "content.online").  A client that must not lose such
 * work keeps each refused item on a waitlist and sends it again on that
 * event.  One waitlist per service a module waits for:
 *
 *   waitlist_sent (wl, it)     when it is sent (notes the online events
 *                              seen so far)
 *   waitlist_refused (wl, it)  it came back refused with ENOSYS: it waits
 *   waitlist_online (wl)       the service's online event: every waiting
 *                              item is resent, the longest waiting first
 *   waitlist_cancel (wl, it)   it goes away while waiting (safe when not
 *                              waiting)
 *
 * The online event can be handled before the continuation that sees the
 * refusal (continuations run on a later loop turn): waitlist_refused()
 * then finds that an online event came after the item was sent and
 * resends it at once instead of leaving it to wait for an event that has
 * already passed.
 *
 * Resending is the caller's callback (given to waitlist_init), which
 * sends the item again and calls waitlist_sent().  It may call
 * waitlist_refused() or waitlist_cancel() on any item.  Every operation
 * is O(1) per item; nothing is allocated.
 *
 * Part of libflux-internal.la, not exported from libflux-core.so
 * (src/common/libflux/Makefile.am).
 */
#include <stdbool.h>
#include <stddef.h>

#include "list.h"

struct waitlist_item {
    struct list_node node; /* on the waitlist while waiting */
    unsigned long epoch;   /* online events seen when it was sent */
};

struct waitlist;
typedef void (*waitlist_resend_f) (struct waitlist *wl,
                                   struct waitlist_item *it, void *arg);

/* Embed in the caller's structure; the members are private. */
struct waitlist {
    struct list_node head;
    unsigned long epoch; /* online events seen */
    size_t count;        /* items waiting */
    waitlist_resend_f resend;
    void *arg;
};

/* The structure that embeds it. */
#define waitlist_entry(it, type, member) list_entry (it, type, member)

void waitlist_init (struct waitlist *wl, waitlist_resend_f resend, void *arg);

/* An item is set up (not waiting) by waitlist_item_init(). */
void waitlist_item_init (struct waitlist_item *it);

void waitlist_sent (struct waitlist *wl, struct waitlist_item *it);

/* Returns true if it was resent at once (the service came back since
 * it was sent), false if it waits. */
bool waitlist_refused (struct waitlist *wl, struct waitlist_item *it);

void waitlist_online (struct waitlist *wl);

void waitlist_cancel (struct waitlist *wl, struct waitlist_item *it);

bool waitlist_waiting (const struct waitlist_item *it);

/* Items waiting, and the one that has waited the longest (NULL if none). */
size_t waitlist_count (const struct waitlist *wl);
struct waitlist_item *waitlist_first (struct waitlist *wl);

#endif /* !FLUX_WAITLIST_H */
