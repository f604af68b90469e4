/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* upmi.c - PMI methods behind one interface (see upmi.h). */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <pmix.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "keyval.h"
#include "simple_client.h"
#include "upmi.h"

struct upmi {
    char name[16];
    const struct upmi_ops *ops;
    void *impl;
    int rank;
    int size;
    int nnodes; /* as the launcher says, 0 if it does not */
    size_t vallen_max;
};

static bool debug_enabled (void)
{
    const char *s = getenv ("FLUX_PMI_DEBUG");
    return s && *s && strcmp (s, "0") != 0;
}

static const char *nodes_str (int n)
{
    static __thread char buf[32];
    snprintf (buf, sizeof (buf), " on %d node%s", n, n > 1 ? "s" : "");
    return buf;
}

static void trace (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2)));
static void trace (const char *fmt, ...)
{
    va_list ap;
    char buf[512];
    int n;

    if (!debug_enabled ())
        return;
    n = snprintf (buf, sizeof (buf), "flux-pmi: ");
    va_start (ap, fmt);
    vsnprintf (buf + n, sizeof (buf) - n - 1, fmt, ap);
    va_end (ap);
    strcat (buf, "\n");
    /* one write: the traces of brokers sharing a terminal stay whole */
    if (write (STDERR_FILENO, buf, strlen (buf)) < 0)
        return;
}

