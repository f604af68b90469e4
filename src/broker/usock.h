/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_USOCK_H
#define BROKER_USOCK_H

/* usock: the server side of the local connector (PROTOCOLS.md 1.1-1.2).
 *
 * A usock_server listens on a unix socket from a libuv loop.  Each
 * accepted peer is classified by its SO_PEERCRED uid (usock_policy) and
 * either refused (one EPERM byte, then close) or accepted (one 0x00 byte)
 * and becomes a usock_client.  Framed messages read from a client are
 * decoded, stamped with its credentials and handed to ops->message;
 * usock_client_send() frames messages back without ever blocking.
 *
 * The server knows nothing of routing: pushing the client's UUID onto a
 * request's route stack, subscriptions and services are the caller's
 * business (the aux slot holds its per-client state).
 *
 * Lifetimes.  A client exists from ops->connected until ops->disconnected
 * returns; then its aux value is destroyed and the object freed.  A client
 * goes away when the peer hangs up, sends a malformed frame, falls too far
 * behind reading (max_sendq_bytes), holds the most when the server is over
 * its memory bound (max_held_bytes), announces a frame over its role's
 * limit or does not finish a frame in time (frame_timeout_ms), on
 * usock_client_disconnect() or on
 * usock_server_destroy().  ops->disconnected runs exactly once per
 * connected client, never nested in a usock call made by the caller,
 * except that usock_server_destroy() runs the pending ones itself and
 * usock_server_turn() runs those of the clients it closes (cut off by
 * the server), so that they count in the owner's turn budget.
 * After usock_client_disconnect() no message callback arrives for the
 * client and usock_client_send() fails with EPIPE.
 *
 * Memory of closed clients and of a destroyed server is released from
 * libuv close callbacks: run the loop once more (uv_run (loop,
 * UV_RUN_NOWAIT) is enough) before uv_loop_close().
 *
 * Fairness: at most USOCK_BATCH messages of one client are delivered per
 * loop turn; the rest waits for the next turn (reading from that client
 * pauses meanwhile), so one busy client never starves the others.
 *
 * Single threaded: every function must be called from the loop's thread.
 * All functions may be called from any usock callback (including
 * usock_server_destroy(), e.g. from ops->message).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "libflux/flux.h"

#ifdef __cplusplus
extern "C" {
#endif

struct usock_server;
struct usock_client;

#define USOCK_BATCH 64
#define USOCK_SENDQ_DEFAULT (64u * 1024 * 1024)
#define USOCK_GUEST_FRAME_DEFAULT (64u * 1024 * 1024)
#define USOCK_FRAME_TIMEOUT_DEFAULT 60000 /* ms */
#define USOCK_HELD_FLOOR (256u * 1024 * 1024)
#define USOCK_HELD_CEILING (4ull * 1024 * 1024 * 1024)
#define USOCK_GUEST_CONNS_DEFAULT 4096

/* Who may connect and with which roles (PROTOCOLS.md 1.2, RFC 12).
 * The peer uid is taken from SO_PEERCRED:
 *   uid == owner                       -> OWNER
 *   uid == 0 and allow_root_owner      -> OWNER
 *   otherwise, if allow_guest_user     -> USER | guest_roles
 *   otherwise refused with errno byte EPERM.
 * LOCAL is always added.  A connection whose rolemask includes OWNER is an
 * owner connection (see ops->message).
 * Memory bounds (0 in any field means its default):
 * max_sendq_bytes bounds the bytes held for one client (queued for it and
 * its buffered input; USOCK_SENDQ_DEFAULT).  max_held_bytes bounds the sum
 * over all clients (a frame shared by several queues counts once): past
 * it the clients holding the most are disconnected, largest first, until
 * the sum is under it again (usock_held_default()).  owner_frame_max and
 * guest_frame_max bound the size a frame may announce on an owner or a
 * guest connection, checked before its bytes are read (the codec's limit;
 * USOCK_GUEST_FRAME_DEFAULT).  frame_timeout_ms: a client that begins a
 * frame and does not finish it within this time is disconnected
 * (USOCK_FRAME_TIMEOUT_DEFAULT).  Each disconnection is logged (ops->log)
 * with the client's uid and pid and the reason.
 * owner_turns: the server's bounded work of a loop turn (closing clients
 * that were cut off, and writing to clients whose writes wait for a later
 * turn, past the bytes a turn may write) is done only by
 * usock_server_turn(), which the owner then calls once per loop turn
 * within its own budget; otherwise the server does it in its own idle
 * and prepare callbacks, about 1 ms each.
 */
