/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the content module: read the configuration, run the service.
 *
 * Settings, from broker attributes, overridden by module arguments
 * NAME=VALUE (sizes take an optional k, M or G suffix, powers of 1024):
 *   content.hash              hash type (attribute only; default sha1)
 *   purge-target-size         bytes of clean blobs cached (4M)
 *     (attribute content.purge-target-size)
 *   blob-size-limit           largest blob accepted (1G)
 *     (attribute content.blob-size-limit)
 *   flush-batch-limit         writes in flight at most (256)
 *     (attribute content.flush-batch-limit)
 *   lazy-delay-ms             rank 0: how long blobs no checkpoint waits
 *     for are held to join the next durable write (50; 0: not held)
 *   lazy-bytes                ... unless this much is queued (1M)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/sizeparse.h"
#include "service.h"

struct setting {
    const char *name; /* argument name; the attribute is content.NAME */
    size_t *val;
};

static int configure (flux_t *h, struct content_config *cfg, int argc,
                      char **argv)
{
    size_t write_limit = (size_t)cfg->write_limit;
    size_t lazy_ms = (size_t)(cfg->lazy_delay * 1000. + 0.5);
    struct setting settings[] = {
        {"purge-target-size", &cfg->purge_target},
        {"blob-size-limit", &cfg->blob_size_limit},
        {"flush-batch-limit", &write_limit},
        {"lazy-delay-ms", &lazy_ms},
        {"lazy-bytes", &cfg->lazy_bytes},
    };
    const size_t nsettings = sizeof (settings) / sizeof (settings[0]);
    const char *s;
    size_t i;
    int a;

    if ((s = flux_attr_get (h, "content.hash")))
        cfg->hashtype = s;
    for (i = 0; i < nsettings; i++) {
        char attr[64];
        snprintf (attr, sizeof (attr), "content.%s", settings[i].name);
        if ((s = flux_attr_get (h, attr))
            && size_parse (s, settings[i].val) < 0) {
            flux_log (h, 3, "bad value for attribute %s: %s", attr, s);
            return -1;
        }
    }
    for (a = 0; a < argc; a++) {
        const char *eq = strchr (argv[a], '=');
        for (i = 0; eq && i < nsettings; i++) {
            size_t n = strlen (settings[i].name);
            if ((size_t)(eq - argv[a]) == n
                && !strncmp (argv[a], settings[i].name, n))
                break;
        }
        if (!eq || i == nsettings) {
            flux_log (h, 3, "unknown module argument: %s", argv[a]);
            errno = EINVAL;
            return -1;
        }
        if (size_parse (eq + 1, settings[i].val) < 0) {
            flux_log (h, 3, "bad value in module argument: %s", argv[a]);
            return -1;
        }
    }
    if (write_limit < 1 || write_limit > 65536) {
        flux_log (h, 3, "flush-batch-limit must be 1..65536");
        errno = EINVAL;
        return -1;
    }
    if (lazy_ms > 10000) {
        flux_log (h, 3, "lazy-delay-ms must be 0..10000");
        errno = EINVAL;
        return -1;
    }
    cfg->write_limit = (int)write_limit;
    cfg->lazy_delay = lazy_ms / 1000.;
    return 0;
}

/* Rank 0: whether a backing store module is loaded already (this module
 * is being reloaded under it): its content-backing service answers. */
static bool backing_loaded (flux_t *h)
{
    flux_future_t *f;
    bool loaded;

    if (!(f = flux_rpc (h, "content-backing.checkpoint-get", NULL,
                        FLUX_NODEID_ANY, 0)))
        return false;
    loaded = flux_future_get (f, NULL) == 0 || errno != ENOSYS;
    flux_future_destroy (f);
    return loaded;
}

/* Rank 0: announce content.online once the service runs, so that a
 * backing store registered with a content module that was since reloaded
 * registers again (content-sqlite does).  A failure is logged. */
static void announce (flux_t *h)
{
    flux_error_t error;

    if (flux_service_announce (h, "content", &error) < 0)
        flux_log (h, 3, "%s", error.text);
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct content_config cfg = {
        .hashtype = "sha1",
        .purge_target = (size_t)4 << 20,
        .blob_size_limit = (size_t)1 << 30,
        .write_limit = 256,
        .lazy_delay = 0.05,
        .lazy_bytes = (size_t)1 << 20,
    };
    struct content_service *svc;
    flux_error_t error;
    int rc;

    if (flux_get_rank (h, &cfg.rank) < 0) {
        flux_log (h, 3, "cannot get the broker rank: %s", strerror (errno));
        return -1;
    }
    if (configure (h, &cfg, argc, argv) < 0)
        return -1;
    if (!(svc = content_service_create (h, &cfg, &error))) {
        flux_log (h, 3, "%s", error.text);
        return -1;
    }
    if (cfg.rank == 0) {
        if (backing_loaded (h))
            content_service_expect_backing (svc);
        announce (h);
    }
    rc = flux_reactor_run (flux_get_reactor (h), 0);
    content_service_destroy (svc);
    return rc;
}
