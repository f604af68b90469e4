/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* uptime.c - `flux uptime`: one line about the instance, in the manner
 * of uptime(1) (PROTOCOLS.md section 3: state-machine.get, attributes).
 *
 *    HH:MM:SS STATE DURATION,  owner USER,  depth N,  size N[,  N offline]
 *
 * In state "run" the duration is the instance's age (now minus rank 0's
 * broker.starttime) and services that may not be loaded yet (groups,
 * resource, job-manager) add details when they answer; otherwise it is
 * the local broker's time since it started.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "libidset/idset.h"
#include "libutil/fsd.h"

#include "cmdutil.h"

static const char usage[]
    = "Usage: flux uptime\n"
      "Show how long the Flux instance has been running.\n"
      "  -h, --help     Display this message\n";

const struct builtin builtin_uptime = {
    .name = "uptime",
    .summary = "Show how long this Flux instance has been running",
    .usage = usage,
    .main = cmd_uptime,
};

static long attr_long (flux_t *h, const char *name)
{
    const char *s;
    char *end;
    long v;

    if (!(s = flux_attr_get (h, name)))
        cmd_die ("cannot get %s attribute: %s", name, strerror (errno));
    errno = 0;
    v = strtol (s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        cmd_die ("%s attribute is not an integer: %s", name, s);
    return v;
}

/* broker.starttime of rank 0, in seconds since the epoch. */
static double rank0_starttime (flux_t *h)
{
    flux_future_t *f;
    const char *s;
    char *end;
    double t;

    if (!(f = flux_rpc_pack (h, "attr.get", 0, 0, "{s:s}", "name",
                             "broker.starttime"))
        || flux_rpc_get_unpack (f, "{s:s}", "value", &s) < 0)
        cmd_die ("broker.starttime: %s",
                 f ? future_strerror (f, errno) : strerror (errno));
    t = strtod (s, &end);
    if (end == s || *end != '\0')
        cmd_die ("broker.starttime is not a number: %s", s);
    flux_future_destroy (f);
    return t;
}

/* Members of a broker group, or -1 if the groups service is not there. */
static int group_count (flux_t *h, const char *name)
{
    flux_future_t *f;
    const char *members;
    struct idset *ids = NULL;
    int count = -1;

    if ((f = flux_rpc_pack (h, "groups.get", 0, 0, "{s:s}", "name", name))
        && flux_rpc_get_unpack (f, "{s:s}", "members", &members) == 0
        && (ids = idset_decode (members)))
        count = idset_count (ids);
    idset_destroy (ids);
    flux_future_destroy (f);
    return count;
}

/* Number of drained nodes, or 0 if the resource service is not there. */
static int drained_count (flux_t *h)
{
    flux_future_t *f;
    json_t *drain;
    const char *key;
    json_t *value;
    int count = 0;

    if ((f = flux_rpc (h, "resource.status", NULL, 0, 0))
        && flux_rpc_get_unpack (f, "{s:o}", "drain", &drain) == 0) {
        json_object_foreach (drain, key, value)
        {
            struct idset *ids = idset_decode (key);
            count += ids ? (int)idset_count (ids) : 0;
            idset_destroy (ids);
        }
    }
    flux_future_destroy (f);
    return count;
}

/* True if the job manager answers and every queue is disabled. */
static bool submit_disabled (flux_t *h)
{
    flux_future_t *f;
    int enable = 1;

    if ((f = flux_rpc_pack (h, "job-manager.queue-status", 0, 0, "{}")))
        (void)flux_rpc_get_unpack (f, "{s:b}", "enable", &enable);
    flux_future_destroy (f);
    return !enable;
}

static void format_owner (char *buf, size_t size, long uid)
{
    struct passwd *pw = getpwuid ((uid_t)uid);

    if (pw)
        snprintf (buf, size, "%s", pw->pw_name);
    else
        snprintf (buf, size, "%ld", uid);
}

int cmd_uptime (int argc, char **argv)
{
    char owner[64], now_s[32], fsd[64], extra[128] = "";
    const char *state;
    double duration;
    struct timeval now;
    struct tm tm;
    flux_future_t *f;
    long size;
    flux_t *h;

    cmd_getopt_none (argc, argv);
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    h = cmd_open ();
    format_owner (owner, sizeof (owner), attr_long (h, "security.owner"));
    size = attr_long (h, "size");
    if (!(f = flux_rpc (h, "state-machine.get", NULL, FLUX_NODEID_ANY, 0))
        || flux_rpc_get_unpack (f, "{s:s s:F}", "state", &state, "duration",
                                &duration)
               < 0)
        cmd_die ("state-machine.get: %s",
                 f ? future_strerror (f, errno) : strerror (errno));
    gettimeofday (&now, NULL);
    if (!strcmp (state, "run")) {
        int online = group_count (h, "broker.online");
        int drained = drained_count (h);
        duration = now.tv_sec + now.tv_usec / 1e6 - rank0_starttime (h);
        if (drained > 0)
            snprintf (extra, sizeof (extra), ",  %d drained", drained);
        if (online >= 0 && online < size)
            snprintf (extra + strlen (extra), sizeof (extra) - strlen (extra),
                      ",  %ld offline", size - online);
    }
    if (fsd_format_duration (fsd, sizeof (fsd), duration < 0 ? 0 : duration) < 0
        || !localtime_r (&now.tv_sec, &tm)
        || strftime (now_s, sizeof (now_s), "%H:%M:%S", &tm) == 0)
        cmd_die ("cannot format the time");
    printf (" %s %s %s,  owner %s,  depth %ld,  size %ld%s\n", now_s, state,
            fsd, owner, attr_long (h, "instance-level"), size, extra);
    if (!strcmp (state, "run") && submit_disabled (h))
        printf ("  submit disabled\n");
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
