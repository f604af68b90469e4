/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the content-sqlite module (rank 0): the content service's
 * backing store.  Opens STATEDIR/content.sqlite (or RUNDIR/content.sqlite
 * when the statedir attribute is unset: gone when the instance ends),
 * registers the content-backing service and tells the content module.
 * On unload it first has content flush, then unregister, answering the
 * writes that causes, so that nothing dirty is lost (unless the content
 * module is gone already: nothing to flush).  A content module reloaded
 * meanwhile announces itself (content.online), and is told again.
 * Arguments: "truncate" starts from an empty database; "synchronous=MODE"
 * (OFF, NORMAL, FULL, EXTRA; default FULL) is sqlite's: FULL keeps every
 * answered write through a crash of the machine (an fsync per commit),
 * NORMAL only through a crash or kill of the broker; "index-min=N" folds
 * the blobs indexed in memory into the database's index once there are
 * N of them (default 16384, or 1/16 of all blobs if more, up to 2^18:
 * db.c); "gc" collects garbage before opening the database (gc.h), as
 * the marker content.sqlite.gc left by content-sqlite.gc (flux shutdown
 * --gc) does; "compression=zstd" (the default) or "compression=none":
 * whether blobs of 256 bytes or more are stored compressed (either kind
 * is read back whatever the setting).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db.h"
#include "gc.h"
#include "service.h"

static void stop_cb (flux_future_t *f, void *arg)
{
    flux_reactor_stop (flux_future_get_reactor (f));
}

/* Send topic to the content module and keep serving until it answers. */
static int rpc_serving (flux_t *h, const char *topic)
{
    flux_future_t *f;
    int rc;

    if (!(f = flux_rpc (h, topic, NULL, FLUX_NODEID_ANY, 0))
        || flux_future_then (f, -1., stop_cb, NULL) < 0) {
        flux_future_destroy (f);
        return -1;
    }
    while (!flux_future_is_ready (f))
        if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
            break;
    if ((rc = flux_future_get (f, NULL)) < 0) {
        int saved_errno = errno;
        if (saved_errno != ENOSYS) /* ENOSYS: content is gone (mod_main) */
            flux_log (h, 3, "%s: %s", topic, future_strerror (f, saved_errno));
        errno = saved_errno;
    }
    flux_future_destroy (f);
    return rc;
}

static char *db_path (flux_t *h)
{
    const char *dir = flux_attr_get (h, "statedir");
    char *path;

    if (dir && *dir) {
        if (mkdir (dir, 0700) < 0 && errno != EEXIST) {
            flux_log (h, 3, "statedir %s: %s", dir, strerror (errno));
            return NULL;
        }
    }
    else if (!(dir = flux_attr_get (h, "rundir"))) {
        flux_log (h, 3, "neither statedir nor rundir is set");
        errno = EINVAL;
        return NULL;
    }
    if (asprintf (&path, "%s/content.sqlite", dir) < 0)
        return NULL;
    return path;
}

/* Tell the content module about us.  Asking for write mode, the answer
 * names the content module's route id: its content-backing.write
 * requests are trusted (see service.h).  -1 if it refused. */
static int tell_content (flux_t *h, struct sqlite_service *svc)
{
    flux_future_t *f;
    const char *sender = NULL;

    if (!(f = flux_rpc_pack (h, "content.register-backing", FLUX_NODEID_ANY, 0,
                             "{s:s s:b}", "name", "content-sqlite", "write", 1))
        || flux_rpc_get_unpack (f, "{s?s}", "sender", &sender) < 0) {
        flux_log (h, 3, "content.register-backing: %s",
                  f ? future_strerror (f, errno) : strerror (errno));
        flux_future_destroy (f);
        return -1;
    }
    if (sender && sqlite_service_trust (svc, sender) < 0)
        flux_log (h, 3, "cannot accept content-backing.write: %s",
                  strerror (errno));
    flux_future_destroy (f);
    return 0;
}

