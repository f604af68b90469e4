/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* boot_pmi.c - find this broker's place in the instance through PMI.
 *
 * boot_pmi_open() picks a PMI method (upmi.h: simple over PMI_FD or
 * PMI_PORT, pmix, single; the broker.boot-method attribute or
 * FLUX_PMI_CLIENT_METHODS override the order) and learns rank and size.
 * boot_pmi_exchange() swaps business cards as boot_pmi.h describes.
 */
#define _GNU_SOURCE 1 /* strndup */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "boot_pmi.h"
#include "common/libhostlist/hostlist.h"
#include "overlay/topology.h"

#define CARD_KEY "flux.card"
#define HL_KEY "flux.hostlist"

extern char **environ;

static void get_hostname (char *buf, size_t len)
{
    if (gethostname (buf, len) < 0)
        snprintf (buf, len, "localhost");
    buf[len - 1] = '\0';
}

int bootx_mapping_nnodes (const char *s)
{
    long nodes = 0;
    const char *p;

    if (!s || strncmp (s, "(vector", 7) != 0)
        goto inval;
    p = s + 7;
    while (*p == ',') {
        long id, n, ppn;
        int used = 0;
        if (sscanf (p, ",(%ld,%ld,%ld)%n", &id, &n, &ppn, &used) != 3
            || used == 0 || id < 0 || n < 1 || ppn < 1 || id > INT32_MAX
            || n > INT32_MAX)
            goto inval;
        if (id + n > nodes)
            nodes = id + n;
        p += used;
    }
    if (strcmp (p, ")") != 0 || nodes == 0 || nodes > INT32_MAX)
        goto inval;
    return (int)nodes;
inval:
    errno = EINVAL;
    return -1;
}

/* The interface of the default route (/proc/net/route: destination 0),
 * or "" if there is none. */
static void default_route_iface (char *name, size_t len)
{
    FILE *f = fopen ("/proc/net/route", "r");
    char line[256], iface[IF_NAMESIZE + 1];
    unsigned long dest;

    name[0] = '\0';
    if (!f)
        return;
    while (fgets (line, sizeof (line), f)) {
        if (sscanf (line, "%16s %lx", iface, &dest) == 2 && dest == 0) {
            snprintf (name, len, "%s", iface);
            break;
        }
    }
    fclose (f);
}

int bootx_tcp_address (char *buf, size_t len)
{
    struct ifaddrs *ifa, *i, *pick = NULL;
    char dflt[IF_NAMESIZE + 1];

    default_route_iface (dflt, sizeof (dflt));
    if (getifaddrs (&ifa) < 0)
        return -1;
    for (i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET
            || !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
            continue;
        if (dflt[0] && !strcmp (i->ifa_name, dflt)) {
            pick = i;
            break;
        }
        if (!pick)
            pick = i;
    }
    if (!pick
        || !inet_ntop (AF_INET,
                       &((struct sockaddr_in *)pick->ifa_addr)->sin_addr, buf,
                       len)) {
        freeifaddrs (ifa);
        errno = ENOENT;
        return -1;
    }
    freeifaddrs (ifa);
    return 0;
}

int bootx_put_card (struct upmi *upmi, const char *uri, const char *pubkey,
                    const char *host, flux_error_t *error)
{
    char val[sizeof (struct bootx_card) + 3];

    if (strchr (pubkey, ';') || (uri && strchr (uri, ';')))
        return errprintf (error, "PMI: ';' in a uri or key");
    snprintf (val, sizeof (val), "%s;%s;%s", uri ? uri : "-", pubkey, host);
    return upmi_put (upmi, CARD_KEY, val, error);
}

int bootx_get_card (struct upmi *upmi, int rank, struct bootx_card *card,
                    flux_error_t *error)
{
    char val[sizeof (struct bootx_card) + 3];
    char *s1, *s2;

    if (upmi_get (upmi, CARD_KEY, rank, val, sizeof (val), error) < 0)
        return -1;
    if (!(s1 = strchr (val, ';')) || !(s2 = strchr (s1 + 1, ';'))) {
        errno = EPROTO;
        return errprintf (error, "PMI: malformed card of rank %d", rank);
    }
    *s1++ = *s2++ = '\0';
    if (strlen (val) >= sizeof (card->uri)
        || strlen (s1) >= sizeof (card->pubkey)
        || strlen (s2) >= sizeof (card->host)) {
        errno = EPROTO;
        return errprintf (error, "PMI: card of rank %d too long", rank);
    }
    strcpy (card->uri, val);
    strcpy (card->pubkey, s1);
    strcpy (card->host, s2);
    return 0;
}

