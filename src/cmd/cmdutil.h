/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_CMDUTIL_H
#define FLUX_CMD_CMDUTIL_H

/* Helpers shared by the `flux` subcommands: option parsing with uniform
 * --help and usage errors, fatal error messages, and opening the instance.
 *
 * Conventions every subcommand follows through these helpers:
 *   - `flux CMD --help` prints the usage text on stdout and exits 0;
 *   - bad usage prints one line on stderr and exits 1;
 *   - a failure prints "flux-CMD: reason" on stderr and exits 1.
 * These helpers exit the process; they are for command code only.
 */
#include <getopt.h>
#include <stdint.h>

#include <stdbool.h>

#include "libflux/flux.h"

#include "builtin.h"

/* Long option entry every option table must contain. */
#define CMD_OPT_HELP                   \
    {                                  \
        "help", no_argument, NULL, 'h' \
    }

/* Make b the running command: its name prefixes messages ("flux-NAME",
 * or "flux-GROUP" for a member of group), its usage answers --help.
 * Also resets getopt so that a fresh argv can be parsed.
 */
void cmd_init (const struct builtin *b, const char *group);

/* "flux-NAME" of the running command. */
const char *cmd_prog (void);

/* getopt_long() with our conventions: shortopts gets "+:h" prepended
 * (stop at the first operand, report missing arguments), -h/--help print
 * the usage and exit 0, an unknown option or a missing argument is a
 * usage error.  Returns the option character, or -1 at the end.
 */
int cmd_getopt (int argc, char **argv, const char *shortopts,
                const struct option *longopts);

/* cmd_getopt() for a command whose operands are ids or keys, never a
 * command line: options may also follow the operands (flux job eventlog
 * ID -p exec), as with flux-core.  getopt moves the operands, in their
 * order, to argv[optind..argc-1]; "--" still ends the options.
 */
int cmd_getopt_permute (int argc, char **argv, const char *shortopts,
                        const struct option *longopts);

/* cmd_getopt() for a command whose only option is -h/--help: optind is
 * left at the first operand. */
void cmd_getopt_none (int argc, char **argv);

/* Put CTX (e.g. "script.sh: line 3") after the command name in the
 * messages of cmd_usage_error (); NULL or "" removes it. */
void cmd_set_context (const char *ctx);

/* Print the running command's usage on stdout and exit 0. */
void cmd_help (void) __attribute__ ((noreturn));

/* Print "flux-NAME: MESSAGE (see 'flux NAME --help')" and exit 1. */
void cmd_usage_error (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2), noreturn));

/* Print "flux-NAME: MESSAGE" on stderr and exit 1. */
void cmd_die (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2), noreturn));

/* Print "flux-NAME: MESSAGE" on stderr. */
void cmd_warn (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* The argc words of argv joined by single spaces (free it), or NULL if
 * argc is 0.  Exits 1 if out of memory.
 */
char *cmd_join_words (int argc, char **argv);

/* All of fp, with a NUL after it (free it), its length in *lenp (which
 * may be NULL).  Exits 1 if out of memory, or with "WHAT: error" if
 * reading fails.
 */
char *cmd_read_all (FILE *fp, const char *what, size_t *lenp);

/* Whether standard input is /dev/null (it reads end-of-file at once). */
bool cmd_stdin_is_null (void);

/* Open the instance named by $FLUX_URI.  If FLUX_URI is unset, say so
 * (and that commands run inside an instance) and exit 1; exit 1 too if
 * the connection fails.
 */
flux_t *cmd_open (void);

/* Parse an option argument; a bad value is a usage error naming opt. */
long cmd_parse_long (const char *opt, const char *s, long min, long max);
double cmd_parse_double (const char *opt, const char *s, double min);
/* An RFC 23 duration (e.g. "0.5s", "2m"). */
double cmd_parse_duration (const char *opt, const char *s);
/* --color[=WHEN]: color for "always" or no WHEN (NULL), none for
 * "never", "auto": when stdout is a terminal. */
bool cmd_parse_color (const char *opt, const char *when);
/* A job urgency: 0-31, or hold (0), default (16), expedite (31), any
 * case. */
int cmd_parse_urgency (const char *opt, const char *s);
/* A signal from its number (1 to NSIG-1) or its name with or without SIG
 * (USR1, SIGUSR1, usr1); -1 if s is neither. */
int cmd_parse_signal (const char *s);

/* Run the member of a group (`flux event pub ...`): argv[0] is the
 * member's name.  Prints the group usage for --help / a missing or
 * unknown member.  members is NULL-terminated.
 */
int cmd_run_group (const struct builtin *group,
                   const struct builtin *const members[], int argc,
                   char **argv);

#endif /* !FLUX_CMD_CMDUTIL_H */