/* Register the content-backing service, then tell the content module. */
static int register_backing (flux_t *h, struct sqlite_service *svc)
{
    flux_future_t *f;

    if (!(f = flux_service_register (h, "content-backing"))
        || flux_future_get (f, NULL) < 0) {
        flux_log (h, 3, "cannot register content-backing: %s",
                  f ? future_strerror (f, errno) : strerror (errno));
        flux_future_destroy (f);
        return -1;
    }
    flux_future_destroy (f);
    if (tell_content (h, svc) < 0) {
        flux_future_destroy (flux_service_unregister (h, "content-backing"));
        return -1;
    }
    return 0;
}

static void content_online_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg);

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_EVENT, "content.online", content_online_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

/* content.online: a (new) content module runs: register with it
 * (synchronously, so that no write it sends next is handled before its
 * route id is trusted).  The first content module's announcement came
 * before this module was loaded; should one arrive while this module is
 * registered, the content module answers EBUSY, which is logged. */
static void content_online_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    if (tell_content (h, arg) == 0)
        flux_log (h, 6, "the content module was reloaded: registered again");
}

/* Whether something else may already know blobs of the store as stored
 * (and so never store them again): a kvs that is loaded, or a content
 * cache that holds anything.  A collection is safe only before, as when
 * the instance starts (the kvs loads after content-sqlite).  why names
 * the reason. */
static bool store_in_use (flux_t *h, char *why, size_t size)
{
    flux_future_t *f;
    int count = 0;

    if (!(f = flux_rpc (h, "kvs.stats-get", NULL, FLUX_NODEID_ANY, 0))) {
        snprintf (why, size, "kvs.stats-get: %s", strerror (errno));
        return true;
    }
    if (flux_future_get (f, NULL) == 0 || errno != ENOSYS) {
        snprintf (why, size, "the kvs is loaded");
        flux_future_destroy (f);
        return true;
    }
    flux_future_destroy (f);
    if (!(f = flux_rpc (h, "content.stats-get", NULL, FLUX_NODEID_ANY, 0))) {
        snprintf (why, size, "content.stats-get: %s", strerror (errno));
        return true;
    }
    if (flux_rpc_get_unpack (f, "{s:i}", "count", &count) < 0) {
        bool absent = errno == ENOSYS; /* no content module, no cache */
        if (!absent)
            snprintf (why, size, "content.stats-get: %s",
                      future_strerror (f, errno));
        flux_future_destroy (f);
        return !absent;
    }
    flux_future_destroy (f);
    if (count > 0) {
        snprintf (why, size, "the content cache holds %d blobs", count);
        return true;
    }
    return false;
}

/* Garbage collection (gc.h), logged: it may take a while on a big store,
 * before the module (and so the instance) is up. */
static int collect (flux_t *h, const char *path, const char *hashtype,
                    struct gc_stats *st, flux_error_t *error)
{
    struct stat sb;

    if (stat (path, &sb) < 0)
        return 0; /* nothing stored yet */
    flux_log (h, 6, "garbage collection of %s (%.1f MiB)...", path,
              sb.st_size / 1048576.);
    if (gc_run (path, hashtype, st, error) < 0) {
        flux_log (h, 3,
                  "garbage collection failed, the database is kept as it "
                  "was: %s",
                  error->text);
        return -1;
    }
    flux_log (h, 6,
              "garbage collection: kept %lld of %lld objects (%.1f MiB), "
              "file %.1f -> %.1f MiB, in %.2fs",
              st->objects_kept, st->objects_before, st->bytes_kept / 1048576.,
              st->file_before / 1048576., st->file_after / 1048576.,
              st->seconds);
    return 1;
}

