/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_OVERLAY_H
#define FLUX_OVERLAY_H

/* The overlay: one broker's links in the tree-based overlay network.
 *
 * Transport only: the overlay moves RFC 3 messages between this broker and
 * its parent and children, keeps those links healthy, and reports what
 * happens to them.  Deciding where a message goes is the broker's router.
 *
 * Links are ZeroMQ over tcp:// or ipc://, every one CURVE-encrypted:
 *  - to children: one ROUTER socket, bound; a child is admitted only if
 *    its public key is one authorized for its rank (ZAP), it says hello
 *    with that rank and the same protocol version, and the rank is one of
 *    this broker's direct children (topology.h);
 *  - to the parent: one DEALER socket, connected, whose routing id is this
 *    broker's rank in decimal.
 *
 * Routing ids: a child's requests and responses arrive with its rank
 * string pushed on the route stack (the ZeroMQ identity frame becomes the
 * newest hop: for a request that is the hop the response goes back
 * through, for a response the router simply pops it); events and control
 * messages carry no route stack, and the identity is dropped.
 * overlay_send_child() sends to the child named by a rank; the message's
 * route stack is left as given.
 *
 * Hello: after connecting, the child sends a control message HELLO whose
 * status is OVERLAY_PROTOCOL_VERSION.  The parent checks that the rank
 * the child claims (its routing id) is the rank its CURVE key was
 * authorized for, that the rank is a direct child, and the version; it
 * answers WELCOME (both sides are then ONLINE) or DISCONNECT with a reason
 * code (the child then reports its parent LOST with that reason).
 *
 * Health: the parent sends a heartbeat control message to each child every
 * heartbeat period, and children send one up.  Any message counts as
 * hearing from the peer.  A peer not heard from for torpid_max seconds is
 * torpid (and lively again on the next message).  A child whose connection
 * drops, or that stays silent past lost_max, is lost: it is disconnected
 * and must say hello again to rejoin.  A broker whose parent is lost (the
 * connection dropped, silence past lost_max, a DISCONNECT from the parent,
 * the parent refused it, or no WELCOME came within lost_max) is told so via
 * the status callback, and must call overlay_connect() again to rejoin.
 * Silence is checked once per heartbeat period, so it is noticed up to one
 * period late.  ONLINE is reported again when a TORPID peer is heard.
 *
 * All callbacks run from the reactor passed to overlay_create().  They may
 * call any overlay function except overlay_destroy().
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libflux/flux.h"

#define OVERLAY_PROTOCOL_VERSION 1

/* Control messages (RFC 3 type/status) the overlay speaks between direct
 * peers.  Types 0..15 are the overlay's own and never reach recv_cb;
 * control messages of other types are passed to recv_cb. */
enum overlay_control_type {
    OVERLAY_CONTROL_HEARTBEAT = 0,  /* either way; status 0 */
    OVERLAY_CONTROL_HELLO = 1,      /* child to parent; status = version */
    OVERLAY_CONTROL_WELCOME = 2,    /* parent to child; status = version */
    OVERLAY_CONTROL_DISCONNECT = 3, /* parent to child; status = reason */
    OVERLAY_CONTROL_RESERVED = 15,  /* last type reserved to the overlay */
};

/* Status of a DISCONNECT: why the parent refuses or drops the child. */
enum overlay_disconnect_reason {
    OVERLAY_DISCONNECT_ADMIN = 1,     /* overlay_disconnect_child() */
    OVERLAY_DISCONNECT_NOTCHILD = 2,  /* rank is not a direct child */
    OVERLAY_DISCONNECT_BADKEY = 3,    /* key authorized for another rank */
    OVERLAY_DISCONNECT_VERSION = 4,   /* protocol version mismatch */
    OVERLAY_DISCONNECT_NOTONLINE = 5, /* traffic before (or after) hello */
    OVERLAY_DISCONNECT_SILENT = 6,    /* silent past lost_max */
};

enum overlay_where {
    OVERLAY_UPSTREAM = 1,   /* from/to the parent */
    OVERLAY_DOWNSTREAM = 2, /* from/to a child */
};

