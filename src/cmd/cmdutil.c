/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* cmdutil.c - option parsing, messages and instance access shared by the
 * flux subcommands, so that every command answers --help, bad usage and
 * errors the same way.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>

#include "libjob/job.h"
#include "libutil/fsd.h"

#include "cmdutil.h"

static char prog[128] = "flux";
static char helpcmd[128] = "flux";
static const char *usage_text = "";
static char context[256]; /* cmd_set_context (), e.g. "FILE: line 3: " */

void cmd_set_context (const char *ctx)
{
    snprintf (context, sizeof (context), "%s%s", ctx ? ctx : "",
              ctx && *ctx ? ": " : "");
}

void cmd_init (const struct builtin *b, const char *group)
{
    snprintf (prog, sizeof (prog), "flux-%s", group ? group : b->name);
    if (group)
        snprintf (helpcmd, sizeof (helpcmd), "flux %s %s", group, b->name);
    else
        snprintf (helpcmd, sizeof (helpcmd), "flux %s", b->name);
    usage_text = b->usage;
    optind = 0; /* GNU getopt: full re-initialization on next call */
}

const char *cmd_prog (void)
{
    return prog;
}

void cmd_help (void)
{
    fputs (usage_text, stdout);
    exit (0);
}

void cmd_usage_error (const char *fmt, ...)
{
    va_list ap;

    fprintf (stderr, "%s: %s", prog, context);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fprintf (stderr, " (see '%s --help')\n", helpcmd);
    exit (1);
}

static void vwarn (const char *fmt, va_list ap)
{
    fprintf (stderr, "%s: %s", prog, context);
    vfprintf (stderr, fmt, ap);
    fputc ('\n', stderr);
}

void cmd_die (const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    vwarn (fmt, ap);
    va_end (ap);
    exit (1);
}

void cmd_warn (const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    vwarn (fmt, ap);
    va_end (ap);
}

/* The option as the user wrote it, for error messages. */
static void bad_option (int argc, char **argv, const char *what)
{
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";

    if (strncmp (arg, "--", 2) == 0) {
        int len = strcspn (arg, "=");
        cmd_usage_error ("%s '%.*s'", what, len, arg);
    }
    if (optopt)
        cmd_usage_error ("%s '-%c'", what, optopt);
    cmd_usage_error ("%s '%s'", what, arg);
}

static int getopt_common (int argc, char **argv, const char *prefix,
                          const char *shortopts, const struct option *longopts)
{
    char optstring[128];
    int c;

    snprintf (optstring, sizeof (optstring), "%s:h%s", prefix, shortopts);
    opterr = 0;
    c = getopt_long (argc, argv, optstring, longopts, NULL);
    if (c == 'h')
        cmd_help ();
    if (c == '?')
        bad_option (argc, argv, "unknown option");
    if (c == ':')
        bad_option (argc, argv, "missing argument for");
    return c;
}

int cmd_getopt (int argc, char **argv, const char *shortopts,
                const struct option *longopts)
{
    return getopt_common (argc, argv, "+", shortopts, longopts);
}

/* "-" would hand operands back as option 1: plain permutation it is
 * (POSIXLY_CORRECT in the environment turns it off, as getopt says) */
int cmd_getopt_permute (int argc, char **argv, const char *shortopts,
                        const struct option *longopts)
{
    return getopt_common (argc, argv, "", shortopts, longopts);
}

char *cmd_join_words (int argc, char **argv)
{
    size_t len = 0, off = 0;
    char *s;

    if (argc <= 0)
        return NULL;
    for (int i = 0; i < argc; i++)
        len += strlen (argv[i]) + 1;
    if (!(s = malloc (len)))
        cmd_die ("out of memory");
    for (int i = 0; i < argc; i++) {
        size_t n = strlen (argv[i]);
        if (i > 0)
            s[off++] = ' ';
        memcpy (s + off, argv[i], n);
        off += n;
    }
    s[off] = '\0';
    return s;
}

char *cmd_read_all (FILE *fp, const char *what, size_t *lenp)
{
    size_t len = 0, size = 8192, n;
    char *buf = malloc (size);

    if (!buf)
        cmd_die ("out of memory");
    while ((n = fread (buf + len, 1, size - len - 1, fp)) > 0) {
        len += n;
        if (len + 1 == size) {
            char *nbuf = realloc (buf, size *= 2);
            if (!nbuf)
                cmd_die ("out of memory");
            buf = nbuf;
        }
    }
    if (ferror (fp))
        cmd_die ("%s: %s", what, strerror (errno));
    buf[len] = '\0';
    if (lenp)
        *lenp = len;
    return buf;
}

