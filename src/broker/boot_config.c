/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* boot_config.c - bootstrap from the config's [bootstrap] table (see
 * boot_config.h).
 *
 * The hosts array is kept as entries (one per array element, with the
 * first rank it covers); each rank's hostname comes from one hostlist of
 * all hosts.  To find ranks by name (our own, duplicates, parents) the
 * names are sorted once with their ranks: O(n log n) for n hosts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/libhostlist/hostlist.h"
#include "boot_config.h"

#define KEYLEN 40

struct entry {
    uint32_t first; /* first rank of this entry */
    uint32_t count;
    const char *host; /* as given (a hostlist) */
    const char *bind, *connect, *parent;
};

struct name {
    char *host;
    uint32_t rank;
};

struct boot_config {
    json_t *bootstrap; /* kept: the entries point into it */
    struct entry *entries;
    size_t nentries;
    uint32_t size, rank;
    char *hostlist;
    struct hostlist *hl;
    uint32_t *parents;
    int port; /* -1: none */
    const char *default_bind, *default_connect;
    char pubkey[KEYLEN + 1], seckey[KEYLEN + 1];
};

bool boot_config_enabled (json_t *config)
{
    json_t *hosts
        = json_object_get (json_object_get (config, "bootstrap"), "hosts");
    /* an empty array is a standalone instance, as in flux-core; a value
     * of another type is enabled, to be refused by boot_config_create */
    return hosts && (!json_is_array (hosts) || json_array_size (hosts) > 0);
}

void boot_config_destroy (struct boot_config *bc)
{
    if (bc) {
        int saved = errno;
        json_decref (bc->bootstrap);
        free (bc->entries);
        free (bc->hostlist);
        hostlist_destroy (bc->hl);
        free (bc->parents);
        free (bc);
        errno = saved;
    }
}

static int name_cmp (const void *a, const void *b)
{
    return strcmp (((const struct name *)a)->host,
                   ((const struct name *)b)->host);
}

static const struct name *name_find (const struct name *names, size_t n,
                                     const char *host)
{
    struct name key = {.host = (char *)host};
    return bsearch (&key, names, n, sizeof (*names), name_cmp);
}

static void names_free (struct name *names, size_t n)
{
    if (names) {
        for (size_t i = 0; i < n; i++)
            free (names[i].host);
        free (names);
    }
}

/* Read the public and secret keys of a ZeroMQ (ZPL) certificate:
 *     curve
 *         public-key = "..."
 *         secret-key = "..."
 * The file must not be readable by others than its owner. */
static int read_cert (struct boot_config *bc, const char *path,
                      flux_error_t *error)
{
    char line[256];
    struct stat sb;
    FILE *f;

    if (!(f = fopen (path, "r")))
        return errprintf (error, "bootstrap.curve_cert %s: %s", path,
                          strerror (errno));
    if (fstat (fileno (f), &sb) < 0 || (sb.st_mode & 077)) {
        fclose (f);
        return errprintf (error,
                          "bootstrap.curve_cert %s: must be readable by its"
                          " owner only (mode 0600)",
                          path);
    }
    while (fgets (line, sizeof (line), f)) {
        char *p = line, *q, *dst = NULL;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!strncmp (p, "public-key", 10))
            dst = bc->pubkey;
        else if (!strncmp (p, "secret-key", 10))
            dst = bc->seckey;
        if (!dst || !(p = strchr (p, '"')) || !(q = strchr (p + 1, '"'))
            || q - p - 1 != KEYLEN)
            continue;
        memcpy (dst, p + 1, KEYLEN);
        dst[KEYLEN] = '\0';
    }
    fclose (f);
    if (!bc->pubkey[0] || !bc->seckey[0])
        return errprintf (error,
                          "bootstrap.curve_cert %s: no public-key and"
                          " secret-key of 40 characters",
                          path);
    return 0;
}