enum overlay_peer_status {
    OVERLAY_PEER_OFFLINE = 0, /* never connected yet */
    OVERLAY_PEER_ONLINE = 1,
    OVERLAY_PEER_TORPID = 2, /* online but silent past torpid_max */
    OVERLAY_PEER_LOST = 3,   /* connection lost, or refused at hello */
};

struct overlay;
struct topology;

/* A message arrived.  The callback owns msg (decref it when done).
 * For DOWNSTREAM, peer_rank is the sender (already pushed on the route
 * stack of requests and responses); for UPSTREAM it is the parent's rank.
 * Messages from a peer that is not ONLINE or TORPID are never delivered.
 */
typedef void (*overlay_recv_f) (struct overlay *ov, flux_msg_t *msg,
                                enum overlay_where where, uint32_t peer_rank,
                                void *arg);

/* A peer changed state.  peer_rank is a child, or the parent.
 * error is a short human reason for LOST (else NULL). */
typedef void (*overlay_status_f) (struct overlay *ov, uint32_t peer_rank,
                                  enum overlay_peer_status status,
                                  const char *error, void *arg);

/* Log sink for what the overlay notices but cannot report otherwise
 * (malformed or refused peer traffic, failed sends).  level is a syslog
 * level (LOG_ERR .. LOG_DEBUG); msg is one line without newline. */
typedef void (*overlay_log_f) (struct overlay *ov, int level, const char *msg,
                               void *arg);

/* A message was sent (tx true) to, or received from, peer_rank: every
 * message of an online link, the overlay's own control messages too
 * (heartbeats, hello, welcome, disconnect), received ones before the
 * overlay looks at them.  msg is only lent. */
typedef void (*overlay_trace_f) (struct overlay *ov, bool tx,
                                 uint32_t peer_rank, const flux_msg_t *msg,
                                 void *arg);

struct overlay_config {
    uint32_t rank;
    uint32_t size;
    const struct topology *topo; /* the tree (borrowed: must outlive ov) */
    double heartbeat;            /* seconds between heartbeats (0 = 1.0) */
    double torpid_max;           /* seconds (0 = 30) */
    double lost_max;             /* seconds of silence before lost, 0 = never */
    size_t sendq_max; /* bytes ZeroMQ may hold for one peer (0 = 256 MiB):
                       * a send past it marks the peer LOST */
};

/* Create the overlay of one broker.  cfg is copied.  recv_cb and
 * status_cb may be NULL (messages are then dropped).  No socket exists
 * until overlay_bind() / overlay_connect().  Fails with EINVAL (size 0,
 * rank >= size, no topo or one of another size, a negative or non-finite time),
 * ENOMEM, or what ZeroMQ reports for context creation.
 */
struct overlay *overlay_create (flux_reactor_t *r,
                                const struct overlay_config *cfg,
                                overlay_recv_f recv_cb,
                                overlay_status_f status_cb, void *arg);
/* Close every socket at once (linger 0: unsent messages are dropped) and
 * free.  Peers notice the closed connections.  NULL-safe, preserves
 * errno.  Not from inside an overlay callback.
 */
void overlay_destroy (struct overlay *ov);

/* Replace the default log sink (stderr, LOG_INFO and more urgent).
 * cb NULL silences the overlay. */
void overlay_set_log (struct overlay *ov, overlay_log_f cb, void *arg);

/* Call cb for each message sent or received (overlay_trace_f); cb NULL
 * stops (the default: no cost per message then). */
void overlay_set_trace (struct overlay *ov, overlay_trace_f cb, void *arg);

/* This broker's CURVE keypair (Z85, 40 chars each).  Generated at create;
 * overlay_set_cert() replaces it (e.g. loaded from a cert file): EINVAL
 * unless both are valid Z85 keys and seckey's public key is pubkey; EBUSY
 * once a socket is bound or connected (they use the key in force then).
 */
const char *overlay_get_pubkey (struct overlay *ov);
int overlay_set_cert (struct overlay *ov, const char *pubkey,
                      const char *seckey);