struct usock_policy {
    uint32_t owner;
    bool allow_guest_user;
    bool allow_root_owner;
    uint32_t guest_roles;
    size_t max_sendq_bytes;
    size_t max_held_bytes;
    size_t owner_frame_max;
    size_t guest_frame_max;
    uint64_t frame_timeout_ms;
    unsigned max_guest_conns; /* connections of one guest uid (0: the
                               * default, usock_guest_conns_default()) */
    bool owner_turns;
    uint64_t (*turn_clock) (void); /* usock_server_read_turn()'s clock, in
                                      ns (NULL: uv_hrtime) */
};

/* The default max_held_bytes: a quarter of physical memory, at least
 * USOCK_HELD_FLOOR and at most USOCK_HELD_CEILING. */
size_t usock_held_default (void);

/* The default max_guest_conns: USOCK_GUEST_CONNS_DEFAULT, but at most a
 * quarter of this process's RLIMIT_NOFILE (at least 16): a guest never
 * takes all the broker's file descriptors. */
unsigned usock_guest_conns_default (void);

/* Callbacks; arg is the one given to usock_server_create().
 * connected: a client was accepted (its accept byte is on its way).
 * message: a message arrived; the callback owns msg.  Credentials are
 *   stamped already: on an owner connection preset values are kept and only
 *   unset fields (userid FLUX_USERID_UNKNOWN, rolemask 0) are filled in; on
 *   a guest connection both are always overwritten.
 * disconnected: the client is gone (see Lifetimes above); it is freed
 *   after the callback returns.  Optional.
 * log: one line of text about a refused or misbehaving peer (no newline).
 *   Optional: if NULL the line goes to stderr.  It must not call back into
 *   usock (it runs in the middle of the server's bookkeeping).
 */
struct usock_ops {
    void (*connected) (struct usock_client *c, void *arg);
    void (*message) (struct usock_client *c, flux_msg_t *msg, void *arg);
    void (*disconnected) (struct usock_client *c, void *arg);
    void (*log) (const char *text, void *arg);
};

/* Create a listening socket at path (mode 0600, or 0666 if
 * policy->allow_guest_user: a guest's access is then decided per
 * connection by SO_PEERCRED) and start accepting from loop.  A stale
 * socket at path is replaced.  policy and ops are copied; ops->message is
 * required.  On failure returns NULL with errno set and a reason in error
 * (may be NULL): EINVAL (NULL loop, path, policy, ops or ops->message, empty
 * path), ENAMETOOLONG (path does not fit sockaddr_un), EEXIST (path exists
 * and is not a socket), or what socket/bind/listen fail with (ENOENT,
 * EACCES, EADDRINUSE, ...).
 */
struct usock_server *usock_server_create (uv_loop_t *loop, const char *path,
                                          const struct usock_policy *policy,
                                          const struct usock_ops *ops,
                                          void *arg, flux_error_t *error);

/* Stop listening, remove the socket file (if it is still the one created),
 * close every client, running ops->disconnected for each client not yet
 * notified, before returning.  No callback runs after this returns.
 * Memory is released by close callbacks (see Lifetimes).  NULL-safe,
 * preserves errno.
 */
void usock_server_destroy (struct usock_server *s);

/* Number of connected clients (not counting those being closed). */
size_t usock_server_client_count (struct usock_server *s);

/* Bytes held for clients now (see max_held_bytes). */
size_t usock_server_held (struct usock_server *s);

/* Declare msg shared: until the next call, usock_client_send() of this
 * very msg (same pointer, unmodified) encodes it once and every queue that
 * must keep it holds the same frame.  Call with NULL to end (drops the
 * server's reference to the frame).  For fanning one event out to many
 * clients; msg must stay valid and unmodified until the next call.
 */
void usock_server_share (struct usock_server *s, const flux_msg_t *msg);

/* For an owner_turns server: begin a loop turn (the bytes a turn may
 * write count from here) and do the server's work of it, until
 * uv_hrtime() passes deadline, the clock read after each client: first
 * close clients that were cut off (and free what they held), then write
 * to clients whose writes were deferred, oldest first, until the deadline
 * or the turn's byte budget.  At least one client is written to, even
 * past the deadline.  Call from a loop callback, not from a usock
 * callback.  ops->disconnected runs later, from the loop.  Returns true
 * if work is left (call again next turn). */