static int seterr (flux_error_t *error, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static int seterr (flux_error_t *error, int errnum, const char *fmt, ...)
{
    va_list ap;

    if (error) {
        va_start (ap, fmt);
        vsnprintf (error->text, sizeof (error->text), fmt, ap);
        va_end (ap);
    }
    errno = errnum;
    return -1;
}

/* ---- simple (PMI-1 wire over PMI_FD or PMI_PORT) ---- */

struct simple {
    struct pmi_simple_client *cli;
    char kvsname[256];
    int rank;
};

static int simple_key (char *buf, size_t len, const char *key, int rank)
{
    int n = rank < 0 ? snprintf (buf, len, "%s", key)
                     : snprintf (buf, len, "%s.%d", key, rank);

    if (n >= (int)len) {
        errno = EOVERFLOW;
        return -1;
    }
    return 0;
}

static int simple_put (void *impl, const char *key, const char *val,
                       flux_error_t *error)
{
    struct simple *s = impl;
    char k[128];

    if (simple_key (k, sizeof (k), key, s->rank) < 0
        || pmi_simple_client_kvs_put (s->cli, s->kvsname, k, val) < 0)
        return seterr (error, errno, "PMI put %s: %s", k,
                       pmi_simple_client_last_error (s->cli));
    return 0;
}

static int simple_barrier (void *impl, flux_error_t *error)
{
    struct simple *s = impl;

    if (pmi_simple_client_kvs_commit (s->cli, s->kvsname) < 0
        || pmi_simple_client_barrier (s->cli) < 0)
        return seterr (error, errno, "PMI barrier: %s",
                       pmi_simple_client_last_error (s->cli));
    return 0;
}

static int simple_get (void *impl, const char *key, int rank, char *buf,
                       size_t len, flux_error_t *error)
{
    struct simple *s = impl;
    char k[128];

    if (simple_key (k, sizeof (k), key, rank) < 0
        || pmi_simple_client_kvs_get (s->cli, s->kvsname, k, buf, len) < 0)
        return seterr (error, errno, "PMI get %s: %s", k,
                       pmi_simple_client_last_error (s->cli));
    return 0;
}

static int simple_abort (void *impl, int exit_code, const char *msg)
{
    struct simple *s = impl;
    return pmi_simple_client_abort (s->cli, exit_code, msg);
}

static void simple_destroy (void *impl)
{
    struct simple *s = impl;

    if (s) {
        int saved = errno;
        (void)pmi_simple_client_finalize (s->cli);
        pmi_simple_client_destroy (s->cli);
        free (s);
        errno = saved;
    }
}

static const struct upmi_ops simple_ops = {
    .put = simple_put,
    .barrier = simple_barrier,
    .get = simple_get,
    .abort = simple_abort,
    .destroy = simple_destroy,
};

/* Read one line (without its newline) byte by byte: the server may send
 * several lines at once and the rest belongs to the PMI client. */
static int read_line (int fd, char *buf, size_t len)
{
    size_t n = 0;
    char c;

    for (;;) {
        ssize_t r = read (fd, &c, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            errno = r == 0 ? ECONNRESET : errno;
            return -1;
        }
        if (c == '\n')
            break;
        if (n + 1 >= len) {
            errno = EPROTO;
            return -1;
        }
        buf[n++] = c;
    }
    buf[n] = '\0';
    return 0;
}

/* Expect "cmd=<cmd> [name=<value>]" and copy value (if name) to val. */
static int expect_line (int fd, const char *cmd, const char *name, char *val,
                        size_t len)
{
    char line[PMI_SIMPLE_LINE_MAX + 1];
    struct keyval *kv;
    const char *c, *v = NULL;
    int rc = -1;

    if (read_line (fd, line, sizeof (line)) < 0)
        return -1;
    if (!(kv = keyval_parse (line)))
        return -1;
    if (keyval_get_str (kv, "cmd", &c) < 0 || strcmp (c, cmd)
        || (name
            && (keyval_get_str (kv, name, &v) < 0
                || snprintf (val, len, "%s", v) >= (int)len)))
        errno = EPROTO;
    else
        rc = 0;
    keyval_destroy (kv);
    return rc;
}

/* hydra's PMI_PORT handshake: returns a connected fd, rank and size. */
static int port_connect (const char *port, const char *id, char *rank,
                         char *size, size_t len, flux_error_t *error)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL, *ai;
    char host[256], debug[16], line[128];
    const char *colon = strrchr (port, ':');
    char *end;
    int fd = -1, e;

    if (!colon || colon == port || (size_t)(colon - port) >= sizeof (host)
        || !id || !*id || (strtol (id, &end, 10), *end))
        return seterr (error, EINVAL, "PMI_PORT=%s PMI_ID=%s: malformed", port,
                       id ? id : "(unset)");
    memcpy (host, port, colon - port);
    host[colon - port] = '\0';
    if ((e = getaddrinfo (host, colon + 1, &hints, &res)))
        return seterr (error, EHOSTUNREACH, "PMI_PORT=%s: %s", port,
                       gai_strerror (e));
    for (ai = res; ai; ai = ai->ai_next) {
        if ((fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                          ai->ai_protocol))
            < 0)
            continue;
        if (connect (fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        e = errno;
        close (fd);
        fd = -1;
        errno = e;
    }
    freeaddrinfo (res);
    if (fd < 0)
        return seterr (error, errno, "PMI_PORT=%s: connect: %s", port,
                       strerror (errno));
    snprintf (line, sizeof (line), "cmd=initack pmiid=%s\n", id);
    if (write (fd, line, strlen (line)) != (ssize_t)strlen (line)
        || expect_line (fd, "initack", NULL, NULL, 0) < 0
        || expect_line (fd, "set", "size", size, len) < 0
        || expect_line (fd, "set", "rank", rank, len) < 0
        || expect_line (fd, "set", "debug", debug, sizeof (debug)) < 0) {
        e = errno;
        close (fd);
        return seterr (error, e, "PMI_PORT=%s: initack handshake: %s", port,
                       strerror (e));
    }
    return fd;
}

static struct upmi *simple_create (flux_error_t *error)
{
    const char *fd = getenv ("PMI_FD");
    const char *port = getenv ("PMI_PORT");
    char fdstr[16], rank[32], size[32];
    struct simple *s;
    struct upmi *upmi;
    int vallen = 0, e;

    if (!(s = calloc (1, sizeof (*s)))) {
        seterr (error, ENOMEM, "out of memory");
        return NULL;
    }
    if (fd) {
        if (!(s->cli = pmi_simple_client_create_fd (fd, getenv ("PMI_RANK"),
                                                    getenv ("PMI_SIZE"),
                                                    getenv ("PMI_SPAWNED")))) {
            seterr (error, errno, "PMI_FD/PMI_RANK/PMI_SIZE are malformed");
            goto error;
        }
    }
    else if (port) {
        int sock = port_connect (port, getenv ("PMI_ID"), rank, size,
                                 sizeof (rank), error);
        if (sock < 0)
            goto error;
        snprintf (fdstr, sizeof (fdstr), "%d", sock);
        if (!(s->cli = pmi_simple_client_create_fd (fdstr, rank, size, NULL))) {
            e = errno;
            close (sock);
            seterr (error, e, "PMI_PORT: server sent rank=%s size=%s", rank,
                    size);
            goto error;
        }
    }
    else {
        seterr (error, ENOENT, "no PMI_FD or PMI_PORT in the environment");
        goto error;
    }
    if (pmi_simple_client_init (s->cli) < 0
        || pmi_simple_client_kvs_get_my_name (s->cli, s->kvsname,
                                              sizeof (s->kvsname))
               < 0
        || pmi_simple_client_get_maxes (s->cli, NULL, NULL, &vallen) < 0) {
        seterr (error, errno, "PMI init: %s",
                pmi_simple_client_last_error (s->cli));
        goto error;
    }
    s->rank = pmi_simple_client_rank (s->cli);
    if (!(upmi = upmi_create_ops ("simple", &simple_ops, s, s->rank,
                                  pmi_simple_client_size (s->cli)))) {
        seterr (error, errno, "out of memory");
        goto error;
    }
    upmi->vallen_max = vallen > 0 ? (size_t)vallen : 64;
    return upmi;
error:
    e = errno;
    if (s->cli)
        pmi_simple_client_destroy (s->cli);
    free (s);
    errno = e;
    return NULL;
}

/* ---- pmix ----
 *
 * libpmix is opened when this method is tried, not linked: it brings
 * libevent, hwloc, munge and udev along, which every broker would load
 * for nothing under flux start or mpiexec.  pmix.h gives the types
 * (__typeof__ of its declarations; nothing is referenced). */

#ifndef UPMI_PMIX_LIBRARY
#define UPMI_PMIX_LIBRARY "libpmix.so.2"
#endif

static struct {
    void *dso;
    __typeof__ (PMIx_Init) *init;
    __typeof__ (PMIx_Finalize) *finalize;
    __typeof__ (PMIx_Abort) *abort;
    __typeof__ (PMIx_Put) *put;
    __typeof__ (PMIx_Commit) *commit;
    __typeof__ (PMIx_Fence) *fence;
    __typeof__ (PMIx_Get) *get;
    __typeof__ (PMIx_Error_string) *error_string;
    __typeof__ (PMIx_Value_destruct) *value_destruct;
} px;

/* Open libpmix once (never closed: it keeps threads and plugins). */
static int pmix_load (flux_error_t *error)
{
    const char *path = getenv ("FLUX_PMI_PMIX_LIBRARY");

    if (px.dso)
        return 0;
    if (!path)
        path = UPMI_PMIX_LIBRARY;
    /* GLOBAL: libpmix's own plugins resolve its symbols */
    if (!(px.dso = dlopen (path, RTLD_NOW | RTLD_GLOBAL)))
        return seterr (error, ENOENT, "%s", dlerror ());
#define SYM(field, name)                                               \
    if (!(*(void **)&px.field = dlsym (px.dso, name))) {               \
        px.dso = NULL;                                                 \
        return seterr (error, ENOENT, "%s: no symbol %s", path, name); \
    }
    SYM (init, "PMIx_Init");
    SYM (finalize, "PMIx_Finalize");
    SYM (abort, "PMIx_Abort");
    SYM (put, "PMIx_Put");
    SYM (commit, "PMIx_Commit");
    SYM (fence, "PMIx_Fence");
    SYM (get, "PMIx_Get");
    SYM (error_string, "PMIx_Error_string");
    SYM (value_destruct, "PMIx_Value_destruct");
#undef SYM
    return 0;
}

struct pmix {
    pmix_proc_t me;
};

static void proc_load (pmix_proc_t *p, const char *nspace, pmix_rank_t rank)
{
    memset (p, 0, sizeof (*p));
    snprintf (p->nspace, sizeof (p->nspace), "%s", nspace);
    p->rank = rank;
}

static void value_release (pmix_value_t *v)
{
    if (v) {
        px.value_destruct (v);
        free (v);
    }
}

static int pmix_err (flux_error_t *error, const char *what, pmix_status_t rc)
{
    return seterr (error, rc == PMIX_ERR_NOT_FOUND ? ENOENT : EIO,
                   "PMIx %s: %s", what, px.error_string (rc));
}

static int pmix_put (void *impl, const char *key, const char *val,
                     flux_error_t *error)
{
    pmix_value_t v = {.type = PMIX_STRING};
    pmix_status_t rc;

    v.data.string = (char *)val;
    if ((rc = px.put (PMIX_GLOBAL, key, &v)) != PMIX_SUCCESS)
        return pmix_err (error, "put", rc);
    return 0;
}

static int pmix_barrier (void *impl, flux_error_t *error)
{
    pmix_status_t rc;

    if ((rc = px.commit ()) != PMIX_SUCCESS)
        return pmix_err (error, "commit", rc);
    /* no data collection: each broker fetches the few cards it needs */
    if ((rc = px.fence (NULL, 0, NULL, 0)) != PMIX_SUCCESS)
        return pmix_err (error, "fence", rc);
    return 0;
}

static int pmix_get (void *impl, const char *key, int rank, char *buf,
                     size_t len, flux_error_t *error)
{
    struct pmix *p = impl;
    pmix_proc_t proc;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    int ret = 0;

    proc_load (&proc, p->me.nspace,
               rank < 0 ? PMIX_RANK_WILDCARD : (pmix_rank_t)rank);
    if ((rc = px.get (&proc, key, NULL, 0, &v)) != PMIX_SUCCESS)
        return pmix_err (error, "get", rc);
    if (v->type != PMIX_STRING || !v->data.string)
        ret = seterr (error, EPROTO, "PMIx get %s: not a string", key);
    else if (snprintf (buf, len, "%s", v->data.string) >= (int)len)
        ret = seterr (error, EOVERFLOW, "PMIx get %s: value too long", key);
    value_release (v);
    return ret;
}

static int pmix_abort (void *impl, int exit_code, const char *msg)
{
    return px.abort (exit_code, msg, NULL, 0) == PMIX_SUCCESS ? 0 : -1;
}

static void pmix_destroy (void *impl)
{
    if (impl) {
        int saved = errno;
        (void)px.finalize (NULL, 0);
        free (impl);
        errno = saved;
    }
}

static const struct upmi_ops pmix_ops = {
    .put = pmix_put,
    .barrier = pmix_barrier,
    .get = pmix_get,
    .abort = pmix_abort,
    .destroy = pmix_destroy,
};

static struct upmi *pmix_create (flux_error_t *error)
{
    struct pmix *p;
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    struct upmi *upmi;
    uint32_t size = 0;

    if (!getenv ("PMIX_NAMESPACE")) {
        seterr (error, ENOENT, "no PMIX_NAMESPACE in the environment");
        return NULL;
    }
    if (pmix_load (error) < 0)
        return NULL;
    if (!(p = calloc (1, sizeof (*p)))) {
        seterr (error, ENOMEM, "out of memory");
        return NULL;
    }
    if ((rc = px.init (&p->me, NULL, 0)) != PMIX_SUCCESS) {
        pmix_err (error, "init", rc);
        free (p);
        return NULL;
    }
    proc_load (&wild, p->me.nspace, PMIX_RANK_WILDCARD);
    if ((rc = px.get (&wild, PMIX_JOB_SIZE, NULL, 0, &v)) != PMIX_SUCCESS) {
        pmix_err (error, "get job size", rc);
        goto error;
    }
    if (v->type == PMIX_UINT32)
        size = v->data.uint32;
    value_release (v);
    if (size < 1 || p->me.rank >= size) {
        seterr (error, EPROTO, "PMIx: rank %u, job size %u", p->me.rank, size);
        goto error;
    }
    if (!(upmi = upmi_create_ops ("pmix", &pmix_ops, p, (int)p->me.rank,
                                  (int)size))) {
        seterr (error, errno, "out of memory");
        goto error;
    }
    upmi->vallen_max = 4096;
    /* the nodes of the job (the PMI-1 methods' PMI_process_mapping
     * says it there); a server that does not give it leaves 0 */
    v = NULL;
    if (px.get (&wild, PMIX_NUM_NODES, NULL, 0, &v) == PMIX_SUCCESS
        && v->type == PMIX_UINT32 && v->data.uint32 <= INT32_MAX)
        upmi->nnodes = (int)v->data.uint32;
    value_release (v);
    return upmi;
error:
    (void)px.finalize (NULL, 0);
    free (p);
    errno = EPROTO;
    return NULL;
}

/* ---- single ---- */

static int single_put (void *impl, const char *key, const char *val,
                       flux_error_t *error)
{
    return 0; /* nobody to read it */
}

static int single_barrier (void *impl, flux_error_t *error)
{
    return 0;
}

static int single_get (void *impl, const char *key, int rank, char *buf,
                       size_t len, flux_error_t *error)
{
    return seterr (error, ENOENT, "singleton: no key %s", key);
}

static int single_abort (void *impl, int exit_code, const char *msg)
{
    return 0;
}

static void single_destroy (void *impl)
{
}

static const struct upmi_ops single_ops = {
    .put = single_put,
    .barrier = single_barrier,
    .get = single_get,
    .abort = single_abort,
    .destroy = single_destroy,
};

/* ---- the interface ---- */

struct upmi *upmi_create_ops (const char *name, const struct upmi_ops *ops,
                              void *impl, int rank, int size)
{
    struct upmi *upmi;

    if (!name || !ops || size < 1 || rank < 0 || rank >= size) {
        errno = EINVAL;
        return NULL;
    }
    if (!(upmi = calloc (1, sizeof (*upmi))))
        return NULL;
    snprintf (upmi->name, sizeof (upmi->name), "%s", name);
    upmi->ops = ops;
    upmi->impl = impl;
    upmi->rank = rank;
    upmi->size = size;
    upmi->vallen_max = 1024;
    return upmi;
}

void upmi_destroy (struct upmi *upmi)
{
    if (upmi) {
        int saved = errno;
        if (upmi->ops->destroy)
            upmi->ops->destroy (upmi->impl);
        free (upmi);
        errno = saved;
    }
}

static long env_long (const char *name)
{
    const char *s = getenv (name);
    char *end;
    long l;

    if (!s || !*s)
        return -1;
    l = strtol (s, &end, 10);
    return *end ? -1 : l;
}

const char *upmi_parallel_launch (char *buf, size_t len)
{
    static const char *set[]
        = {"PMI_FD", "PMI_PORT", "PMIX_NAMESPACE", "PMIX_RANK", NULL};
    static const char *counts[]
        = {"PMI_SIZE", "SLURM_STEP_NUM_TASKS", "OMPI_COMM_WORLD_SIZE", NULL};
    int i;

    for (i = 0; set[i]; i++) {
        if (getenv (set[i])) {
            snprintf (buf, len, "%s=%s", set[i], getenv (set[i]));
            return buf;
        }
    }
    for (i = 0; counts[i]; i++) {
        if (env_long (counts[i]) > 1) {
            snprintf (buf, len, "%s=%s", counts[i], getenv (counts[i]));
            return buf;
        }
    }
    return NULL;
}

static struct upmi *create_one (const char *method, bool refuse_single,
                                flux_error_t *error)
{
    char why[128];

    if (!strcmp (method, "simple"))
        return simple_create (error);
    if (!strcmp (method, "pmix"))
        return pmix_create (error);
    if (!strcmp (method, "single")) {
        if (refuse_single && upmi_parallel_launch (why, sizeof (why))) {
            seterr (error, EINVAL,
                    "refused: the environment shows a parallel launch (%s)",
                    why);
            return NULL;
        }
        return upmi_create_ops ("single", &single_ops, NULL, 0, 1);
    }
    seterr (error, EINVAL, "unknown method");
    return NULL;
}

struct upmi *upmi_create (const char *methods, flux_error_t *error)
{
    const char *list = methods;
    char *copy, *tok, *save = NULL;
    char why[1024] = "";
    bool dflt = false;
    struct upmi *upmi = NULL;
    size_t n;

    if (!list)
        list = getenv ("FLUX_PMI_CLIENT_METHODS");
    if (!list || !*list) {
        list = "simple pmix single";
        dflt = true;
    }
    if (!(copy = strdup (list))) {
        seterr (error, ENOMEM, "out of memory");
        return NULL;
    }
    for (tok = strtok_r (copy, " \t,", &save); tok && !upmi;
         tok = strtok_r (NULL, " \t,", &save)) {
        flux_error_t e = {{0}};
        trace ("trying %s", tok);
        if ((upmi = create_one (tok, dflt, &e)))
            trace ("%s: rank %d of %d%s", tok, upmi->rank, upmi->size,
                   upmi->nnodes > 0 ? nodes_str (upmi->nnodes) : "");
        else {
            trace ("%s: %s", tok, e.text);
            n = strlen (why);
            snprintf (why + n, sizeof (why) - n, "%s%s: %s", n ? "; " : "", tok,
                      e.text);
        }
    }
    free (copy);
    if (!upmi) {
        char par[128];
        if (dflt && upmi_parallel_launch (par, sizeof (par))) {
            /* the reasons do not fit the error text: print them */
            if (!debug_enabled ())
                fprintf (stderr, "flux-pmi: %s\n", why);
            seterr (error, EINVAL,
                    "parallel launch (%s) but no PMI method could join it: "
                    "not starting alone (FLUX_PMI_DEBUG=1 traces)",
                    par);
        }
        else
            seterr (error, EINVAL, "PMI: %s", why);
    }
    return upmi;
}

int upmi_rank (struct upmi *upmi)
{
    return upmi ? upmi->rank : -1;
}

int upmi_size (struct upmi *upmi)
{
    return upmi ? upmi->size : -1;
}

int upmi_nnodes (struct upmi *upmi)
{
    return upmi ? upmi->nnodes : 0;
}

const char *upmi_method (struct upmi *upmi)
{
    return upmi ? upmi->name : "";
}

size_t upmi_vallen_max (struct upmi *upmi)
{
    return upmi ? upmi->vallen_max : 0;
}

int upmi_put (struct upmi *upmi, const char *key, const char *val,
              flux_error_t *error)
{
    if (!upmi || !key || !val)
        return seterr (error, EINVAL, "put: invalid argument");
    if (strlen (val) >= upmi->vallen_max)
        return seterr (error, EOVERFLOW, "put %s: value longer than %zu", key,
                       upmi->vallen_max - 1);
    return upmi->ops->put (upmi->impl, key, val, error);
}

int upmi_barrier (struct upmi *upmi, flux_error_t *error)
{
    if (!upmi)
        return seterr (error, EINVAL, "barrier: invalid argument");
    return upmi->ops->barrier (upmi->impl, error);
}

int upmi_get (struct upmi *upmi, const char *key, int rank, char *buf,
              size_t len, flux_error_t *error)
{
    if (!upmi || !key || !buf || rank < -1 || rank >= upmi->size)
        return seterr (error, EINVAL, "get: invalid argument");
    return upmi->ops->get (upmi->impl, key, rank, buf, len, error);
}

void upmi_abort (struct upmi *upmi, int exit_code, const char *msg)
{
    if (upmi && upmi->ops->abort)
        (void)upmi->ops->abort (upmi->impl, exit_code, msg);
}