static int parse_entries (struct boot_config *bc, json_t *hosts,
                          flux_error_t *error)
{
    size_t i;
    json_t *e;
    uint64_t total = 0;

    if (!(bc->entries = calloc (json_array_size (hosts), sizeof (*bc->entries)))
        || !(bc->hl = hostlist_create ()))
        return errprintf (error, "out of memory");
    json_array_foreach (hosts, i, e)
    {
        struct entry *ent = &bc->entries[i];
        json_error_t jerr;
        int n;

        if (json_unpack_ex (e, &jerr, JSON_STRICT, "{s:s s?s s?s s?s}", "host",
                            &ent->host, "bind", &ent->bind, "connect",
                            &ent->connect, "parent", &ent->parent)
            < 0)
            return errprintf (error,
                              "bootstrap.hosts[%zu]: %s (keys: host, bind,"
                              " connect, parent)",
                              i, jerr.text);
        if ((n = hostlist_append (bc->hl, ent->host)) <= 0)
            return errprintf (error, "bootstrap.hosts[%zu]: bad host \"%s\"", i,
                              ent->host);
        ent->first = (uint32_t)total;
        ent->count = (uint32_t)n;
        total += (uint64_t)n;
        if (total > UINT32_MAX / 2)
            return errprintf (error, "bootstrap.hosts: too many hosts");
        bc->nentries++;
    }
    bc->size = (uint32_t)total;
    return 0;
}

/* The entry holding rank (entries are in rank order): binary search. */
static const struct entry *entry_of (const struct boot_config *bc,
                                     uint32_t rank)
{
    size_t lo = 0, hi = bc->nentries;

    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (bc->entries[mid].first <= rank)
            lo = mid;
        else
            hi = mid;
    }
    return &bc->entries[lo];
}

/* Names sorted with their ranks; duplicates refused.  Parents set. */
static int check_names (struct boot_config *bc, const char *hostname,
                        flux_error_t *error)
{
    struct name *names;
    const struct name *me;
    const char *h;
    uint32_t r = 0;
    int rc = -1;

    if (!(names = calloc (bc->size, sizeof (*names))))
        return errprintf (error, "out of memory");
    for (h = hostlist_first (bc->hl); h && r < bc->size;
         h = hostlist_next (bc->hl), r++) {
        if (!(names[r].host = strdup (h))) {
            errprintf (error, "out of memory");
            goto out;
        }
        names[r].rank = r;
    }
    if (r != bc->size) {
        errprintf (error, "bootstrap.hosts: cannot list the hosts");
        goto out;
    }
    qsort (names, bc->size, sizeof (*names), name_cmp);
    for (r = 1; r < bc->size; r++) {
        if (!strcmp (names[r].host, names[r - 1].host)) {
            errprintf (error, "bootstrap.hosts: host %s is listed twice",
                       names[r].host);
            goto out;
        }
    }
    if (!(me = name_find (names, bc->size, hostname))) {
        errprintf (error,
                   "bootstrap.hosts: this host (%s) is not in the list; set"
                   " the hostname attribute or fix the config",
                   hostname);
        goto out;
    }
    bc->rank = me->rank;
    for (size_t i = 0; i < bc->nentries; i++) {
        const struct entry *ent = &bc->entries[i];
        const struct name *p;
        if (!ent->parent)
            continue;
        if (!bc->parents
            && !(bc->parents = calloc (bc->size, sizeof (uint32_t)))) {
            errprintf (error, "out of memory");
            goto out;
        }
        if (!(p = name_find (names, bc->size, ent->parent))) {
            errprintf (error, "bootstrap.hosts[%zu]: parent %s is not a host",
                       i, ent->parent);
            goto out;
        }
        for (uint32_t k = 0; k < ent->count; k++) {
            if (ent->first + k == p->rank) {
                errprintf (error, "bootstrap.hosts[%zu]: %s is its own parent",
                           i, ent->parent);
                goto out;
            }
            bc->parents[ent->first + k] = p->rank;
        }
    }
    if (bc->parents)
        bc->parents[0] = 0;
    rc = 0;
out:
    names_free (names, bc->size);
    return rc;
}

