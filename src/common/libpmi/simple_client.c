/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* simple_client.c - blocking PMI-1 wire protocol client (RFC 13).
 *
 * Each operation is one request line and one reply line.  Replies are
 * read through a small buffer so that a line arriving in pieces, or
 * several lines arriving together, are both handled.  Any protocol or
 * I/O failure closes the descriptor, as RFC 13 asks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "keyval.h"
#include "simple_client.h"

struct pmi_simple_client {
    int fd; /* -1 once the connection was dropped */
    int rank;
    int size;
    int spawned;
    bool initialized;
    char rbuf[PMI_SIMPLE_LINE_MAX]; /* bytes read, not yet consumed */
    size_t rlen;
    char error[256];
};

static void set_error (struct pmi_simple_client *pmi, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void set_error (struct pmi_simple_client *pmi, const char *fmt, ...)
{
    va_list ap;
    int saved_errno = errno;

    va_start (ap, fmt);
    vsnprintf (pmi->error, sizeof (pmi->error), fmt, ap);
    va_end (ap);
    errno = saved_errno;
}

/* Strict non-negative decimal int: digits only. */
static int parse_uint (const char *s, int *vp)
{
    long long v = 0;

    if (!s || *s == '\0')
        return -1;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
        if (v > 0x7fffffff)
            return -1;
    }
    *vp = (int)v;
    return 0;
}