flux_t *cmd_open (void)
{
    flux_error_t error;
    flux_t *h;

    /* Outside any instance, a system instance's socket if there is one
     * (etc/flux.service links it), as flux-core does. */
    if (!getenv ("FLUX_URI") && access (FLUX_SYSTEM_SOCKET, F_OK) == 0)
        setenv ("FLUX_URI", "local://" FLUX_SYSTEM_SOCKET, 1);
    if (!getenv ("FLUX_URI")) {
        fprintf (stderr, "flux: FLUX_URI is not set: run this inside an "
                         "instance (e.g. flux start)\n");
        exit (1);
    }
    if (!(h = flux_open_ex (NULL, 0, &error))) {
        if (error.text[0])
            cmd_die ("%s", error.text);
        cmd_die ("cannot connect to %s: %s", getenv ("FLUX_URI"),
                 strerror (errno));
    }
    return h;
}

void cmd_getopt_none (int argc, char **argv)
{
    static const struct option longopts[] = {
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };

    while (cmd_getopt (argc, argv, "", longopts) != -1)
        ;
}

long cmd_parse_long (const char *opt, const char *s, long min, long max)
{
    char *end;
    long v;

    errno = 0;
    v = strtol (s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        cmd_usage_error ("%s: '%s' is not an integer in [%ld:%ld]", opt, s, min,
                         max);
    return v;
}

double cmd_parse_double (const char *opt, const char *s, double min)
{
    char *end;
    double v;

    errno = 0;
    v = strtod (s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite (v) || v < min)
        cmd_usage_error ("%s: '%s' is not a number >= %g", opt, s, min);
    return v;
}

double cmd_parse_duration (const char *opt, const char *s)
{
    double d;

    if (fsd_parse_duration (s, &d) < 0)
        cmd_usage_error ("%s: '%s' is not a duration (e.g. 0.5s, 2m)", opt, s);
    return d;
}

bool cmd_parse_color (const char *opt, const char *when)
{
    if (!when || !strcmp (when, "always"))
        return true;
    if (!strcmp (when, "never"))
        return false;
    if (!strcmp (when, "auto"))
        return isatty (STDOUT_FILENO);
    cmd_usage_error ("%s: WHEN must be always, never or auto", opt);
}

int cmd_parse_urgency (const char *opt, const char *s)
{
    if (!strcasecmp (s, "hold"))
        return FLUX_JOB_URGENCY_HOLD;
    if (!strcasecmp (s, "default"))
        return FLUX_JOB_URGENCY_DEFAULT;
    if (!strcasecmp (s, "expedite"))
        return FLUX_JOB_URGENCY_EXPEDITE;
    return (int)cmd_parse_long (opt, s, 0, 31);
}

int cmd_parse_signal (const char *s)
{
    char *end;
    long n = strtol (s, &end, 10);

    if (*s && *end == '\0')
        return n > 0 && n < NSIG ? (int)n : -1;
    if (!strncasecmp (s, "SIG", 3))
        s += 3;
    for (int i = 1; i < NSIG; i++) {
        const char *abbrev = sigabbrev_np (i);
        if (abbrev && !strcasecmp (abbrev, s))
            return i;
    }
    return -1;
}

static void group_usage (const struct builtin *group,
                         const struct builtin *const members[], FILE *f)
{
    fputs (group->usage, f);
    fprintf (f, "\nCommands:\n");
    for (int i = 0; members[i]; i++)
        fprintf (f, "  %-12s %s\n", members[i]->name, members[i]->summary);
}

int cmd_run_group (const struct builtin *group,
                   const struct builtin *const members[], int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : NULL;

    cmd_init (group, NULL);
    if (!name)
        cmd_usage_error ("missing command");
    if (!strcmp (name, "-h") || !strcmp (name, "--help")) {
        group_usage (group, members, stdout);
        exit (0);
    }
    for (int i = 0; members[i]; i++) {
        if (!strcmp (members[i]->name, name)) {
            cmd_init (members[i], group->name);
            return members[i]->main (argc - 1, argv + 1);
        }
    }
    cmd_usage_error ("unknown command '%s'", name);
}

bool cmd_stdin_is_null (void)
{
    struct stat a, b;

    return fstat (STDIN_FILENO, &a) == 0 && S_ISCHR (a.st_mode)
           && stat ("/dev/null", &b) == 0 && S_ISCHR (b.st_mode)
           && a.st_rdev == b.st_rdev;
}
