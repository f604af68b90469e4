/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* launch.c - the shell launcher's packets and their transport (see
 * launch.h).  Linked by flux-shell and by the exec agent; no libflux. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"

void launch_encode (struct launch_hdr *hdr, enum launch_type type, uint64_t seq,
                    pid_t pid, int value)
{
    memset (hdr, 0, sizeof (*hdr));
    hdr->magic = LAUNCH_MAGIC;
    hdr->type = (uint32_t)type;
    hdr->seq = seq;
    hdr->pid = (int32_t)pid;
    hdr->value = (int32_t)value;
}

static ssize_t put_strings (char *p, size_t room, char **v, uint32_t *count)
{
    size_t used = 0;
    uint32_t n = 0;

    for (; v && v[n]; n++) {
        size_t len = strlen (v[n]) + 1;
        if (len > room - used) {
            errno = E2BIG;
            return -1;
        }
        memcpy (p + used, v[n], len);
        used += len;
    }
    *count = n;
    return (ssize_t)used;
}

size_t launch_start_len (char **argv, char **env)
{
    size_t len = sizeof (struct launch_hdr);

    for (size_t i = 0; argv && argv[i]; i++)
        len += strlen (argv[i]) + 1;
    for (size_t i = 0; env && env[i]; i++)
        len += strlen (env[i]) + 1;
    return len;
}

ssize_t launch_encode_start (void *buf, size_t size, uint64_t seq, char **argv,
                             char **env)
{
    struct launch_hdr hdr;
    char *p = buf;
    ssize_t a, e;

    if (!buf || !argv || !argv[0]) {
        errno = EINVAL;
        return -1;
    }
    if (size > LAUNCH_MSG_MAX)
        size = LAUNCH_MSG_MAX;
    if (size < sizeof (hdr)) {
        errno = E2BIG;
        return -1;
    }
    launch_encode (&hdr, LAUNCH_START, seq, 0, 0);
    p += sizeof (hdr);
    size -= sizeof (hdr);
    if ((a = put_strings (p, size, argv, &hdr.argc)) < 0
        || (e = put_strings (p + a, size - (size_t)a, env, &hdr.envc)) < 0)
        return -1;
    memcpy (buf, &hdr, sizeof (hdr));
    return (ssize_t)sizeof (hdr) + a + e;
}

int launch_decode (const void *buf, size_t len, struct launch_hdr *hdr)
{
    if (len < sizeof (*hdr))
        goto proto;
    memcpy (hdr, buf, sizeof (*hdr));
    if (hdr->magic != LAUNCH_MAGIC || hdr->type < LAUNCH_HELLO
        || hdr->type > LAUNCH_REAP
        || (hdr->type != LAUNCH_START && len != sizeof (*hdr)))
        goto proto;
    return 0;
proto:
    errno = EPROTO;
    return -1;
}

int launch_decode_start (const void *buf, size_t len, struct launch_hdr *hdr,
                         char ***argvp, char ***envp)
{
    const char *p, *end;
    char **v;
    size_t n;

    if (launch_decode (buf, len, hdr) < 0)
        return -1;
    if (hdr->type != LAUNCH_START || hdr->argc == 0
        || hdr->argc > LAUNCH_MSG_MAX || hdr->envc > LAUNCH_MSG_MAX) {
        errno = EPROTO;
        return -1;
    }
    n = (size_t)hdr->argc + hdr->envc;
    if (!(v = calloc (n + 2, sizeof (*v))))
        return -1;
    p = (const char *)buf + sizeof (*hdr);
    end = (const char *)buf + len;
    for (size_t i = 0, k = 0; i < n; i++, k++) {
        const char *nul = memchr (p, '\0', (size_t)(end - p));
        if (!nul) {
            free (v);
            errno = EPROTO;
            return -1;
        }
        if (i == hdr->argc)
            k++; /* the NULL that ends argv */
        v[k] = (char *)p;
        p = nul + 1;
    }
    if (p != end) { /* fails closed: nothing may follow */
        free (v);
        errno = EPROTO;
        return -1;
    }
    *argvp = v;
    *envp = v + hdr->argc + 1;
    return 0;
}

int launch_send (int sock, const void *buf, size_t len, const int *fds,
                 int nfds, int flags)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE (2 * sizeof (int))];
    } cm;
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    ssize_t n;

    if (nfds < 0 || nfds > 2) {
        errno = EINVAL;
        return -1;
    }
    if (nfds > 0) {
        memset (&cm, 0, sizeof (cm));
        msg.msg_control = cm.buf;
        msg.msg_controllen = CMSG_SPACE (nfds * sizeof (int));
        cm.h.cmsg_level = SOL_SOCKET;
        cm.h.cmsg_type = SCM_RIGHTS;
        cm.h.cmsg_len = CMSG_LEN (nfds * sizeof (int));
        memcpy (CMSG_DATA (&cm.h), fds, nfds * sizeof (int));
    }
    do {
        n = sendmsg (sock, &msg, flags | MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    if ((size_t)n != len) { /* a packet goes whole or not at all */
        errno = EPROTO;
        return -1;
    }
    return 0;
}

ssize_t launch_recv (int sock, void *buf, size_t size, int *fds, int *nfds,
                     int flags)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE (4 * sizeof (int))];
    } cm;
    struct iovec iov = {.iov_base = buf, .iov_len = size};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = cm.buf,
                         .msg_controllen = sizeof (cm.buf)};
    int room = nfds ? *nfds : 0, got = 0;
    struct cmsghdr *c;
    ssize_t n;

    do {
        n = recvmsg (sock, &msg, flags | MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    for (c = CMSG_FIRSTHDR (&msg); c; c = CMSG_NXTHDR (&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        int k = (int)((c->cmsg_len - CMSG_LEN (0)) / sizeof (int));
        for (int i = 0; i < k; i++) {
            int fd;
            memcpy (&fd, CMSG_DATA (c) + i * sizeof (int), sizeof (int));
            if (got < room)
                fds[got++] = fd;
            else {
                (void)close (fd);
                room = -1; /* too many: the packet is refused */
            }
        }
    }
    if (room < 0 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        for (int i = 0; i < got; i++)
            (void)close (fds[i]);
        if (nfds)
            *nfds = 0;
        errno = EPROTO;
        return -1;
    }
    if (nfds)
        *nfds = got;
    return n;
}

int launch_wait_status (int code, int status)
{
    if (code == CLD_EXITED)
        return (status & 0xff) << 8;
    if (code == CLD_DUMPED)
        return (status & 0x7f) | 0x80;
    return status & 0x7f; /* CLD_KILLED */
}
