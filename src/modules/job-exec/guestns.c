/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* guestns.c - guest namespaces and exec.eventlog (see guestns.h).
 *
 * A guest has at most one request of its own in flight (step: the
 * reattach lookup, namespace create, an exec.eventlog commit, namespace
 * remove) and at most one operation in the shared primary commit (pop:
 * the symlink, the final dirref, or an unlink).  What job-exec posted is
 * kept in g->log (the committed part let go past GUEST_LOG_KEEP bytes);
 * g->committed bytes of it are in the KVS.
 *
 * Closing is a sequence of stages, each done once nothing is in flight:
 *   FLUSH   post "done"; the namespace's root as it is (kvs.getroot:
 *           the shells are gone) is its final root, and the events not
 *           committed to it (complete, done) go with the copy
 *   LINK    put that root at job.<id>.guest; if the namespace was lost,
 *           job-exec's own events there instead; if it never existed,
 *           unlink the symlink
 *   REMOVE  remove the namespace; GUEST_CLOSED is said as the request
 *           goes (the copy is in place), and a guest destroyed then
 *           lives on, orphaned and silent, until the answer
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "guestns.h"
#include "libcontent/blobref.h"
#include "libeventlog/eventlog.h"
#include "libflux/list.h"
#include "libflux/waitlist.h"
#include "libkvs/kvs.h"
#include "libkvs/treeobj.h"
#include "libutil/fluid.h"
#include "libutil/textbuf.h"

#define EVENTLOG_KEY "exec.eventlog"

/* What job-exec posted is kept to restore a lost namespace; once more
 * than this is committed, the committed part is let go. */
#define GUEST_LOG_KEEP 65536

/* S_PROBE: after kvs.online, does the namespace still exist? */
enum step {
    S_IDLE,
    S_LOOKUP,
    S_CREATE,
    S_COMMIT,
    S_GETROOT,
    S_REMOVE,
    S_PROBE
};
enum pop { P_NONE, P_LINK, P_COPY, P_UNLINK };
enum stage { C_FLUSH, C_LINK, C_REMOVE, C_DONE };

struct guestns {
    flux_t *h;
    flux_reactor_t *r;
    timerq_t *tq;
    struct list_node guests;
    struct waitlist kvs_wait;
    /* the shared primary commits */
    struct list_node next;    /* guests whose pop goes in the next commit */
    struct list_node batches; /* commits in flight (struct pbatch) */
    size_t inflight;
    struct waitlist pwait; /* commits refused (the kvs unloading) */
    struct flux_deferred defer;
    struct guestns_stats stats;
    char empty_root[BLOBREF_MAX_STRING_SIZE]; /* blobref of an empty dir */
};

struct guest {
    guestns_t *gs;
    struct list_node link; /* gs->guests */
    flux_jobid_t id;
    uint32_t userid;
    guest_f cb;
    void *arg;
    char ns[32];
    char key[64]; /* job.<dothex>.guest */
    /* the guest namespace side */
    enum step step;
    flux_future_t *f;
    /* a fresh open: the create and the init commit go together (pair) */
    flux_future_t *f_init;
    int pair_left; /* answers the pair still waits for */
    int create_errnum, init_errnum;
    char pair_errbuf[256];
    struct waitlist_item wi;
    char seed[BLOBREF_MAX_STRING_SIZE]; /* rootref to create from, or "" */
    struct textbuf log;                 /* every line posted */
    size_t committed, sending;
    struct tq_entry flush;
    /* the primary side */
    enum pop pop;
    struct list_node plink;
    char *final_root; /* dirref text */
    /* phases */
    unsigned opening : 1, opened : 1, closing : 1, closed : 1, ns_exists : 1,
        restore : 1, linked : 1, init_ok : 1, link_ok : 1, done_posted : 1,
        copied : 1, flush_failed : 1, link_failed : 1, close_said : 1,
        orphan : 1, pair : 1;
    enum stage stage;
    int close_errnum;
    flux_future_t *graft; /* guestns_graft() */
};

static void send_step (struct guest *g);
static void advance (struct guest *g);
static void pbatch_add (struct guest *g, enum pop op);
static void check_opened (struct guest *g);