struct pmi_simple_client *pmi_simple_client_create_fd (const char *pmi_fd,
                                                       const char *pmi_rank,
                                                       const char *pmi_size,
                                                       const char *pmi_spawned)
{
    struct pmi_simple_client *pmi;
    int fd, rank, size, spawned = 0;
    int flags;

    if (parse_uint (pmi_fd, &fd) < 0 || parse_uint (pmi_rank, &rank) < 0
        || parse_uint (pmi_size, &size) < 0 || size < 1 || rank >= size
        || (pmi_spawned && parse_uint (pmi_spawned, &spawned) < 0)) {
        errno = EINVAL;
        return NULL;
    }
    if ((flags = fcntl (fd, F_GETFD)) < 0)
        return NULL; // EBADF
    if (!(pmi = calloc (1, sizeof (*pmi))))
        return NULL;
    if (fcntl (fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
        free (pmi);
        return NULL;
    }
    pmi->fd = fd;
    pmi->rank = rank;
    pmi->size = size;
    pmi->spawned = spawned ? 1 : 0;
    return pmi;
}

void pmi_simple_client_destroy (struct pmi_simple_client *pmi)
{
    if (pmi) {
        int saved_errno = errno;
        if (pmi->fd >= 0)
            close (pmi->fd);
        free (pmi);
        errno = saved_errno;
    }
}

int pmi_simple_client_rank (struct pmi_simple_client *pmi)
{
    if (!pmi) {
        errno = EINVAL;
        return -1;
    }
    return pmi->rank;
}

int pmi_simple_client_size (struct pmi_simple_client *pmi)
{
    if (!pmi) {
        errno = EINVAL;
        return -1;
    }
    return pmi->size;
}

int pmi_simple_client_spawned (struct pmi_simple_client *pmi)
{
    if (!pmi) {
        errno = EINVAL;
        return -1;
    }
    return pmi->spawned;
}

const char *pmi_simple_client_last_error (struct pmi_simple_client *pmi)
{
    return pmi ? pmi->error : "";
}

/* Close the connection after a protocol or I/O error (errno preserved). */
static int drop (struct pmi_simple_client *pmi)
{
    int saved_errno = errno;

    if (pmi->fd >= 0) {
        close (pmi->fd);
        pmi->fd = -1;
    }
    pmi->initialized = false;
    pmi->rlen = 0;
    errno = saved_errno;
    return -1;
}

/* Common entry checks; clears the last error. */
static int check_state (struct pmi_simple_client *pmi, bool need_init)
{
    if (!pmi) {
        errno = EINVAL;
        return -1;
    }
    pmi->error[0] = '\0';
    if (pmi->fd < 0) {
        set_error (pmi, "PMI connection was closed after an earlier error");
        errno = ENOTCONN;
        return -1;
    }
    if (need_init && !pmi->initialized) {
        set_error (pmi, "PMI is not initialized");
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static int send_all (struct pmi_simple_client *pmi, const char *buf, size_t len)
{
    while (len > 0) {
        /* MSG_NOSIGNAL: a vanished server is an error, not a SIGPIPE */
        ssize_t n = send (pmi->fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write (pmi->fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            set_error (pmi, "PMI write: %s", strerror (errno));
            return drop (pmi);
        }
        buf += n;
        len -= n;
    }
    return 0;
}

static int send_request (struct pmi_simple_client *pmi, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static int send_request (struct pmi_simple_client *pmi, const char *fmt, ...)
{
    char buf[PMI_SIMPLE_LINE_MAX + 1];
    va_list ap;
    int n;

    va_start (ap, fmt);
    n = vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    if (n < 0 || n >= (int)sizeof (buf)) {
        set_error (pmi, "PMI request exceeds %d bytes", PMI_SIMPLE_LINE_MAX);
        errno = EOVERFLOW;
        return -1;
    }
    return send_all (pmi, buf, n);
}

/* Read one line into 'line' (NUL-terminated, newline removed). */
static int recv_line (struct pmi_simple_client *pmi, char *line)
{
    char *nl;

    while (!(nl = memchr (pmi->rbuf, '\n', pmi->rlen))) {
        if (pmi->rlen == sizeof (pmi->rbuf)) {
            set_error (pmi, "PMI reply exceeds %d bytes", PMI_SIMPLE_LINE_MAX);
            errno = EPROTO;
            return drop (pmi);
        }
        ssize_t n = read (pmi->fd, pmi->rbuf + pmi->rlen,
                          sizeof (pmi->rbuf) - pmi->rlen);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            set_error (pmi, "PMI read: %s", strerror (errno));
            return drop (pmi);
        }
        if (n == 0) {
            set_error (pmi, "PMI server closed the connection");
            errno = ECONNRESET;
            return drop (pmi);
        }
        pmi->rlen += n;
    }
    size_t len = nl - pmi->rbuf;
    memcpy (line, pmi->rbuf, len);
    line[len] = '\0';
    pmi->rlen -= len + 1;
    memmove (pmi->rbuf, nl + 1, pmi->rlen);
    return 0;
}

static void truncate_copy (char *dst, size_t size, const char *src)
{
    snprintf (dst, size, "%s", src);
}

/* Read the reply and check that it is "cmd=<want>".  Returns the parsed
 * reply; PMI rc is not yet looked at.
 */
static struct keyval *recv_reply (struct pmi_simple_client *pmi,
                                  const char *want)
{
    char line[PMI_SIMPLE_LINE_MAX];
    struct keyval *kv;
    const char *cmd;

    if (recv_line (pmi, line) < 0)
        return NULL;
    if (!(kv = keyval_parse (line))) {
        if (errno == EPROTO) {
            set_error (pmi, "malformed PMI reply: %.200s", line);
            drop (pmi);
        }
        return NULL;
    }
    if (keyval_get_str (kv, "cmd", &cmd) < 0 || strcmp (cmd, want) != 0) {
        set_error (pmi, "expected PMI reply cmd=%s, got: %.180s", want, line);
        keyval_destroy (kv);
        errno = EPROTO;
        drop (pmi);
        return NULL;
    }
    return kv;
}

static int rc_to_errno (int rc, bool is_get)
{
    switch (rc) {
        case PMI_SIMPLE_FAIL:
            return is_get ? ENOENT : EIO;
        case PMI_SIMPLE_ERR_INVALID_KEY:
            return is_get ? ENOENT : EINVAL;
        case PMI_SIMPLE_ERR_NOMEM:
            return ENOMEM;
        case PMI_SIMPLE_ERR_INVALID_KEY_LENGTH:
            return ENAMETOOLONG;
        case PMI_SIMPLE_ERR_INVALID_VAL_LENGTH:
        case PMI_SIMPLE_ERR_INVALID_LENGTH:
            return EOVERFLOW;
        default:
            if (rc >= PMI_SIMPLE_ERR_INIT && rc <= PMI_SIMPLE_ERR_INVALID_SIZE)
                return EINVAL;
            return EIO;
    }
}

/* Check the reply's rc (absent means 0); on failure keep its msg. */
static int check_rc (struct pmi_simple_client *pmi, struct keyval *kv,
                     bool is_get)
{
    const char *msg;
    int rc = 0;

    if (keyval_get_int (kv, "rc", &rc) < 0 && errno != ENOENT) {
        set_error (pmi, "PMI reply has a malformed rc");
        errno = EPROTO;
        return drop (pmi);
    }
    if (rc == 0)
        return 0;
    if (keyval_get_str (kv, "msg", &msg) == 0)
        truncate_copy (pmi->error, sizeof (pmi->error), msg);
    else
        set_error (pmi, "rc=%d", rc);
    errno = rc_to_errno (rc, is_get);
    return -1;
}

/* Receive "cmd=<want>" and require rc == 0.  Returns the reply. */
static struct keyval *recv_ok (struct pmi_simple_client *pmi, const char *want,
                               bool is_get)
{
    struct keyval *kv = recv_reply (pmi, want);

    if (kv && check_rc (pmi, kv, is_get) < 0) {
        keyval_destroy (kv);
        return NULL;
    }
    return kv;
}

/* A required integer, at least 'min', in a successful reply. */
static int reply_int (struct pmi_simple_client *pmi, struct keyval *kv,
                      const char *key, int min, int *vp)
{
    int v;

    if (keyval_get_int (kv, key, &v) < 0 || v < min) {
        set_error (pmi, "PMI reply lacks a valid %s", key);
        errno = EPROTO;
        return drop (pmi);
    }
    if (vp)
        *vp = v;
    return 0;
}

static int copy_out (struct pmi_simple_client *pmi, const char *s, char *buf,
                     size_t len)
{
    size_t n = strlen (s);

    if (n + 1 > len) {
        set_error (pmi, "buffer of %zu bytes is too small for %zu", len, n + 1);
        errno = EOVERFLOW;
        return -1;
    }
    memcpy (buf, s, n + 1);
    return 0;
}

int pmi_simple_client_init (struct pmi_simple_client *pmi)
{
    struct keyval *kv;
    int version;
    int rc;

    if (check_state (pmi, false) < 0)
        return -1;
    if (send_request (pmi, "cmd=init pmi_version=1 pmi_subversion=1\n") < 0
        || !(kv = recv_ok (pmi, "response_to_init", false)))
        return -1;
    /* pmi_version is optional in the reply (RFC 13) */
    rc = keyval_get_int (kv, "pmi_version", &version);
    keyval_destroy (kv);
    if (rc < 0 && errno != ENOENT) {
        set_error (pmi, "PMI reply has a malformed pmi_version");
        return drop (pmi);
    }
    if (rc == 0 && version != 1) {
        set_error (pmi, "PMI server chose version %d, only 1 is supported",
                   version);
        errno = EPROTONOSUPPORT;
        return drop (pmi);
    }
    pmi->initialized = true;
    return 0;
}

int pmi_simple_client_finalize (struct pmi_simple_client *pmi)
{
    struct keyval *kv;

    if (check_state (pmi, true) < 0)
        return -1;
    if (send_request (pmi, "cmd=finalize\n") < 0
        || !(kv = recv_ok (pmi, "finalize_ack", false)))
        return -1;
    keyval_destroy (kv);
    pmi->initialized = false;
    return 0;
}

int pmi_simple_client_get_maxes (struct pmi_simple_client *pmi,
                                 int *kvsname_max, int *keylen_max,
                                 int *vallen_max)
{
    struct keyval *kv;
    int a, b, c;

    if (check_state (pmi, true) < 0)
        return -1;
    if (send_request (pmi, "cmd=get_maxes\n") < 0
        || !(kv = recv_ok (pmi, "maxes", false)))
        return -1;
    if (reply_int (pmi, kv, "kvsname_max", 0, &a) < 0
        || reply_int (pmi, kv, "keylen_max", 0, &b) < 0
        || reply_int (pmi, kv, "vallen_max", 0, &c) < 0) {
        keyval_destroy (kv);
        return -1;
    }
    keyval_destroy (kv);
    if (kvsname_max)
        *kvsname_max = a;
    if (keylen_max)
        *keylen_max = b;
    if (vallen_max)
        *vallen_max = c;
    return 0;
}

/* A request without arguments whose reply carries one integer >= min. */
static int query_int (struct pmi_simple_client *pmi, const char *cmd,
                      const char *reply_cmd, const char *key, int min, int *vp)
{
    struct keyval *kv;
    int rc;

    if (check_state (pmi, true) < 0)
        return -1;
    if (!vp) {
        errno = EINVAL;
        return -1;
    }
    if (send_request (pmi, "cmd=%s\n", cmd) < 0
        || !(kv = recv_ok (pmi, reply_cmd, false)))
        return -1;
    rc = reply_int (pmi, kv, key, min, vp);
    keyval_destroy (kv);
    return rc;
}

int pmi_simple_client_get_appnum (struct pmi_simple_client *pmi, int *appnum)
{
    return query_int (pmi, "get_appnum", "appnum", "appnum", 0, appnum);
}

int pmi_simple_client_get_universe_size (struct pmi_simple_client *pmi,
                                         int *universe_size)
{
    /* hydra answers size=-1 when mpiexec was given no -usize */
    return query_int (pmi, "get_universe_size", "universe_size", "size", -1,
                      universe_size);
}

int pmi_simple_client_kvs_get_my_name (struct pmi_simple_client *pmi, char *buf,
                                       size_t len)
{
    struct keyval *kv;
    const char *name;
    int rc;

    if (check_state (pmi, true) < 0)
        return -1;
    if (!buf) {
        errno = EINVAL;
        return -1;
    }
    if (send_request (pmi, "cmd=get_my_kvsname\n") < 0
        || !(kv = recv_ok (pmi, "my_kvsname", false)))
        return -1;
    if (keyval_get_str (kv, "kvsname", &name) < 0 || *name == '\0') {
        set_error (pmi, "PMI reply lacks kvsname");
        keyval_destroy (kv);
        errno = EPROTO;
        return drop (pmi);
    }
    rc = copy_out (pmi, name, buf, len);
    keyval_destroy (kv);
    return rc;
}

int pmi_simple_client_kvs_put (struct pmi_simple_client *pmi,
                               const char *kvsname, const char *key,
                               const char *value)
{
    struct keyval *kv;

    if (check_state (pmi, true) < 0)
        return -1;
    if (!keyval_valid_word (kvsname) || !keyval_valid_word (key)
        || !keyval_valid_value (value)) {
        set_error (pmi, "PMI put: invalid kvsname, key or value");
        errno = EINVAL;
        return -1;
    }
    if (send_request (pmi, "cmd=put kvsname=%s key=%s value=%s\n", kvsname, key,
                      value)
            < 0
        || !(kv = recv_ok (pmi, "put_result", false)))
        return -1;
    keyval_destroy (kv);
    return 0;
}

int pmi_simple_client_kvs_commit (struct pmi_simple_client *pmi,
                                  const char *kvsname)
{
    if (check_state (pmi, true) < 0)
        return -1;
    if (!keyval_valid_word (kvsname)) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int pmi_simple_client_barrier (struct pmi_simple_client *pmi)
{
    struct keyval *kv;

    if (check_state (pmi, true) < 0)
        return -1;
    if (send_request (pmi, "cmd=barrier_in\n") < 0
        || !(kv = recv_ok (pmi, "barrier_out", false)))
        return -1;
    keyval_destroy (kv);
    return 0;
}

int pmi_simple_client_kvs_get (struct pmi_simple_client *pmi,
                               const char *kvsname, const char *key, char *buf,
                               size_t len)
{
    struct keyval *kv;
    const char *val;
    int rc;

    if (check_state (pmi, true) < 0)
        return -1;
    if (!keyval_valid_word (kvsname) || !keyval_valid_word (key) || !buf) {
        set_error (pmi, "PMI get: invalid kvsname or key");
        errno = EINVAL;
        return -1;
    }
    if (send_request (pmi, "cmd=get kvsname=%s key=%s\n", kvsname, key) < 0
        || !(kv = recv_ok (pmi, "get_result", true)))
        return -1;
    if (keyval_get_str (kv, "value", &val) < 0) {
        set_error (pmi, "PMI reply lacks value");
        keyval_destroy (kv);
        errno = EPROTO;
        return drop (pmi);
    }
    rc = copy_out (pmi, val, buf, len);
    keyval_destroy (kv);
    return rc;
}

int pmi_simple_client_abort (struct pmi_simple_client *pmi, int exit_code,
                             const char *msg)
{
    char text[PMI_SIMPLE_LINE_MAX - 64];

    if (check_state (pmi, false) < 0)
        return -1;
    /* The message is the line's tail: it may hold blanks, not newlines. */
    truncate_copy (text, sizeof (text), msg ? msg : "");
    for (char *p = text; *p != '\0'; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    }
    if (text[0] == '\0')
        return send_request (pmi, "cmd=abort exitcode=%d\n", exit_code);
    return send_request (pmi, "cmd=abort exitcode=%d error_msg=%s\n", exit_code,
                         text);
}
