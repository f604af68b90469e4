/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef SHELL_LAUNCH_H
#define SHELL_LAUNCH_H

/* launch - the shell launcher's wire protocol (doc/guide/exec.md "The
 * shell launcher").
 *
 * The exec agent starts one `flux-shell --launcher FD` per broker and
 * keeps it for its life; FD is one end of a SOCK_SEQPACKET socketpair,
 * the agent holds the other.  The launcher forks a job shell per request
 * (no exec: the child runs the shell's main() with the job's argv and
 * env), so each shell skips the exec of flux-shell, the dynamic linking
 * of its libraries and their initialization.
 *
 * Every message is one packet: a struct launch_hdr, then for START only
 * the strings.  Host byte order (both ends run on one machine).
 *
 *   launcher -> agent  HELLO    once, first: the launcher runs
 *   agent -> launcher  START    seq, argc, envc, then argc + envc
 *                               NUL-terminated strings (argv, then env);
 *                               SCM_RIGHTS: the shell's stdout and stderr
 *   launcher -> agent  STARTED  seq, pid, value 0 and SCM_RIGHTS the
 *                               shell's pidfd; or value an errno (no shell)
 *   launcher -> agent  EXITED   pid, value the wait status; the shell is
 *                               left a zombie (its pid and process group
 *                               id stay taken) until:
 *   agent -> launcher  REAP     pid: reap it (the agent killed the strays
 *                               of its group first)
 *
 * The launcher answers STARTs in their order.  When the agent closes its
 * end, the launcher waits for its children (reaping them) and exits.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LAUNCH_MAGIC 0x464c5301u /* "FLS" and the version, 1 */

/* The largest packet; a START that does not fit is not sent (the agent
 * posix_spawns that shell instead). */
#define LAUNCH_MSG_MAX (128 * 1024)

enum launch_type {
    LAUNCH_HELLO = 1,
    LAUNCH_START = 2,
    LAUNCH_STARTED = 3,
    LAUNCH_EXITED = 4,
    LAUNCH_REAP = 5,
};

struct launch_hdr {
    uint32_t magic;
    uint32_t type;
    uint64_t seq;  /* START, STARTED: the request's number */
    int32_t pid;   /* STARTED, EXITED, REAP */
    int32_t value; /* STARTED: 0 or an errno; EXITED: the wait status */
    uint32_t argc; /* START: argv strings (>= 1) */
    uint32_t envc; /* START: env strings */
};

/* A START packet for argv and env (NULL-terminated; argv not empty) in
 * buf of size bytes.  Its length, or -1 with errno: E2BIG (does not fit
 * in size or LAUNCH_MSG_MAX), EINVAL. */
ssize_t launch_encode_start (void *buf, size_t size, uint64_t seq, char **argv,
                             char **env);

/* The length of the START packet launch_encode_start() makes of argv
 * and env (NULL env: none). */
size_t launch_start_len (char **argv, char **env);

/* A packet of any other type, which is a header only. */
void launch_encode (struct launch_hdr *hdr, enum launch_type type, uint64_t seq,
                    pid_t pid, int value);

/* Check the packet buf of len bytes and copy its header to hdr: the magic
 * (version), a known type, and the length (exactly a header, except for
 * START, which launch_decode_start() checks).  -1 with errno EPROTO. */
int launch_decode (const void *buf, size_t len, struct launch_hdr *hdr);

/* Decode a START packet: *argv and *env are NULL-terminated vectors of
 * pointers into buf (which must outlive them), in one allocation that
 * free (*argv) releases.  Every string must be NUL-terminated and nothing
 * may follow the last.  -1 with errno (EPROTO, ENOMEM). */
int launch_decode_start (const void *buf, size_t len, struct launch_hdr *hdr,
                         char ***argv, char ***env);

/* Send one packet with nfds (0 to 2) descriptors (SCM_RIGHTS), flags for
 * sendmsg (MSG_NOSIGNAL is added).  0, or -1 with errno (EAGAIN with
 * MSG_DONTWAIT when the socket is full, EPIPE: the peer is gone,
 * EMSGSIZE). */
int launch_send (int sock, const void *buf, size_t len, const int *fds,
                 int nfds, int flags);

/* Receive one packet into buf of size bytes, and up to *nfds descriptors
 * into fds (close-on-exec; *nfds is set to how many came).  Its length;
 * 0 at EOF; -1 with errno (EAGAIN with MSG_DONTWAIT; EPROTO for a
 * truncated packet or too many descriptors, whose descriptors are then
 * closed). */
ssize_t launch_recv (int sock, void *buf, size_t size, int *fds, int *nfds,
                     int flags);

/* The wait status (as waitpid gives it) of an exited child from the
 * siginfo waitid filled. */
int launch_wait_status (int code, int status);

/* The launcher (flux-shell --launcher FD, src/shell/launcher.c): serve the
 * agent on sock until it closes it, running main_fn (argc, argv) in each
 * forked shell with environ the job's env (and exit() with its result).
 * title: the launcher's own argv (NULL: none), whose strings each forked
 * shell overwrites with its command line where it fits, so that ps(1)
 * and pgrep -f show "SHELL ID" as for an exec'd shell (the agent pads the
 * launcher's FD argument with zeros for the room).  Returns the
 * launcher's exit code. */
typedef int (*launch_main_f) (int argc, char **argv);
int launcher_serve (int sock, launch_main_f main_fn, char **title);

#endif /* !SHELL_LAUNCH_H */