bool usock_server_turn (struct usock_server *s, uint64_t deadline);

/* For an owner_turns server: the input of a loop turn.  Clients are read
 * until the clock (policy turn_clock) passes deadline, read after each
 * client; a
 * client found readable later in the turn waits for the next, at the end
 * of a round-robin list of waiting clients, which the next call serves
 * first, in order.  room: about how many messages the owner can take
 * this turn (at most USOCK_BATCH count): each client delivers at most
 * its share of it (room divided by the clients waiting, at least one
 * message), so that every waiting client is served in the turn; 0 reads
 * no one (all wait).  Otherwise at least one client is read per turn.
 * Call once per loop turn, after usock_server_turn() and before the loop
 * polls, from a loop callback.  Returns true if clients still wait (call
 * again next turn). */
bool usock_server_read_turn (struct usock_server *s, uint64_t deadline,
                             unsigned room);

/* For an owner_turns server: from now until the next
 * usock_server_read_turn(), a client found readable waits for the next
 * turn (e.g. the owner was handed as much as it can take this turn). */
void usock_server_read_hold (struct usock_server *s, bool hold);

/* What the server did since it was created, for the owner's record of a
 * loop turn: client reads (batches), messages delivered, flushes
 * (sendmsg() of a queue), clients closed by the reaper, enforcements of
 * max_held_bytes (each sorts the clients), and the most
 * loop turns a readable client waited for its read
 * (usock_server_read_turn: 1 if it waited for the next turn; a turn in
 * which no client may be read, room 0, does not count: it passes no one
 * over). */
struct usock_units {
    uint64_t reads;
    uint64_t msgs;
    uint64_t flushes;
    uint64_t reaped;
    uint64_t enforced; /* passes over all clients to cut the largest */
    uint64_t read_wait_max;
};
void usock_server_units (struct usock_server *s, struct usock_units *u,
                         bool clear_max);

/* Queue msg to the client and write what the socket takes now; the rest is
 * written when the socket becomes writable.  Never blocks; msg is not
 * modified and may be destroyed on return.  Returns 0 on success, or -1
 * with errno: EINVAL (NULL argument), EPIPE (client disconnected, or it
 * was just disconnected because the bytes waiting for it would exceed
 * max_sendq_bytes: a message is always accepted when nothing is waiting),
 * EMSGSIZE (message too large to frame), ENOMEM.
 */
int usock_client_send (struct usock_client *c, const flux_msg_t *msg);

/* Close the client at a safe point: no more message callbacks; the socket
 * is closed now; ops->disconnected runs later from the loop (not from
 * within this call).  Idempotent; NULL-safe.
 */
void usock_client_disconnect (struct usock_client *c);

/* Count bytes (negative: fewer) as held for c besides its queues: the
 * state the caller keeps for it (its subscriptions, services...), so
 * that it is bounded like them, by max_sendq_bytes for c and by
 * max_held_bytes for all (past which the largest holders are cut, c
 * perhaps among them).  An increase that would take c past
 * max_sendq_bytes is refused: -1 with ENOSPC, nothing counted; EPIPE if c
 * is disconnected, EINVAL if c is NULL.  A decrease always succeeds.
 * Everything counted is released when c goes away. */
int usock_client_charge (struct usock_client *c, ssize_t bytes);

/* A random (version 4) UUID, 36 characters, unique to this connection.
 * Valid as long as the client object.
 */
const char *usock_client_uuid (struct usock_client *c);

/* The peer's credentials: its uid and the rolemask assigned by policy. */
struct flux_msg_cred usock_client_cred (struct usock_client *c);

/* The peer's pid (SO_PEERCRED at connect), -1 if c is NULL. */
pid_t usock_client_pid (struct usock_client *c);

/* One caller-owned slot per client.  aux_set replaces the value, calling
 * the destroy function of the previous one (if any); the last value is
 * destroyed after ops->disconnected returns.  destroy may be NULL.
 */
typedef void (*usock_free_f) (void *val);
void usock_client_aux_set (struct usock_client *c, void *val,
                           usock_free_f destroy);
void *usock_client_aux_get (struct usock_client *c);

#ifdef __cplusplus
}
#endif

#endif /* !BROKER_USOCK_H */