struct boot_config *boot_config_create (json_t *config, const char *hostname,
                                        flux_error_t *error)
{
    struct boot_config *bc;
    json_t *bootstrap = json_object_get (config, "bootstrap");
    json_t *hosts = NULL;
    const char *cert = NULL;
    json_error_t jerr;

    if (!hostname || !*hostname) {
        errprintf (error, "bootstrap: no hostname");
        return NULL;
    }
    if (!(bc = calloc (1, sizeof (*bc)))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    bc->port = -1;
    bc->bootstrap = json_incref (bootstrap);
    if (json_unpack_ex (bootstrap, &jerr, 0, "{s:o s?s s?i s?s s?s}", "hosts",
                        &hosts, "curve_cert", &cert, "default_port", &bc->port,
                        "default_bind", &bc->default_bind, "default_connect",
                        &bc->default_connect)
        < 0) {
        errprintf (error,
                   "bootstrap: %s (hosts: array, curve_cert: string,"
                   " default_port: integer, default_bind, default_connect:"
                   " strings)",
                   jerr.text);
        goto error;
    }
    if (!json_is_array (hosts)) {
        errprintf (error, "bootstrap.hosts must be an array of tables");
        goto error;
    }
    if (bc->port != -1 && (bc->port < 0 || bc->port > 65535)) {
        errprintf (error, "bootstrap.default_port %d: not a port", bc->port);
        goto error;
    }
    if (parse_entries (bc, hosts, error) < 0
        || !(bc->hostlist = hostlist_encode (bc->hl))
        || check_names (bc, hostname, error) < 0)
        goto error;
    if (cert && read_cert (bc, cert, error) < 0)
        goto error;
    if (!cert && bc->size > 1) {
        errprintf (error, "bootstrap.curve_cert is required for more than"
                          " one host");
        goto error;
    }
    return bc;
error:
    boot_config_destroy (bc);
    return NULL;
}

uint32_t boot_config_rank (const struct boot_config *bc)
{
    return bc->rank;
}

uint32_t boot_config_size (const struct boot_config *bc)
{
    return bc->size;
}

const char *boot_config_hostlist (const struct boot_config *bc)
{
    return bc->hostlist;
}

bool boot_config_has_parents (const struct boot_config *bc)
{
    return bc->parents != NULL;
}

const uint32_t *boot_config_parents (const struct boot_config *bc)
{
    return bc->parents;
}

/* Copy tmpl into buf with %h -> host, %p -> port, %% -> %. */
static int subst (const struct boot_config *bc, const char *tmpl,
                  const char *host, char *buf, size_t len, flux_error_t *error)
{
    size_t n = 0;

    for (const char *p = tmpl; *p; p++) {
        char num[16];
        const char *add = NULL;
        char one[2] = {*p, '\0'};
        if (*p == '%' && p[1] == 'h')
            add = host;
        else if (*p == '%' && p[1] == 'p') {
            if (bc->port < 0)
                return errprintf (error,
                                  "bootstrap: %s uses %%p but there is no"
                                  " default_port",
                                  tmpl);
            snprintf (num, sizeof (num), "%d", bc->port);
            add = num;
        }
        else if (*p == '%' && p[1] == '%')
            add = "%";
        if (add)
            p++;
        else
            add = one;
        size_t l = strlen (add);
        if (n + l >= len)
            return errprintf (error, "bootstrap: URI too long: %s", tmpl);
        memcpy (buf + n, add, l);
        n += l;
    }
    buf[n] = '\0';
    return 0;
}

static int uri (const struct boot_config *bc, uint32_t rank, bool bind,
                char *buf, size_t len, flux_error_t *error)
{
    const struct entry *ent;
    const char *tmpl, *host;

    if (rank >= bc->size)
        return errprintf (error, "bootstrap: no rank %" PRIu32, rank);
    ent = entry_of (bc, rank);
    tmpl = bind ? (ent->bind ? ent->bind : bc->default_bind)
                : (ent->connect ? ent->connect : bc->default_connect);
    if (!tmpl)
        return errprintf (error,
                          "bootstrap: host %s has children but no %s URI"
                          " (set %s or default_%s)",
                          ent->host, bind ? "bind" : "connect",
                          bind ? "bind" : "connect", bind ? "bind" : "connect");
    if (!(host = hostlist_nth (bc->hl, (int)rank)))
        return errprintf (error, "bootstrap: no host for rank %" PRIu32, rank);
    return subst (bc, tmpl, host, buf, len, error);
}

int boot_config_bind_uri (const struct boot_config *bc, uint32_t rank,
                          char *buf, size_t len, flux_error_t *error)
{
    return uri (bc, rank, true, buf, len, error);
}

int boot_config_connect_uri (const struct boot_config *bc, uint32_t rank,
                             char *buf, size_t len, flux_error_t *error)
{
    return uri (bc, rank, false, buf, len, error);
}

const char *boot_config_pubkey (const struct boot_config *bc)
{
    return bc->pubkey[0] ? bc->pubkey : NULL;
}

const char *boot_config_seckey (const struct boot_config *bc)
{
    return bc->seckey[0] ? bc->seckey : NULL;
}
