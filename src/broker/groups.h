/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* groups.h - broker groups (PROTOCOLS.md section 3, Groups): named sets of
 * ranks, reduced up the tree to rank 0, where groups.get answers.
 *
 * Services:
 *   groups.get (user, rank 0 only, else EPROTO): {name:s} -> {members:s}
 *     (an RFC 22 idset; "" for a group nobody joined).  With
 *     FLUX_MSGFLAG_STREAMING: the members now, then again after every
 *     change, until groups.disconnect.
 *   groups.join / groups.leave (owner): {name:s} -> {}: this broker's
 *     rank joins or leaves.  EEXIST when already a member, ENOENT when
 *     not one.
 *   groups.update (owner, internal): from a child broker, the net
 *     changes of its subtree since its last update.
 *
 * Cost: every broker keeps the members of its own subtree.  Changes are
 * batched for one loop turn and sent to the parent as one groups.update
 * holding, per changed group, the idsets of ranks that joined and left;
 * the parent applies and forwards them the same way.  So rank 0 receives
 * at most one message per child per batch, whatever the number of ranks
 * that changed, and the ranges of an idset keep it short.
 *
 * Groups the broker keeps itself, as flux-core does:
 *   broker.online  each broker joins when it enters quorum and leaves at
 *                  shutdown; a lost child's whole subtree leaves.
 *   broker.torpid  a child is put in it by its parent while the overlay
 *                  reports it torpid.
 */
#ifndef BROKER_GROUPS_H
#define BROKER_GROUPS_H

struct broker;

#define GROUPS_MAX 1024          /* distinct group names */
#define GROUPS_MAX_WATCHERS 4096 /* streaming groups.get, all groups */
#define GROUPS_NAME_MAX 255

int groups_register (struct broker *b);
void groups_unregister (struct broker *b);

/* The broker's state changed: join/leave broker.online. */
void groups_state_changed (struct broker *b);

/* A child's overlay status changed: broker.torpid, and a lost child's
 * subtree leaves every group. */
void groups_health_changed (struct broker *b);

/* The parent accepted this broker (it starts with none of this subtree's
 * members): send it every group's members, not only the changes since the
 * last update.  Changes made before the parent was online (a child that
 * joined while this broker was still connecting) were dropped with the
 * update that carried them. */
void groups_parent_online (struct broker *b);

#endif /* !BROKER_GROUPS_H */
