/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* ping_target.c - turn a `flux ping` target into a topic and a
 * destination (see ping_target.h for the grammar).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ping_target.h"

/* A decimal rank below FLUX_NODEID_UPSTREAM: 0 and *rank, else -1. */
static int parse_rank (const char *s, uint32_t *rank)
{
    unsigned long long v = 0;

    if (!*s || (s[0] == '0' && s[1] != '\0'))
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
        if (v >= FLUX_NODEID_UPSTREAM)
            return -1;
    }
    *rank = v;
    return 0;
}

/* Classify s as a destination.  0 if it is one, -1 if not. */
static int parse_dest (const char *s, ping_lookup_f lookup, void *arg,
                       struct ping_target *t)
{
    if (!strcmp (s, "any"))
        t->dest = PING_DEST_ANY;
    else if (!strcmp (s, "upstream"))
        t->dest = PING_DEST_UPSTREAM;
    else if (!strcmp (s, "all"))
        t->dest = PING_DEST_ALL;
    else if (parse_rank (s, &t->rank) == 0)
        t->dest = PING_DEST_RANK;
    else if (*s && lookup && lookup (s, &t->rank, arg) == 0)
        t->dest = PING_DEST_RANK;
    else
        return -1;
    return 0;
}

static int set_strings (struct ping_target *t, const char *label,
                        size_t labellen, const char *service)
{
    if (!(t->label = strndup (label, labellen))
        || asprintf (&t->topic, "%s.ping", service) < 0) {
        t->topic = NULL;
        ping_target_clear (t);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

static int inval (flux_error_t *error, const char *fmt, const char *s)
{
    if (error)
        snprintf (error->text, sizeof (error->text), fmt, s);
    errno = EINVAL;
    return -1;
}

int ping_target_parse (const char *target, const char *rankopt,
                       ping_lookup_f lookup, void *arg, struct ping_target *t,
                       flux_error_t *error)
{
    const char *bang;

    if (!target || !t)
        return inval (error, "%s", "missing target");
    memset (t, 0, sizeof (*t));
    if (rankopt) {
        if (!*target)
            return inval (error, "%s", "empty service name");
        if (parse_dest (rankopt, lookup, arg, t) < 0)
            return inval (error, "%s: unknown rank or host", rankopt);
        return set_strings (t, rankopt, strlen (rankopt), target);
    }
    if ((bang = strchr (target, '!'))) {
        char *rank = strndup (target, bang - target);
        int rc;
        if (!rank) {
            errno = ENOMEM;
            return -1;
        }
        rc = parse_dest (rank, lookup, arg, t);
        free (rank);
        if (rc < 0)
            return inval (error, "%s: unknown rank or host", target);
        if (!bang[1])
            return inval (error, "%s: empty service name", target);
        return set_strings (t, target, bang - target, bang + 1);
    }
    if (!*target)
        return inval (error, "%s", "empty target");
    if (parse_dest (target, lookup, arg, t) == 0)
        return set_strings (t, target, strlen (target), "broker");
    t->dest = PING_DEST_ANY;
    return set_strings (t, "", 0, target);
}

void ping_target_clear (struct ping_target *t)
{
    if (t) {
        int saved_errno = errno;
        free (t->topic);
        free (t->label);
        t->topic = NULL;
        t->label = NULL;
        errno = saved_errno;
    }
}

uint32_t ping_target_nodeid (const struct ping_target *t)
{
    switch (t->dest) {
        case PING_DEST_RANK:
            return t->rank;
        case PING_DEST_UPSTREAM:
            return FLUX_NODEID_UPSTREAM;
        default:
            return FLUX_NODEID_ANY;
    }
}