char *bootx_hostlist_publish (struct upmi *upmi, flux_error_t *error)
{
    struct hostlist *hl;
    struct bootx_card card;
    size_t chunk = upmi_vallen_max (upmi) - 1, len, n, i;
    char key[64], *s = NULL, *buf = NULL, num[32];
    int r;

    if (!(hl = hostlist_create ())) {
        errprintf (error, "out of memory");
        return NULL;
    }
    for (r = 0; r < upmi_size (upmi); r++) {
        if (bootx_get_card (upmi, r, &card, error) < 0)
            goto error;
        if (hostlist_append (hl, card.host) != 1) {
            errprintf (error, "PMI: rank %d: bad hostname %s", r, card.host);
            goto error;
        }
    }
    if (!(s = hostlist_encode (hl)) || !(buf = malloc (chunk + 1))) {
        errprintf (error, "out of memory");
        goto error;
    }
    len = strlen (s);
    n = (len + chunk - 1) / chunk;
    snprintf (num, sizeof (num), "%zu", n);
    if (upmi_put (upmi, HL_KEY, num, error) < 0)
        goto error;
    if (n <= BOOTX_HOSTLIST_CHUNKS_MAX) {
        for (i = 0; i < n; i++) {
            size_t l = len - i * chunk < chunk ? len - i * chunk : chunk;
            memcpy (buf, s + i * chunk, l);
            buf[l] = '\0';
            snprintf (key, sizeof (key), HL_KEY ".%zu", i);
            if (upmi_put (upmi, key, buf, error) < 0)
                goto error;
        }
    }
    free (buf);
    hostlist_destroy (hl);
    return s;
error:
    free (buf);
    free (s);
    hostlist_destroy (hl);
    return NULL;
}