static void glog (struct guest *g, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void glog (struct guest *g, int level, const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    flux_log (g->gs->h, level, "%ju: %s", (uintmax_t)g->id, buf);
}

const char *guest_namespace (const struct guest *g)
{
    return g->ns;
}

bool guest_was_copied (const struct guest *g)
{
    return g && g->copied;
}

bool guest_is_linked (const struct guest *g)
{
    return !g || ((g->link_ok || g->link_failed) && !g->pair)
           || (!g->opening && !g->opened);
}

bool guest_is_open (const struct guest *g)
{
    return g->opened && !g->closing;
}

const struct guestns_stats *guestns_stats (guestns_t *gs)
{
    return &gs->stats;
}

static bool pending (const struct guest *g)
{
    return g->log.len > g->committed;
}

/* ---- the shared primary commits ---- */

/* A primary commit in flight, with the guests whose operations it
 * carries.  One at a time: what accumulates meanwhile goes in the next.
 * (More in flight measured slower: each primary commit rewrites the
 * path from the root to every job directory it touches, so fewer,
 * larger commits cost the kvs less.) */
#define PBATCH_MAX 1

struct pbatch {
    struct list_node link; /* gs->batches */
    guestns_t *gs;
    struct list_node guests;
    flux_kvs_txn_t *txn; /* kept to be sent again */
    flux_future_t *f;
    struct waitlist_item wi;
};

static void pbatch_destroy (struct pbatch *b)
{
    if (b) {
        list_del (&b->link);
        waitlist_cancel (&b->gs->pwait, &b->wi);
        flux_future_destroy (b->f);
        flux_kvs_txn_destroy (b->txn);
        free (b);
    }
}

static void pbatch_send (struct pbatch *b);

static void pbatch_cb (flux_future_t *f, void *arg)
{
    struct pbatch *b = arg;
    guestns_t *gs = b->gs;
    struct list_node *pos, *tmp;
    int errnum = 0;
    const char *errstr = NULL;
    char buf[256];

    if (flux_future_get (f, NULL) < 0) {
        errnum = errno;
        snprintf (buf, sizeof (buf), "%s", future_strerror (f, errnum));
        errstr = buf;
    }
    flux_future_destroy (f);
    b->f = NULL;
    if (errnum == ENOSYS) {
        if (!waitlist_refused (&gs->pwait, &b->wi))
            flux_log (gs->h, LOG_WARNING,
                      "guest namespaces: primary commit refused: waiting for "
                      "the kvs");
        return;
    }
    if (errnum)
        gs->stats.errors++;
    gs->inflight--;
    list_for_each_safe (pos, tmp, &b->guests)
    {
        struct guest *g = list_entry (pos, struct guest, plink);
        enum pop op = g->pop;
        list_del (&g->plink);
        g->pop = P_NONE;
        if (op == P_LINK) {
            if (errnum && (g->opening || g->opened)) {
                bool opening = g->opening;
                char text[300];
                g->opening = 0;
                g->link_failed = 1;
                gs->stats.errors++;
                snprintf (text, sizeof (text), "linking %s: %s", g->key,
                          errstr);
                if (opening && !g->closing) {
                    g->cb (g, GUEST_OPENED, errnum, text, g->arg);
                    continue; /* g may be gone */
                }
                if (!opening && !g->closing) {
                    g->cb (g, GUEST_ERROR, errnum, text, g->arg);
                    continue; /* g may be gone */
                }
            }
            else if (!errnum) {
                g->link_ok = 1;
                if (g->opening)
                    continue; /* opened once init is in (check_opened) */
                if (g->opened && !g->pair) /* else said by pair_answer */
                    g->cb (g, GUEST_LINKED, 0, NULL, g->arg); /* keeps g */
            }
        }
        else {
            if (errnum) {
                glog (g, LOG_ERR, "%s %s: %s",
                      op == P_COPY ? "putting the guest namespace at"
                                   : "unlinking",
                      g->key, errstr);
                if (!g->close_errnum)
                    g->close_errnum = errnum;
            }
            g->stage = C_REMOVE;
        }
        advance (g); /* may free g */
    }
    pbatch_destroy (b);
    if (!list_empty (&gs->next))
        flux_reactor_defer (gs->r, &gs->defer);
}

static void pbatch_send (struct pbatch *b)
{
    guestns_t *gs = b->gs;
    flux_future_t *f;

    waitlist_sent (&gs->pwait, &b->wi);
    if (!(f = flux_kvs_commit (gs->h, KVS_PRIMARY_NAMESPACE, FLUX_KVS_LAZY,
                               b->txn))
        || flux_future_then (f, -1., pbatch_cb, b) < 0) {
        /* cannot send: fail the batch through the callback's path */
        int errnum = errno;
        flux_future_destroy (f);
        if (!(f = flux_future_create (NULL, NULL))) {
            flux_log (gs->h, LOG_CRIT, "guest namespaces: out of memory");
            return;
        }
        flux_future_set_flux (f, gs->h);
        flux_future_fulfill_error (f, errnum, NULL);
        if (flux_future_then (f, -1., pbatch_cb, b) < 0) {
            flux_future_destroy (f);
            flux_log (gs->h, LOG_CRIT, "guest namespaces: %s",
                      strerror (errno));
            return;
        }
    }
    b->f = f;
}

static void pbatch_resend (struct waitlist *wl, struct waitlist_item *it,
                           void *arg)
{
    struct pbatch *b = waitlist_entry (it, struct pbatch, wi);

    flux_log (b->gs->h, LOG_INFO,
              "guest namespaces: the kvs is back: primary commit sent again");
    pbatch_send (b);
}

/* The namespace's final root at job.<id>.guest, and the events not in it
 * appended there; or, the namespace lost, job-exec's events alone. */
static int copy_ops (flux_kvs_txn_t *txn, struct guest *g)
{
    char key[sizeof (g->key) + sizeof (EVENTLOG_KEY) + 1];

    snprintf (key, sizeof (key), "%s.%s", g->key, EVENTLOG_KEY);
    if (!g->final_root)
        return flux_kvs_txn_unlink (txn, 0, g->key) < 0
                       || flux_kvs_txn_put (txn, 0, key, g->log.data) < 0
                   ? -1
                   : 0;
    if (flux_kvs_txn_put_treeobj (txn, 0, g->key, g->final_root) < 0)
        return -1;
    if (pending (g)
        && flux_kvs_txn_put_raw (txn, FLUX_KVS_APPEND, key,
                                 g->log.data + g->committed,
                                 g->log.len - g->committed)
               < 0)
        return -1;
    return 0;
}

static void pbatch_defer_cb (struct flux_deferred *d)
{
    guestns_t *gs = (guestns_t *)((char *)d - offsetof (struct guestns, defer));
    struct list_node *pos, *tmp;
    struct pbatch *b;

    if (gs->inflight >= PBATCH_MAX || list_empty (&gs->next))
        return; /* the next commit to end sends what waits */
    if (!(b = calloc (1, sizeof (*b))) || !(b->txn = flux_kvs_txn_create ()))
        goto nomem;
    b->gs = gs;
    list_init (&b->link);
    list_init (&b->guests);
    waitlist_item_init (&b->wi);
    list_for_each_safe (pos, tmp, &gs->next)
    {
        struct guest *g = list_entry (pos, struct guest, plink);
        int rc;
        if (g->pop == P_LINK)
            rc = flux_kvs_txn_symlink (b->txn, 0, g->key, g->ns, ".");
        else if (g->pop == P_COPY)
            rc = copy_ops (b->txn, g);
        else
            rc = flux_kvs_txn_unlink (b->txn, 0, g->key);
        if (rc < 0)
            goto nomem;
        gs->stats.primary_ops++;
    }
    list_move_all (&b->guests, &gs->next);
    list_add_tail (&gs->batches, &b->link);
    gs->inflight++;
    gs->stats.primary_commits++;
    pbatch_send (b);
    return;
nomem:
    /* leave the guests queued: try again on the next loop turn */
    if (b)
        flux_kvs_txn_destroy (b->txn);
    free (b);
    flux_log (gs->h, LOG_ERR, "guest namespaces: building a commit: %s",
              strerror (errno));
    flux_reactor_defer (gs->r, &gs->defer);
}

static void pbatch_add (struct guest *g, enum pop op)
{
    guestns_t *gs = g->gs;

    g->pop = op;
    list_add_tail (&gs->next, &g->plink);
    if (gs->inflight < PBATCH_MAX)
        flux_reactor_defer (gs->r, &gs->defer);
}

/* ---- the guest namespace side ---- */

static void open_failed (struct guest *g, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void open_failed (struct guest *g, int errnum, const char *fmt, ...)
{
    char text[300];
    va_list ap;

    g->gs->stats.errors++;
    g->opening = 0;
    if (g->closing) {
        advance (g);
        return;
    }
    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    g->cb (g, GUEST_OPENED, errnum, text, g->arg);
}

static void check_opened (struct guest *g)
{
    if (!g->opening || !g->init_ok)
        return;
    g->opening = 0;
    g->opened = 1;
    g->gs->stats.opened++;
    if (g->closing)
        advance (g);
    else
        g->cb (g, GUEST_OPENED, 0, NULL, g->arg);
}

static void lost_at_close (struct guest *g)
{
    glog (g, LOG_WARNING,
          "guest namespace %s was lost: %s keeps job-exec's own events", g->ns,
          g->key);
}

static void flush_cb (struct tq_entry *e)
{
    struct guest *g
        = (struct guest *)((char *)e - offsetof (struct guest, flush));

    if (g->step == S_IDLE && g->ns_exists && pending (g)) {
        g->step = S_COMMIT;
        send_step (g);
    }
}

/* More to commit while running: in GUEST_BATCH seconds. */
static void schedule_flush (struct guest *g)
{
    if (g->step != S_IDLE || !g->ns_exists || !pending (g)
        || tq_entry_armed (&g->flush))
        return;
    if (timerq_arm (g->gs->tq, &g->flush, GUEST_BATCH) < 0) {
        g->step = S_COMMIT; /* no timer: commit now */
        send_step (g);
    }
}

static void commit_done (struct guest *g, flux_future_t *f)
{
    const char *treeobj;

    g->committed = g->sending;
    g->restore = 0;
    if (g->committed > GUEST_LOG_KEEP) {
        memmove (g->log.data, g->log.data + g->committed,
                 g->log.len - g->committed + 1);
        g->log.len -= g->committed;
        g->committed = g->sending = 0;
    }
    g->gs->stats.commits++;
    if (g->opening && !g->init_ok) {
        g->init_ok = 1;
        if (pending (g)) {
            g->step = S_COMMIT;
            send_step (g);
            return;
        }
        check_opened (g); /* may free g */
        return;
    }
    if (g->closing && g->stage == C_FLUSH && g->done_posted && !pending (g)) {
        /* done is in: this commit's root is the namespace's final one */
        free (g->final_root);
        if (flux_kvs_commit_get_treeobj (f, &treeobj) == 0
            && (g->final_root = strdup (treeobj)))
            g->stage = C_LINK;
        else {
            g->final_root = NULL; /* ask for it (S_GETROOT) */
            g->flush_failed = 1;
        }
    }
    if (g->closing)
        advance (g);
    else
        schedule_flush (g);
}

/* The kvs refused a request (unloading): the step is sent again on
 * kvs.online. */
static void wait_for_kvs (struct guest *g)
{
    if (!waitlist_refused (&g->gs->kvs_wait, &g->wi))
        glog (g, LOG_WARNING,
              "guest namespace %s: the kvs refused a request: waiting for it",
              g->ns);
}

static void pair_answer (struct guest *g, flux_future_t *f, bool init);

/* The namespace is gone (the kvs lost it: ENOTSUP): what was committed
 * to it must be sent again, job-exec's own events from the start. */
static void forget_namespace (struct guest *g)
{
    g->gs->stats.restored++;
    g->ns_exists = 0;
    g->restore = 1;
    g->committed = 0;
}

/* A step found the namespace gone: closing, the primary copy keeps
 * job-exec's events; else the namespace is created again with them. */
static void namespace_lost (struct guest *g)
{
    forget_namespace (g);
    if (g->closing) {
        lost_at_close (g);
        advance (g);
        return;
    }
    glog (g, LOG_WARNING,
          "guest namespace %s was lost: creating it again with job-exec's own "
          "events",
          g->ns);
    g->step = S_CREATE;
    send_step (g);
}

static void step_cb (flux_future_t *f, void *arg)
{
    struct guest *g = arg;
    enum step step = g->step;
    int errnum = 0;
    const char *treeobj;
    char errbuf[256] = "";

    if (step == S_CREATE && g->pair_left > 0) {
        pair_answer (g, f, false);
        return;
    }

    if ((step == S_LOOKUP ? flux_kvs_lookup_get_treeobj (f, &treeobj)
         : step == S_GETROOT || step == S_PROBE
             ? flux_kvs_getroot_get_treeobj (f, &treeobj)
             : flux_future_get (f, NULL))
        < 0) {
        errnum = errno;
        snprintf (errbuf, sizeof (errbuf), "%s", future_strerror (f, errnum));
    }
    if (errnum == ENOSYS) {
        flux_future_destroy (f);
        g->f = NULL;
        wait_for_kvs (g);
        return;
    }
    g->f = NULL;
    g->step = S_IDLE;
    switch (step) {
        case S_LOOKUP: {
            json_t *o = errnum == 0 ? treeobj_decode (treeobj) : NULL;
            const char *ref;
            if (o && treeobj_is_dirref (o) && (ref = treeobj_get_blobref (o, 0))
                && strlen (ref) < sizeof (g->seed)) {
                strcpy (g->seed, ref);
                g->copied = 1;
            }
            json_decref (o);
            g->step = S_CREATE;
            send_step (g);
            break;
        }
        case S_CREATE:
            g->pair = 0; /* the pair could not be sent: one at a time */
            if (errnum == EEXIST) {
                g->gs->stats.adopted++;
                glog (g, LOG_INFO, "guest namespace %s exists: adopted", g->ns);
            }
            else if (errnum) {
                if (g->opening)
                    open_failed (g, errnum, "creating namespace %s: %s", g->ns,
                                 errbuf);
                else {
                    glog (g, LOG_ERR, "creating namespace %s again: %s", g->ns,
                          errbuf);
                    if (!g->close_errnum)
                        g->close_errnum = errnum;
                    g->stage = C_LINK; /* closing: unlink and remove */
                    advance (g);
                }
                break;
            }
            g->ns_exists = 1;
            g->seed[0] = '\0';
            if (pending (g) || g->restore) {
                g->step = S_COMMIT;
                send_step (g);
            }
            else
                advance (g);
            break;
        case S_COMMIT:
            if (errnum == ENOTSUP) {
                namespace_lost (g);
                break;
            }
            if (errnum) {
                g->gs->stats.errors++;
                if (g->opening) {
                    open_failed (g, errnum, "committing to %s: %s", g->ns,
                                 errbuf);
                    break;
                }
                glog (g, LOG_ERR, "committing to %s: %s", g->ns, errbuf);
                if (g->closing) {
                    /* the events go to the primary copy instead */
                    if (!g->close_errnum)
                        g->close_errnum = errnum;
                    g->flush_failed = 1;
                    advance (g);
                }
                else {
                    char text[300];
                    snprintf (text, sizeof (text), "committing to %s: %s",
                              g->ns, errbuf);
                    g->committed = g->log.len; /* do not send them again */
                    g->cb (g, GUEST_ERROR, errnum, text, g->arg);
                }
                break;
            }
            commit_done (g, f);
            break;
        case S_GETROOT:
            if (errnum == ENOTSUP) {
                forget_namespace (g);
                lost_at_close (g);
            }
            else if (errnum || !(g->final_root = strdup (treeobj))) {
                if (!errnum) {
                    errnum = ENOMEM;
                    snprintf (errbuf, sizeof (errbuf), "%s", strerror (errnum));
                }
                glog (g, LOG_ERR, "the root of %s: %s", g->ns, errbuf);
                g->restore = 1; /* job-exec's events alone */
                g->committed = 0;
                if (!g->close_errnum)
                    g->close_errnum = errnum;
            }
            g->stage = C_LINK;
            advance (g);
            break;
        case S_PROBE:
            if (errnum == ENOTSUP) {
                namespace_lost (g);
                break;
            }
            if (errnum)
                glog (g, LOG_ERR, "guest namespace %s: %s", g->ns, errbuf);
            if (g->closing)
                advance (g);
            else
                schedule_flush (g);
            break;
        case S_REMOVE:
            if (errnum && errnum != ENOTSUP) {
                glog (g, LOG_ERR, "removing namespace %s: %s", g->ns, errbuf);
                if (!g->close_errnum)
                    g->close_errnum = errnum;
            }
            g->ns_exists = 0;
            g->stage = C_DONE;
            advance (g);
            break;
        case S_IDLE:
            break;
    }
    flux_future_destroy (f);
}

/* ---- a fresh open: the create and the init commit as one step ----
 *
 * Both requests leave together, the commit right behind the create: the
 * kvs handles them in that order (a commit that arrives while the create
 * waits for its root waits with it), so exec.eventlog begins with "init"
 * ahead of anything a shell appends, and the open is said at once: the
 * shells start one round trip of the kvs (two, counting the commit)
 * earlier.  The step ends when both are answered; what failed then is a
 * GUEST_ERROR (the job was started meanwhile).  Until then the guest is
 * not "linked" (guest_is_linked, GUEST_LINKED): the start response still
 * says that job.<id>.guest names a namespace holding init.
 */

/* Commit what job-exec posted and the namespace does not hold yet (the
 * whole log when restoring a lost namespace).  The future, or NULL. */
static flux_future_t *commit_log (struct guest *g)
{
    flux_kvs_txn_t *txn;
    flux_future_t *f = NULL;

    if (!(txn = flux_kvs_txn_create ()))
        return NULL;
    if ((g->restore ? flux_kvs_txn_put (txn, 0, EVENTLOG_KEY, g->log.data)
                    : flux_kvs_txn_put_raw (txn, FLUX_KVS_APPEND, EVENTLOG_KEY,
                                            g->log.data + g->committed,
                                            g->log.len - g->committed))
            == 0
        && (f = flux_kvs_commit (g->gs->h, g->ns, 0, txn)))
        g->sending = g->log.len;
    flux_kvs_txn_destroy (txn);
    return f;
}

static void init_cb (flux_future_t *f, void *arg)
{
    pair_answer (arg, f, true);
}

/* The init commit of the pair (what is posted so far): 0, or -1. */
static int pair_send_init (struct guest *g)
{
    flux_future_t *f;

    if (!(f = commit_log (g)) || flux_future_then (f, -1., init_cb, g) < 0) {
        flux_future_destroy (f);
        return -1;
    }
    g->f_init = f;
    g->pair_left = 2;
    g->create_errnum = g->init_errnum = 0;
    g->pair_errbuf[0] = '\0';
    return 0;
}

/* Said even while closing (the job may have ended before the answer):
 * the job gets its exception either way. */
static void pair_error (struct guest *g, int errnum, const char *what)
{
    char text[300];

    g->gs->stats.errors++;
    snprintf (text, sizeof (text), "%s %s: %s", what, g->ns, g->pair_errbuf);
    if (g->closing) {
        if (!g->close_errnum)
            g->close_errnum = errnum;
        g->cb (g, GUEST_ERROR, errnum, text, g->arg); /* keeps g: closing */
        advance (g);
        return;
    }
    g->cb (g, GUEST_ERROR, errnum, text, g->arg); /* may free g */
}

static void pair_answer (struct guest *g, flux_future_t *f, bool init)
{
    int errnum = flux_future_get (f, NULL) < 0 ? errno : 0;

    if (errnum && !g->pair_errbuf[0])
        snprintf (g->pair_errbuf, sizeof (g->pair_errbuf), "%s",
                  future_strerror (f, errnum));
    if (init) {
        g->init_errnum = errnum;
        g->f_init = NULL;
    }
    else {
        g->create_errnum = errnum;
        g->f = NULL;
    }
    flux_future_destroy (f);
    if (--g->pair_left > 0)
        return;
    if (g->create_errnum == ENOSYS || g->init_errnum == ENOSYS) {
        /* both again (a create that went through is then adopted) */
        wait_for_kvs (g);
        return;
    }
    g->step = S_IDLE;
    g->pair = 0;
    if (g->create_errnum == EEXIST) {
        g->gs->stats.adopted++;
        glog (g, LOG_INFO, "guest namespace %s exists: adopted", g->ns);
    }
    else if (g->create_errnum) {
        pair_error (g, g->create_errnum, "creating namespace");
        return;
    }
    g->ns_exists = 1;
    if (g->init_errnum) {
        g->committed = g->log.len; /* do not send them again */
        pair_error (g, g->init_errnum, "committing to");
        return;
    }
    g->committed = g->sending;
    g->init_ok = 1;
    g->gs->stats.commits++;
    if (g->link_ok || g->link_failed)             /* the link went first */
        g->cb (g, GUEST_LINKED, 0, NULL, g->arg); /* keeps g */
    if (g->closing)
        advance (g); /* may free g */
    else
        schedule_flush (g);
}

static void send_step (struct guest *g)
{
    guestns_t *gs = g->gs;
    flux_future_t *f = NULL;

    timerq_disarm (gs->tq, &g->flush);
    waitlist_sent (&gs->kvs_wait, &g->wi);
    switch (g->step) {
        case S_LOOKUP:
            f = flux_kvs_lookup (gs->h, KVS_PRIMARY_NAMESPACE, FLUX_KVS_TREEOBJ,
                                 g->key);
            break;
        case S_CREATE:
            f = flux_kvs_namespace_create_with (
                gs->h, g->ns, g->seed[0] ? g->seed : gs->empty_root, g->userid,
                0);
            if (f && g->pair && pair_send_init (g) < 0) {
                flux_future_destroy (f);
                f = NULL;
            }
            break;
        case S_COMMIT:
            f = commit_log (g);
            break;
        case S_GETROOT:
        case S_PROBE:
            f = flux_kvs_getroot (gs->h, g->ns, 0);
            break;
        case S_REMOVE:
            f = flux_kvs_namespace_remove (gs->h, g->ns);
            break;
        case S_IDLE:
            return;
    }
    if (!f || flux_future_then (f, -1., step_cb, g) < 0) {
        /* report the failure through step_cb on the next turn */
        int errnum = errno;
        flux_future_destroy (f);
        if (!(f = flux_future_create (NULL, NULL))) {
            glog (g, LOG_CRIT, "out of memory");
            return;
        }
        flux_future_set_flux (f, gs->h);
        flux_future_fulfill_error (f, errnum, NULL);
        if (flux_future_then (f, -1., step_cb, g) < 0) {
            flux_future_destroy (f);
            glog (g, LOG_CRIT, "cannot continue: %s", strerror (errno));
            return;
        }
    }
    g->f = f;
}

static void guest_free (struct guest *g)
{
    int saved_errno = errno;

    list_del (&g->link);
    list_del (&g->plink);
    waitlist_cancel (&g->gs->kvs_wait, &g->wi);
    timerq_disarm (g->gs->tq, &g->flush);
    flux_future_destroy (g->f);
    flux_future_destroy (g->f_init);
    flux_future_destroy (g->graft);
    textbuf_free (&g->log);
    free (g->final_root);
    free (g);
    errno = saved_errno;
}

/* GUEST_CLOSED, once: the copy is in place (or there is nothing to
 * copy).  The callback may destroy g. */
static void say_closed (struct guest *g)
{
    if (g->close_said)
        return;
    g->close_said = 1;
    g->cb (g, GUEST_CLOSED, g->close_errnum,
           g->close_errnum ? strerror (g->close_errnum) : NULL, g->arg);
}

/* Closing: the next stage, once nothing is in flight. */
static void advance (struct guest *g)
{
    while (g->closing && !g->closed && !g->opening && g->step == S_IDLE
           && g->pop == P_NONE) {
        switch (g->stage) {
            case C_FLUSH:
                if (!g->done_posted) {
                    if (guest_post (g, "done", NULL) < 0)
                        glog (g, LOG_ERR, "exec.eventlog done: %s",
                              strerror (errno));
                    g->done_posted = 1;
                }
                if (!g->ns_exists) {
                    g->stage = C_LINK;
                    break;
                }
                /* the shells are gone: the namespace's root as it is
                 * now is its final one, and job-exec's last events
                 * (complete, done) are appended to the copy, in the
                 * primary commit that puts it in place (one commit to
                 * the namespace less per job) */
                g->step = S_GETROOT;
                send_step (g);
                return;
            case C_LINK:
                if (g->final_root || g->restore) {
                    g->linked = 1;
                    pbatch_add (g, P_COPY);
                    return;
                }
                if (g->linked) {
                    g->linked = 0;
                    pbatch_add (g, P_UNLINK);
                    return;
                }
                g->stage = C_REMOVE;
                break;
            case C_REMOVE:
                if (g->ns_exists) {
                    g->step = S_REMOVE;
                    send_step (g);
                    /* the copy is in place: readers no longer need the
                     * namespace, so the job's release need not wait for
                     * its removal (one round trip less at every job's
                     * end); the request is already on its way, ahead of
                     * the release, and a destroyed guest sees it through
                     * (guest_destroy) */
                    say_closed (g); /* g may be orphaned */
                    return;
                }
                g->stage = C_DONE;
                break;
            case C_DONE:
                g->closed = 1;
                g->gs->stats.closed++;
                if (g->orphan) {
                    guest_free (g);
                    return;
                }
                say_closed (g);
                return; /* g may be gone */
        }
    }
}

/* ---- the interface ---- */

int guest_post (struct guest *g, const char *name, json_t *context)
{
    json_t *entry = NULL;
    char *line = NULL;
    int rc = -1;

    if (!g || !name) {
        errno = EINVAL;
        return -1;
    }
    if (g->done_posted)
        return 0; /* nothing goes after done */
    if (!(entry = eventlog_entry_create (0., name, NULL))
        || (context && json_object_set (entry, "context", context) < 0)
        || !(line = eventlog_entry_encode (entry))
        || textbuf_append (&g->log, line, strlen (line)) < 0)
        goto done;
    g->gs->stats.events++;
    if (!g->opening && !g->closing)
        schedule_flush (g);
    rc = 0;
done:
    if (rc < 0 && errno != ENOMEM)
        errno = EINVAL;
    json_decref (entry);
    free (line);
    return rc;
}

int guest_open (struct guest *g, bool reattach)
{
    if (!g || g->opening || g->opened || g->closing) {
        errno = EINVAL;
        return -1;
    }
    if (guest_post (g, reattach ? "reattach" : "init", NULL) < 0
        || (!reattach && guest_post (g, "starting", NULL) < 0))
        return -1;
    g->opening = 1;
    g->linked = 1;
    pbatch_add (g, P_LINK);
    g->step = reattach ? S_LOOKUP : S_CREATE;
    g->pair = !reattach;
    send_step (g);
    if (g->pair && g->pair_left == 2) {
        /* the create and init are on their way, in order: opened */
        g->opening = 0;
        g->opened = 1;
        g->gs->stats.opened++;
        g->cb (g, GUEST_OPENED, 0, NULL, g->arg); /* may free g */
    }
    return 0;
}

int guest_close (struct guest *g)
{
    if (!g || g->closing) {
        errno = EINVAL;
        return -1;
    }
    g->closing = 1;
    g->stage = C_FLUSH;
    if (!g->opening && !g->opened && !g->linked && !g->ns_exists) {
        g->closed = 1; /* never opened: nothing to undo */
        return 1;
    }
    advance (g);
    return 0;
}

static void guest_resend (struct waitlist *wl, struct waitlist_item *it,
                          void *arg)
{
    send_step (waitlist_entry (it, struct guest, wi));
}

/* The kvs (re)started.  It keeps the other namespaces across a reload
 * (the checkpoint of its unload), but should one be lost all the same,
 * a guest with a step in flight or refused learns it from that step,
 * and an idle one is asked (S_PROBE): its shells, whose commits fail
 * with ENOTSUP meanwhile and are sent again (src/shell/kvsretry.h), then
 * find the namespace again even if job-exec has nothing to post. */
void guestns_kvs_online (guestns_t *gs)
{
    struct list_node *pos, *tmp;

    if (!gs)
        return;
    waitlist_online (&gs->kvs_wait);
    waitlist_online (&gs->pwait);
    list_for_each_safe (pos, tmp, &gs->guests)
    {
        struct guest *g = list_entry (pos, struct guest, link);
        if (g->step == S_IDLE && g->ns_exists && g->opened && !g->closing) {
            timerq_disarm (gs->tq, &g->flush); /* the probe goes first */
            g->step = S_PROBE;
            send_step (g);
        }
    }
}

struct guest *guest_create (guestns_t *gs, flux_jobid_t id, uint32_t userid,
                            guest_f cb, void *arg)
{
    struct guest *g;

    if (!gs || !cb) {
        errno = EINVAL;
        return NULL;
    }
    if (!(g = calloc (1, sizeof (*g))))
        return NULL;
    g->gs = gs;
    g->id = id;
    g->userid = userid;
    g->cb = cb;
    g->arg = arg;
    list_init (&g->plink);
    waitlist_item_init (&g->wi);
    tq_entry_init (&g->flush, flush_cb);
    snprintf (g->ns, sizeof (g->ns), "job-%ju", (uintmax_t)id);
    if (fluid_encode (g->key, sizeof (g->key), id, FLUID_STRING_KVS) < 0) {
        free (g);
        errno = EINVAL;
        return NULL;
    }
    strcat (g->key, ".guest");
    list_add_tail (&gs->guests, &g->link);
    return g;
}

void guest_destroy (struct guest *g)
{
    if (g) {
        if (g->close_said && !g->closed && g->step == S_REMOVE) {
            /* its removal is under way: the guest goes when it is done,
             * saying nothing (guestns_destroy frees it before that) */
            g->orphan = 1;
            return;
        }
        guest_free (g);
    }
}

int guestns_graft (guestns_t *gs, double timeout)
{
    struct list_node *pos, *tmp;
    flux_kvs_txn_t *txn = NULL;
    flux_future_t *f = NULL;
    int n = 0, rc = -1;

    if (!gs || !(txn = flux_kvs_txn_create ()))
        return -1;
    /* one getroot per namespace, all sent before any is waited for */
    list_for_each_safe (pos, tmp, &gs->guests)
    {
        struct guest *g = list_entry (pos, struct guest, link);
        flux_future_destroy (g->graft);
        g->graft = NULL;
        if (g->opened && !g->closing && g->ns_exists && g->step == S_IDLE
            && g->pop == P_NONE)
            g->graft = flux_kvs_getroot (gs->h, g->ns, 0);
    }
    list_for_each_safe (pos, tmp, &gs->guests)
    {
        struct guest *g = list_entry (pos, struct guest, link);
        const char *treeobj;
        if (!g->graft)
            continue;
        if (flux_future_wait_for (g->graft, timeout) < 0
            || flux_kvs_getroot_get_treeobj (g->graft, &treeobj) < 0
            || !(g->final_root = strdup (treeobj)) || copy_ops (txn, g) < 0)
            glog (g, LOG_ERR, "unloading: %s not grafted: %s", g->ns,
                  strerror (errno));
        else
            n++;
        free (g->final_root);
        g->final_root = NULL;
        flux_future_destroy (g->graft);
        g->graft = NULL;
    }
    if (n == 0) {
        rc = 0;
        goto done;
    }
    if (!(f = flux_kvs_commit (gs->h, KVS_PRIMARY_NAMESPACE, 0, txn))
        || flux_future_wait_for (f, timeout) < 0
        || flux_future_get (f, NULL) < 0) {
        flux_log (gs->h, LOG_ERR, "unloading: grafting %d guest namespaces: %s",
                  n, f ? future_strerror (f, errno) : strerror (errno));
        goto done;
    }
    flux_log (gs->h, LOG_INFO,
              "unloading: %d guest namespaces grafted to job.<id>.guest", n);
    rc = n;
done:
    flux_future_destroy (f);
    flux_kvs_txn_destroy (txn);
    return rc;
}

guestns_t *guestns_create (flux_t *h, timerq_t *tq)
{
    guestns_t *gs;
    const char *hashtype;
    json_t *dir;
    int rc;

    if (!h || !tq) {
        errno = EINVAL;
        return NULL;
    }
    if (!(gs = calloc (1, sizeof (*gs))))
        return NULL;
    gs->h = h;
    gs->r = flux_get_reactor (h);
    gs->tq = tq;
    /* the root of a new namespace, computed once (the kvs module stored
     * that blob at its start) */
    if (!(hashtype = flux_attr_get (h, "content.hash")))
        hashtype = "sha1";
    if (!(dir = treeobj_create_dir ())) {
        free (gs);
        return NULL;
    }
    rc = treeobj_hash (hashtype, dir, gs->empty_root, sizeof (gs->empty_root));
    json_decref (dir);
    if (rc < 0) {
        free (gs);
        return NULL;
    }
    list_init (&gs->guests);
    list_init (&gs->next);
    list_init (&gs->batches);
    waitlist_init (&gs->kvs_wait, guest_resend, gs);
    waitlist_init (&gs->pwait, pbatch_resend, gs);
    flux_deferred_init (&gs->defer, pbatch_defer_cb);
    return gs;
}

void guestns_destroy (guestns_t *gs)
{
    if (gs) {
        int saved_errno = errno;
        struct list_node *pos, *tmp;
        list_for_each_safe (pos, tmp, &gs->guests)
        {
            guest_free (list_entry (pos, struct guest, link));
        }
        flux_reactor_undefer (&gs->defer);
        list_for_each_safe (pos, tmp, &gs->batches)
        {
            pbatch_destroy (list_entry (pos, struct pbatch, link));
        }
        free (gs);
        errno = saved_errno;
    }
}
