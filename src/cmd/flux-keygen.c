/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* flux-keygen.c - `flux keygen PATH`: generate a CURVE key pair for the
 * overlay network and write it as a secret certificate (czmq zcert text
 * format, mode 0600).
 *
 * A separate program rather than a flux builtin: it links libsodium,
 * which would slow down the start of every other flux command.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#define _GNU_SOURCE 1
#include <errno.h>
#include <getopt.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "certfile.h"

#define MAX_META 32

static const char usage[]
    = "Usage: flux keygen [OPTIONS] PATH\n"
      "Generate a CURVE certificate for the overlay network and write it to\n"
      "PATH (mode 0600).\n"
      "  -n, --name=NAME       Certificate name (default: the host name)\n"
      "  -m, --meta=KEY=VALUE  Add metadata (may be repeated)\n"
      "  -h, --help            Display this message\n";

static void die (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2), noreturn));
static void die (const char *fmt, ...)
{
    va_list ap;

    fprintf (stderr, "flux-keygen: ");
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fprintf (stderr, "\n");
    exit (1);
}

struct meta {
    const char *kv[MAX_META * 2 + 1];
    int n;
    char strings[MAX_META][256];
};

static void meta_add (struct meta *m, const char *key, const char *value)
{
    if (m->n >= MAX_META)
        die ("too many metadata items (max %d)", MAX_META);
    snprintf (m->strings[m->n], sizeof (m->strings[0]), "%s", value);
    m->kv[2 * m->n] = key;
    m->kv[2 * m->n + 1] = m->strings[m->n];
    m->n++;
    m->kv[2 * m->n] = NULL;
}

/* --meta KEY=VALUE: split in place. */
static void meta_add_option (struct meta *m, char *arg)
{
    char *eq = strchr (arg, '=');

    if (!eq || eq == arg) {
        fprintf (stderr,
                 "flux-keygen: --meta: expected KEY=VALUE, got '%s'"
                 " (see 'flux keygen --help')\n",
                 arg);
        exit (1);
    }
    *eq = '\0';
    meta_add (m, arg, eq + 1);
}

static void meta_add_defaults (struct meta *m, const char *name)
{
    char host[256] = "";
    char buf[64];
    time_t now = time (NULL);
    struct tm tm;

    (void)gethostname (host, sizeof (host) - 1);
    meta_add (m, "name", name ? name : host);
    meta_add (m, "keygen.hostname", host);
    if (gmtime_r (&now, &tm)
        && strftime (buf, sizeof (buf), "%Y-%m-%dT%H:%M:%SZ", &tm) > 0)
        meta_add (m, "keygen.time", buf);
    snprintf (buf, sizeof (buf), "%d", (int)getuid ());
    meta_add (m, "keygen.userid", buf);
    meta_add (m, "keygen.flux-version", PACKAGE_VERSION);
}

int main (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"name", required_argument, NULL, 'n'},
        {"meta", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint8_t pub[CERT_KEY_SIZE], sec[CERT_KEY_SIZE];
    struct meta user = {0}, meta = {0};
    const char *name = NULL;
    int c;

    opterr = 0;
    while ((c = getopt_long (argc, argv, "+:n:m:h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs (usage, stdout);
            return 0;
        }
        if (c == 'n')
            name = optarg;
        else if (c == 'm')
            meta_add_option (&user, optarg);
        else {
            fprintf (stderr,
                     "flux-keygen: %s '%s' (see 'flux keygen "
                     "--help')\n",
                     c == ':' ? "missing argument for" : "unknown option",
                     argv[optind - 1]);
            return 1;
        }
    }
    if (optind != argc - 1) {
        fprintf (stderr, "flux-keygen: expected one PATH (see 'flux keygen "
                         "--help')\n");
        return 1;
    }
    meta_add_defaults (&meta, name);
    for (int i = 0; i < user.n; i++)
        meta_add (&meta, user.kv[2 * i], user.kv[2 * i + 1]);
    if (sodium_init () < 0)
        die ("cannot initialize libsodium");
    crypto_box_keypair (pub, sec); /* CURVE is curve25519 crypto_box */
    if (certfile_write_secret (argv[optind], pub, sec, meta.kv) < 0)
        die ("%s: %s", argv[optind],
             errno == EINVAL ? "invalid metadata" : strerror (errno));
    sodium_memzero (sec, sizeof (sec));
    return 0;
}