char *bootx_hostlist_fetch (struct upmi *upmi, size_t chunks_max,
                            flux_error_t *error)
{
    size_t vmax = upmi_vallen_max (upmi), off = 0, i;
    char key[64], num[32], *s, *end;
    unsigned long n;

    if (upmi_get (upmi, HL_KEY, 0, num, sizeof (num), error) < 0)
        return NULL;
    n = strtoul (num, &end, 10);
    if (*end || end == num) {
        errno = EPROTO;
        errprintf (error, "PMI: malformed %s", HL_KEY);
        return NULL;
    }
    if (n > chunks_max || n > BOOTX_HOSTLIST_CHUNKS_MAX)
        return strdup ("");
    if (!(s = malloc (n * vmax + 1))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    s[0] = '\0';
    for (i = 0; i < n; i++) {
        snprintf (key, sizeof (key), HL_KEY ".%zu", i);
        if (upmi_get (upmi, key, 0, s + off, vmax, error) < 0) {
            free (s);
            return NULL;
        }
        off += strlen (s + off);
    }
    return s;
}

int boot_pmi_open (struct boot_info *info, flux_error_t *error)
{
    char host[256];

    /* the hostlist of a size 1 instance (the exchange replaces it) */
    get_hostname (host, sizeof (host));
    free (info->hostlist);
    if (!(info->hostlist = strdup (host)))
        return errprintf (error, "out of memory");
    if (!(info->pmi = upmi_create (info->methods, error)))
        return -1;
    info->rank = upmi_rank (info->pmi);
    info->size = upmi_size (info->pmi);
    /* a Flux job shell serves the level its brokers are at (RFC 8); other
     * launchers have no such key: level 0 */
    char lvl[16];
    flux_error_t e;
    if (info->size > 0
        && upmi_get (info->pmi, "flux.instance-level", -1, lvl, sizeof (lvl),
                     &e)
               == 0)
        info->instance_level = atoi (lvl) > 0 ? atoi (lvl) : 0;
    /* how many nodes the launch spans (0: the launcher does not say):
     * PMIx says it natively, the PMI-1 launchers in PMI_process_mapping */
    char map[1024];
    info->nnodes = 0;
    if (info->size > 1 && (info->nnodes = upmi_nnodes (info->pmi)) == 0
        && upmi_get (info->pmi, "PMI_process_mapping", -1, map, sizeof (map),
                     &e)
               == 0)
        info->nnodes
            = bootx_mapping_nnodes (map) > 0 ? bootx_mapping_nnodes (map) : 0;
    return 0;
}

/* The parent and the children of this rank in the overlay's tree. */
static int authorize_children (struct boot_info *info, flux_error_t *error)
{
    int n = topology_child_count (info->topo, info->rank);
    const uint32_t *children = topology_children (info->topo, info->rank);
    struct bootx_card card;

    for (int i = 0; i < n; i++) {
        if (bootx_get_card (info->pmi, (int)children[i], &card, error) < 0)
            return -1;
        if (info->authorize (info->arg, children[i], card.pubkey) < 0)
            return errprintf (error, "cannot authorize rank %u", children[i]);
    }
    return 0;
}

static int exchange (struct boot_info *info, const char *bind_uri,
                     const char *pubkey, flux_error_t *error)
{
    struct upmi *upmi = info->pmi;
    struct bootx_card card;
    char host[256], *hl = NULL;
    int64_t parent;

    if (!upmi || info->size == 1)
        return 0;
    get_hostname (host, sizeof (host));
    if (bootx_put_card (upmi, bind_uri, pubkey, host, error) < 0
        || upmi_barrier (upmi, error) < 0)
        return -1;
    parent = topology_parent (info->topo, info->rank);
    if (parent >= 0) {
        if (bootx_get_card (upmi, (int)parent, &card, error) < 0)
            return -1;
        snprintf (info->parent_uri, sizeof (info->parent_uri), "%s", card.uri);
        snprintf (info->parent_pubkey, sizeof (info->parent_pubkey), "%s",
                  card.pubkey);
    }
    if (authorize_children (info, error) < 0)
        return -1;
    if (info->rank == 0 && !(hl = bootx_hostlist_publish (upmi, error)))
        return -1;
    if (upmi_barrier (upmi, error) < 0) {
        free (hl);
        return -1;
    }
    if (info->rank > 0
        && !(hl = bootx_hostlist_fetch (upmi,
                                        info->hostlist_chunks_max >= 0
                                            ? (size_t)info->hostlist_chunks_max
                                            : BOOTX_HOSTLIST_CHUNKS_MAX,
                                        error)))
        return -1;
    free (info->hostlist);
    info->hostlist = hl;
    return 0;
}

int boot_pmi_exchange (struct boot_info *info, const char *bind_uri,
                       const char *pubkey, flux_error_t *error)
{
    flux_error_t e;

    if (exchange (info, bind_uri, pubkey, &e) < 0) {
        /* The others wait in a barrier for this broker: end the job.
         * PMIx_Abort may not return (the launcher kills us): say why
         * first. */
        fprintf (stderr, "flux-broker: %s\n", e.text);
        upmi_abort (info->pmi, 1, e.text);
        return errprintf (error, "PMI exchange failed: job aborted");
    }
    return 0;
}

/* The launcher's variables are for this broker only: what it runs (the
 * initial program, jobs submitted from it) must not find PMI_FD, the
 * outer PMIx server or a task count, and take them for its own. */
static void clear_launch_env (void)
{
    static const char *prefixes[]
        = {"PMI_", "PMIX_", "OMPI_COMM_WORLD_", "SLURM_STEP_NUM_TASKS=", NULL};
    size_t n = 0, k = 0;
    char **names;

    for (char **e = environ; *e; e++)
        n++;
    if (!(names = calloc (n + 1, sizeof (*names))))
        return;
    /* names first: unsetenv() changes environ */
    for (char **e = environ; *e; e++) {
        const char *eq = strchr (*e, '=');
        for (int i = 0; eq && prefixes[i]; i++) {
            if (!strncmp (*e, prefixes[i], strlen (prefixes[i]))) {
                names[k++] = strndup (*e, eq - *e);
                break;
            }
        }
    }
    for (size_t i = 0; i < k; i++) {
        if (names[i])
            unsetenv (names[i]);
        free (names[i]);
    }
    free (names);
}

void boot_pmi_close (struct boot_info *info)
{
    if (info->pmi)
        clear_launch_env ();
    upmi_destroy (info->pmi);
    info->pmi = NULL;
    free (info->hostlist);
    info->hostlist = NULL;
}