int mod_main (flux_t *h, int argc, char **argv)
{
    const char *hashtype = flux_attr_get (h, "content.hash");
    struct sqlite_service *svc = NULL;
    struct db *db = NULL;
    bool truncate = false;
    bool gc = false;
    struct gc_stats gc_st;
    flux_error_t gc_error;
    int gc_rc = 0;
    const char *sync = NULL;
    bool compress = true;
    long index_min = 0;
    flux_error_t error;
    char *path = NULL;
    uint32_t rank;
    flux_msg_handler_t **handlers = NULL;
    int rc = -1, i;

    for (i = 0; i < argc; i++) {
        if (!strcmp (argv[i], "truncate"))
            truncate = true;
        else if (!strcmp (argv[i], "gc"))
            gc = true;
        else if (!strncmp (argv[i], "synchronous=", 12))
            sync = argv[i] + 12;
        else if (!strcmp (argv[i], "compression=zstd"))
            compress = true;
        else if (!strcmp (argv[i], "compression=none"))
            compress = false;
        else if (!strncmp (argv[i], "compression=", 12)) {
            flux_log (h, 3, "%s: expected zstd or none", argv[i]);
            errno = EINVAL;
            return -1;
        }
        else if (!strncmp (argv[i], "index-min=", 10)) {
            char *end;
            errno = 0;
            index_min = strtol (argv[i] + 10, &end, 10);
            if (errno || end == argv[i] + 10 || *end || index_min < 1
                || index_min > 1 << 24) {
                flux_log (h, 3, "%s: expected a count of 1 to 16777216",
                          argv[i]);
                errno = EINVAL;
                return -1;
            }
        }
        else {
            flux_log (h, 3, "unknown module argument: %s", argv[i]);
            errno = EINVAL;
            return -1;
        }
    }
    if (flux_get_rank (h, &rank) < 0 || rank != 0) {
        flux_log (h, 3, "content-sqlite runs on rank 0 only");
        errno = EINVAL;
        return -1;
    }
    if (!hashtype)
        hashtype = "sha1";
    if (!(path = db_path (h)))
        return -1;
    if (!truncate && (gc || gc_requested (path))) {
        char why[128];
        if (store_in_use (h, why, sizeof (why)))
            flux_log (h, 4,
                      "garbage collection is done only as the instance "
                      "starts (%s): %s",
                      why,
                      gc_requested (path) ? "kept for the next start"
                                          : "not done");
        else {
            gc_rc = collect (h, path, hashtype, &gc_st, &gc_error);
            if (gc_requested (path) && gc_request (path, false) < 0)
                flux_log (h, 4, "%s.gc: %s", path, strerror (errno));
        }
    }
    else if (truncate && gc_requested (path) && gc_request (path, false) < 0)
        flux_log (h, 4, "%s.gc: %s", path, strerror (errno));
    if (!(db = db_open (path, hashtype, truncate, &error))
        || (sync && db_set_synchronous (db, sync) < 0
            && errprintf (&error,
                          "synchronous=%s: use OFF, NORMAL, FULL"
                          " or EXTRA",
                          sync))
        || (index_min > 0 && db_set_index_min (db, (size_t)index_min) < 0)
        || !(svc = sqlite_service_create (h, db, hashtype, path, &error))) {
        flux_log (h, 3, "%s: %s", path, error.text);
        goto done;
    }
    db_set_compression (db, compress);
    if (gc_rc != 0)
        sqlite_service_set_gc (svc, &gc_st, gc_rc < 0 ? gc_error.text : NULL);
    if (register_backing (h, svc) < 0
        || flux_msg_handler_addvec (h, htab, svc, &handlers) < 0
        || flux_event_subscribe (h, "content.online") < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        flux_log (h, 3, "reactor: %s", strerror (errno));
    /* the first error is the one reported; ENOSYS: the content module
     * is gone (unloaded before us), and nothing is left to flush */
    if ((rc = rpc_serving (h, "content.flush")) < 0 && errno == ENOSYS)
        rc = 0;
    else if (rpc_serving (h, "content.unregister-backing") < 0 && rc == 0)
        rc = -1;
    {
        int saved_errno = errno;
        flux_future_destroy (flux_service_unregister (h, "content-backing"));
        errno = saved_errno;
    }
done:
    flux_msg_handler_delvec (handlers);
    sqlite_service_destroy (svc);
    db_close (db);
    free (path);
    return rc;
}