/* Allow the broker of this rank to connect with this public key (any
 * rank < size may be authorized; only direct children get past hello).
 * A rank has one key: authorizing it again replaces the old key.  A key
 * names one rank: EEXIST if it is authorized for another rank.  EINVAL
 * for a bad rank or key.  Takes effect for handshakes from now on.
 * rank OVERLAY_ANY_RANK: the key is the instance's shared key (a config
 * file's curve_cert, as flux-core): a peer holding it may be any child.
 */
#define OVERLAY_ANY_RANK UINT32_MAX
int overlay_authorize (struct overlay *ov, uint32_t rank, const char *pubkey);

/* Bind the child-facing socket (only if this rank has children: EINVAL
 * otherwise, EBUSY if already bound).  uri like "tcp://10.0.0.1:*" or
 * "ipc:///tmp/x/tbon-0" (whose socket file is made mode 0600); errors
 * from zmq_bind() (EADDRINUSE, ...) or chmod() are passed on and leave
 * nothing behind.  overlay_get_bind_uri() returns the
 * resolved endpoint (wildcard port filled in), NULL before bind.
 */
int overlay_bind (struct overlay *ov, const char *uri);
const char *overlay_get_bind_uri (struct overlay *ov);

/* Connect to the parent and say hello.  Status ONLINE is reported for
 * the parent when the hello is accepted, LOST (with a reason) if it is
 * refused.  EINVAL for rank 0 or a bad key; EBUSY if already connected
 * and the parent is not LOST.  Called again after the parent was LOST,
 * it drops the old connection and starts over (status OFFLINE).
 */
int overlay_connect (struct overlay *ov, const char *parent_uri,
                     const char *parent_pubkey);

/* Send to the parent / to a direct child.  The overlay takes no ownership
 * and does not modify msg; it never blocks (messages queue without bound
 * in ZeroMQ).  EHOSTUNREACH if that peer is not ONLINE or TORPID, or if
 * its connection turns out to be gone (the child is then reported LOST
 * on the next loop turn).  EINVAL if child_rank is not a direct child.
 */
int overlay_send_parent (struct overlay *ov, const flux_msg_t *msg);
int overlay_send_child (struct overlay *ov, uint32_t child_rank,
                        const flux_msg_t *msg);

/* What ZeroMQ holds for the parent (bytes), and tbon.sendq-limit (past
 * which the parent is marked LOST).  overlay_parent_room() says whether
 * msg can be sent to the parent without taking what ZeroMQ holds for it
 * past limit bytes: a broker refuses what its own clients send upstream
 * well before tbon.sendq-limit, so a client cannot get the link lost.
 */
size_t overlay_parent_queued (struct overlay *ov);
size_t overlay_sendq_max (struct overlay *ov);
bool overlay_parent_room (struct overlay *ov, const flux_msg_t *msg,
                          size_t limit);

/* The same for a direct child: requests going down are refused before
 * they could get the child marked LOST (broker.c, send_down). */
size_t overlay_child_queued (struct overlay *ov, uint32_t child_rank);
bool overlay_child_room (struct overlay *ov, uint32_t child_rank,
                         const flux_msg_t *msg, size_t limit);

/* Peer state queries (for overlay.health and flux overlay status).
 * since (if non-NULL) is the reactor time (flux_reactor_now()) of the
 * last change.  A rank that is not a direct child reads OFFLINE with
 * since 0, as does the parent of rank 0.
 */
enum overlay_peer_status overlay_child_status (struct overlay *ov,
                                               uint32_t child_rank,
                                               double *since);
enum overlay_peer_status overlay_parent_status (struct overlay *ov);

/* Disconnect a child: send it DISCONNECT (ADMIN) and report it LOST with
 * reason (or "disconnected") on the next loop turn.  EINVAL if not a
 * direct child, EHOSTUNREACH if it is not ONLINE or TORPID.
 */
int overlay_disconnect_child (struct overlay *ov, uint32_t child_rank,
                              const char *reason);

#endif /* !FLUX_OVERLAY_H */
